/*
 * unread.js: per room not shown, the messages of other members that
 * came after the room's mark (marks.js), as this browser counts them:
 * live from the stream, and at load from each room's history since its
 * mark (one page: beyond it, the count is "capped" and shows a "+").
 * It owns the counts; pure, so tests/web/unread.test.mjs runs it in node.
 */
import { isAfter } from './marks.js';

const unread = new Map();          // room id -> Set of unread message ids
const capped = new Set();          // rooms with more unread than one history page

// Counts m as unread in room when another member wrote it after the
// room's mark; true when the count grew.  ctx: { shown (the room
// shown: nothing there is unread), room ({ me }: this member's name
// there, or null for a room not in the list), mark (the room's, or
// null), myId }.
export function count(room, m, ctx) {
  if (!m || typeof m.id !== 'string' || typeof m.ts !== 'number' || room === ctx.shown) return false;
  if (!ctx.room || !ctx.mark || !isAfter(m, ctx.mark)) return false;
  if (m.from_id ? m.from_id === ctx.myId : m.from === ctx.room.me) return false;
  let set = unread.get(room);
  if (!set) {
    set = new Set();
    unread.set(room, set);
  }
  if (set.has(m.id)) return false;
  set.add(m.id);
  return true;
}

export function unreadOf(room) {
  const set = unread.get(room);
  return set ? set.size : 0;
}

// The count as the list shows it: "3", "200+", or '' for none.
export function unreadText(room) {
  const n = unreadOf(room);
  return n ? n + (capped.has(room) ? '+' : '') : '';
}

// More may be unread than the history page counted.
export function cap(room) {
  capped.add(room);
}

// The room is shown: all of it is read.
export function clear(room) {
  unread.delete(room);
  capped.delete(room);
}

// Forgets the rooms not in ids (left).
export function keepOnly(ids) {
  for (const id of [...unread.keys()]) if (!ids.has(id)) unread.delete(id);
}
