/*
 * history.js: the room shown's log as far as the page has it: pages of
 * /history (HISTORY_PAGE messages, the node's `earlier` cursor for the
 * page before: docs/RELIABILITY.md, "History order"), where retention
 * (PAPO_KEEP) cut it, and the room's key changes, one line each above
 * the messages.  It owns those bounds and draws the retention note, the
 * key changes and whether "Show earlier messages" is offered; the
 * messages themselves go to timeline.js.
 */
import { api } from './api.js';
import { gen, onLeave, roomPath } from './current.js';
import { ui, el } from './dom.js';

export const HISTORY_PAGE = 200;   // messages loaded at start and per "earlier"

export let oldestTs = null;        // the oldest message's time on the page
let earlier = null;                // the cursor of the page before, if any
export let moreBefore = true;      // whether older messages are left
let retention = null;              // /api/history's retention, when any
let roomEvents = [];               // /api/history's room: key changes

// A message is on the page (the oldest's time is where "earlier" starts
// without a cursor).
export function noteMessage(m) {
  if (oldestTs === null || m.ts < oldestTs) oldestTs = m.ts;
}

// The newest page's messages, or null when another room is shown since;
// first() (asked once the answer is in, as events may have come
// meanwhile): nothing is on the page yet, so its cursor is the one to
// follow.
export async function latestPage(first) {
  const asked = gen;
  const h = await api(roomPath('/history?html=1&limit=' + HISTORY_PAGE));
  if (asked !== gen) return null;
  retention = h.retention || null;
  roomEvents = Array.isArray(h.room) ? h.room : [];
  renderRoomLog();
  if (first()) {
    // Absent when nothing older is left.
    earlier = h.earlier || null;
    moreBefore = !!h.earlier;
  }
  return h.messages || [];
}

// Whether there is a way to ask for older messages.
export function canGoBack() {
  return earlier !== null || oldestTs !== null;
}

// The page before the oldest shown, or null when another room is shown
// since.
export async function olderPage() {
  const asked = gen;
  const c = earlier;
  const h = await api(roomPath('/history?html=1&limit=' + HISTORY_PAGE + (c ?
    '&before=' + c.before + '&before_id=' + encodeURIComponent(c.before_id) :
    '&before=' + oldestTs)));
  if (asked !== gen) return null;
  retention = h.retention || null;
  earlier = h.earlier || null;
  moreBefore = !!h.earlier;
  return h.messages || [];
}

// The top of the timeline, which shows count messages: the button for
// earlier ones, and where the log starts when retention dropped older
// messages (said once the earliest kept message is on the page).
export function renderStart(count) {
  ui.older.hidden = !moreBefore || count === 0;
  const r = retention;
  const show = !!(r && r.starts) && !moreBefore;
  ui.retention.hidden = !show;
  if (show) {
    ui.retention.textContent = 'Earlier messages were dropped by retention' +
      (r.keep ? ' (PAPO_KEEP=' + r.keep + ')' : '') + ': ' +
      r.dropped.toLocaleString() + ' before ' +
      new Date(r.starts).toLocaleString() + '.';
  }
}

// The room's key changes (rotations, removals), one line each, as
// the daemon words them: "ana removed cy; the room key changed (epoch 3)".
function renderRoomLog() {
  const list = roomEvents;
  ui.roomlog.replaceChildren();
  ui.roomlog.hidden = list.length === 0;
  for (const e of list) {
    if (!e || typeof e.text !== 'string') continue;
    const li = el('li', 'roomlog-line', e.text);
    if (typeof e.ts === 'number') li.title = new Date(e.ts).toLocaleString();
    ui.roomlog.append(li);
  }
}

// The key changes again (a "room" event of kind "epoch").
export async function loadRoomLog() {
  const asked = gen;
  const h = await api(roomPath('/history?limit=1'));
  if (asked !== gen) return;
  roomEvents = Array.isArray(h.room) ? h.room : [];
  renderRoomLog();
}

onLeave(() => {
  oldestTs = null;
  earlier = null;
  moreBefore = true;
  retention = null;
  roomEvents = [];
  renderRoomLog();
});
