// fakedom.mjs: just enough of a DOM for markdown.js in node: elements
// and text nodes to copy from (what DOMParser would give) and a
// document to make new ones with, and show() to write what was made as
// text a test can compare.  Not a parser: the tests build the source
// trees with h().
class Text {
  constructor(data) {
    this.nodeType = 3;
    this.data = data;
  }
  get textContent() {
    return this.data;
  }
}

class Elem {
  constructor(tag, attrs = {}, children = []) {
    this.nodeType = 1;
    this.tagName = tag.toUpperCase();
    this.attrs = attrs;
    this.className = attrs.class || '';
    this.childNodes = children;
    this.dataset = {};
    this.style = {};
  }
  getAttribute(n) {
    return Object.prototype.hasOwnProperty.call(this.attrs, n) ? this.attrs[n] : null;
  }
  append(...nodes) {
    this.childNodes.push(...nodes);
  }
  get textContent() {
    return this.childNodes.map((c) => c.textContent).join('');
  }
  set textContent(t) {
    this.childNodes = [new Text(t)];
  }
}

// A source element: h('a', { href: 'x' }, 'text', h('em', {}, 'more')).
export function h(tag, attrs, ...children) {
  return new Elem(tag, attrs || {}, children.map((c) => (typeof c === 'string' ? new Text(c) : c)));
}

export function comment(text) {
  return { nodeType: 8, textContent: text };
}

export const doc = {
  createElement: (tag) => new Elem(tag),
  createTextNode: (data) => new Text(data),
};

// What was made, as text: <tag props>children</tag>, text as it is.
export function show(n) {
  if (n.nodeType === 3) return n.data;
  const props = [];
  for (const k of ['className', 'href', 'rel', 'target', 'title', 'start', 'type'])
    if (n[k] !== undefined && n[k] !== '') props.push(`${k}=${n[k]}`);
  for (const [k, v] of Object.entries(n.dataset)) props.push(`data-${k}=${v}`);
  for (const [k, v] of Object.entries(n.style)) props.push(`style.${k}=${v}`);
  const attrs = Object.keys(n.attrs);
  if (attrs.length) props.push('ATTRS:' + attrs.join(','));   // never set by the copy
  const tag = n.tagName.toLowerCase();
  return `<${tag}${props.length ? ' ' + props.join(' ') : ''}>${n.childNodes.map(show).join('')}</${tag}>`;
}
