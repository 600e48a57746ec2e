//! A small JSON reader (RFC 8259) for the two JSON texts a checkpoint brings: the safetensors header
//! and config.json. The crate has no serde_json at run time (it would add its whole parser and
//! serde's machinery to the module; this reader is the ~200 lines the two uses need).
//!
//! Numbers are read as f64 through Rust's own `str::parse` (correctly rounded); strings are
//! unescaped (`\uXXXX` with surrogate pairs); a duplicate key in an object is refused (the
//! safetensors format disallows them); nesting deeper than [`MAX_DEPTH`] is refused rather than
//! overflowing the stack. Errors are plain text with the byte offset, for the caller to wrap.

/// One JSON value. Objects keep their keys in the order written.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// How deep arrays and objects may nest (a header has 3 levels, a config a few more).
pub const MAX_DEPTH: usize = 64;

impl Json {
    /// The value of `key` in an object (`None` for a missing key or a non-object).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// What a message calls this kind of value.
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

/// Parses a whole JSON text (whitespace around the value allowed, nothing else after it).
pub fn parse(text: &str) -> Result<Json, String> {
    let mut p = Parser { s: text.as_bytes(), i: 0 };
    p.space();
    let value = p.value(0)?;
    p.space();
    if p.i != p.s.len() {
        return Err(format!("unexpected {} at byte {} after the value", p.what(), p.i));
    }
    Ok(value)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while matches!(self.s.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// The byte at the cursor, as a message names it.
    fn what(&self) -> String {
        match self.s.get(self.i) {
            None => "end of text".into(),
            Some(&b) if b.is_ascii_graphic() => format!("'{}'", b as char),
            Some(&b) => format!("byte 0x{b:02x}"),
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.s.get(self.i) == Some(&byte) {
            self.i += 1;
            return Ok(());
        }
        Err(format!("expected '{}' at byte {}, found {}", byte as char, self.i, self.what()))
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH} levels at byte {}", self.i));
        }
        match self.s.get(self.i) {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Json::String),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(format!("expected a value at byte {}, found {}", self.i, self.what())),
        }
    }

    fn word(&mut self, word: &str, value: Json) -> Result<Json, String> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            return Ok(value);
        }
        Err(format!("expected {word} at byte {}", self.i))
    }

    fn object(&mut self, depth: usize) -> Result<Json, String> {
        self.i += 1;
        let mut entries: Vec<(String, Json)> = Vec::new();
        self.space();
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Json::Object(entries));
        }
        loop {
            self.space();
            if self.s.get(self.i) != Some(&b'"') {
                return Err(format!("expected a key in quotes at byte {}, found {}", self.i, self.what()));
            }
            let at = self.i;
            let key = self.string()?;
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(format!("the key \"{key}\" appears twice (again at byte {at})"));
            }
            self.space();
            self.expect(b':')?;
            self.space();
            let value = self.value(depth + 1)?;
            entries.push((key, value));
            self.space();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Json::Object(entries));
                }
                _ => return Err(format!("expected ',' or '}}' at byte {}, found {}", self.i, self.what())),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, String> {
        self.i += 1;
        let mut items = Vec::new();
        self.space();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.space();
            items.push(self.value(depth + 1)?);
            self.space();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(format!("expected ',' or ']' at byte {}, found {}", self.i, self.what())),
            }
        }
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.i;
        let digits = |p: &mut Self| {
            let from = p.i;
            while matches!(p.s.get(p.i), Some(b'0'..=b'9')) {
                p.i += 1;
            }
            p.i > from
        };
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        let leading_zero = self.s.get(self.i) == Some(&b'0');
        if !digits(self) || (leading_zero && self.i - start > 1 + usize::from(self.s[start] == b'-')) {
            return Err(format!("malformed number at byte {start}"));
        }
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            if !digits(self) {
                return Err(format!("malformed number at byte {start}"));
            }
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !digits(self) {
                return Err(format!("malformed number at byte {start}"));
            }
        }
        // the bytes are ASCII digits, signs, '.', 'e': valid UTF-8 and a valid Rust float
        let text = std::str::from_utf8(&self.s[start..self.i]).map_err(|_| format!("malformed number at byte {start}"))?;
        text.parse::<f64>().map(Json::Number).map_err(|_| format!("malformed number at byte {start}"))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let Some(chunk) = self.s.get(self.i..self.i + 4) else {
            return Err(format!("a \\u escape at byte {} is cut short", self.i));
        };
        let mut n = 0;
        for &b in chunk {
            let v = (b as char).to_digit(16).ok_or_else(|| format!("a \\u escape at byte {} is not 4 hex digits", self.i))?;
            n = n * 16 + v;
        }
        self.i += 4;
        Ok(n)
    }

    fn string(&mut self) -> Result<String, String> {
        let start = self.i;
        self.i += 1; // the opening quote
        let mut out = Vec::new();
        loop {
            match self.s.get(self.i) {
                None => return Err(format!("the string at byte {start} is not closed")),
                Some(b'"') => {
                    self.i += 1;
                    return String::from_utf8(out).map_err(|_| format!("the string at byte {start} is not valid UTF-8"));
                }
                Some(b'\\') => {
                    self.i += 1;
                    let escaped = self.s.get(self.i).copied();
                    self.i += 1;
                    let c = match escaped {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            let high = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&high) {
                                if self.s.get(self.i..self.i + 2) != Some(b"\\u") {
                                    return Err(format!("a lone surrogate in the string at byte {start}"));
                                }
                                self.i += 2;
                                let low = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&low) {
                                    return Err(format!("a lone surrogate in the string at byte {start}"));
                                }
                                0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)
                            } else {
                                high
                            };
                            char::from_u32(code).ok_or_else(|| format!("a lone surrogate in the string at byte {start}"))?
                        }
                        _ => return Err(format!("a bad escape in the string at byte {start}")),
                    };
                    let mut buf = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                Some(&b) if b < 0x20 => return Err(format!("a control character (0x{b:02x}) in the string at byte {start}")),
                Some(&b) => {
                    out.push(b);
                    self.i += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_kind_of_value() {
        let v = parse(r#" {"a": [1, -2.5e3, 0, true, false, null], "b": {"c": "x\"\u00e9\ud83d\ude00\n"}, "d": -0.0} "#).unwrap();
        assert_eq!(v.get("a"), Some(&Json::Array(vec![Json::Number(1.0), Json::Number(-2500.0), Json::Number(0.0), Json::Bool(true), Json::Bool(false), Json::Null])));
        assert_eq!(v.get("b").and_then(|b| b.get("c")), Some(&Json::String("x\"é😀\n".into())));
        assert_eq!(v.get("d"), Some(&Json::Number(-0.0)));
        assert_eq!(parse("1e-5").unwrap(), Json::Number(1e-5));
        assert_eq!(parse("12345678901234567890").unwrap(), Json::Number(12345678901234567890.0));
    }

    #[test]
    fn refuses_what_is_not_json() {
        for bad in [
            "", "{", "{\"a\" 1}", "{\"a\":1,}", "[1,]", "01", "-", "1.", "1e", "+1", "tru", "\"abc", "{\"a\":1} x", "{a:1}", "NaN",
            "\"\\x\"", "\"\\ud800\"", "\"\\u12\"", "\"a\u{1}\"", "[1 2]", "{\"a\":1,\"a\":2}",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} was accepted");
        }
        let deep = "[".repeat(MAX_DEPTH + 2) + &"]".repeat(MAX_DEPTH + 2);
        assert!(parse(&deep).unwrap_err().contains("nested deeper"));
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn messages_say_where() {
        assert_eq!(parse("{\"a\":1,\"a\":2}").unwrap_err(), "the key \"a\" appears twice (again at byte 7)");
        assert_eq!(parse("[1 2]").unwrap_err(), "expected ',' or ']' at byte 3, found '2'");
    }
}
