/*
 * composer.js: writing to the room shown: the text box (a draft kept
 * per room while another is shown), the recipient, the message being
 * answered, the files to attach (uploaded to /api/blobs, then named by
 * the message).  A message being sent is shown at once under a local
 * key (timeline.js) and takes its id when the daemon answers; not
 * sent, its words go back in the box with the reason.  It owns the
 * drafts and the files attached.
 */
import { api, ApiError } from './api.js';
import { gen, onLeave, roomPath, shown } from './current.js';
import { ui, el } from './dom.js';
import { humanSize, snippet } from './format.js';
import * as place from './place.js';
import * as receipts from './receipts.js';
import { isMine, members, myId, myName, statusSoon } from './status.js';
import { threadMessage, threadMessageOf, renderThread } from './thread.js';
import { addLocal, dropLocal, loadHistory, markReply, messageOf, render, replyTo, settle } from './timeline.js';

let attached = [];                 // File objects to send with the next message
const drafts = new Map();          // room id -> the text left in the box
let localSeq = 0;

// The message id as this page knows it: the timeline's, or the
// thread panel's (a thread may reach back past the pages loaded).
function knownMessage(id) {
  return messageOf(id) || threadMessageOf(id);
}

// Answers message id (null: stops answering).
export function setReply(id) {
  const m = id ? knownMessage(id) : null;
  markReply(m ? id : null);
  if (m) {
    ui.replyingTo.replaceChildren(el('span', 'parent-from', m.from),
      el('span', 'parent-text', ' ' + snippet(m.text, 60)));
    ui.replying.hidden = false;
    // A reply to a message addressed to me goes back to its author.
    if (m.to && !isMine(m) && m.from_id && members.has(m.from_id)) {
      ui.to.value = m.from_id;
      sayWho();
    }
    ui.text.focus();
  } else {
    ui.replying.hidden = true;
    ui.replyingTo.replaceChildren();
  }
  render();
}

// The same from the thread panel, which is drawn again too.
export function setReplyInThread(id) {
  setReply(id);
  renderThread(null);
}

function autosize() {
  ui.text.classList.toggle('tall', ui.text.value.includes('\n') || ui.text.value.length > 80);
}

// The box's text stays with the room it was written in.
export function swapDraft(from, to) {
  if (from) drafts.set(from, ui.text.value);
  ui.text.value = drafts.get(to) || '';
  drafts.delete(to);
  autosize();
}

function renderAttached() {
  ui.attached.hidden = attached.length === 0;
  ui.attached.replaceChildren(...attached.map((file, i) => {
    const li = el('li', null);
    li.append(el('span', 'file-name', file.name), el('span', 'file-size', humanSize(file.size)));
    const x = el('button', 'icon-button attach-remove', '×');
    x.type = 'button';
    x.dataset.index = String(i);
    x.setAttribute('aria-label', 'Remove ' + file.name);
    li.append(x);
    return li;
  }));
}

// Uploads each file to attach: their refs, in order.
async function upload(files, room) {
  const refs = [];
  for (const file of files) {
    const q = '?name=' + encodeURIComponent(file.name) +
      (room ? '&room=' + encodeURIComponent(room) : '');
    const j = await api('/api/blobs' + q, {
      method: 'POST',
      headers: { 'Content-Type': file.type || 'application/octet-stream' },
      body: file,
    });
    refs.push(j.ref);
  }
  return refs;
}

async function send() {
  const text = ui.text.value;
  const files = attached;
  if (!text.trim() && !files.length) return;
  const to = ui.to.value || null;
  const reply = replyTo;
  const toName = to && members.has(to) ? members.get(to).name : null;
  const key = 'local-' + (++localSeq);
  const room = shown;
  const asked = gen;
  const pending = { key, local: true, sending: true, from: myName(),
    from_id: myId(), to: toName, to_id: to, private: !!to, reply_to: reply, text,
    ts: Date.now() };
  addLocal(pending);
  place.answered();                // answering: what came is read
  ui.text.value = '';
  attached = [];
  renderAttached();
  autosize();
  setReply(null);
  ui.sendStatus.textContent = '';
  render({ stick: true });
  try {
    const body = { text, to, reply_to: reply };
    if (files.length) body.files = await upload(files, room);
    const r = await api(roomPath('/send', room), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (asked !== gen) return;     // sent to the room shown before
    receipts.sent(r);
    threadMessage(settle(key, r.id, { id: r.id, from: myName(), from_id: myId(), to: toName,
      to_id: to, private: !!to, reply_to: reply, text, ts: pending.ts }));   // the stream has only others'
    render({ stick: true });
    // The daemon's own record has the exact time; a person's message
    // may have ended damping.
    loadHistory().catch(() => {});
    statusSoon();
  } catch (e) {
    // Not sent: the words go back in the box, with the reason (in
    // their room's box, when another room is shown now).
    if (asked !== gen) {
      if (room && !drafts.get(room)) drafts.set(room, text);
      return;
    }
    dropLocal(key);
    const why = e instanceof ApiError ? e.message :
      'the daemon could not be reached (' + e.message + ')';
    ui.sendStatus.textContent = 'Not sent: ' + why;
    if (!ui.text.value) {
      ui.text.value = text;
      autosize();
    }
    if (!attached.length && files.length) {
      attached = files;
      renderAttached();
    }
    if (to && [...ui.to.options].some((o) => o.value === to)) {
      ui.to.value = to;
      sayWho();
    }
    if (reply && !replyTo) setReply(reply);
    render();
  }
}

// The box says who will read what is written in it: the room, or one
// member privately.
export function sayWho() {
  const m = ui.to.value && members.get(ui.to.value);
  ui.text.placeholder = m ? 'Private message to ' + m.name + ' (only they read it)'
    : 'Message the room';
}

export function wire() {
  ui.composer.addEventListener('submit', (ev) => {
    ev.preventDefault();
    send();
  });
  ui.text.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      send();
    } else if (ev.key === 'Escape' && replyTo) {
      setReply(null);
    }
  });
  ui.text.addEventListener('input', autosize);
  ui.to.addEventListener('change', sayWho);
  ui.replyCancel.addEventListener('click', () => setReply(null));
  ui.attach.addEventListener('click', () => ui.attachInput.click());
  ui.attachInput.addEventListener('change', () => {
    attached = attached.concat([...ui.attachInput.files]);
    ui.attachInput.value = '';
    renderAttached();
  });
  ui.attached.addEventListener('click', (ev) => {
    const x = ev.target.closest('button.attach-remove');
    if (!x) return;
    attached.splice(Number(x.dataset.index), 1);
    renderAttached();
  });
}

onLeave(() => {
  ui.sendStatus.textContent = '';
  ui.replying.hidden = true;
  ui.replyingTo.replaceChildren();
});
