// A TypeDoc plugin for the HTML API reference (typedoc.html.json): TypeDoc's default theme puts a
// permalink (<a class="tsd-anchor-icon">) inside the heading of each collapsible section, and so
// inside its <summary>, a control: a link inside a control is axe's `nested-interactive` (a screen
// reader announces the summary as a button and cannot reach the link). The heading keeps its id, so
// links to #functions etc. still work; only the icon link inside the summary goes.
import { PageEvent } from 'typedoc';

const SUMMARY = /<summary\b[^>]*>[\s\S]*?<\/summary>/g;
const ANCHOR_ICON = /<a\b[^>]*class="tsd-anchor-icon"[^>]*>[\s\S]*?<\/a>/g;

/** The page's HTML with every link removed from inside <summary> elements. */
export function withoutLinksInSummaries(html) {
  return html.replace(SUMMARY, (summary) => summary.replace(ANCHOR_ICON, ''));
}

export function load(app) {
  app.renderer.on(PageEvent.END, (page) => {
    if (typeof page.contents === 'string') page.contents = withoutLinksInSummaries(page.contents);
  });
}
