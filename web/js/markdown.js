/*
 * markdown.js: a message's Markdown on the page.  The daemon renders it
 * (libcmark, raw HTML shown as text, links made safe: README "HTTP
 * API", ?html=1); the page parses that HTML into an inert document
 * (DOMParser: nothing in it runs or loads) and copyMarkdown copies only
 * the elements and attributes Markdown makes (MD_TAGS) into new
 * elements of its own, so a daemon's bug could not put a script or an
 * image here either.  The document to make elements with is passed in,
 * never taken from the page, so tests/web/markdown.test.mjs runs the
 * copy in node on a small stand-in.
 */

const TEXT_NODE = 3;
const ELEMENT_NODE = 1;

// What CommonMark and GitHub's tables and strikethrough make, papo's
// @name span and a search excerpt's <mark>, and nothing else (no img:
// images come as links).
export const MD_TAGS = new Set(['P', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'EM', 'STRONG',
  'CODE', 'PRE', 'UL', 'OL', 'LI', 'BLOCKQUOTE', 'HR', 'BR', 'A', 'TABLE',
  'THEAD', 'TBODY', 'TR', 'TH', 'TD', 'DEL', 'SPAN', 'MARK']);
const MD_ALIGN = new Set(['left', 'center', 'right']);
const LANG_RE = /^language-[\w+#.-]{1,40}$/;

// A link may go to http(s), mailto, or a path of this daemon.
export function safeHref(h) {
  return typeof h === 'string' && (/^(https?|mailto):/i.test(h) || !/^[^/?#]*:/.test(h));
}

function make(doc, tag, cls, text) {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// The language a code block names (```js), or ''.
function langOf(pre) {
  for (const c of pre.childNodes)
    if (c.nodeType === ELEMENT_NODE && c.tagName === 'CODE' && LANG_RE.test(c.className))
      return c.className.slice(9);
  return '';
}

// A code block: its language, if named, and a copy button above it.
function codeBlock(doc, pre, lang) {
  const box = make(doc, 'div', 'code-block');
  const bar = make(doc, 'div', 'code-bar');
  bar.append(make(doc, 'span', 'code-lang', lang || 'code'));
  const b = make(doc, 'button', 'code-copy link-button', 'Copy');
  b.type = 'button';
  b.title = 'Copy this code';
  bar.append(b);
  box.append(bar, pre);
  return box;
}

// Copies the children of from (the parsed HTML) into to, made with doc;
// top: from is the body, whose whitespace between blocks is not text.
export function copyMarkdown(doc, from, to, top) {
  for (const n of from.childNodes) {
    if (n.nodeType === TEXT_NODE) {
      if (!(top && /^\s*$/.test(n.data))) to.append(doc.createTextNode(n.data));
      continue;
    }
    if (n.nodeType !== ELEMENT_NODE) continue;   // comments
    if (!MD_TAGS.has(n.tagName)) {
      // Never an element of ours: at most its text.
      if (n.textContent) to.append(doc.createTextNode(n.textContent));
      continue;
    }
    let e;
    if (n.tagName === 'A') {
      const href = n.getAttribute('href');
      if (safeHref(href)) {
        e = make(doc, 'a', 'md-link');
        e.href = href;
        e.rel = 'noopener noreferrer';
        e.target = '_blank';
        e.title = href;
      } else {
        e = make(doc, 'span');
      }
    } else {
      e = doc.createElement(n.tagName.toLowerCase());
    }
    if (n.tagName === 'OL' && /^\d{1,9}$/.test(n.getAttribute('start') || ''))
      e.start = Number(n.getAttribute('start'));
    if (n.tagName === 'CODE' && LANG_RE.test(n.className))
      e.dataset.lang = n.className.slice(9);
    if ((n.tagName === 'TH' || n.tagName === 'TD') && MD_ALIGN.has(n.getAttribute('align')))
      e.style.textAlign = n.getAttribute('align');
    if (n.tagName === 'SPAN' && n.className === 'mention') e.className = 'mention';
    if (n.tagName === 'MARK') e.className = 'hit';
    copyMarkdown(doc, n, e, false);
    if (n.tagName === 'PRE') e = codeBlock(doc, e, langOf(n));
    to.append(e);
  }
}

// A search excerpt as runs of text, those the index found (its marks:
// [start, end) in code points) with hit set; marks out of order or
// malformed are passed over.
export function excerptParts(excerpt, marks) {
  const cps = Array.from(excerpt);
  const out = [];
  let at = 0;
  for (const m of Array.isArray(marks) ? marks : []) {
    if (!Array.isArray(m) || !(m[0] >= at) || !(m[1] > m[0])) continue;
    if (m[0] > at) out.push({ text: cps.slice(at, m[0]).join(''), hit: false });
    out.push({ text: cps.slice(m[0], m[1]).join(''), hit: true });
    at = m[1];
  }
  if (at < cps.length) out.push({ text: cps.slice(at).join(''), hit: false });
  return out;
}
