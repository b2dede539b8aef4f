/*
 * dom.js: the page's elements (index.html's ids, looked up once: the
 * modules share these references, not state) and small helpers that
 * make elements.  Everything a room provides goes in with textContent,
 * never as HTML; the CSP allows no inline script or style, so looks
 * come from classes in style.css.
 */

export const $ = (id) => document.getElementById(id);

export const ui = {
  invite: $('invite'), inviteConfirm: $('invite-confirm'), inviteCopy: $('invite-copy'),
  inviteCancel: $('invite-cancel'), inviteStatus: $('invite-status'),
  newBelow: $('new-below'),
  room: $('room'), me: $('me'), conn: $('conn'), connText: $('conn-text'),
  members: $('members'), membersCount: $('members-count'),
  scroller: $('scroller'), messages: $('messages'), empty: $('empty'),
  older: $('older'), roomNote: $('room-note'), retention: $('retention'), roomlog: $('roomlog'),
  composer: $('composer'), to: $('to'), text: $('text'),
  send: $('send'), sendStatus: $('send-status'), replying: $('replying'),
  replyingTo: $('replying-to'), replyCancel: $('reply-cancel'),
  auth: $('auth'), authForm: $('auth-form'), authError: $('auth-error'),
  authToken: $('auth-token'), reach: $('reach'), netBox: $('net-box'),
  net: $('net'), netCount: $('net-count'), approvals: $('approvals'), damping: $('damping'),
  app: $('app'), rooms: $('rooms'), roomList: $('room-list'), roomsCount: $('rooms-count'),
  roomPickBox: $('room-pick-box'), roomPick: $('room-pick'), roomPickUnread: $('room-pick-unread'),
  attach: $('attach'), attachInput: $('attach-input'), attached: $('attached'),
  search: $('search'), searchQ: $('search-q'), searchClose: $('search-close'),
  searchAll: $('search-all'), searchAllBox: $('search-all-box'),
  results: $('results'), resultsStatus: $('results-status'), resultsList: $('results-list'),
  resultsMore: $('results-more'), threadPanel: $('thread-panel'), threadList: $('thread-list'),
  threadClose: $('thread-close'), threadCount: $('thread-count'), threadStatus: $('thread-status'),
  privateView: $('private-view'), privateName: $('private-name'), privateAll: $('private-all'),
};

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

// A time element: the page's format, the full date on hover.
export function timeEl(ts, text) {
  const t = el('time', 'ts', text);
  t.dateTime = new Date(ts).toISOString();
  t.title = new Date(ts).toLocaleString();
  return t;
}

// Gives parent exactly these children, touching the DOM only when they
// differ (a moved element loses focus and selection).
export function setChildren(parent, list) {
  const cur = parent.children;
  if (cur.length === list.length && list.every((c, i) => cur[i] === c)) return;
  parent.replaceChildren(...list);
}

export function flash(li) {
  li.classList.remove('flash');
  void li.offsetWidth;             // restart the animation
  li.classList.add('flash');
}

// A click on a quote (a.parent) scrolls to the message it quotes, if
// shown (prefix: 'm-' in the timeline, 't-' in the thread panel), and
// flashes it; true when the click was on one.
export function quoteClick(ev, prefix, block) {
  const link = ev.target.closest('a.parent');
  if (!link) return false;
  ev.preventDefault();
  const target = $(prefix + link.dataset.parent);
  if (target) {
    target.scrollIntoView({ block, behavior: 'smooth' });
    flash(target);
  }
  return true;
}

// fn, once, ms after the first of a burst of calls to the function
// returned (a burst of events makes one request); its cancel() drops
// one pending.
export function batched(fn, ms) {
  let timer = null;
  const soon = () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      fn();
    }, ms);
  };
  soon.cancel = () => {
    clearTimeout(timer);
    timer = null;
  };
  return soon;
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

// The connection indicator: 'connecting', 'live', 'down' or 'auth'.
export function setConn(s, text) {
  ui.conn.dataset.state = s;
  ui.connText.textContent = text;
}

// Copies text to the clipboard; false when the browser refused.
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch (e) {
    const ta = el('textarea', 'copy-buffer');
    ta.value = text;
    ta.readOnly = true;
    document.body.append(ta);
    ta.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch (e2) { /* refused too */ }
    ta.remove();
    return ok;
  }
}

// A code block's Copy button (markdown.js made it) was pressed.
export function copyCode(button) {
  const pre = button.closest('.code-block').querySelector('pre');
  copyText(pre.textContent).then((ok) => {
    button.textContent = ok ? 'Copied' : 'Copy failed';
    setTimeout(() => { button.textContent = 'Copy'; }, 1500);
  });
}
