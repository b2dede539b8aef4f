// unread.test.mjs: web/js/marks.js and web/js/unread.js in node, no
// browser: per room the newest message shown in this browser (kept in
// a stand-in for localStorage), and the messages of other members
// after it counted as unread, in history's order (time, then id).
// dashboard_rooms.test.mjs shows the same in Chromium end to end.
// Run: node --test tests/web/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as marks from '../../web/js/marks.js';
import * as unread from '../../web/js/unread.js';

function storage(init) {
  const data = new Map(Object.entries(init || {}));
  return {
    data,
    writes: 0,
    getItem(k) { return data.has(k) ? data.get(k) : null; },
    setItem(k, v) { this.writes++; data.set(k, String(v)); },
  };
}

test('marks are read from storage; what is not a mark is passed over', () => {
  marks.load(storage({ 'papo.seen': JSON.stringify({ r1: { ts: 5, id: 'a' }, r2: { ts: '5', id: 'a' },
    r3: null, r4: { ts: 1 } }) }));
  assert.deepEqual(marks.markOf('r1'), { ts: 5, id: 'a' });
  for (const r of ['r2', 'r3', 'r4', 'r9']) assert.equal(marks.markOf(r), null, r);
});

test('unreadable or missing storage: every room starts read', () => {
  marks.load(storage({ 'papo.seen': '{not json' }));
  assert.equal(marks.markOf('r1'), null);
  marks.load(null);
  marks.advance('r1', { id: 'a', ts: 1 });
  marks.save();                    // a storage that is not there: kept for the page
  assert.deepEqual(marks.markOf('r1'), { ts: 1, id: 'a' });
});

test('a mark only moves forward, ties broken by id, and is saved once changed', () => {
  const s = storage();
  marks.load(s);
  marks.advance('r', { id: 'm', ts: 10 });
  marks.advance('r', { id: 'z', ts: 9 });
  marks.advance('r', { id: 'a', ts: 10 });
  assert.deepEqual(marks.markOf('r'), { ts: 10, id: 'm' });
  marks.advance('r', { id: 'n', ts: 10 });
  assert.deepEqual(marks.markOf('r'), { ts: 10, id: 'n' });
  marks.advance('r', { id: 'x' });                // no time: not a message
  marks.advance(null, { id: 'x', ts: 99 });       // no room shown
  marks.save();
  marks.save();
  assert.equal(s.writes, 1, 'written once');
  assert.deepEqual(JSON.parse(s.data.get('papo.seen')), { r: { ts: 10, id: 'n' } });
});

test('isAfter: history order', () => {
  assert.equal(marks.isAfter({ ts: 2, id: 'a' }, { ts: 1, id: 'z' }), true);
  assert.equal(marks.isAfter({ ts: 1, id: 'b' }, { ts: 1, id: 'a' }), true);
  assert.equal(marks.isAfter({ ts: 1, id: 'a' }, { ts: 1, id: 'a' }), false);
  assert.equal(marks.isAfter({ ts: 0, id: 'z' }, { ts: 1, id: '' }), false);
});

test('rooms new to this browser start read; those it knew are counted; rooms gone lose their mark', () => {
  const s = storage({ 'papo.seen': JSON.stringify({ old: { ts: 1, id: 'a' }, gone: { ts: 1, id: 'b' } }) });
  marks.load(s);
  assert.deepEqual(marks.follow(['old', 'new'], ['old', 'new'], 1000), ['old']);
  assert.deepEqual(marks.markOf('new'), { ts: 1000, id: '' });
  assert.equal(marks.markOf('gone'), null);
  marks.save();
  assert.deepEqual(Object.keys(JSON.parse(s.data.get('papo.seen'))).sort(), ['new', 'old']);
});

const ctx = (over) => ({ shown: 'here', room: { me: 'ana' }, mark: { ts: 100, id: 'm' }, myId: 'A', ...over });

test('a message of another member after the mark is unread, once', () => {
  assert.equal(unread.count('u1', { id: 'x', ts: 101, from: 'bo', from_id: 'B' }, ctx()), true);
  assert.equal(unread.count('u1', { id: 'x', ts: 101, from: 'bo', from_id: 'B' }, ctx()), false, 'again');
  assert.equal(unread.count('u1', { id: 'n', ts: 100, from: 'bo', from_id: 'B' }, ctx()), true, 'same time, later id');
  assert.equal(unread.unreadOf('u1'), 2);
  assert.equal(unread.unreadText('u1'), '2');
});

test('not unread: own messages, those before the mark, in the room shown, of a room not listed or unmarked', () => {
  const m = { id: 'y', ts: 200, from: 'bo', from_id: 'B' };
  assert.equal(unread.count('u2', { ...m, from: 'ana', from_id: 'A' }, ctx()), false, 'mine by id');
  assert.equal(unread.count('u2', { id: 'y', ts: 200, from: 'ana' }, ctx()), false, 'mine by name, no id');
  assert.equal(unread.count('u2', { ...m, from_id: 'A2', from: 'ana' }, ctx()), true,
    'another member with my name is not me');
  assert.equal(unread.count('u3', { ...m, ts: 100, id: 'a' }, ctx()), false, 'before the mark');
  assert.equal(unread.count('here', m, ctx()), false, 'the room shown');
  assert.equal(unread.count('u3', m, ctx({ room: null })), false, 'not in the list');
  assert.equal(unread.count('u3', m, ctx({ mark: null })), false, 'no mark');
  assert.equal(unread.count('u3', { from: 'bo', ts: 300 }, ctx()), false, 'no id');
  assert.equal(unread.unreadOf('u3'), 0);
});

test('a count past one history page shows a "+"; showing the room clears it; a room left is forgotten', () => {
  unread.count('u4', { id: 'a', ts: 101, from: 'bo' }, ctx());
  unread.cap('u4');
  assert.equal(unread.unreadText('u4'), '1+');
  unread.clear('u4');
  assert.equal(unread.unreadText('u4'), '');
  unread.count('u5', { id: 'a', ts: 101, from: 'bo' }, ctx());
  unread.count('u6', { id: 'a', ts: 101, from: 'bo' }, ctx());
  unread.keepOnly(new Set(['u6']));
  assert.equal(unread.unreadOf('u5'), 0);
  assert.equal(unread.unreadOf('u6'), 1);
});
