// Challenge 02 written the old way: var, a constructor function with its methods on the prototype,
// and no arrow functions.

export function multiHeadAttention(Q, K, V, options) {
  var numberOfHeads = options.numberOfHeads;
  var headDimensions = options.headDimensions;
  var C = numberOfHeads * headDimensions;
  var M = [Q, K, V];
  for (var m = 0; m < M.length; m++) {
    if (M[m].length !== Q.length || M[m][0].length !== C) {
      throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
    }
  }
  var layer = new HeadSplitter(Q, K, V, headDimensions);
  var heads = [];
  for (var h = 0; h < numberOfHeads; h++) heads.push(layer.attend(h));
  var joined = layer.join(heads);
  return options.W_O ? layer.mix(joined, options.W_O) : joined;
}

function HeadSplitter(Q, K, V, width) {
  this.Q = Q;
  this.K = K;
  this.V = V;
  this.width = width;
  this.T = Q.length;
}

HeadSplitter.prototype.columns = function (M, h) {
  var start = h * this.width;
  var part = [];
  for (var r = 0; r < M.length; r++) part.push(M[r].slice(start, start + this.width));
  return part;
};

HeadSplitter.prototype.attend = function (h) {
  var q = this.columns(this.Q, h);
  var k = this.columns(this.K, h);
  var v = this.columns(this.V, h);
  var out = [];
  for (var i = 0; i < this.T; i++) {
    var logits = [];
    for (var j = 0; j < this.T; j++) {
      var s = 0;
      for (var c = 0; c < this.width; c++) s += q[i][c] * k[j][c];
      logits.push(s / Math.sqrt(this.width));
    }
    var p = this.softmax(logits);
    var row = [];
    for (var c2 = 0; c2 < this.width; c2++) {
      var acc = 0;
      for (var j2 = 0; j2 < this.T; j2++) acc += p[j2] * v[j2][c2];
      row.push(acc);
    }
    out.push(row);
  }
  return out;
};

HeadSplitter.prototype.softmax = function (xs) {
  var top = Math.max.apply(null, xs);
  var exps = [];
  var total = 0;
  for (var n = 0; n < xs.length; n++) {
    exps.push(Math.exp(xs[n] - top));
    total += exps[n];
  }
  for (var e = 0; e < exps.length; e++) exps[e] = exps[e] / total;
  return exps;
};

HeadSplitter.prototype.join = function (heads) {
  var rows = [];
  for (var t = 0; t < this.T; t++) {
    var line = [];
    for (var hh = 0; hh < heads.length; hh++) line = line.concat(heads[hh][t]);
    rows.push(line);
  }
  return rows;
};

HeadSplitter.prototype.mix = function (X, W) {
  var result = [];
  for (var t = 0; t < X.length; t++) {
    var outRow = [];
    for (var col = 0; col < W[0].length; col++) {
      var sum = 0;
      for (var r = 0; r < W.length; r++) sum += X[t][r] * W[r][col];
      outRow.push(sum);
    }
    result.push(outRow);
  }
  return result;
};
