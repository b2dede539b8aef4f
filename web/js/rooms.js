/*
 * rooms.js: the daemon's rooms (/api/rooms) and which is shown.  The
 * room shown is in the URL (#room=ID), so a reload or a link keeps it;
 * choosing another (a link in the list, or the selector on a phone)
 * changes the hash, and the page forgets what it showed (current.js's
 * onLeave) and loads that room's, without reloading.  With one room
 * there is no list.  Unread counts are this browser's (marks.js,
 * unread.js): at load each other room's history since its mark is
 * counted, then the stream's messages of other rooms.  It owns the list
 * and the default room's id.
 */
import { api } from './api.js';
import { first, roomPath, show, shown } from './current.js';
import { ui, batched, el } from './dom.js';
import { swapDraft } from './composer.js';
import { HISTORY_PAGE } from './history.js';
import * as marks from './marks.js';
import { loadStatus, myId } from './status.js';
import { loadHistory, render } from './timeline.js';
import * as unread from './unread.js';

const ROOMS_AFTER_EVENT_MS = 150;

export let rooms = [];             // /api/rooms's list: { id, name, me, default }
export let dflt = null;            // the default room's id

export function roomOf(id) {
  return rooms.find((r) => r.id === id) || null;
}

// The room a URL names: its id, its name, or the start of its id (4
// characters at least), as the daemon takes them; null for none.
function resolveRoom(sel) {
  if (!sel) return null;
  const r = roomOf(sel) || rooms.find((x) => x.name === sel) ||
    (sel.length >= 4 ? rooms.find((x) => x.id.startsWith(sel)) : null);
  return r ? r.id : null;
}

function hashRoom() {
  return new URLSearchParams(location.hash.slice(1)).get('room');
}

// A URL naming a room this daemon does not hold (left, or mistyped)
// loses its hash: the default room is shown, and a line says so.
function dropStaleHash() {
  const sel = hashRoom();
  if (sel !== null && resolveRoom(sel) === null) {
    history.replaceState(null, '', location.pathname + location.search);
    const d = roomOf(dflt);
    ui.roomNote.textContent = 'No room \u201c' + sel + '\u201d here (left, or mistyped): ' +
      'showing ' + (d ? 'the default room, ' + d.name : 'the default room') + '.';
    ui.roomNote.hidden = false;
  } else if (sel !== null) {
    ui.roomNote.hidden = true;
  }
}

// Counts message m of room (not the one shown) as unread when it
// should be; true when the count grew.
export function countUnread(room, m) {
  return unread.count(room, m, { shown, room: roomOf(room), mark: marks.markOf(room), myId: myId() });
}

// A room's unread messages kept in its history, counted once at load
// (or when it comes back): the newest page since its mark.
async function countFromHistory(room) {
  const k = marks.markOf(room);
  if (!k || room === shown) return;
  const h = await api(roomPath('/history?limit=' + HISTORY_PAGE + '&since=' + k.ts, room));
  const msgs = h.messages || [];
  let grew = false;
  for (const m of msgs) grew = countUnread(room, m) || grew;
  if (msgs.length >= HISTORY_PAGE) unread.cap(room);   // and maybe more before
  if (grew) renderRooms();
}

// Takes the daemon's list of rooms: rooms new to the page get their
// count (or a mark, when this browser never saw them); rooms gone lose
// theirs; the room shown, if gone, gives way to the default.  Returns
// the rooms whose unread messages are to be counted.
function applyRooms(j) {
  if (!j || !Array.isArray(j.rooms)) return [];
  const before = new Set(rooms.map((r) => r.id));
  rooms = j.rooms.filter((r) => r && typeof r.id === 'string' && r.id &&
    typeof r.name === 'string').map((r) => ({ id: r.id, name: r.name,
    me: typeof r.me === 'string' ? r.me : '', default: !!r.default }));
  dflt = typeof j.default === 'string' ? j.default :
    (rooms.find((r) => r.default) || rooms[0] || {}).id || null;
  const ids = rooms.map((r) => r.id);
  const fresh = marks.follow(ids.filter((id) => !before.has(id)), ids);
  unread.keepOnly(new Set(ids));
  marks.save();
  if (shown && !ids.includes(shown)) showRoom(resolveRoom(hashRoom()) || dflt);
  renderRooms();
  return fresh;
}

// Counts the rooms' kept unread messages one after another: a daemon
// of 64 rooms is not asked 63 histories at once.
async function countRooms(ids) {
  for (const id of ids) await countFromHistory(id).catch(() => {});
}

export async function loadRooms() {
  const fresh = applyRooms(await api('/api/rooms'));
  if (shown) countRooms(fresh);
  return fresh;
}

// A "rooms" event loads the list again: the replay after (re)connecting
// brings old lists too, and only the daemon's answer is the list now.
export const roomsSoon = batched(() => loadRooms().catch(() => {}), ROOMS_AFTER_EVENT_MS);

function roomItem(r) {
  const li = el('li', 'room-item');
  li.dataset.id = r.id;
  const a = el('a', 'room-link');
  a.href = '#room=' + encodeURIComponent(r.id);
  a.title = r.name + ' (' + r.id + ')' + (r.id === dflt ? ', the default room' : '');
  if (r.id === shown) a.setAttribute('aria-current', 'page');
  li.classList.toggle('shown', r.id === shown);
  a.append(el('span', 'room-name', r.name));
  if (r.id === dflt) a.append(el('span', 'room-default', 'default'));
  const n = unread.unreadText(r.id);
  li.classList.toggle('has-unread', !!n);
  if (n) {
    const b = el('span', 'unread', n);
    b.title = n + ' unread';
    a.append(b);
  }
  li.append(a);
  return li;
}

// The list (a sidebar) and the selector (a phone), drawn again only
// when what they show changed, so an open selector stays open.
export function renderRooms() {
  const many = rooms.length > 1;
  ui.app.classList.toggle('many-rooms', many);
  ui.rooms.hidden = !many;
  ui.roomPickBox.hidden = !many;
  ui.searchAllBox.hidden = !many;
  if (!many) ui.searchAll.checked = false;
  const sig = JSON.stringify([shown, dflt,
    rooms.map((r) => [r.id, r.name, unread.unreadText(r.id)])]);
  if (ui.roomList.dataset.sig === sig) return;
  ui.roomList.dataset.sig = sig;
  ui.roomList.replaceChildren(...(many ? rooms.map(roomItem) : []));
  ui.roomsCount.textContent = many ? String(rooms.length) : '';
  const opts = rooms.map((r) => {
    const n = unread.unreadText(r.id);
    const o = el('option', '', r.name + (r.id === dflt ? ' (default)' : '') +
      (n ? ' · ' + n + ' unread' : ''));
    o.value = r.id;
    return o;
  });
  ui.roomPick.replaceChildren(...opts);
  if (shown) ui.roomPick.value = shown;
  let others = 0;
  for (const r of rooms) if (r.id !== shown) others += unread.unreadOf(r.id);
  ui.roomPickUnread.hidden = !others;
  ui.roomPickUnread.textContent = others ? others + ' unread' : '';
  ui.roomPickUnread.title = others ? others + ' unread in other rooms' : '';
}

// Shows room id (one of the list): its messages, members and status,
// loaded now; its unread count is cleared.  No reload: the stream of
// every room goes on.  The promise is kept when its history is shown.
export function showRoom(id) {
  if (!id || !roomOf(id)) id = dflt;
  dropStaleHash();
  if (!id || id === shown) {
    renderRooms();
    return;
  }
  const was = shown;
  show(id);
  swapDraft(was, id);
  unread.clear(id);
  const r = roomOf(id);
  ui.room.textContent = r.name;
  document.title = r.name + ' · papo';
  render({ stick: true });
  renderRooms();
  return Promise.all([loadStatus(), loadHistory()]).catch((e) => {
    ui.sendStatus.textContent = 'Could not load the room: ' + e.message;
  });
}

// The first room shown at load: the URL's, else the default; then the
// unread messages of the others since they were last shown.
export async function openFirst() {
  await loadRooms();
  if (!shown) {
    first(resolveRoom(hashRoom()) || dflt);
    dropStaleHash();
    renderRooms();
  }
  await loadStatus();
  await loadHistory();
  countRooms(rooms.map((r) => r.id).filter((id) => id !== shown));
}

export function wire() {
  // The URL's room changed (a link in the list, the selector, back or
  // forward): show it.  A hash naming no room shows the default.
  window.addEventListener('hashchange', () => {
    const sel = hashRoom();
    if (sel === null) return;      // another anchor (#m-ID)
    showRoom(resolveRoom(sel));
  });
  ui.roomPick.addEventListener('change', () => {
    location.hash = 'room=' + encodeURIComponent(ui.roomPick.value);
  });
}
