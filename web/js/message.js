/*
 * message.js: one message's <li>, as the timeline and the thread panel
 * show it: author, recipient, time, delivery (own messages), its reply
 * count or Thread button, Reply, the quote of what it answers, its body
 * (the daemon's Markdown copied by markdown.js, else text) and its
 * files.  It holds no state: the caller says how to lay it out.
 * Bodies taller than FOLD_PX fold behind "Show more" once laid out.
 */
import { ui, el, timeEl } from './dom.js';
import { filesOf } from './files.js';
import { clock, hue, snippet } from './format.js';
import { copyMarkdown } from './markdown.js';
import { messageKey } from './order.js';
import { deliveryText } from './receipts.js';
import { isMine, myId, myName } from './status.js';

const ID_RE = /^[a-z2-7]{10}$/;
const FOLD_PX = 360;               // a message taller than this folds

// A body of the daemon's HTML (html: a message's, or a search hit's
// excerpt) copied into a new element of class cls.
export function markdownBody(html, tag, cls) {
  const body = el(tag, cls);
  const doc = new DOMParser().parseFromString(html, 'text/html');
  copyMarkdown(document, doc.body, body, true);
  return body;
}

// A message's body: the daemon's Markdown when it sent it, else text.
function messageBody(m) {
  if (typeof m.html !== 'string') return el('div', 'text plain', m.text);
  return markdownBody(m.html, 'div', 'text md');
}

export function foldButton(folded) {
  const b = el('button', 'fold-toggle link-button', folded ? 'Show more' : 'Show less');
  b.type = 'button';
  b.setAttribute('aria-expanded', String(!folded));
  return b;
}

// Messages just drawn that are taller than FOLD_PX fold, with a button.
export function foldTall(within) {
  for (const body of (within || ui.messages).querySelectorAll('.text[data-measure]')) {
    if (!body.isConnected || body.clientHeight === 0) continue;   // not laid out yet
    delete body.dataset.measure;
    if (body.scrollHeight <= FOLD_PX + 80) continue;   // a little more is shown whole
    body.classList.add('folded');
    body.after(foldButton(true));
  }
}

function actionButton(cls, label, key, value, title) {
  const b = el('button', cls, label);
  b.type = 'button';
  b.dataset[key] = value;
  b.title = title;
  return b;
}

// Message m's <li>.  lay: parent (the message it answers, if known),
// cont (it continues its author's group: name and time not repeated),
// quote (its quote of the parent is shown), replies (how many answer
// it: 0 in the thread panel), expanded (a tall body shown whole),
// marked (the "New messages" line above it).
export function buildMessage(m, lay) {
  const mine = isMine(m);
  const li = el('li', 'msg');
  li.dataset.key = messageKey(m);
  if (m.id) {
    li.id = 'm-' + m.id;
    li.dataset.id = m.id;
  }
  li.classList.toggle('mine', mine);
  li.classList.toggle('reply', !!m.reply_to);
  li.classList.toggle('cont', !!lay.cont);
  li.classList.toggle('to-me', !!m.to && (m.to_id ? m.to_id === myId() : m.to === myName()));

  const meta = el('div', 'meta');
  const from = el('span', 'from ' + hue(m.from), m.from);
  if (m.from_id) from.title = m.from_id + (m.from_role ? ' (' + m.from_role + ')' : '');
  meta.append(from);
  // Names are not unique: while another member has this one, the
  // author's short id says which of them wrote (the node's from_label).
  if (m.from_id && m.from_label && m.from_label !== m.from)
    meta.append(el('span', 'from-id', m.from_id.slice(0, 8) + '…'));
  li.classList.toggle('private', !!m.private);
  if (m.to) {
    const to = el('span', 'to');
    to.append(el('span', 'arrow', '→ '), el('span', 'to-name', m.to));
    if (m.private) {
      // Opens the private view with the other of the two (private.js).
      const b = el('button', 'private-mark private-open link-button', '\u{1F512} private');
      const theirs = m.from_id !== myId();
      b.type = 'button';
      b.dataset.id = theirs ? m.from_id : m.to_id;
      b.dataset.name = theirs ? m.from : m.to;
      b.title = 'Show only your private messages with ' + b.dataset.name;
      to.append(' ', b);
    }
    to.title = m.private ? 'private: only ' + m.to + ' and its author read it'
      : 'addressed to ' + m.to + '; the whole room reads it';
    meta.append(to);
  }
  meta.append(timeEl(m.ts, clock(m.ts)));
  const d = mine ? deliveryText(m) : null;
  if (d) meta.append(el('span', 'delivery ' + d.cls, d.text));
  const replies = lay.replies || 0;
  if (replies && m.id && !m.local) {
    // Answered: the count opens the conversation at the side.
    meta.append(actionButton('thread-button replies-count link-button',
      replies === 1 ? '1 reply' : replies + ' replies', 'thread', m.id,
      'Show this conversation on its own'));
  }
  // Its id and actions: shown on hover or focus (always on a touch screen).
  const acts = el('span', 'actions');
  if (m.id && !m.local) {
    acts.append(el('span', 'mid', m.id),
      actionButton('reply-button link-button', 'Reply', 'reply', m.id, 'Answer this message'));
    if (m.reply_to && !replies) {
      acts.append(actionButton('thread-button link-button', 'Thread', 'thread', m.id,
        'Show this conversation on its own'));
    }
  }
  if (acts.childNodes.length) meta.append(acts);
  li.append(meta);

  if (m.reply_to && lay.quote) {
    const parent = lay.parent;
    const a = el('a', 'parent');
    if (ID_RE.test(m.reply_to)) a.href = '#m-' + m.reply_to;
    a.dataset.parent = m.reply_to;
    a.append(el('span', 'parent-arrow', '↩ '));
    if (parent) {
      a.append(el('span', 'parent-from', parent.from),
        el('span', 'parent-text', ' ' + snippet(parent.text, 80)));
    } else {
      a.append(el('span', 'parent-text', 'reply to ' + m.reply_to + ' (earlier)'));
    }
    li.append(a);
  }
  if (m.text || !(m.files && m.files.length)) {
    const body = messageBody(m);
    li.append(body);
    // Folded when taller than FOLD_PX: measured once laid out (render).
    if (lay.expanded) {
      li.append(foldButton(false));
    } else {
      body.dataset.measure = '1';
    }
  }
  if (lay.marked) li.prepend(el('div', 'new-marker', 'New messages'));
  if (Array.isArray(m.files) && m.files.length) li.append(filesOf(m));
  return li;
}
