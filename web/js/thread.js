/*
 * thread.js: a conversation on its own in the side panel
 * (#thread-panel; over the page on a phone): from its first message
 * (up the reply_to chain) through every reply, oldest first, as
 * /api/history?thread=ID&html=1 gives it, drawn as the timeline draws
 * messages; a reply come since joins it.  It owns the thread shown.
 */
import { api } from './api.js';
import { gen, onLeave, roomPath } from './current.js';
import { $, ui, flash, copyCode, quoteClick } from './dom.js';
import { buildMessage, foldTall } from './message.js';
import { messageKey } from './order.js';
import * as place from './place.js';
import { isExpanded, messageOf, replyTo } from './timeline.js';

const ID_RE = /^[a-z2-7]{10}$/;
const THREAD_PAGE = 200;
const THREAD_PAGES_MAX = 10;
const THREAD_UP_MAX = 50;          // parents asked for to find the first message

let thread = null;                 // { id, msgs: Map } of the thread panel

export function threadMessageOf(id) {
  return (thread && thread.msgs.get(id)) || null;
}

export function isOpen() {
  return thread !== null;
}

async function threadPages(id) {
  let list = [];
  let cursor = null;
  for (let n = 0; n < THREAD_PAGES_MAX; n++) {
    const h = await api(roomPath('/history?html=1&limit=' + THREAD_PAGE + '&thread=' +
      encodeURIComponent(id) + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '')));
    list = list.concat((h.messages || []).filter((m) => m && typeof m.id === 'string'));
    cursor = h.next || null;
    if (!cursor) break;
  }
  return list;
}

// The first message of id's conversation: up the reply_to chain, from
// what the page holds, else asking the daemon for each parent.
async function threadRoot(id) {
  let cur = id;
  const seen = new Set();
  for (let n = 0; n < THREAD_UP_MAX && !seen.has(cur); n++) {
    seen.add(cur);
    let m = messageOf(cur);
    if (!m) {
      const h = await api(roomPath('/history?limit=1&thread=' + encodeURIComponent(cur)));
      m = (h.messages || [])[0];
    }
    if (!m || !m.reply_to || !ID_RE.test(m.reply_to)) return cur;
    cur = m.reply_to;
  }
  return cur;
}

export async function openThread(id) {
  const asked = gen;
  thread = { id, msgs: new Map() };
  const t = thread;
  ui.threadPanel.hidden = false;
  ui.app.classList.add('with-thread');
  ui.threadList.replaceChildren();
  ui.threadCount.textContent = '';
  ui.threadStatus.textContent = 'Loading…';
  try {
    const root = await threadRoot(id);
    const list = await threadPages(root);
    if (asked !== gen || thread !== t) return;
    list.sort((a, b) => a.ts - b.ts || a.id.localeCompare(b.id));
    for (const m of list) t.msgs.set(m.id, m);
    renderThread(id);
  } catch (e) {
    if (thread === t) ui.threadStatus.textContent = 'Could not load the thread: ' + e.message;
  }
}

// The thread's messages, drawn as the timeline draws them, oldest
// first; the one it was opened from flashes.
export function renderThread(from) {
  const t = thread;
  if (!t) return;
  const items = [];
  for (const m of t.msgs.values()) {
    const li = buildMessage(m, { quote: true, replies: 0, expanded: isExpanded(messageKey(m)),
      marked: place.newMark === m.id,
      parent: m.reply_to ? t.msgs.get(m.reply_to) || messageOf(m.reply_to) : null });
    li.removeAttribute('id');      // the timeline's li has the m-ID
    li.id = 't-' + m.id;
    const tb = li.querySelector('.thread-button');
    if (tb) tb.remove();
    li.classList.toggle('replying-here', replyTo === m.id);
    items.push(li);
  }
  ui.threadList.replaceChildren(...items);
  ui.threadCount.textContent = String(items.length);
  ui.threadStatus.textContent = items.length ? '' : 'This message is no longer in the history.';
  foldTall(ui.threadList);
  const li = from ? $('t-' + from) : null;
  if (li) {
    li.scrollIntoView({ block: 'nearest' });
    flash(li);
  }
}

export function closeThread() {
  thread = null;
  ui.threadPanel.hidden = true;
  ui.app.classList.remove('with-thread');
  ui.threadList.replaceChildren();
}

// A message come for the open thread (a reply in it) joins it.
export function threadMessage(m) {
  const t = thread;
  if (!t || !m || !m.id || t.msgs.has(m.id) || !m.reply_to || !t.msgs.has(m.reply_to)) return;
  t.msgs.set(m.id, m);
  renderThread(null);
}

// Clicks in the thread panel: replying (reply(id)), copying code,
// folding, a quote scrolling to its message.
function onClick(ev, reply) {
  const copy = ev.target.closest('button.code-copy');
  if (copy) {
    copyCode(copy);
    return;
  }
  if (ev.target.closest('.md a, .md pre')) return;
  const fold = ev.target.closest('button.fold-toggle');
  if (fold) {
    const body = fold.previousElementSibling;
    const open = body.classList.toggle('folded') === false;
    fold.textContent = open ? 'Show less' : 'Show more';
    fold.setAttribute('aria-expanded', String(open));
    return;
  }
  if (quoteClick(ev, 't-', 'nearest')) return;
  const b = ev.target.closest('button.reply-button');
  if (b) reply(b.dataset.reply);
}

export function wire(reply) {
  ui.threadClose.addEventListener('click', closeThread);
  ui.threadList.addEventListener('click', (ev) => onClick(ev, reply));
}

onLeave(closeThread);
