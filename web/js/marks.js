/*
 * marks.js: per room, the newest message shown in this browser (its
 * time and id, "the mark"), kept in localStorage under papo.seen.  A
 * message ordered after a room's mark (docs/RELIABILITY.md, "History
 * order") has not been seen here (unread.js counts it).  It owns the
 * marks; the storage is passed to load(), so tests/web/marks.test.mjs
 * runs it in node with a stand-in.
 */

const MARKS_KEY = 'papo.seen';   // room id -> { ts, id } of the newest shown

const marks = new Map();
let store = null;
let dirty = false;

// Takes the marks storage keeps (null: none, as in private mode).
export function load(storage) {
  store = storage;
  marks.clear();
  dirty = false;
  try {
    const o = JSON.parse(store.getItem(MARKS_KEY) || '{}');
    for (const k of Object.keys(o)) {
      const v = o[k];
      if (v && typeof v.ts === 'number' && typeof v.id === 'string') marks.set(k, { ts: v.ts, id: v.id });
    }
  } catch (e) { /* none kept, or unreadable: every room starts read */ }
}

// Writes the marks back, if they changed since.
export function save() {
  if (!dirty) return;
  dirty = false;
  try {
    store.setItem(MARKS_KEY, JSON.stringify(Object.fromEntries(marks)));
  } catch (e) { /* private mode: kept for this page only */ }
}

// Whether message m comes after mark k in history's order (time, then id).
export function isAfter(m, k) {
  return m.ts > k.ts || (m.ts === k.ts && String(m.id) > k.id);
}

export function markOf(room) {
  return marks.get(room) || null;
}

// Message m of room was shown: the mark moves to it if it is newer.
export function advance(room, m) {
  if (!room || !m || typeof m.id !== 'string' || typeof m.ts !== 'number') return;
  const k = marks.get(room);
  if (k && !isAfter(m, k)) return;
  marks.set(room, { ts: m.ts, id: m.id });
  dirty = true;
}

// The daemon's rooms now (current), of which added are new to the page:
// a room this browser never saw starts read (its mark is now); rooms
// gone lose theirs.  Returns the added rooms that have a mark from
// before, whose unread messages are to be counted.
export function follow(added, current, now = Date.now()) {
  const counted = [];
  for (const id of added) {
    if (marks.has(id)) {
      counted.push(id);
    } else {
      marks.set(id, { ts: now, id: '' });
      dirty = true;
    }
  }
  const keep = new Set(current);
  for (const id of [...marks.keys()]) {
    if (!keep.has(id)) {
      marks.delete(id);
      dirty = true;
    }
  }
  return counted;
}
