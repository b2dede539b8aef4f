// markdown.test.mjs: web/js/markdown.js in node, no browser, on a small
// stand-in DOM (fakedom.mjs): the daemon's HTML copied element by
// element, only what Markdown makes, links made safe, code blocks with
// their language and Copy button, and a search excerpt's marks.
// dashboard_reader.test.mjs shows the same in Chromium end to end.
// Run: node --test tests/web/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyMarkdown, excerptParts, safeHref } from '../../web/js/markdown.js';
import { comment, doc, h, show } from './fakedom.mjs';

// The copy of body's children into a new <div>, as text.
function copied(...children) {
  const to = doc.createElement('div');
  copyMarkdown(doc, h('body', {}, ...children), to, true);
  return show(to).slice('<div>'.length, -'</div>'.length);
}

test('the elements Markdown makes are copied, and none of their attributes', () => {
  assert.equal(copied(h('p', { onclick: 'x()', id: 'p1', style: 'color:red' }, 'a ',
    h('strong', {}, 'b'), ' ', h('em', {}, 'c'), h('del', {}, 'd'), h('br'))),
  '<p>a <strong>b</strong> <em>c</em><del>d</del><br></br></p>');
  assert.equal(copied(h('ul', {}, h('li', {}, 'one')), h('blockquote', {}, h('p', {}, 'q')), h('hr')),
    '<ul><li>one</li></ul><blockquote><p>q</p></blockquote><hr></hr>');
});

test('whitespace between blocks is not text; inside them it is', () => {
  assert.equal(copied(h('p', {}, 'a'), '\n  \n', h('p', {}, ' ', h('code', {}, 'x'), ' ')),
    '<p>a</p><p> <code>x</code> </p>');
});

test('any other element is at most its text: no script, image, style or iframe', () => {
  assert.equal(copied(h('script', {}, 'alert(1)'), h('img', { src: 'x', onerror: 'alert(2)' }),
    h('p', {}, h('iframe', { src: 'https://evil.example' }, 'frame'), h('style', {}, 'p{}'),
      h('svg', {}, h('a', { href: 'javascript:alert(3)' }, 'svg link')))),
  'alert(1)<p>framep{}svg link</p>');
});

test('comments are dropped', () => {
  assert.equal(copied(h('p', {}, 'a', comment('<script>'), 'b')), '<p>ab</p>');
});

test('safeHref: http, https, mailto and this daemon\'s paths only', () => {
  for (const ok of ['https://example.org/a?b=1', 'HTTP://x', 'mailto:a@b.c', '/api/x', '#m-1',
    '?q=1', 'notes/a:b', ''])
    assert.equal(safeHref(ok), true, ok);
  for (const bad of ['javascript:alert(1)', 'JavaScript:x', 'data:text/html,x', 'vbscript:x',
    'file:///etc/passwd', 'blob:https://x', null, undefined, 42])
    assert.equal(safeHref(bad), false, String(bad));
});

test('a safe link opens apart, its target as its title; an unsafe one is a span', () => {
  assert.equal(copied(h('a', { href: 'https://example.org/n', target: '_self', onclick: 'x' }, 'notes')),
    '<a className=md-link href=https://example.org/n rel=noopener noreferrer target=_blank ' +
    'title=https://example.org/n>notes</a>');
  assert.equal(copied(h('a', { href: 'javascript:alert(1)' }, 'click')), '<span>click</span>');
  assert.equal(copied(h('a', {}, 'no href')), '<span>no href</span>');
});

test('a code block has its language, if named, and a Copy button', () => {
  const block = copied(h('pre', {}, h('code', { class: 'language-js' }, 'let x = "<b>";\n')));
  assert.equal(block, '<div className=code-block><div className=code-bar>' +
    '<span className=code-lang>js</span>' +
    '<button className=code-copy link-button title=Copy this code type=button>Copy</button></div>' +
    '<pre><code data-lang=js>let x = "<b>";\n</code></pre></div>');
  assert.match(copied(h('pre', {}, h('code', {}, 'x'))), /<span className=code-lang>code<\/span>/);
  // A class that is not a language name says nothing.
  const odd = copied(h('pre', {}, h('code', { class: 'language-x" onload="y' }, 'x')));
  assert.match(odd, /code-lang>code</);
  assert.doesNotMatch(odd, /data-lang/);
});

test('an ordered list keeps its start, a table cell its alignment, when well formed', () => {
  assert.equal(copied(h('ol', { start: '3' }, h('li', {}, 'c'))), '<ol start=3><li>c</li></ol>');
  assert.equal(copied(h('ol', { start: '3; x' }, h('li', {}, 'c'))), '<ol><li>c</li></ol>');
  assert.equal(copied(h('table', {}, h('tr', {}, h('td', { align: 'center' }, 'a'),
    h('th', { align: 'expression(x)' }, 'b')))),
  '<table><tr><td style.textAlign=center>a</td><th>b</th></tr></table>');
});

test('a mention keeps its class, a search mark becomes a hit; other classes go', () => {
  assert.equal(copied(h('p', {}, h('span', { class: 'mention' }, '@bo'), h('span', { class: 'evil' }, 'x'),
    h('mark', { class: 'x' }, 'word'))),
  '<p><span className=mention>@bo</span><span>x</span><mark className=hit>word</mark></p>');
});

test('excerptParts marks the words found, by code point', () => {
  assert.deepEqual(excerptParts('un café à Paris', [[3, 7], [10, 15]]), [
    { text: 'un ', hit: false }, { text: 'café', hit: true }, { text: ' à ', hit: false },
    { text: 'Paris', hit: true },
  ]);
  assert.deepEqual(excerptParts('😀 ok', [[2, 4]]), [{ text: '😀 ', hit: false }, { text: 'ok', hit: true }]);
});

test('excerptParts passes over marks that overlap, go back, are empty or not pairs', () => {
  assert.deepEqual(excerptParts('abcdef', [[1, 3], [2, 4], [0, 1], [4, 4], 'x', [5], [4, 6]]), [
    { text: 'a', hit: false }, { text: 'bc', hit: true }, { text: 'd', hit: false },
    { text: 'ef', hit: true },
  ]);
  assert.deepEqual(excerptParts('abc', null), [{ text: 'abc', hit: false }]);
  assert.deepEqual(excerptParts('', []), []);
});
