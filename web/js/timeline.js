/*
 * timeline.js: the room shown's messages (#messages), in time order
 * under day separators as order.js lays them out, each drawn by
 * message.js and rebuilt only when what it shows changed.  It owns the
 * messages the page holds (history pages, events, own sends), their
 * elements, reply counts, which tall ones were opened, the message
 * being answered and which just arrived; the reader's place is
 * place.js's, the log's bounds history.js's.  The view stays at the
 * newest message while images load, until the reader scrolls up;
 * messages that arrive meanwhile are counted on a button that scrolls
 * down to them.  Events come in bursts (a replay after reconnecting):
 * renderSoon makes one layout of each.
 */
import { $, ui, batched, el, setChildren, copyCode, quoteClick } from './dom.js';
import { onLeave, shown } from './current.js';
import { filesLook, fileClick, onRedraw } from './files.js';
import { clock } from './format.js';
import { canGoBack, latestPage, noteMessage, olderPage, renderStart } from './history.js';
import * as marks from './marks.js';
import { buildMessage, foldTall } from './message.js';
import { layout, messageKey, replyCounts } from './order.js';
import * as place from './place.js';
import * as privateView from './private.js';
import * as receipts from './receipts.js';
import { countUnseen, isMine } from './status.js';

const msgs = new Map();            // id (or local key) -> message
const elems = new Map();           // message key -> its <li>
let replies = new Map();           // id -> how many messages shown answer it
const arrivals = new Set();        // ids to highlight as new at the next layout
const daySeps = new Map();         // day label -> its separator <li>
const expanded = new Set();        // keys of folded messages opened
export let replyTo = null;         // id of the message being answered

export function messageOf(id) {
  return msgs.get(id) || null;
}

export function isExpanded(key) {
  return expanded.has(key);
}

// The message being answered (null: none); the caller draws again.
export function markReply(id) {
  replyTo = id;
}

// A message being sent, shown under its local key until it is stored.
export function addLocal(m) {
  msgs.set(m.key, m);
}

export function dropLocal(key) {
  msgs.delete(key);
}

// The send of local message key was answered with id: m takes its
// place unless the stream brought the stored one first.  The message.
export function settle(key, id, m) {
  msgs.delete(key);
  if (!msgs.has(id)) msgs.set(id, m);
  return msgs.get(id);
}

const nearBottom = () => place.nearBottom(ui.scroller);
const keepPinned = () => place.keepPinned(ui.scroller);

function daySeparator(label) {
  let li = daySeps.get(label);
  if (!li) {
    li = el('li', 'day');
    li.setAttribute('role', 'separator');
    li.append(el('span', 'day-label', label));
    daySeps.set(label, li);
  }
  return li;
}

// How message m is laid out in the timeline.
function layOf(m, row) {
  return { cont: row.cont, quote: row.quote, parent: m.reply_to ? msgs.get(m.reply_to) : null,
    replies: replies.get(m.id) || 0, expanded: expanded.has(messageKey(m)),
    marked: place.newMark === m.id };
}

// Signature of what a message's element shows, to rebuild it only on change.
function look(m, lay) {
  const d = isMine(m) ? receipts.deliveryText(m) : null;
  return [m.id, m.ts, d ? d.text : '', lay.parent ? lay.parent.id : '', clock(m.ts),
    replyTo === m.id, filesLook(m), typeof m.html === 'string' ? m.html.length : -1,
    lay.expanded, lay.marked, lay.replies, lay.cont, lay.quote].join('|');
}

function elementFor(m, lay) {
  const key = messageKey(m);
  let li = elems.get(key);
  const sig = look(m, lay);
  if (!li || li.dataset.sig !== sig) {
    const fresh = buildMessage(m, lay);
    fresh.dataset.sig = sig;
    fresh.classList.toggle('replying-here', replyTo === m.id);
    if (li) {
      if (li.classList.contains('arrived')) fresh.classList.add('arrived');
      li.replaceWith(fresh);
    }
    li = fresh;
    elems.set(key, li);
  }
  return li;
}

let renderTimer = null;
let renderStick = false;

// Lays out every message (order.js) and keeps the view at the newest
// while pinned; opts.stick pins it.  Elements are reused.
export function render(opts) {
  clearTimeout(renderTimer);
  renderTimer = null;
  const stick = (opts && opts.stick) || renderStick || nearBottom();
  renderStick = false;
  const all = [...msgs.values()].filter(privateView.shows);
  replies = replyCounts(all);
  const wanted = new Set(all.map(messageKey));
  for (const [k, li] of elems) {
    if (!wanted.has(k)) {
      li.remove();
      elems.delete(k);
    }
  }
  const items = [];
  const labels = new Set();
  for (const row of layout(all, place.newMark)) {
    if (row.day) {
      items.push(daySeparator(row.day));
      labels.add(row.day);
    } else {
      items.push(elementFor(row.m, layOf(row.m, row)));
    }
  }
  setChildren(ui.messages, items);
  for (const k of [...daySeps.keys()]) if (!labels.has(k)) daySeps.delete(k);
  foldTall();
  for (const id of arrivals) {
    const li = elems.get(id);
    if (!li) continue;
    li.classList.add('arrived');
    setTimeout(() => li.classList.remove('arrived'), 4000);
  }
  arrivals.clear();
  ui.empty.hidden = all.length > 0;
  renderStart(all.length);
  if (stick) {
    place.pin();
    keepPinned();
  }
  renderBelow();
}

export function renderSoon() {
  if (renderTimer === null) {
    renderStick = nearBottom();
    renderTimer = setTimeout(render, 15);
  }
}

// The count of messages below, on the button that scrolls to them.
function renderBelow() {
  if (place.below && nearBottom()) place.seen();
  ui.newBelow.hidden = place.below === 0;
  ui.newBelow.textContent = place.belowText(place.below);
}

// Down to the first new message when they fill more than the view,
// else to the end.
function scrollToNew() {
  const s = ui.scroller;
  const first = place.newMark ? $('m-' + place.newMark) : null;
  if (first && s.scrollHeight - (first.getBoundingClientRect().top -
      s.getBoundingClientRect().top + s.scrollTop) > s.clientHeight) {
    first.scrollIntoView({ block: 'start' });
  } else {
    place.pin();
    keepPinned();
  }
  place.seen();
  renderBelow();
}

// Takes messages from history or events; opts.soon: drawn in the next
// burst's layout; opts.always: drawn even when none was new.
export function addMessages(list, opts) {
  let added = 0;
  for (const m of list) {
    if (!m || typeof m.id !== 'string') continue;
    receipts.absorb(m);
    const had = msgs.get(m.id);
    if (!had && isMine(m)) {
      // Our own message, stored before its send was answered: it
      // takes the place of the copy shown while sending.
      for (const [k, p] of msgs) {
        if (p.local && p.sending && p.text === m.text &&
            (p.reply_to || null) === (m.reply_to || null)) {
          msgs.delete(k);
          break;
        }
      }
    }
    msgs.set(m.id, Object.assign(had || {}, m, { local: false, key: undefined }));
    if (!had) added++;
    marks.advance(shown, m);
    noteMessage(m);
  }
  marks.save();
  if (opts && opts.soon) {
    if (added) renderSoon();
  } else if (added || (opts && opts.always)) {
    render(opts);
  }
  return added;
}

export async function loadHistory() {
  const list = await latestPage(() => msgs.size === 0);
  if (list !== null) addMessages(list, { always: true, stick: msgs.size === 0 });
}

export async function loadOlder() {
  if (!canGoBack()) return;
  ui.older.disabled = true;
  try {
    const list = await olderPage();
    if (list === null) return;
    const s = ui.scroller;
    const fromBottom = s.scrollHeight - s.scrollTop;
    addMessages(list, { always: true, stick: false });
    s.scrollTop = s.scrollHeight - fromBottom;
  } catch (e) {
    ui.sendStatus.textContent = 'Could not load earlier messages: ' + e.message;
  } finally {
    ui.older.disabled = false;
  }
}

export function onMessage(m) {
  if (!m || !m.id) return;
  const fresh = !msgs.has(m.id);
  if (fresh && !isMine(m)) place.arrived(m.id, nearBottom());
  addMessages([m], { soon: true });
  if (fresh) {
    arrivals.add(m.id);
    if (document.hidden) countUnseen();
  }
}

// A receipt for a message this page has not seen: this member said it
// elsewhere (its agent, another tab), and the stream carries only what
// others say.  The history has it.
const refreshSoon = batched(() => loadHistory().catch(() => {}), 300);

export function onReceipt(r) {
  if (!r || !r.id) return;
  receipts.receipt(r);
  if (msgs.has(r.id)) renderSoon();
  else refreshSoon();
}

// A file's state changed: drawn again if a message shown has it.
onRedraw((ref) => {
  if (ref === null) {
    renderSoon();
    return;
  }
  for (const m of msgs.values())
    if (Array.isArray(m.files) && m.files.some((f) => f && f.ref === ref)) {
      renderSoon();
      break;
    }
});

// Clicks on the timeline: files, code, folding, quotes, a thread, a
// reply; act: { reply(id), thread(id) }.
function onClick(ev, act) {
  if (fileClick(ev) || ev.target.closest('ul.files')) return;
  if (ev.target.closest('button.private-open')) return;   // private.js
  const copy = ev.target.closest('button.code-copy');
  if (copy) {
    copyCode(copy);
    return;
  }
  const fold = ev.target.closest('button.fold-toggle');
  if (fold) {
    const key = fold.closest('li.msg').dataset.key;
    if (expanded.has(key)) expanded.delete(key);
    else expanded.add(key);
    render();
    if (!expanded.has(key)) {
      const again = elems.get(key);
      if (again) again.scrollIntoView({ block: 'nearest' });
    }
    return;
  }
  // A link in a message opens (apart); text and code are selected.
  if (ev.target.closest('.md a, .md pre')) return;
  if (quoteClick(ev, 'm-', 'center')) return;
  const tb = ev.target.closest('button.thread-button');
  if (tb) {
    act.thread(tb.dataset.thread);
    return;
  }
  const rb = ev.target.closest('button.reply-button');
  if (rb) {
    act.reply(rb.dataset.reply);
    return;
  }
  // Clicking a message answers it, unless text is being selected.
  const li = ev.target.closest('li.msg');
  if (!li || !li.dataset.id || String(window.getSelection()).length) return;
  act.reply(replyTo === li.dataset.id ? null : li.dataset.id);
}

export function wire(act) {
  privateView.onChange(() => render({ stick: true }));
  ui.messages.addEventListener('click', (ev) => onClick(ev, act));
  ui.older.addEventListener('click', loadOlder);
  ui.newBelow.addEventListener('click', scrollToNew);
  ui.scroller.addEventListener('scroll', () => {
    // Scrolled to the bottom, the view follows the newest message again;
    // scrolled up, it stays where the reader put it.
    const pinned = nearBottom();
    if (place.below && pinned) renderBelow();
  }, { passive: true });
  // Content that grows after a layout (image previews decoded, fonts)
  // keeps a pinned view at the newest message.
  if (typeof ResizeObserver === 'function')
    new ResizeObserver(keepPinned).observe(ui.messages);
}

onLeave(() => {
  refreshSoon.cancel();
  clearTimeout(renderTimer);
  renderTimer = null;
  msgs.clear();
  receipts.clear();
  elems.clear();
  place.reset();
  arrivals.clear();
  replyTo = null;
  expanded.clear();
  daySeps.clear();
  ui.messages.replaceChildren();
});
