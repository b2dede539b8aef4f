/*
 * order.js: where each message stands in the timeline.  Messages are in
 * time order (docs/RELIABILITY.md, "History order"), under a separator
 * for each day; a reply stands where its time puts it, quoting what it
 * answers unless that is just above; an author's consecutive messages
 * form a group (name and time once).  Pure: timeline.js draws what
 * layout() says, tests/web/order.test.mjs checks it in node.
 */
import { dayLabel } from './format.js';

// Two messages one after the other read as one group within this.
export const GROUP_MS = 5 * 60 * 1000;

// The key of a message on the page: its id, or the local key of one
// being sent.
export function messageKey(m) {
  return m.key || m.id;
}

// Time order, ties by key, so every page orders alike.
export function byTime(a, b) {
  return a.ts - b.ts || String(messageKey(a)).localeCompare(String(messageKey(b)));
}

// Whether m, just after prev, continues its group: the same author, to
// the same members, within GROUP_MS, and not the first new message
// (newMark: the "New messages" line goes above it).
export function continues(prev, m, newMark) {
  if (!prev || prev.local !== m.local && (prev.sending || m.sending)) return false;
  const a = prev.from_id || prev.from, b = m.from_id || m.from;
  return a === b && prev.from === m.from && (prev.to_id || prev.to || null) === (m.to_id || m.to || null) &&
    m.ts - prev.ts >= 0 && m.ts - prev.ts < GROUP_MS && newMark !== m.id;
}

// How many of the messages answer each id.
export function replyCounts(msgs) {
  const n = new Map();
  for (const m of msgs) if (m.reply_to) n.set(m.reply_to, (n.get(m.reply_to) || 0) + 1);
  return n;
}

// The timeline's rows for msgs (any order): { day } for a separator, {
// m, cont, quote } for a message (cont: it continues its group; quote:
// its quote of the message it answers is shown).
export function layout(msgs, newMark, now = new Date()) {
  const rows = [];
  let day = null;
  let prev = null;
  for (const m of [...msgs].sort(byTime)) {
    const label = dayLabel(m.ts, now);
    if (label !== day) {
      rows.push({ day: label });
      day = label;
      prev = null;
    }
    const cont = continues(prev, m, newMark);
    const quote = !!m.reply_to && !(prev && (prev.id === m.reply_to ||
      (cont && prev.reply_to === m.reply_to)));
    rows.push({ m, cont, quote });
    prev = m;
  }
  return rows;
}
