// sse.test.mjs: web/js/sse.js in node, no browser: the event stream's
// text as the WHATWG event-stream format reads it, however the chunks
// are cut.
// Run: node --test tests/web/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sseParser } from '../../web/js/sse.js';

function parseAll(chunks) {
  const events = [];
  const retries = [];
  const p = sseParser((name, data, id) => events.push({ name, data, id }), (ms) => retries.push(ms));
  for (const c of chunks) p(c);
  return { events, retries };
}

test('an event with its name, data and id', () => {
  const { events } = parseAll(['id: 7-1\nevent: message\ndata: {"a":1}\n\n']);
  assert.deepEqual(events, [{ name: 'message', data: '{"a":1}', id: '7-1' }]);
});

test('no event name is "message"; data lines join with newlines; the id stays', () => {
  const { events } = parseAll(['id: 1\ndata: a\ndata:b\n\n', 'data: c\n\n']);
  assert.deepEqual(events, [
    { name: 'message', data: 'a\nb', id: '1' },
    { name: 'message', data: 'c', id: '1' },
  ]);
});

test('chunks cut anywhere, CRLF and CR line ends alike', () => {
  const text = 'event: receipt\r\ndata: x\r\n\r\nevent: file\rdata: y\r\revent: presence\ndata: z\n\n';
  const whole = parseAll([text]).events;
  for (let i = 1; i < text.length; i++) {
    assert.deepEqual(parseAll([text.slice(0, i), text.slice(i)]).events, whole, `cut at ${i}`);
  }
  assert.deepEqual(whole.map((e) => e.name + ':' + e.data), ['receipt:x', 'file:y', 'presence:z']);
  assert.deepEqual(parseAll([...text]).events, whole, 'a character at a time');
});

test('heartbeats (comments) and events without data dispatch nothing', () => {
  const { events } = parseAll([': ping\n\n', 'event: rooms\n\n', ':\n']);
  assert.deepEqual(events, []);
});

test('an id with a NUL is ignored; retry takes digits only', () => {
  const { events, retries } = parseAll(['id: 5\n\nid: 6\0x\ndata: d\n\nretry: 3000\nretry: 3s\n\n']);
  assert.deepEqual(events, [{ name: 'message', data: 'd', id: '5' }]);
  assert.deepEqual(retries, [3000]);
});

test('a line not yet ended waits for the rest', () => {
  const got = [];
  const p = sseParser((n, d) => got.push(d), () => {});
  p('data: par');
  p('tial\n');
  assert.deepEqual(got, []);
  p('\n');
  assert.deepEqual(got, ['partial']);
});
