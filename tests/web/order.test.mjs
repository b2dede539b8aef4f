// order.test.mjs: web/js/order.js in node, no browser: where each
// message stands in the timeline: time order (ties by id), a separator
// for each day, an author's consecutive messages grouped, a reply's
// quote left out when what it answers is just above, reply counts.
// Run: node --test tests/web/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GROUP_MS, byTime, continues, layout, messageKey, replyCounts } from '../../web/js/order.js';

const NOW = new Date(2026, 11, 7, 15, 0);
const T = new Date(2026, 11, 7, 10, 0).getTime();   // this morning
const msg = (id, min, extra = {}) => ({ id, ts: T + min * 60e3, from: 'bo', from_id: 'B', text: id, ...extra });

// The rows as short text: "|Today", "a" (a message), "a+" (continues
// its group), "a>" (quotes what it answers).
const rows = (list, newMark) => layout(list, newMark, NOW).map((r) =>
  r.day ? '|' + r.day : r.m.id + (r.cont ? '+' : '') + (r.quote ? '>' : ''));

test('time order, ties by id; a message being sent by its local key', () => {
  const list = [msg('c', 2), msg('b', 1), msg('a', 1)];
  assert.deepEqual([...list].sort(byTime).map((m) => m.id), ['a', 'b', 'c']);
  assert.equal(messageKey({ key: 'local-1', id: undefined }), 'local-1');
  assert.equal(messageKey({ id: 'x' }), 'x');
});

test('a separator for each day, the group broken by it', () => {
  const y = new Date(2026, 11, 6, 23, 58).getTime();
  const list = [msg('b', 0), { ...msg('a', 0), ts: y }, { ...msg('a2', 0), ts: y + 60e3 }];
  assert.deepEqual(rows(list), ['|Yesterday', 'a', 'a2+', '|Today', 'b']);
});

test('an author\'s messages within GROUP_MS form a group; a gap, another author or recipient breaks it', () => {
  const list = [msg('a', 0), msg('b', 1), msg('c', 1 + GROUP_MS / 60e3),
    msg('d', 7, { from: 'cy', from_id: 'C' }), msg('e', 8, { from: 'cy', from_id: 'C', to: 'ana', to_id: 'A' }),
    msg('f', 9, { from: 'cy', from_id: 'C', to: 'ana', to_id: 'A' })];
  assert.deepEqual(rows(list), ['|Today', 'a', 'b+', 'c', 'd', 'e', 'f+']);
});

test('two members of one name are two authors; an id-less old message groups by name', () => {
  assert.equal(continues(msg('a', 0), msg('b', 1, { from_id: 'B2' }), null), false);
  assert.equal(continues({ id: 'a', ts: T, from: 'bo' }, { id: 'b', ts: T + 1, from: 'bo' }, null), true);
});

test('the first new message starts a group of its own (the "New messages" line)', () => {
  assert.deepEqual(rows([msg('a', 0), msg('b', 1), msg('c', 2)], 'b'), ['|Today', 'a', 'b', 'c+']);
});

test('a message being sent does not join a stored one; two being sent do', () => {
  const stored = msg('a', 0);
  const sending = { key: 'local-1', local: true, sending: true, ts: T + 60e3, from: 'bo', from_id: 'B' };
  assert.equal(continues(stored, sending, null), false);
  assert.equal(continues(sending, { ...sending, key: 'local-2', ts: T + 90e3 }, null), true);
});

test('a reply quotes what it answers unless that is just above, or its group answers it too', () => {
  const list = [msg('p', 0, { from: 'ana', from_id: 'A' }), msg('r1', 1, { reply_to: 'p' }),
    msg('r2', 2, { reply_to: 'p' }), msg('x', 3, { from: 'cy', from_id: 'C' }),
    msg('r3', 4, { reply_to: 'p' }), msg('r4', 5, { reply_to: 'gone' })];
  assert.deepEqual(rows(list), ['|Today', 'p', 'r1', 'r2+', 'x', 'r3>', 'r4+>']);
});

test('reply counts: how many messages answer each one', () => {
  const n = replyCounts([msg('p', 0), msg('a', 1, { reply_to: 'p' }), msg('b', 2, { reply_to: 'p' }),
    msg('c', 3, { reply_to: 'a' })]);
  assert.deepEqual([...n], [['p', 2], ['a', 1]]);
});

test('layout does not reorder the list it was given', () => {
  const list = [msg('b', 1), msg('a', 0)];
  layout(list, null, NOW);
  assert.deepEqual(list.map((m) => m.id), ['b', 'a']);
});
