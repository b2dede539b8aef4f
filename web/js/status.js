/*
 * status.js: the room shown's status (/api/rooms/ID/status): this
 * member, the members with presence and paths, reply-loop damping.  It
 * owns the last answer, the members (updated by presence events between
 * answers) and the count of messages come while the page was hidden
 * (in its title); it draws the header, the member list, the "to"
 * choices and, through net.js, the network view.  Status is loaded
 * again after a presence event and every 15 s while the page is shown
 * (main.js): presence says who is reachable, status also says how.
 */
import { api } from './api.js';
import { gen, onLeave, roomPath } from './current.js';
import { ui, batched, el } from './dom.js';
import { ago, hue } from './format.js';
import { renderNet } from './net.js';
import { NAT_TEXT, NAT_HELP, myAddress, pathOf, pathText, pathHelp } from './paths.js';

const STATUS_AFTER_PRESENCE_MS = 250;

export let status = null;          // the last /api/status answer
export let members = new Map();    // id -> member (status shape)
let unseen = 0;                    // messages come while the page was hidden

export function myName() {
  return status && status.me ? status.me.name : '';
}

export function myId() {
  return status && status.me ? status.me.id : '';
}

export function isMine(m) {
  return m.local || (m.from_id ? m.from_id === myId() : m.from === myName());
}

// A message came while the page was hidden: counted in its title
// (until status is drawn again).
export function countUnseen() {
  unseen++;
  document.title = '(' + unseen + ') ' + (status ? status.room : 'papo') + ' · papo';
}

// The page is shown again.
export function seenAll() {
  if (!unseen) return;
  unseen = 0;
  renderStatus();
}

export function renderStatus() {
  const st = status;
  if (!st) return;
  ui.room.textContent = st.room || 'papo';
  ui.me.textContent = st.me ? st.me.name : '';
  if (st.me && st.me.about) ui.me.title = st.me.about;
  document.title = (st.room || 'papo') + ' · papo';
  const role = st.me ? st.me.role : '';
  ui.invite.hidden = role !== 'owner' && role !== 'admin';
  if (ui.invite.hidden) ui.inviteConfirm.hidden = true;
  renderReach();
  renderMembers();
  renderDamping();
}

// Reply-loop damping (docs/SECURITY.md): this member's agent and another
// answered each other too often; their answers wait for a person or a
// third member.  A message sent from this page is a person's.
function renderDamping() {
  const d = status && status.damping;
  const on = d && Array.isArray(d.exchanges) ? d.exchanges.filter((e) => e.damped) : [];
  ui.damping.hidden = on.length === 0;
  if (!on.length) {
    ui.damping.textContent = '';
    return;
  }
  const who = on.map((e) => e.with).join(', ');
  const n = on[0].answers;
  const win = String(d.limit || '').split('/')[1] || '';
  ui.damping.textContent = 'Reply loop paused: ' + myName() + ' and ' + who +
    ' answered each other ' + n + ' times within ' + win + '. Their agents\u2019 replies ' +
    'are refused until a person or a third member speaks: a message sent here lets them go on.';
}

// How this member is reached (#reach: NAT, address).
function renderReach() {
  const me = status && status.me;
  if (!me || !me.nat) {
    ui.reach.hidden = true;        // a daemon that does not tell
    return;
  }
  const nat = NAT_TEXT[me.nat] ? me.nat : 'unknown';
  const addr = myAddress(me);
  ui.reach.dataset.nat = nat;
  ui.reach.textContent = NAT_TEXT[nat] + (addr ? ' · reached at ' + addr : '');
  ui.reach.title = NAT_HELP[nat] + (addr ? ' ' + (me.observed ?
    'Other members see it at ' + addr + '.' :
    addr + ' is its own address: no member has told it another yet.') : '');
  ui.reach.hidden = false;
}

function memberRow(m, me) {
  const li = el('li', 'member ' + (m.online ? 'online' : 'offline'));
  li.dataset.id = m.id || '';
  li.dataset.name = m.name || '';
  li.title = m.id || '';
  const dot = el('span', 'dot');
  dot.setAttribute('aria-hidden', 'true');
  const body = el('div', 'member-body');
  const line = el('div', 'member-line');
  line.append(el('span', 'member-name ' + hue(m.name), m.name));
  if (me) line.append(el('span', 'you', 'you'));
  // Who governs the room (docs/PROTOCOL.md, "Owner and admins").
  if (m.role === 'owner' || m.role === 'admin') {
    const r = el('span', 'role role-' + m.role, m.role);
    r.title = m.role === 'owner' ? 'made the room; makes admins' : 'made an admin by the owner';
    line.append(r);
  }
  // Removed from the room: its key changed without it.
  const gone = status && Array.isArray(status.removed) &&
    status.removed.some((r) => r && r.id === m.id);
  if (gone) {
    const r = el('span', 'role role-removed', 'removed');
    r.title = 'removed from the room; the room key changed without it';
    line.append(r);
  }
  // Our private messages with this member, in the timeline alone
  // (private.js).
  if (!me && !gone) {
    const b = el('button', 'private-open link-button', 'private');
    b.type = 'button';
    b.dataset.id = m.id;
    b.dataset.name = m.name;
    b.title = 'Show only your private messages with ' + m.name + ', and write to them';
    line.append(b);
  }
  li.dataset.role = m.role || '';
  li.dataset.removed = gone ? 'yes' : '';
  li.dataset.path = me ? 'self' : pathOf(m) || '';
  const seen = el('span', 'seen');
  if (m.online) {
    seen.textContent = 'online';
  } else if (m.last_seen) {
    seen.textContent = 'offline · seen ' + ago(m.last_seen);
    seen.title = new Date(m.last_seen).toLocaleString();
  } else {
    seen.textContent = 'offline · never seen';
  }
  body.append(line, seen);
  const how = me ? '' : pathText(m);
  if (how) {
    const p = el('span', 'path', how);
    p.title = pathHelp(m);
    body.append(p);
  }
  if (m.about) body.append(el('div', 'about', m.about));
  li.append(dot, body);
  return li;
}

export function renderMembers() {
  const st = status;
  const list = [...members.values()].sort((a, b) =>
    (b.online - a.online) || String(a.name).localeCompare(String(b.name)));
  const rows = [];
  if (st && st.me) rows.push(memberRow({ ...st.me, online: true }, true));
  for (const m of list) rows.push(memberRow(m, false));
  ui.members.replaceChildren(...rows);
  // As 'papo rooms' says it: the other members online, of them all.
  const on = list.filter((m) => m.online).length;
  ui.membersCount.textContent = on + ' of ' + list.length + ' online';
  if (st && st.me) renderNet(st.me, [...members.values()]);

  // The "to" choices: everyone, or one member privately (only they and
  // we read it).  Rebuilt only when they change, so an open list is not
  // closed under the user; the choice survives.
  const choices = [...members.values()].sort((a, b) =>
    String(a.name).localeCompare(String(b.name)))
    .map((m) => [m.id, '\u{1F512} ' + m.name + ' (private' +
      (m.online ? '' : ', offline') + ')']);
  const sig = JSON.stringify(choices);
  if (ui.to.dataset.sig === sig) return;
  ui.to.dataset.sig = sig;
  const keep = ui.to.value;
  const opts = [el('option', '', 'everyone')];
  opts[0].value = '';
  for (const [id, label] of choices) {
    const o = el('option', '', label);
    o.value = id;
    opts.push(o);
  }
  ui.to.replaceChildren(...opts);
  ui.to.value = choices.some((c) => c[0] === keep) ? keep : '';
  // The composer says who reads what is written (composer.js).
  ui.to.dispatchEvent(new Event('change'));
}

// Answers may come back out of order (a poll and a presence event):
// only the newest request's is shown.
let statusAsked = 0;
let statusShown = 0;
export async function loadStatus() {
  const n = ++statusAsked;
  const asked = gen;
  const st = await api(roomPath('/status'));
  if (asked !== gen || n < statusShown) return;
  statusShown = n;
  status = st;
  members = new Map((st.members || []).map((m) => [m.id, m]));
  renderStatus();
}

// Status again shortly.  Several events in a burst make one request.
export const statusSoon = batched(() => loadStatus().catch(() => {}), STATUS_AFTER_PRESENCE_MS);

export function onPresence(p) {
  if (!p || !p.id || p.id === myId()) return;
  const m = members.get(p.id);
  if (m) {
    m.online = !!p.online;
    if (p.last_seen && p.last_seen > (m.last_seen || 0)) m.last_seen = p.last_seen;
    if (p.name) m.name = p.name;
    // Offline means no path; online, the path comes with status.
    if (!m.online) {
      m.path = 'none';
      m.rtt_ms = null;
    } else if (m.path === 'none') {
      m.path = null;
    }
  } else {
    // Someone new: status has their about and the rest.
    members.set(p.id, { id: p.id, name: p.name, online: !!p.online,
      last_seen: p.last_seen || null, about: '' });
  }
  renderMembers();
  statusSoon();
}

onLeave(() => {
  statusSoon.cancel();
  status = null;
  members = new Map();
  unseen = 0;
  ui.members.replaceChildren();
  ui.membersCount.textContent = '';
  ui.to.dataset.sig = '';
  ui.net.dataset.sig = '';
  ui.reach.hidden = true;
  ui.damping.hidden = true;
  ui.inviteConfirm.hidden = true;
  renderMembers();
});
