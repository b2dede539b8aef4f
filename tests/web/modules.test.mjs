// modules.test.mjs: the shape of the dashboard's modules (web/js/), as
// docs/ARCHITECTURE.md ("The dashboard") describes it: imports go one
// way (no cycle), no module is over 400 lines, the pure modules import
// nothing that touches the page and name no document or window (so
// node imports them: the other tests here), and every module is
// reached from main.js, the one index.html loads.
// Run: node --test tests/web/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../web');
const JS = path.join(WEB, 'js');
const PURE = ['current', 'format', 'markdown', 'marks', 'order', 'paths', 'place', 'receipts', 'sse', 'unread'];

const src = new Map(fs.readdirSync(JS).filter((f) => f.endsWith('.js'))
  .map((f) => [f, fs.readFileSync(path.join(JS, f), 'utf8')]));
const imports = new Map([...src].map(([f, s]) =>
  [f, [...s.matchAll(/^import .* from '\.\/([\w-]+\.js)';$/gm)].map((m) => m[1])]));

test('every import names a module of web/js/', () => {
  for (const [f, list] of imports) for (const d of list) assert.ok(src.has(d), `${f} imports ${d}`);
});

test('imports go one way: no cycle', () => {
  const state = new Map();
  const walk = (f, trail) => {
    if (state.get(f) === 'open') assert.fail('a cycle: ' + [...trail, f].join(' > '));
    if (state.get(f) === 'done') return;
    state.set(f, 'open');
    for (const d of imports.get(f)) walk(d, [...trail, f]);
    state.set(f, 'done');
  };
  for (const f of src.keys()) walk(f, []);
});

test('no module is over 400 lines', () => {
  for (const [f, s] of src) assert.ok(s.split('\n').length - 1 <= 400, `${f}: ${s.split('\n').length - 1} lines`);
});

test('the pure modules import only pure ones and name no document or window', () => {
  for (const name of PURE) {
    const f = name + '.js';
    assert.ok(src.has(f), f);
    for (const d of imports.get(f)) assert.ok(PURE.includes(d.slice(0, -3)), `${f} imports ${d}`);
    const code = src.get(f).replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    assert.doesNotMatch(code, /\b(document|window|localStorage|navigator|location)\b/, f);
  }
});

test('index.html loads main.js as a module, which reaches every module', () => {
  assert.match(fs.readFileSync(path.join(WEB, 'index.html'), 'utf8'),
    /<script type="module" src="\/js\/main\.js"><\/script>/);
  const reached = new Set();
  const walk = (f) => {
    if (reached.has(f)) return;
    reached.add(f);
    for (const d of imports.get(f)) walk(d);
  };
  walk('main.js');
  assert.deepEqual([...src.keys()].filter((f) => !reached.has(f)), []);
});
