/*
 * app.js: papo's dashboard, a static client of the daemon's API (SPEC
 * "HTTP API").  It loads the list of rooms (/api/rooms), then the shown
 * room's /api/rooms/ID/status and /history, and follows every room's
 * events in one stream (/api/events?room=*): those of the room shown
 * (by their room_id) bring new messages, receipts and presence; a
 * message of another room counts as unread there; a "rooms" event loads
 * the list again.  Status (who is reachable, and how) is loaded again
 * after a presence event and every STATUS_EVERY_MS while the page is
 * shown; the member list and the network view (an SVG built with DOM
 * calls) are drawn from it.
 *
 * Rooms: the room shown is in the URL (#room=ID), so a reload or a link
 * keeps it; choosing another (a link in the list, or the selector on a
 * phone) changes the hash, and the page clears what it shows and loads
 * that room's, without reloading.  With one room there is no list.
 * Unread counts are this browser's: localStorage keeps, per room, the
 * newest message shown (its time and id, "the mark"); a message from
 * another member ordered after a room's mark (docs/RELIABILITY.md,
 * "History order") is unread until that room is shown.  At load each
 * other room's history since its mark is counted; a room this browser
 * has not seen yet starts with nothing unread (its mark is "now").
 *
 * The event stream is read with fetch() and parsed here, because
 * EventSource cannot send the Authorization header a daemon with a
 * token needs.  It reconnects with backoff and Last-Event-ID, and after
 * every reconnection reloads status and history, so nothing said while
 * the daemon was away (or restarting) is missing.
 *
 * Files (docs/FILES.md): a message's files are listed under it with
 * their size, a download button and, once here, a preview (an image, or
 * a text's first PREVIEW_TEXT bytes); both are fetched with the token
 * (GET /api/blobs/REF?room=ID) and shown from blob: URLs, which the
 * CSP's img-src allows.  A file being fetched shows its progress from
 * the stream's "file" events; one only named (too large to be fetched
 * at once) has a Fetch button.  The attach button uploads files (POST
 * /api/blobs) and the message is sent naming them.
 *
 * Messages are shown as Markdown: the daemon renders it (libcmark, raw
 * HTML shown as text, links made safe: README "HTTP API", ?html=1 on
 * /history and /events), and this page takes that HTML through
 * DOMParser (an inert document: nothing in it runs or loads) and copies
 * only the elements and attributes Markdown makes (MD_TAGS) into new
 * elements of its own, so a daemon's bug could not put a script or an
 * image here either.  Code blocks have a copy button; messages taller
 * than FOLD_PX fold behind "Show more"; messages are in time order
 * under day separators (a reply where its time puts it, quoting what it
 * answers; an answered message counts its replies, which open the
 * thread at the side), consecutive ones of an author grouped; the view
 * stays at the newest message while images load, until the reader
 * scrolls up; messages that arrive while the reader is scrolled up are
 * counted on a button that scrolls down to them, under a "New messages"
 * line.  Owners and admins can copy the room's invite (GET /api/invite)
 * after a confirmation: it holds the room's key.
 *
 * Everything else the room provides (names, about, file names and text
 * previews) is put in the page with textContent, never as HTML.  The page's CSP allows no
 * inline script or style: looks come from classes in style.css.
 */
'use strict';

(() => {
  const HISTORY_PAGE = 200;        // messages loaded at start and per "earlier"
  const BACKOFF_MIN_MS = 1000;
  const BACKOFF_MAX_MS = 15000;
  const STALL_MS = 75000;          // 3 missed heartbeats (every 25 s): reconnect
  const STATUS_EVERY_MS = 15000;   // status again (paths, RTTs) while shown
  const STATUS_AFTER_PRESENCE_MS = 250;
  const TOKEN_KEY = 'papo.token';
  const MARKS_KEY = 'papo.seen';   // room id -> { ts, id } of the newest shown
  const ROOMS_AFTER_EVENT_MS = 150;
  const ID_RE = /^[a-z2-7]{10}$/;
  const REF_RE = /^[A-Za-z0-9]{1,64}$/;
  const PREVIEW_TEXT = 2048;       // bytes of a text file shown under it
  const FOLD_PX = 360;             // a message taller than this folds
  const PREVIEW_IMAGE_MAX = 8 << 20;   // images larger are not previewed

  const $ = (id) => document.getElementById(id);
  const ui = {
    invite: $('invite'), inviteConfirm: $('invite-confirm'), inviteCopy: $('invite-copy'),
    inviteCancel: $('invite-cancel'), inviteStatus: $('invite-status'),
    newBelow: $('new-below'),
    room: $('room'), me: $('me'), conn: $('conn'), connText: $('conn-text'),
    members: $('members'), membersCount: $('members-count'),
    scroller: $('scroller'), messages: $('messages'), empty: $('empty'),
    older: $('older'), roomNote: $('room-note'), retention: $('retention'), roomlog: $('roomlog'), composer: $('composer'), to: $('to'), text: $('text'),
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
  };

  const state = {
    status: null,                  // the last /api/status answer
    members: new Map(),            // id -> member (status shape)
    msgs: new Map(),               // id (or local key) -> message
    receipts: new Map(),           // message id -> { delivered: Set, read: Set }
    sendState: new Map(),          // message id -> send answer
    elems: new Map(),              // message key -> its <li>
    replies: new Map(),            // id -> how many messages shown answer it
    pinned: true,                  // the view follows the newest message
    pinTop: 0,                     // the scrollTop keepPinned set last
    arrivals: new Set(),           // ids to highlight as new at the next layout
    replyTo: null,                 // id of the message being answered
    oldestTs: null,
    earlier: null,
    moreBefore: true,
    retention: null,             // /api/history's retention, when any
    roomEvents: [],              // /api/history's room: key changes
    lastEventId: null,             // BOOT-SEQ of the last event, for resuming
    unseen: 0,
    below: 0,                      // messages come while scrolled up, not yet seen
    newMark: null,                 // the first of them: "New messages" above it
    expanded: new Set(),           // keys of folded messages opened
    daySeps: new Map(),            // day label -> its separator <li>
    oauth: true,                   // false once /api/oauth/pending is 404
    rooms: [],                     // /api/rooms's list: { id, name, me, default }
    dflt: null,                    // the default room's id
    shown: null,                   // the id of the room shown (null: none known)
    gen: 0,                        // counts switches: answers for a room no longer shown are dropped
    unread: new Map(),             // room id -> Set of unread message ids
    capped: new Set(),             // rooms with more unread than one history page
    drafts: new Map(),             // room id -> the text left in the box
    files: new Map(),              // ref -> its newest state (fetch, "file" events)
    previews: new Map(),           // ref -> { url } or { text } or { error }, or 'loading'
    previewTries: new Map(),       // ref -> previews that failed
    attached: [],                  // File objects to send with the next message
    parents: new Set(),            // ids of messages shown that have replies
    search: null,                  // { q, next, gen } of the results shown
    thread: null,                  // { id, msgs: Map } of the thread panel
  };

  /* ---- the token and API calls ---- */

  function storedToken() {
    try {
      return localStorage.getItem(TOKEN_KEY) || '';
    } catch (e) {
      return '';
    }
  }

  let token = storedToken();
  let asking = null;               // the pending token form, shared by all callers

  // Shows the token form (once, however many calls need it) and resolves
  // when a token is entered.
  function askToken(error) {
    if (asking) return asking;
    asking = new Promise((resolve) => {
      setConn('auth', 'needs the token');
      ui.authError.hidden = !error;
      ui.authError.textContent = error || '';
      ui.auth.hidden = false;
      ui.authToken.value = '';
      ui.authToken.focus();
      const done = (ev) => {
        ev.preventDefault();
        const t = ui.authToken.value.trim();
        if (!t) return;
        ui.authForm.removeEventListener('submit', done);
        token = t;
        try {
          localStorage.setItem(TOKEN_KEY, t);
        } catch (e) { /* private mode: kept for this page only */ }
        ui.auth.hidden = true;
        asking = null;
        resolve();
      };
      ui.authForm.addEventListener('submit', done);
    });
    return asking;
  }

  function authHeaders(extra) {
    const h = Object.assign({}, extra || {});
    if (token) h.Authorization = 'Bearer ' + token;
    return h;
  }

  async function errorText(res) {
    try {
      const j = await res.json();
      if (j && typeof j.error === 'string') return j.error;
    } catch (e) { /* not JSON */ }
    return res.status + ' ' + res.statusText;
  }

  // A 401 asks for the token and tries again.  A request that was sent
  // with an older token than the current one just tries again: someone
  // else already asked.
  async function authorize(res, used) {
    if (used !== token) return;
    const why = await errorText(res);
    await askToken(used ? 'The daemon refused that token: ' + why : '');
  }

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  async function api(path, init) {
    for (;;) {
      const used = token;
      const opts = Object.assign({ cache: 'no-store' }, init || {});
      opts.headers = authHeaders(opts.headers);
      const res = await fetch(path, opts);
      if (res.status === 401) {
        await authorize(res, used);
        continue;
      }
      if (!res.ok) throw new ApiError(res.status, await errorText(res));
      return res.json();
    }
  }

  /* ---- small helpers ---- */

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function sleep(ms) {
    return new Promise((r) => setTimeout(r, ms));
  }

  const pad = (n) => String(n).padStart(2, '0');

  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

  // One format for a time everywhere on the page (the timeline, search,
  // the thread): "13:29" today, "Dec 5 13:29" earlier this year, "Dec 5
  // 2025 13:29" before (README, "The dashboard").
  function clock(ts) {
    const d = new Date(ts);
    const now = new Date();
    const hm = pad(d.getHours()) + ':' + pad(d.getMinutes());
    if (d.toDateString() === now.toDateString()) return hm;
    return MONTHS[d.getMonth()] + ' ' + d.getDate() +
      (d.getFullYear() !== now.getFullYear() ? ' ' + d.getFullYear() : '') + ' ' + hm;
  }

  function ago(ts) {
    const s = Math.max(0, Math.round((Date.now() - ts) / 1000));
    if (s < 60) return 'just now';
    const m = Math.round(s / 60);
    if (m < 60) return m + ' min ago';
    const h = Math.round(m / 60);
    if (h < 48) return h + ' h ago';
    return clock(ts);
  }

  // A stable colour class for a name, so authors are told apart at a glance.
  function hue(name) {
    let h = 0;
    for (const c of String(name)) h = (h * 31 + c.codePointAt(0)) >>> 0;
    return 'hue' + (h % 8);
  }

  function snippet(text, n) {
    const t = String(text).replace(/\s+/g, ' ').trim();
    return t.length > n ? t.slice(0, n - 1) + '…' : t;
  }

  function myName() {
    return state.status && state.status.me ? state.status.me.name : '';
  }

  function myId() {
    return state.status && state.status.me ? state.status.me.id : '';
  }

  function isMine(m) {
    return m.local || (m.from_id ? m.from_id === myId() : m.from === myName());
  }

  /* ---- the connection indicator ---- */

  function setConn(s, text) {
    ui.conn.dataset.state = s;
    ui.connText.textContent = text;
  }

  /* ---- members ---- */

  function renderStatus() {
    const st = state.status;
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
    const d = state.status && state.status.damping;
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

  /* ---- paths: how this member reaches the others (docs/REACHABILITY.md) ---- */

  const NAT_TEXT = {
    open: 'no NAT',
    cone: 'cone NAT',
    symmetric: 'symmetric NAT',
    unknown: 'NAT not known yet',
  };
  const NAT_HELP = {
    open: 'Other members see this daemon at one of its own addresses: no NAT is in the way.',
    cone: 'Behind a NAT that keeps one public port for every peer: members behind other NATs can reach it by hole punching.',
    symmetric: 'Behind a NAT that picks a new port for each peer: members behind NATs reach it only through others.',
    unknown: 'Fewer than two members have said where they see this daemon.',
  };
  const OWN_PATHS = { direct: 'direct', lan: 'LAN', punched: 'hole-punched', relay: 'relay' };

  // The address others reach this member at: the one they see, else its own.
  function myAddress(me) {
    if (me.observed) return me.observed;
    return Array.isArray(me.addrs) && me.addrs.length ? me.addrs[0] : '';
  }

  function renderReach() {
    const me = state.status && state.status.me;
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

  // A member's path: as status says it (or a daemon older than paths:
  // guessed from 'direct'); null when not known (online again, but status
  // not loaded since).
  function pathOf(m) {
    if (typeof m.path === 'string' && m.path) return m.path;
    if (!m.online) return 'none';
    return m.path === undefined && m.direct ? 'direct' : null;
  }

  const isOwnPath = (p) => Object.prototype.hasOwnProperty.call(OWN_PATHS, p);

  // NAME of 'via NAME' ('others' for 'via others'), else null.
  function viaOf(p) {
    return typeof p === 'string' && p.startsWith('via ') ? p.slice(4) : null;
  }

  function rttText(ms) {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return '';
    if (ms < 0.1) return '<0.1 ms';
    return (ms < 10 ? ms.toFixed(1) : String(Math.round(ms))) + ' ms';
  }

  // What the member list says of a member's path: "direct · 1.2 ms",
  // "via bo", "unreachable"; '' when not known.
  function pathText(m) {
    const p = pathOf(m);
    if (isOwnPath(p)) {
      const rtt = rttText(m.rtt_ms);
      return OWN_PATHS[p] + (rtt ? ' · ' + rtt : '');
    }
    if (p === 'none') return 'unreachable';
    const via = viaOf(p);
    if (via === 'others') return 'via other members';
    if (via !== null) return 'via ' + via;
    return p ? String(p) : '';
  }

  // The same in a sentence, for tooltips and the network view's titles.
  function pathHelp(m) {
    const p = pathOf(m);
    if (isOwnPath(p)) {
      const what = { direct: 'our own connection',
        lan: 'our own connection, on a local network',
        punched: 'our own connection, made by hole punching',
        relay: 'our own connection, through the TURN relay (sealed end to end)' }[p];
      const rtt = rttText(m.rtt_ms);
      return what + (m.protocol ? ' (protocol ' + m.protocol + ')' : '') +
        (rtt ? ', round trip ' + rtt : '');
    }
    if (p === 'none') return 'unreachable now: messages to it wait until a path appears';
    const via = viaOf(p);
    if (via === 'others') return 'reached through other members, over several hops';
    if (via !== null) return 'no connection of ours: reached through ' + via;
    return 'path not known yet';
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
    const gone = state.status && Array.isArray(state.status.removed) &&
      state.status.removed.some(function (r) { return r && r.id === m.id; });
    if (gone) {
      const r = el('span', 'role role-removed', 'removed');
      r.title = 'removed from the room; the room key changed without it';
      line.append(r);
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

  function renderMembers() {
    const st = state.status;
    const list = [...state.members.values()].sort((a, b) =>
      (b.online - a.online) || String(a.name).localeCompare(String(b.name)));
    const rows = [];
    if (st && st.me) rows.push(memberRow({ ...st.me, online: true }, true));
    for (const m of list) rows.push(memberRow(m, false));
    ui.members.replaceChildren(...rows);
    // As 'papo rooms' says it: the other members online, of them all.
    const on = list.filter((m) => m.online).length;
    ui.membersCount.textContent = on + ' of ' + list.length + ' online';
    renderNet();

    // The "to" choices: everyone, or one member.  Rebuilt only when they
    // change, so an open list is not closed under the user; the choice
    // survives.
    const choices = [...state.members.values()].sort((a, b) =>
      String(a.name).localeCompare(String(b.name)))
      .map((m) => [m.id, m.name + (m.online ? '' : ' (offline)')]);
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
  }

  // Answers may come back out of order (a poll and a presence event):
  // only the newest request's is shown.
  let statusAsked = 0;
  let statusShown = 0;
  async function loadStatus() {
    const n = ++statusAsked;
    const gen = state.gen;
    const st = await api(roomPath('/status'));
    if (gen !== state.gen || n < statusShown) return;
    statusShown = n;
    state.status = st;
    state.members = new Map((st.members || []).map((m) => [m.id, m]));
    renderStatus();
  }

  // Status again shortly: a presence event says who is reachable, status
  // also says how.  Several events in a burst make one request.
  let statusTimer = null;
  function statusSoon() {
    if (statusTimer) return;
    statusTimer = setTimeout(() => {
      statusTimer = null;
      loadStatus().catch(() => {});
    }, STATUS_AFTER_PRESENCE_MS);
  }

  function onPresence(p) {
    if (!p || !p.id || p.id === myId()) return;
    const m = state.members.get(p.id);
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
      state.members.set(p.id, { id: p.id, name: p.name, online: !!p.online,
        last_seen: p.last_seen || null, about: '' });
    }
    renderMembers();
    statusSoon();
  }

  /* ---- the network view: this member in the middle, the others around ---- */

  const SVG_NS = 'http://www.w3.org/2000/svg';
  const NET_W = 260;               // the viewBox of #net in index.html
  const NET_H = 190;

  function svgEl(tag, cls, attrs) {
    const e = document.createElementNS(SVG_NS, tag);
    if (cls) e.setAttribute('class', cls);
    for (const k of Object.keys(attrs || {})) e.setAttribute(k, String(attrs[k]));
    return e;
  }

  function svgText(cls, attrs, text) {
    const t = svgEl('text', cls, attrs);
    t.textContent = text;
    return t;
  }

  // Its first child, so that it names the element for assistive technology.
  function svgTitle(text) {
    const t = document.createElementNS(SVG_NS, 'title');
    t.textContent = text;
    return t;
  }

  const fx = (v) => v.toFixed(1);

  function shortName(name, n) {
    const cs = [...String(name)];
    return cs.length > n ? cs.slice(0, n - 1).join('') + '…' : cs.join('');
  }

  function initial(name) {
    const c = [...String(name).trim()][0];
    return c ? c.toUpperCase() : '?';
  }

  function netNode(m, x, y, r, opts) {
    const g = svgEl('g', 'net-node ' + (opts.me ? 'me' : hue(m.name)) +
      (opts.dim ? ' dim' : ''));
    g.dataset.id = m.id || '';
    g.dataset.name = m.name || '';
    g.dataset.path = opts.me ? 'self' : pathOf(m) || '';
    g.append(svgTitle(opts.title),
      svgEl('circle', 'net-dot', { cx: fx(x), cy: fx(y), r }),
      svgText('net-initial', { x: fx(x), y: fx(y + r * 0.36), 'font-size': fx(r * 1.05) },
        initial(m.name)));
    if (opts.label) g.append(svgText('net-name', { x: fx(x), y: fx(y + r + 10) }, opts.label));
    return g;
  }

  // kind: 'direct', 'lan', 'punched' (our own connection: a solid line
  // from the middle, labelled), 'relay' (our own connection through the
  // TURN relay: the same, dashed), 'via' (a dashed curve from the member to
  // the one it is reached through) or 'others' (a dotted line to the
  // middle: reached over several hops).
  function netEdge(kind, from, to, a, b, c, title, label) {
    const g = svgEl('g', 'net-edge ' + (isOwnPath(kind) ? 'own' : kind));
    g.dataset.kind = kind;
    g.dataset.from = from;
    g.dataset.to = to;
    g.append(svgTitle(title));
    if (kind === 'via') {
      // Bowed away from the middle, so it is not taken for a link of ours.
      const mx = (a.x + b.x) / 2;
      const my = (a.y + b.y) / 2;
      let ox = mx - c.x;
      let oy = my - c.y;
      const len = Math.hypot(ox, oy);
      if (len < 1) {
        ox = a.y - b.y;
        oy = b.x - a.x;
      }
      const k = len < 1 ? 30 / Math.hypot(ox, oy) : 0.35;
      g.append(svgEl('path', 'net-line', {
        d: 'M' + fx(a.x) + ' ' + fx(a.y) + ' Q' + fx(mx + ox * k) + ' ' + fx(my + oy * k) +
          ' ' + fx(b.x) + ' ' + fx(b.y) }));
    } else {
      g.append(svgEl('line', 'net-line', { x1: fx(a.x), y1: fx(a.y), x2: fx(b.x), y2: fx(b.y) }));
    }
    if (label) {
      // Above the middle of a flat line; else 60 % of the way out, on
      // its outer side, clear of the labels of lines beside it.
      const dx = b.x - a.x;
      const flat = Math.abs(b.y - a.y) < Math.abs(dx) * 0.4;
      const x = a.x + dx * (flat ? 0.5 : 0.6);
      const y = a.y + (b.y - a.y) * (flat ? 0.5 : 0.6);
      g.append(svgText('net-label', flat ?
        { x: fx(x), y: fx(y - 5), 'text-anchor': 'middle' } :
        { x: fx(x + (dx < -1 ? -5 : 5)), y: fx(y + 3), 'text-anchor': dx < -1 ? 'end' : 'start' },
      label));
    }
    return g;
  }

  // The member a 'via NAME' member is reached through (one we reach on
  // our own, if several have that name), or null.
  function hopOf(m, others) {
    const via = viaOf(pathOf(m));
    if (via === null || via === 'others') return null;
    const named = others.filter((o) => o !== m && o.name === via);
    return named.find((o) => isOwnPath(pathOf(o))) || named[0] || null;
  }

  // Around the circle by name, each member followed by those reached
  // through it: a dashed curve joins neighbours.
  function netOrder(others, hops) {
    const order = [];
    const placed = new Set();
    const place = (m) => {
      if (placed.has(m)) return;
      placed.add(m);
      order.push(m);
      for (const d of others) if (hops.get(d) === m) place(d);
    };
    for (const m of others) if (!hops.get(m)) place(m);
    for (const m of others) place(m);   // a loop of vias, should one be told
    return order;
  }

  function renderNet() {
    const st = state.status;
    if (!st || !st.me) return;
    const me = st.me;
    const others = [...state.members.values()].sort((a, b) =>
      String(a.name).localeCompare(String(b.name)) || String(a.id).localeCompare(String(b.id)));

    // Drawn again only when what it shows changed: a tooltip being read
    // is not pulled away every few seconds.
    const sig = JSON.stringify([me.id, me.name, me.nat, myAddress(me),
      others.map((m) => [m.id, m.name, pathOf(m), rttText(m.rtt_ms), m.protocol || 0,
        !m.online && m.last_seen ? ago(m.last_seen) : ''])]);
    if (ui.net.dataset.sig === sig) return;
    ui.net.dataset.sig = sig;

    const hops = new Map(others.map((m) => [m, hopOf(m, others)]));
    const ring = netOrder(others, hops);
    const n = ring.length;
    const c = { x: NET_W / 2, y: NET_H / 2 - 4 };
    const r = n <= 8 ? 11 : n <= 16 ? 8 : 5;
    const pos = new Map();
    ring.forEach((m, i) => {
      const a = 2 * Math.PI * i / n;   // the first on the right, then clockwise
      pos.set(m, { x: c.x + 98 * Math.cos(a), y: c.y + 64 * Math.sin(a) });
    });

    const edges = [];
    const nodes = [];
    let own = 0;
    let turned = 0;
    let relayed = 0;
    let unreachable = 0;
    for (const m of ring) {
      const p = pathOf(m);
      const at = pos.get(m);
      const hop = hops.get(m);
      if (isOwnPath(p)) {
        if (p === 'relay') turned++;
        else own++;
        const rtt = rttText(m.rtt_ms);
        edges.push(netEdge(p, me.id, m.id, c, at, c, me.name + ' to ' + m.name + ': ' + pathHelp(m),
          n <= 8 ? (p === 'punched' ? 'punched' : OWN_PATHS[p]) + (rtt ? ' ' + rtt : '') : ''));
      } else if (hop) {
        relayed++;
        edges.push(netEdge('via', m.id, hop.id, at, pos.get(hop), c,
          m.name + ' is reached through ' + hop.name, ''));
      } else if (viaOf(p) !== null) {
        // Over several hops, or through a member this page does not know.
        relayed++;
        const via = viaOf(p);
        edges.push(netEdge('others', m.id, me.id, at, c, c,
          m.name + ' is reached through ' + (via === 'others' ? 'other members' : via), ''));
      } else if (p === 'none') {
        unreachable++;
      }
      const seen = !m.online && m.last_seen ? ', last seen ' + ago(m.last_seen) : '';
      nodes.push(netNode(m, at.x, at.y, r, {
        dim: p === 'none',
        title: m.name + ': ' + pathHelp(m) + seen,
        label: n <= 16 ? shortName(m.name, 10) : '',
      }));
    }
    const addr = myAddress(me);
    const nat = NAT_TEXT[me.nat] || '';
    nodes.push(netNode(me, c.x, c.y, r + 3, {
      me: true,
      title: me.name + ' (you)' + (nat ? ', ' + nat : '') + (addr ? ', reached at ' + addr : ''),
    }));

    const title = ui.net.querySelector('title');
    const edgeLayer = svgEl('g', 'net-edges');
    const nodeLayer = svgEl('g', 'net-nodes');
    edgeLayer.append(...edges);
    nodeLayer.append(...nodes);
    ui.net.replaceChildren(title, edgeLayer, nodeLayer);

    const parts = [];
    if (own) parts.push(own + ' direct');
    if (turned) parts.push(turned + ' through the relay');
    if (relayed) parts.push(relayed + ' via others');
    if (unreachable) parts.push(unreachable + ' unreachable');
    ui.netCount.textContent = n ? parts.join(' · ') : 'nobody else yet';
  }

  /* ---- Markdown: the daemon's HTML, copied element by element ---- */

  // What CommonMark and GitHub's tables and strikethrough make, papo's
  // @name span and a search excerpt's <mark>, and nothing else (no img:
  // images come as links).
  const MD_TAGS = new Set(['P', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'EM', 'STRONG',
    'CODE', 'PRE', 'UL', 'OL', 'LI', 'BLOCKQUOTE', 'HR', 'BR', 'A', 'TABLE',
    'THEAD', 'TBODY', 'TR', 'TH', 'TD', 'DEL', 'SPAN', 'MARK']);
  const MD_ALIGN = new Set(['left', 'center', 'right']);

  // A link may go to http(s), mailto, or a path of this daemon.
  function safeHref(h) {
    return typeof h === 'string' && (/^(https?|mailto):/i.test(h) || !/^[^/?#]*:/.test(h));
  }

  function mdCopy(from, to, top) {
    for (const n of from.childNodes) {
      if (n.nodeType === Node.TEXT_NODE) {
        // The newlines between blocks are not text.
        if (!(top && /^\s*$/.test(n.data))) to.append(document.createTextNode(n.data));
        continue;
      }
      if (n.nodeType !== Node.ELEMENT_NODE) continue;   // comments
      if (!MD_TAGS.has(n.tagName)) {
        // Never an element of ours: at most its text.
        if (n.textContent) to.append(document.createTextNode(n.textContent));
        continue;
      }
      let e;
      if (n.tagName === 'A') {
        const href = n.getAttribute('href');
        if (safeHref(href)) {
          e = el('a', 'md-link');
          e.href = href;
          e.rel = 'noopener noreferrer';
          e.target = '_blank';
          e.title = href;
        } else {
          e = el('span');
        }
      } else {
        e = document.createElement(n.tagName.toLowerCase());
      }
      if (n.tagName === 'OL' && /^\d{1,9}$/.test(n.getAttribute('start') || ''))
        e.start = Number(n.getAttribute('start'));
      if (n.tagName === 'CODE' && /^language-[\w+#.-]{1,40}$/.test(n.className))
        e.dataset.lang = n.className.slice(9);
      if ((n.tagName === 'TH' || n.tagName === 'TD') && MD_ALIGN.has(n.getAttribute('align')))
        e.style.textAlign = n.getAttribute('align');
      if (n.tagName === 'SPAN' && n.className === 'mention') e.className = 'mention';
      if (n.tagName === 'MARK') e.className = 'hit';
      mdCopy(n, e, false);
      if (n.tagName === 'PRE') e = codeBlock(e);
      to.append(e);
    }
  }

  // A code block: its language, if named, and a copy button above it.
  function codeBlock(pre) {
    const box = el('div', 'code-block');
    const bar = el('div', 'code-bar');
    const code = pre.querySelector('code');
    bar.append(el('span', 'code-lang', code && code.dataset.lang ? code.dataset.lang : 'code'));
    const b = el('button', 'code-copy link-button', 'Copy');
    b.type = 'button';
    b.title = 'Copy this code';
    bar.append(b);
    box.append(bar, pre);
    return box;
  }

  // A message's body: the daemon's Markdown when it sent it, else text.
  function messageBody(m) {
    if (typeof m.html !== 'string') return el('div', 'text plain', m.text);
    const body = el('div', 'text md');
    const doc = new DOMParser().parseFromString(m.html, 'text/html');
    mdCopy(doc.body, body, true);
    return body;
  }

  // Copies text to the clipboard; false when the browser refused.
  async function copyText(text) {
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

  /* ---- days ---- */

  function dayLabel(ts) {
    const d = new Date(ts);
    const now = new Date();
    const yesterday = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1);
    if (d.toDateString() === now.toDateString()) return 'Today';
    if (d.toDateString() === yesterday.toDateString()) return 'Yesterday';
    const opts = { weekday: 'long', day: 'numeric', month: 'long' };
    if (d.getFullYear() !== now.getFullYear()) opts.year = 'numeric';
    return d.toLocaleDateString(undefined, opts);
  }

  function daySeparator(label) {
    let li = state.daySeps.get(label);
    if (!li) {
      li = el('li', 'day');
      li.setAttribute('role', 'separator');
      li.append(el('span', 'day-label', label));
      state.daySeps.set(label, li);
    }
    return li;
  }

  /* ---- messages and threads ---- */

  function receiptOf(id) {
    let r = state.receipts.get(id);
    if (!r) {
      r = { delivered: new Set(), read: new Set() };
      state.receipts.set(id, r);
    }
    return r;
  }

  // History entries may carry their delivery state; take what is there.
  function absorbState(m) {
    if (!m.id) return;
    const add = (name, read) => (read ? receiptOf(m.id).read : receiptOf(m.id).delivered).add(name);
    for (const n of m.delivered_to || []) add(n, false);
    for (const n of m.read_by || []) add(n, true);
    for (const x of m.receipts || []) if (x && x.by) add(x.by, x.state === 'read');
    if (m.state && !state.sendState.has(m.id))
      state.sendState.set(m.id, { state: m.state, waiting_for: m.waiting_for || [] });
  }

  function deliveryText(m) {
    if (m.sending) return { cls: 'sending', text: 'sending…' };
    const r = state.receipts.get(m.id);
    const s = state.sendState.get(m.id);
    const parts = [];
    let cls = 'queued';
    if (r && r.read.size) {
      parts.push('read by ' + [...r.read].join(', '));
      cls = 'read';
    }
    const deliveredOnly = r ? [...r.delivered].filter((n) => !r.read.has(n)) : [];
    if (deliveredOnly.length) {
      parts.push('delivered to ' + deliveredOnly.join(', '));
      if (cls !== 'read') cls = 'delivered';
    }
    if (!parts.length && s) {
      if (s.state === 'delivered') {
        parts.push('delivered');
        cls = 'delivered';
      } else if (s.state === 'queued') {
        const w = (s.waiting_for || []).join(', ');
        parts.push(w ? 'queued for ' + w : 'queued');
      }
    }
    if (!parts.length) return null;
    return { cls, text: parts.join(' · ') };
  }

  // The thread a message belongs to: the oldest ancestor this page knows.
  function rootOf(m) {
    let cur = m;
    const seen = new Set();
    while (cur.reply_to && state.msgs.has(cur.reply_to) && !seen.has(cur.reply_to)) {
      seen.add(cur.reply_to);
      cur = state.msgs.get(cur.reply_to);
    }
    return cur;
  }

  function messageKey(m) {
    return m.key || m.id;
  }

  function foldButton(folded) {
    const b = el('button', 'fold-toggle link-button', folded ? 'Show more' : 'Show less');
    b.type = 'button';
    b.setAttribute('aria-expanded', String(!folded));
    return b;
  }

  // Messages just drawn that are taller than FOLD_PX fold, with a button.
  function foldTall(within) {
    for (const body of (within || ui.messages).querySelectorAll('.text[data-measure]')) {
      if (!body.isConnected || body.clientHeight === 0) continue;   // not laid out yet
      delete body.dataset.measure;
      if (body.scrollHeight <= FOLD_PX + 80) continue;   // a little more is shown whole
      body.classList.add('folded');
      body.after(foldButton(true));
    }
  }

  // A message's <li>; its parent is looked up in known (a Map by id: the
  // thread panel's), else in the timeline's.  lay (the timeline's) says
  // whether it continues its author's group (name and time not repeated)
  // and whether its quote of the message it answers is shown.
  function buildMessage(m, known, lay) {
    const cont = !!(lay && lay.cont);
    const quote = !lay || lay.quote;
    const mine = isMine(m);
    const li = el('li', 'msg');
    li.dataset.key = messageKey(m);
    if (m.id) {
      li.id = 'm-' + m.id;
      li.dataset.id = m.id;
    }
    li.classList.toggle('mine', mine);
    li.classList.toggle('reply', !!m.reply_to);
    li.classList.toggle('cont', cont);
    li.classList.toggle('to-me', !!m.to && (m.to_id ? m.to_id === myId() : m.to === myName()));

    const meta = el('div', 'meta');
    const from = el('span', 'from ' + hue(m.from), m.from);
    if (m.from_id) from.title = m.from_id + (m.from_role ? ' (' + m.from_role + ')' : '');
    meta.append(from);
    // Names are not unique: while another member has this one, the
    // author's short id says which of them wrote (the node's from_label).
    if (m.from_id && m.from_label && m.from_label !== m.from)
      meta.append(el('span', 'from-id', m.from_id.slice(0, 8) + '…'));
    if (m.to) {
      const to = el('span', 'to');
      to.append(el('span', 'arrow', '→ '), el('span', 'to-name', m.to));
      to.title = 'only for ' + m.to;
      meta.append(to);
    }
    const t = el('time', 'ts', clock(m.ts));
    t.dateTime = new Date(m.ts).toISOString();
    t.title = new Date(m.ts).toLocaleString();
    meta.append(t);
    const d = mine ? deliveryText(m) : null;
    if (d) meta.append(el('span', 'delivery ' + d.cls, d.text));
    const replies = known ? 0 : (state.replies.get(m.id) || 0);
    if (replies && m.id && !m.local) {
      // Answered: the count opens the conversation at the side.
      const c = el('button', 'thread-button replies-count link-button',
        replies === 1 ? '1 reply' : replies + ' replies');
      c.type = 'button';
      c.dataset.thread = m.id;
      c.title = 'Show this conversation on its own';
      meta.append(c);
    }
    // Its id and actions: shown on hover or focus (always on a touch screen).
    const acts = el('span', 'actions');
    if (m.id && !m.local) acts.append(el('span', 'mid', m.id));
    if (m.id && !m.local) {
      const b = el('button', 'reply-button link-button', 'Reply');
      b.type = 'button';
      b.dataset.reply = m.id;
      b.title = 'Answer this message';
      acts.append(b);
      if (m.reply_to && !replies) {
        const tb = el('button', 'thread-button link-button', 'Thread');
        tb.type = 'button';
        tb.dataset.thread = m.id;
        tb.title = 'Show this conversation on its own';
        acts.append(tb);
      }
    }
    if (acts.childNodes.length) meta.append(acts);
    li.append(meta);

    if (m.reply_to && quote) {
      const parent = (known && known.get(m.reply_to)) || state.msgs.get(m.reply_to);
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
      if (state.expanded.has(messageKey(m))) {
        li.append(foldButton(false));
      } else {
        body.dataset.measure = '1';
      }
    }
    if (state.newMark === m.id) li.prepend(el('div', 'new-marker', 'New messages'));
    if (Array.isArray(m.files) && m.files.length) li.append(filesOf(m));
    return li;
  }

  /* ---- files ---- */

  function humanSize(n) {
    if (typeof n !== 'number' || !isFinite(n)) return '';
    // As the CLI writes sizes (cli_size): "512 bytes", "8.7 KiB", "5.0 MiB".
    const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) {
      n /= 1024;
      i++;
    }
    return (i === 0 ? String(n) : n.toFixed(1)) + ' ' + units[i];
  }

  // A file as its message names it, with what this page learnt since.
  function fileState(f) {
    const s = state.files.get(f.ref);
    return Object.assign({}, f, s || {});
  }

  function blobPath(ref, extra) {
    return '/api/blobs/' + encodeURIComponent(ref) + (extra || '') +
      (state.shown ? '?room=' + encodeURIComponent(state.shown) : '');
  }

  // GET a file (or its first bytes) with the token; a Response.
  async function blobFetch(ref, range) {
    for (;;) {
      const used = token;
      const headers = authHeaders(range ? { Range: range } : {});
      const res = await fetch(blobPath(ref), { headers, cache: 'no-store' });
      if (res.status === 401) {
        await authorize(res, used);
        continue;
      }
      if (!res.ok) throw new ApiError(res.status, await errorText(res));
      return res;
    }
  }

  function isImage(f) {
    return typeof f.type === 'string' && /^image\/(png|jpeg|gif|webp)$/.test(f.type);
  }

  function isText(f) {
    return typeof f.type === 'string' && (f.type.startsWith('text/') ||
      f.type === 'application/json');
  }

  // Loads a preview of a file that is here, once; the message is drawn
  // again when it is ready.
  async function loadPreview(f) {
    if (state.previews.has(f.ref)) return;
    state.previews.set(f.ref, 'loading');
    const gen = state.gen;
    let p;
    try {
      if (isImage(f)) {
        const res = await blobFetch(f.ref);
        p = { url: URL.createObjectURL(await res.blob()) };
      } else {
        const res = await blobFetch(f.ref, 'bytes=0-' + (PREVIEW_TEXT - 1));
        const buf = await res.arrayBuffer();
        const text = new TextDecoder('utf-8').decode(buf.slice(0, PREVIEW_TEXT));
        p = { text: text + (f.size > PREVIEW_TEXT ? '\n…' : '') };
      }
    } catch (e) {
      // Tried again a little later, a few times (a file that just
      // became whole, a daemon restarting).
      const tries = (state.previewTries.get(f.ref) || 0) + 1;
      state.previewTries.set(f.ref, tries);
      p = { error: e.message };
      if (tries < 4) {
        setTimeout(() => {
          if (gen === state.gen && state.previews.get(f.ref) === p) {
            state.previews.delete(f.ref);
            renderSoon();
          }
        }, 2000 * tries);
      }
    }
    if (gen !== state.gen) {
      if (p.url) URL.revokeObjectURL(p.url);
      return;
    }
    state.previews.set(f.ref, p);
    renderSoon();
  }

  async function download(ref, name) {
    try {
      const res = await blobFetch(ref);
      const url = URL.createObjectURL(await res.blob());
      const a = el('a');
      a.href = url;
      a.download = name || 'file';
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
    } catch (e) {
      ui.sendStatus.textContent = 'Could not download ' + name + ': ' + e.message;
    }
  }

  async function fetchFile(ref) {
    try {
      const j = await api(blobPath(ref, '/fetch'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      });
      onFile(j);
    } catch (e) {
      ui.sendStatus.textContent = 'Could not fetch the file: ' + e.message;
    }
  }

  // A file's state changed (the stream's "file" event, a fetch's answer).
  function onFile(j) {
    if (!j || typeof j.ref !== 'string') return;
    // A fetch's answer can come after the stream's event that the file
    // is here (a small file is fetched at once): it never takes a file
    // back from here.
    const known = state.files.get(j.ref);
    if (known && known.state === 'here' && j.state !== 'here') return;
    state.files.set(j.ref, j);
    for (const m of state.msgs.values())
      if (Array.isArray(m.files) && m.files.some((f) => f && f.ref === j.ref)) {
        renderSoon();
        break;
      }
  }

  function fileItem(f) {
    const li = el('li', 'file');
    li.dataset.ref = f.ref;
    li.dataset.state = f.state || '';
    const head = el('div', 'file-head');
    head.append(el('span', 'file-name', f.name || 'file'),
      el('span', 'file-size', humanSize(f.size)));
    if (f.type) head.lastChild.title = f.type;
    if (f.state === 'here') {
      const b = el('button', 'file-download link-button', 'Download');
      b.type = 'button';
      b.dataset.ref = f.ref;
      b.dataset.name = f.name || 'file';
      head.append(b);
    } else if (f.state === 'named') {
      const b = el('button', 'file-fetch link-button', 'Fetch');
      b.type = 'button';
      b.dataset.ref = f.ref;
      b.title = 'Fetch it from the members who hold it';
      head.append(b);
    } else if (f.state === 'fetching') {
      head.append(el('span', 'file-state', 'fetching…'));
    } else if (f.state === 'waiting') {
      head.append(el('span', 'file-state', 'waiting for a member who holds it'));
    } else if (f.state === 'failed') {
      head.append(el('span', 'file-state failed', 'failed' + (f.error ? ': ' + f.error : '')));
    }
    li.append(head);
    if (f.state === 'fetching' && typeof f.size === 'number' && f.size > 0) {
      const p = el('progress', 'file-progress');
      p.max = f.size;
      p.value = typeof f.have === 'number' ? f.have : 0;
      p.title = humanSize(p.value) + ' of ' + humanSize(f.size);
      li.append(p);
    }
    if (f.state === 'here' && (isImage(f) ? f.size <= PREVIEW_IMAGE_MAX : isText(f))) {
      const p = state.previews.get(f.ref);
      if (!p) loadPreview(f);
      else if (p.url) {
        const img = el('img', 'file-image');
        img.src = p.url;
        img.alt = f.name || 'image';
        li.append(img);
      } else if (typeof p.text === 'string') {
        li.append(el('pre', 'file-text', p.text));
      }
    }
    return li;
  }

  function filesOf(m) {
    const ul = el('ul', 'files');
    for (const f of m.files)
      if (f && typeof f.ref === 'string' && REF_RE.test(f.ref)) ul.append(fileItem(fileState(f)));
    return ul;
  }

  // What a message's files show, for look().
  function filesLook(m) {
    if (!Array.isArray(m.files)) return '';
    return m.files.map((f) => {
      if (!f) return '';
      const s = fileState(f);
      const p = state.previews.get(f.ref);
      return [f.ref, s.state, s.have, p ? (p === 'loading' ? 'l' : 'p') : ''].join(':');
    }).join(',');
  }

  function renderAttached() {
    ui.attached.hidden = state.attached.length === 0;
    ui.attached.replaceChildren(...state.attached.map((file, i) => {
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

  // Signature of what a message's element shows, to rebuild it only on change.
  function look(m, lay) {
    const d = isMine(m) ? deliveryText(m) : null;
    const p = m.reply_to ? state.msgs.get(m.reply_to) : null;
    return [m.id, m.ts, d ? d.text : '', p ? p.id : '', clock(m.ts),
      state.replyTo === m.id, filesLook(m), typeof m.html === 'string' ? m.html.length : -1,
      state.expanded.has(messageKey(m)), state.newMark === m.id,
      state.replies.get(m.id) || 0, lay.cont, lay.quote].join('|');
  }

  function elementFor(m, lay) {
    const key = messageKey(m);
    let li = state.elems.get(key);
    const sig = look(m, lay);
    if (!li || li.dataset.sig !== sig) {
      const fresh = buildMessage(m, null, lay);
      fresh.dataset.sig = sig;
      fresh.classList.toggle('replying-here', state.replyTo === m.id);
      if (li) {
        if (li.classList.contains('arrived')) fresh.classList.add('arrived');
        li.replaceWith(fresh);
      }
      li = fresh;
      state.elems.set(key, li);
    }
    return li;
  }

  function atBottom() {
    const s = ui.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight < 80;
  }

  // Whether the view follows the newest message: set by scrolling only
  // (growing content fires no scroll event), so that content growing
  // above the bottom (an image preview decoded late) does not unpin it.
  // A scroll whose event has not come yet (it comes with the next frame,
  // a message may come first) counts already.
  function nearBottom() {
    if (ui.scroller.scrollTop !== state.pinTop) state.pinned = atBottom();
    return state.pinned;
  }

  // Back to the bottom while pinned: after a layout, and whenever the
  // timeline's height changes (images loading) until the reader scrolls.
  function keepPinned() {
    if (!state.pinned) return;
    const s = ui.scroller;
    if (s.scrollHeight - s.scrollTop - s.clientHeight > 1) s.scrollTop = s.scrollHeight;
    // Its scroll event comes later, maybe after content grew again: at
    // this place, it is the page's own and leaves the view pinned.
    state.pinTop = s.scrollTop;
  }

  // Gives parent exactly these children, touching the DOM only when they
  // differ (a moved element loses focus and selection).
  function setChildren(parent, list) {
    const cur = parent.children;
    if (cur.length === list.length && list.every((c, i) => cur[i] === c)) return;
    parent.replaceChildren(...list);
  }

  // Two messages one after the other that read as one group: the same
  // author, to the same members, within GROUP_MS.
  const GROUP_MS = 5 * 60 * 1000;
  function continues(prev, m) {
    if (!prev || prev.local !== m.local && (prev.sending || m.sending)) return false;
    const a = prev.from_id || prev.from, b = m.from_id || m.from;
    return a === b && prev.from === m.from && (prev.to_id || prev.to || null) === (m.to_id || m.to || null) &&
      m.ts - prev.ts >= 0 && m.ts - prev.ts < GROUP_MS && state.newMark !== m.id;
  }

  // Lays out every message in time order, where its time puts it: a
  // reply quotes the message it answers (not when that one is just
  // above), an answered message counts its replies (the conversation
  // opens at the side), consecutive messages of one author are grouped
  // (name and time once).  Elements are reused.
  function render(opts) {
    clearTimeout(renderTimer);
    renderTimer = null;
    const stick = (opts && opts.stick) || renderStick || nearBottom();
    renderStick = false;
    const all = [...state.msgs.values()].sort((a, b) => a.ts - b.ts ||
      String(messageKey(a)).localeCompare(String(messageKey(b))));
    state.replies = new Map();
    for (const m of all)
      if (m.reply_to) state.replies.set(m.reply_to, (state.replies.get(m.reply_to) || 0) + 1);
    state.parents = new Set(state.replies.keys());

    const wanted = new Set(all.map(messageKey));
    for (const [k, li] of state.elems) {
      if (!wanted.has(k)) {
        li.remove();
        state.elems.delete(k);
      }
    }
    const items = [];
    let day = null;
    let prev = null;
    const labels = new Set();
    for (const m of all) {
      const label = dayLabel(m.ts);
      if (label !== day) {
        items.push(daySeparator(label));
        labels.add(label);
        day = label;
        prev = null;
      }
      const cont = continues(prev, m);
      const quote = !!m.reply_to && !(prev && (prev.id === m.reply_to ||
        (cont && prev.reply_to === m.reply_to)));
      items.push(elementFor(m, { cont, quote }));
      prev = m;
    }
    setChildren(ui.messages, items);
    for (const k of [...state.daySeps.keys()]) if (!labels.has(k)) state.daySeps.delete(k);
    foldTall();
    for (const id of state.arrivals) {
      const li = state.elems.get(id);
      if (!li) continue;
      li.classList.add('arrived');
      setTimeout(() => li.classList.remove('arrived'), 4000);
    }
    state.arrivals.clear();
    ui.empty.hidden = all.length > 0;
    ui.older.hidden = !state.moreBefore || all.length === 0;
    renderRetention();
    if (stick) {
      state.pinned = true;
      keepPinned();
    }
    renderBelow();
  }

  // The count of messages below, on the button that scrolls to them.
  function renderBelow() {
    if (state.below && nearBottom()) state.below = 0;
    ui.newBelow.hidden = state.below === 0;
    ui.newBelow.textContent = state.below === 1 ? '1 new message ↓' : state.below + ' new messages ↓';
  }

  // Down to the first new message when they fill more than the view,
  // else to the end.
  function scrollToNew() {
    const s = ui.scroller;
    const first = state.newMark ? $('m-' + state.newMark) : null;
    if (first && s.scrollHeight - (first.getBoundingClientRect().top -
        s.getBoundingClientRect().top + s.scrollTop) > s.clientHeight) {
      first.scrollIntoView({ block: 'start' });
    } else {
      state.pinned = true;
      keepPinned();
    }
    state.below = 0;
    renderBelow();
  }

  // Events come in bursts (a replay after reconnecting): one layout each.
  let renderTimer = null;
  let renderStick = false;
  function renderSoon() {
    if (renderTimer === null) {
      renderStick = nearBottom();
      renderTimer = setTimeout(render, 15);
    }
  }

  function addMessages(list, opts) {
    let added = 0;
    for (const m of list) {
      if (!m || typeof m.id !== 'string') continue;
      absorbState(m);
      const had = state.msgs.get(m.id);
      if (!had && isMine(m)) {
        // Our own message, stored before its send was answered: it
        // takes the place of the copy shown while sending.
        for (const [k, p] of state.msgs) {
          if (p.local && p.sending && p.text === m.text &&
              (p.reply_to || null) === (m.reply_to || null)) {
            state.msgs.delete(k);
            break;
          }
        }
      }
      state.msgs.set(m.id, Object.assign(had || {}, m, { local: false, key: undefined }));
      if (!had) added++;
      advanceMark(state.shown, m);
      if (state.oldestTs === null || m.ts < state.oldestTs) state.oldestTs = m.ts;
    }
    saveMarks();
    if (opts && opts.soon) {
      if (added) renderSoon();
    } else if (added || (opts && opts.always)) {
      render(opts);
    }
    return added;
  }

  // Where the log starts when retention (PAPO_KEEP) dropped older
  // messages: said once the earliest kept message is on the page.
  function renderRetention() {
    const r = state.retention;
    const show = !!(r && r.starts) && !state.moreBefore;
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
    const list = state.roomEvents;
    ui.roomlog.replaceChildren();
    ui.roomlog.hidden = list.length === 0;
    for (const e of list) {
      if (!e || typeof e.text !== 'string') continue;
      const li = el('li', 'roomlog-line', e.text);
      if (typeof e.ts === 'number') li.title = new Date(e.ts).toLocaleString();
      ui.roomlog.append(li);
    }
  }

  async function loadRoomLog() {
    const gen = state.gen;
    const h = await api(roomPath('/history?limit=1'));
    if (gen !== state.gen) return;
    state.roomEvents = Array.isArray(h.room) ? h.room : [];
    renderRoomLog();
  }

  async function loadHistory() {
    const gen = state.gen;
    const h = await api(roomPath('/history?html=1&limit=' + HISTORY_PAGE));
    if (gen !== state.gen) return;
    state.retention = h.retention || null;
    state.roomEvents = Array.isArray(h.room) ? h.room : [];
    renderRoomLog();
    const msgs = h.messages || [];
    if (state.msgs.size === 0) {
      // The node's cursor for the page before (docs/RELIABILITY.md,
      // "History order"): absent when nothing older is left.
      state.earlier = h.earlier || null;
      state.moreBefore = !!h.earlier;
    }
    addMessages(msgs, { always: true, stick: state.msgs.size === 0 });
  }

  async function loadOlder() {
    if (state.earlier === null && state.oldestTs === null) return;
    ui.older.disabled = true;
    const gen = state.gen;
    try {
      const c = state.earlier;
      const h = await api(roomPath('/history?html=1&limit=' + HISTORY_PAGE + (c ?
        '&before=' + c.before + '&before_id=' + encodeURIComponent(c.before_id) :
        '&before=' + state.oldestTs)));
      if (gen !== state.gen) return;
      const msgs = h.messages || [];
      state.retention = h.retention || null;
      state.earlier = h.earlier || null;
      state.moreBefore = !!h.earlier;
      const s = ui.scroller;
      const fromBottom = s.scrollHeight - s.scrollTop;
      addMessages(msgs, { always: true, stick: false });
      s.scrollTop = s.scrollHeight - fromBottom;
    } catch (e) {
      ui.sendStatus.textContent = 'Could not load earlier messages: ' + e.message;
    } finally {
      ui.older.disabled = false;
    }
  }

  function onMessage(m) {
    if (!m || !m.id) return;
    const fresh = !state.msgs.has(m.id);
    if (fresh && !isMine(m)) {
      if (!nearBottom()) {
        // The reader is higher up: counted, and marked where they start.
        if (state.below === 0) state.newMark = m.id;
        state.below++;
      } else if (state.below === 0) {
        state.newMark = null;      // read as it came: the old line goes
      }
    }
    addMessages([m], { soon: true });
    threadMessage(m);
    if (fresh) {
      state.arrivals.add(m.id);
      if (document.hidden) {
        state.unseen++;
        document.title = '(' + state.unseen + ') ' + (state.status ? state.status.room : 'papo') + ' · papo';
      }
    }
  }

  // A receipt for a message this page has not seen: this member said it
  // elsewhere (its agent, another tab), and the stream carries only what
  // others say.  The history has it.
  let refreshTimer = null;
  function refreshSoon() {
    if (refreshTimer) return;
    refreshTimer = setTimeout(() => {
      refreshTimer = null;
      loadHistory().catch(() => {});
    }, 300);
  }

  function onReceipt(r) {
    if (!r || !r.id) return;
    const x = receiptOf(r.id);
    (r.state === 'read' ? x.read : x.delivered).add(r.by || r.by_id || '?');
    if (state.msgs.has(r.id)) renderSoon();
    else refreshSoon();
  }

  /* ---- replying and sending ---- */

  // The message id as this page knows it: the timeline's, or the
  // thread panel's (a thread may reach back past the pages loaded).
  function knownMessage(id) {
    return state.msgs.get(id) || (state.thread && state.thread.msgs.get(id)) || null;
  }

  function setReply(id) {
    state.replyTo = id && knownMessage(id) ? id : null;
    if (state.replyTo) {
      const m = knownMessage(id);
      ui.replyingTo.replaceChildren(el('span', 'parent-from', m.from),
        el('span', 'parent-text', ' ' + snippet(m.text, 60)));
      ui.replying.hidden = false;
      // A reply to a message addressed to me goes back to its author.
      if (m.to && !isMine(m) && m.from_id && state.members.has(m.from_id))
        ui.to.value = m.from_id;
      ui.text.focus();
    } else {
      ui.replying.hidden = true;
      ui.replyingTo.replaceChildren();
    }
    render();
  }

  let localSeq = 0;

  async function send() {
    const text = ui.text.value;
    const files = state.attached;
    if (!text.trim() && !files.length) return;
    const to = ui.to.value || null;
    const reply = state.replyTo;
    const toName = to && state.members.has(to) ? state.members.get(to).name : null;
    const key = 'local-' + (++localSeq);
    const room = state.shown;
    const gen = state.gen;
    const pending = { key, local: true, sending: true, from: myName(),
      from_id: myId(), to: toName, to_id: to, reply_to: reply, text, ts: Date.now() };
    state.msgs.set(key, pending);
    state.newMark = null;          // answering: what came is read
    state.below = 0;
    ui.text.value = '';
    state.attached = [];
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
      if (gen !== state.gen) return;   // sent to the room shown before
      state.msgs.delete(key);
      state.sendState.set(r.id, r);
      if (!state.msgs.has(r.id)) {
        state.msgs.set(r.id, { id: r.id, from: myName(), from_id: myId(), to: toName,
          to_id: to, reply_to: reply, text, ts: pending.ts });
      }
      threadMessage(state.msgs.get(r.id));   // the stream has only others'
      const r2 = receiptOf(r.id);
      for (const n of r.delivered_to || []) r2.delivered.add(n);
      render({ stick: true });
      // The daemon's own record has the exact time; a person's message
      // may have ended damping.
      loadHistory().catch(() => {});
      statusSoon();
    } catch (e) {
      // Not sent: the words go back in the box, with the reason (in
      // their room's box, when another room is shown now).
      if (gen !== state.gen) {
        if (room && !state.drafts.get(room)) state.drafts.set(room, text);
        return;
      }
      state.msgs.delete(key);
      const why = e instanceof ApiError ? e.message :
        'the daemon could not be reached (' + e.message + ')';
      ui.sendStatus.textContent = 'Not sent: ' + why;
      if (!ui.text.value) {
        ui.text.value = text;
        autosize();
      }
      if (!state.attached.length && files.length) {
        state.attached = files;
        renderAttached();
      }
      if (to && [...ui.to.options].some((o) => o.value === to)) ui.to.value = to;
      if (reply && !state.replyTo) setReply(reply);
      render();
    }
  }

  function autosize() {
    ui.text.classList.toggle('tall', ui.text.value.includes('\n') || ui.text.value.length > 80);
  }

  /* ---- rooms: the list, the room shown, unread counts ---- */

  // An API path for one room: '/status' -> '/api/rooms/ID/status'.  With
  // no room known (yet) it is the default room's: '/api/status'.
  function roomPath(p, id) {
    const room = id === undefined ? state.shown : id;
    return room ? '/api/rooms/' + encodeURIComponent(room) + p : '/api' + p;
  }

  function roomOf(id) {
    return state.rooms.find((r) => r.id === id) || null;
  }

  // The room a URL names: its id, its name, or the start of its id (4
  // characters at least), as the daemon takes them; null for none.
  function resolveRoom(sel) {
    if (!sel) return null;
    const r = roomOf(sel) || state.rooms.find((x) => x.name === sel) ||
      (sel.length >= 4 ? state.rooms.find((x) => x.id.startsWith(sel)) : null);
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
      const d = roomOf(state.dflt);
      ui.roomNote.textContent = 'No room \u201c' + sel + '\u201d here (left, or mistyped): ' +
        'showing ' + (d ? 'the default room, ' + d.name : 'the default room') + '.';
      ui.roomNote.hidden = false;
    } else if (sel !== null) {
      ui.roomNote.hidden = true;
    }
  }

  // The marks: per room, the newest message shown in this browser.
  function loadMarks() {
    const m = new Map();
    try {
      const o = JSON.parse(localStorage.getItem(MARKS_KEY) || '{}');
      for (const k of Object.keys(o)) {
        const v = o[k];
        if (v && typeof v.ts === 'number' && typeof v.id === 'string') m.set(k, { ts: v.ts, id: v.id });
      }
    } catch (e) { /* none kept, or unreadable: every room starts read */ }
    return m;
  }

  const marks = loadMarks();
  let marksDirty = false;

  function saveMarks() {
    if (!marksDirty) return;
    marksDirty = false;
    try {
      localStorage.setItem(MARKS_KEY, JSON.stringify(Object.fromEntries(marks)));
    } catch (e) { /* private mode: kept for this page only */ }
  }

  // Whether message m comes after mark k in history's order (time, then id).
  function isAfter(m, k) {
    return m.ts > k.ts || (m.ts === k.ts && String(m.id) > k.id);
  }

  function advanceMark(room, m) {
    if (!room || !m || typeof m.id !== 'string' || typeof m.ts !== 'number') return;
    const k = marks.get(room);
    if (k && !isAfter(m, k)) return;
    marks.set(room, { ts: m.ts, id: m.id });
    marksDirty = true;
  }

  // Counts m as unread in room (not the one shown) when another member
  // wrote it after the room's mark; true when the count grew.
  function countUnread(room, m) {
    if (!m || typeof m.id !== 'string' || typeof m.ts !== 'number' || room === state.shown) return false;
    const r = roomOf(room);
    const k = marks.get(room);
    if (!r || !k || !isAfter(m, k)) return false;
    if (m.from_id ? m.from_id === myId() : m.from === r.me) return false;
    let set = state.unread.get(room);
    if (!set) {
      set = new Set();
      state.unread.set(room, set);
    }
    if (set.has(m.id)) return false;
    set.add(m.id);
    return true;
  }

  function unreadOf(room) {
    const set = state.unread.get(room);
    return set ? set.size : 0;
  }

  function unreadText(room) {
    const n = unreadOf(room);
    return n ? n + (state.capped.has(room) ? '+' : '') : '';
  }

  // A room's unread messages kept in its history, counted once at load
  // (or when it comes back): the newest page since its mark.
  async function countFromHistory(room) {
    const k = marks.get(room);
    if (!k || room === state.shown) return;
    const h = await api(roomPath('/history?limit=' + HISTORY_PAGE + '&since=' + k.ts, room));
    const msgs = h.messages || [];
    let grew = false;
    for (const m of msgs) grew = countUnread(room, m) || grew;
    if (msgs.length >= HISTORY_PAGE) state.capped.add(room);   // and maybe more before
    if (grew) renderRooms();
  }

  // Takes the daemon's list of rooms: rooms new to the page get their
  // count (or a mark, when this browser never saw them); rooms gone lose
  // theirs; the room shown, if gone, gives way to the default.
  function applyRooms(j) {
    if (!j || !Array.isArray(j.rooms)) return;
    const before = new Set(state.rooms.map((r) => r.id));
    state.rooms = j.rooms.filter((r) => r && typeof r.id === 'string' && r.id &&
      typeof r.name === 'string').map((r) => ({ id: r.id, name: r.name,
      me: typeof r.me === 'string' ? r.me : '', default: !!r.default }));
    state.dflt = typeof j.default === 'string' ? j.default :
      (state.rooms.find((r) => r.default) || state.rooms[0] || {}).id || null;
    const now = new Set(state.rooms.map((r) => r.id));
    const fresh = [];
    for (const r of state.rooms) {
      if (before.has(r.id)) continue;
      if (marks.has(r.id)) {
        fresh.push(r.id);
      } else {
        marks.set(r.id, { ts: Date.now(), id: '' });
        marksDirty = true;
      }
    }
    for (const id of [...marks.keys()]) {
      if (!now.has(id)) {
        marks.delete(id);
        marksDirty = true;
      }
    }
    for (const id of [...state.unread.keys()]) if (!now.has(id)) state.unread.delete(id);
    saveMarks();
    if (state.shown && !now.has(state.shown)) showRoom(resolveRoom(hashRoom()) || state.dflt);
    renderRooms();
    return fresh;
  }

  // Counts the rooms' kept unread messages one after another: a daemon
  // of 64 rooms is not asked 63 histories at once.
  async function countRooms(ids) {
    for (const id of ids) await countFromHistory(id).catch(() => {});
  }

  async function loadRooms() {
    const j = await api('/api/rooms');
    const fresh = applyRooms(j) || [];
    if (state.shown) countRooms(fresh);
    return fresh;
  }

  // A "rooms" event loads the list again: the replay after (re)connecting
  // brings old lists too, and only the daemon's answer is the list now.
  let roomsTimer = null;
  function roomsSoon() {
    if (roomsTimer) return;
    roomsTimer = setTimeout(() => {
      roomsTimer = null;
      loadRooms().catch(() => {});
    }, ROOMS_AFTER_EVENT_MS);
  }

  function roomItem(r) {
    const li = el('li', 'room-item');
    li.dataset.id = r.id;
    const a = el('a', 'room-link');
    a.href = '#room=' + encodeURIComponent(r.id);
    a.title = r.name + ' (' + r.id + ')' + (r.id === state.dflt ? ', the default room' : '');
    if (r.id === state.shown) a.setAttribute('aria-current', 'page');
    li.classList.toggle('shown', r.id === state.shown);
    a.append(el('span', 'room-name', r.name));
    if (r.id === state.dflt) a.append(el('span', 'room-default', 'default'));
    const n = unreadText(r.id);
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
  function renderRooms() {
    const many = state.rooms.length > 1;
    ui.app.classList.toggle('many-rooms', many);
    ui.rooms.hidden = !many;
    ui.roomPickBox.hidden = !many;
    ui.searchAllBox.hidden = !many;
    if (!many) ui.searchAll.checked = false;
    const sig = JSON.stringify([state.shown, state.dflt,
      state.rooms.map((r) => [r.id, r.name, unreadText(r.id)])]);
    if (ui.roomList.dataset.sig === sig) return;
    ui.roomList.dataset.sig = sig;
    ui.roomList.replaceChildren(...(many ? state.rooms.map(roomItem) : []));
    ui.roomsCount.textContent = many ? String(state.rooms.length) : '';
    const opts = state.rooms.map((r) => {
      const n = unreadText(r.id);
      const o = el('option', '', r.name + (r.id === state.dflt ? ' (default)' : '') +
        (n ? ' · ' + n + ' unread' : ''));
      o.value = r.id;
      return o;
    });
    ui.roomPick.replaceChildren(...opts);
    if (state.shown) ui.roomPick.value = state.shown;
    let others = 0;
    for (const r of state.rooms) if (r.id !== state.shown) others += unreadOf(r.id);
    ui.roomPickUnread.hidden = !others;
    ui.roomPickUnread.textContent = others ? others + ' unread' : '';
    ui.roomPickUnread.title = others ? others + ' unread in other rooms' : '';
  }

  // Forgets everything the page shows of the room it showed.
  function clearRoom() {
    clearTimeout(statusTimer);
    statusTimer = null;
    clearTimeout(refreshTimer);
    refreshTimer = null;
    clearTimeout(renderTimer);
    renderTimer = null;
    state.status = null;
    state.members = new Map();
    state.msgs.clear();
    state.receipts.clear();
    state.sendState.clear();
    state.elems.clear();
    state.pinned = true;
    state.arrivals.clear();
    state.replyTo = null;
    state.oldestTs = null;
    state.earlier = null;
    state.moreBefore = true;
    state.retention = null;
    state.roomEvents = [];
    state.unseen = 0;
    state.below = 0;
    state.newMark = null;
    state.expanded.clear();
    state.daySeps.clear();
    ui.inviteConfirm.hidden = true;
    state.files.clear();
    for (const p of state.previews.values()) if (p && p.url) URL.revokeObjectURL(p.url);
    state.previews.clear();
    state.previewTries.clear();
    ui.messages.replaceChildren();
    ui.members.replaceChildren();
    ui.membersCount.textContent = '';
    ui.to.dataset.sig = '';
    ui.net.dataset.sig = '';
    ui.reach.hidden = true;
    ui.damping.hidden = true;
    ui.sendStatus.textContent = '';
    ui.replying.hidden = true;
    ui.replyingTo.replaceChildren();
    closeSearch(false);
    closeThread();
    renderRoomLog();
    renderMembers();
  }

  // Shows room id (one of the list): its messages, members and status,
  // loaded now; its unread count is cleared.  No reload: the stream of
  // every room goes on.  The promise is kept when its history is shown.
  function showRoom(id) {
    if (!id || !roomOf(id)) id = state.dflt;
    dropStaleHash();
    if (!id || id === state.shown) {
      renderRooms();
      return;
    }
    if (state.shown) state.drafts.set(state.shown, ui.text.value);
    state.shown = id;
    state.gen++;
    clearRoom();
    ui.text.value = state.drafts.get(id) || '';
    state.drafts.delete(id);
    autosize();
    state.unread.delete(id);
    state.capped.delete(id);
    const r = roomOf(id);
    ui.room.textContent = r.name;
    document.title = r.name + ' · papo';
    render({ stick: true });
    renderRooms();
    return Promise.all([loadStatus(), loadHistory()]).catch((e) => {
      ui.sendStatus.textContent = 'Could not load the room: ' + e.message;
    });
  }

  // The URL's room changed (a link in the list, the selector, back or
  // forward): show it.  A hash naming no room shows the default.
  function onHash() {
    const sel = hashRoom();
    if (sel === null) return;       // another anchor (#m-ID)
    showRoom(resolveRoom(sel));
  }

  /* ---- search: the room's ranked hits, each jumping to its message ---- */

  const SEARCH_PAGE = 20;          // hits per page of results
  const SEARCH_DEBOUNCE_MS = 300;  // typing pauses this long before a search
  const JUMP_PAGES_MAX = 100;      // older pages loaded at most to reach a hit
  let searchTimer = null;

  // The excerpt's text with the words the index found (its marks:
  // [start, end) in code points) as <mark> elements; everything else
  // text nodes.
  function excerptNodes(excerpt, marks) {
    const cps = Array.from(excerpt);
    const out = [];
    let at = 0;
    for (const m of Array.isArray(marks) ? marks : []) {
      if (!Array.isArray(m) || !(m[0] >= at) || !(m[1] > m[0])) continue;
      if (m[0] > at) out.push(document.createTextNode(cps.slice(at, m[0]).join('')));
      out.push(el('mark', 'hit', cps.slice(m[0], m[1]).join('')));
      at = m[1];
    }
    if (at < cps.length) out.push(document.createTextNode(cps.slice(at).join('')));
    return out;
  }

  function resultItem(m, room) {
    const li = el('li', 'result');
    const b = el('button', 'result-open');
    b.type = 'button';
    b.dataset.id = m.id;
    b.dataset.ts = String(m.ts);
    b.dataset.room = room;
    const meta = el('span', 'result-meta');
    meta.append(el('span', 'from ' + hue(m.from), m.from));
    if (m.to) meta.append(el('span', 'to', '→ ' + m.to));
    const r = roomOf(room);
    if (r) meta.append(el('span', 'result-room', '#' + r.name));
    const t = el('time', 'ts', clock(m.ts));
    t.dateTime = new Date(m.ts).toISOString();
    t.title = new Date(m.ts).toLocaleString();
    meta.append(t);
    const ex = el('span', 'result-excerpt');
    if (typeof m.excerpt_html === 'string' && m.excerpt) {
      // Rendered as the timeline renders a message, the words marked.
      const doc = new DOMParser().parseFromString(m.excerpt_html, 'text/html');
      ex.classList.add('md');
      mdCopy(doc.body, ex, true);
    } else if (typeof m.excerpt === 'string' && m.excerpt) {
      ex.append(...excerptNodes(m.excerpt, m.marks));
    } else {
      ex.textContent = snippet(m.text || (m.files || []).map((f) => f.name).join(', '), 160);
    }
    b.append(meta, ex);
    li.append(b);
    return li;
  }

  // Shows the first page of hits for the box's words (more: the next).
  async function runSearch(more) {
    clearTimeout(searchTimer);
    searchTimer = null;
    const q = ui.searchQ.value.trim();
    if (!q) {
      if (!more) closeSearch(false);
      return;
    }
    const all = ui.searchAll.checked && state.rooms.length > 1;
    if (!more && state.search && state.search.q === q && state.search.all === all &&
        !ui.results.hidden) return;
    // The search shown, and the cursor of its next page (undefined: its
    // first; null: no more).  All rooms: one search of every room, the
    // daemon ranking their hits together.
    const s = more && state.search ? state.search :
      { q, all, room: state.shown, gen: state.gen, count: 0, next: undefined };
    state.search = s;
    ui.results.hidden = false;
    ui.scroller.hidden = true;
    ui.searchClose.hidden = false;
    if (!more) {
      ui.resultsList.replaceChildren();
      ui.resultsStatus.textContent = 'Searching…';
    }
    ui.resultsMore.disabled = true;
    try {
      const p = '/search?html=1&limit=' + SEARCH_PAGE + '&q=' + encodeURIComponent(q) +
        (s.next ? '&cursor=' + encodeURIComponent(s.next) : '');
      const h = await api(s.all ? '/api' + p + '&room=%2A' : roomPath(p, s.room));
      if (state.search !== s || s.gen !== state.gen) return;   // asked again since
      s.next = h.next || null;
      for (const m of h.messages || []) {
        if (!m || typeof m.id !== 'string') continue;
        ui.resultsList.append(resultItem(m, s.all ? m.room_id : s.room));
        s.count++;
      }
      const r = roomOf(s.room);
      const away = (h.unavailable || []).map((u) => u.room).join(', ');
      ui.resultsStatus.textContent = (s.count === 0 ? 'Nothing found' :
        s.count + (s.next ? '+' : '') + (s.count === 1 ? ' message' : ' messages')) +
        ' for “' + q + '”' + (s.all ? ' in all rooms' : r ? ' in ' + r.name : '') + ', best first.' +
        (away ? ' Not searched (index being rebuilt): ' + away + '.' : '');
      ui.resultsMore.hidden = !s.next;
    } catch (e) {
      if (state.search !== s) return;
      ui.resultsStatus.textContent = 'Could not search: ' + e.message;
      ui.resultsMore.hidden = true;
    } finally {
      ui.resultsMore.disabled = false;
    }
  }

  function searchSoon() {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => runSearch(false), SEARCH_DEBOUNCE_MS);
  }

  // Back to the room; clear: the words go too.
  function closeSearch(clear) {
    clearTimeout(searchTimer);
    searchTimer = null;
    state.search = null;
    ui.results.hidden = true;
    ui.resultsList.replaceChildren();
    ui.scroller.hidden = false;
    if (clear !== false) ui.searchQ.value = '';
    ui.searchClose.hidden = !ui.searchQ.value;
  }

  function flash(li) {
    li.classList.remove('flash');
    void li.offsetWidth;           // restart the animation
    li.classList.add('flash');
  }

  // Shows message id (written at ts) in the timeline: older pages are
  // loaded until it is there, then it is scrolled to and flashes.
  async function jumpTo(id, ts, room) {
    closeSearch(false);
    if (room && room !== state.shown && roomOf(room)) {
      const loading = showRoom(room);
      location.hash = 'room=' + encodeURIComponent(room);
      await loading;
    }
    const gen = state.gen;
    for (let n = 0; !$('m-' + id) && state.moreBefore && n < JUMP_PAGES_MAX; n++) {
      if (state.oldestTs !== null && state.oldestTs < ts) break;   // not in this room's pages
      ui.sendStatus.textContent = 'Loading earlier messages…';
      await loadOlder();
      if (gen !== state.gen) return;
    }
    ui.sendStatus.textContent = '';
    const li = $('m-' + id);
    if (!li) {
      ui.sendStatus.textContent = 'That message is no longer in the history shown.';
      return;
    }
    li.scrollIntoView({ block: 'center' });
    flash(li);
  }

  /* ---- a thread, on its own in a side panel ---- */

  const THREAD_PAGE = 200;
  const THREAD_PAGES_MAX = 10;
  const THREAD_UP_MAX = 50;        // parents asked for to find the first message

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
      let m = state.msgs.get(cur);
      if (!m) {
        const h = await api(roomPath('/history?limit=1&thread=' + encodeURIComponent(cur)));
        m = (h.messages || [])[0];
      }
      if (!m || !m.reply_to || !ID_RE.test(m.reply_to)) return cur;
      cur = m.reply_to;
    }
    return cur;
  }

  async function openThread(id) {
    const gen = state.gen;
    state.thread = { id, msgs: new Map() };
    const t = state.thread;
    ui.threadPanel.hidden = false;
    ui.app.classList.add('with-thread');
    ui.threadList.replaceChildren();
    ui.threadCount.textContent = '';
    ui.threadStatus.textContent = 'Loading…';
    try {
      const root = await threadRoot(id);
      const list = await threadPages(root);
      if (gen !== state.gen || state.thread !== t) return;
      list.sort((a, b) => a.ts - b.ts || a.id.localeCompare(b.id));
      for (const m of list) t.msgs.set(m.id, m);
      renderThread(id);
    } catch (e) {
      if (state.thread === t) ui.threadStatus.textContent = 'Could not load the thread: ' + e.message;
    }
  }

  // The thread's messages, drawn as the timeline draws them, oldest
  // first; the one it was opened from flashes.
  function renderThread(from) {
    const t = state.thread;
    if (!t) return;
    const items = [];
    for (const m of t.msgs.values()) {
      const li = buildMessage(m, t.msgs);
      li.removeAttribute('id');    // the timeline's li has the m-ID
      li.id = 't-' + m.id;
      const tb = li.querySelector('.thread-button');
      if (tb) tb.remove();
      li.classList.toggle('replying-here', state.replyTo === m.id);
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

  function closeThread() {
    state.thread = null;
    ui.threadPanel.hidden = true;
    ui.app.classList.remove('with-thread');
    ui.threadList.replaceChildren();
  }

  // A message come for the open thread (a reply in it) joins it.
  function threadMessage(m) {
    const t = state.thread;
    if (!t || !m || !m.id || t.msgs.has(m.id) || !m.reply_to || !t.msgs.has(m.reply_to)) return;
    t.msgs.set(m.id, m);
    renderThread(null);
  }

  // Clicks in the thread panel: replying, copying code, folding.
  function onThreadClick(ev) {
    const copy = ev.target.closest('button.code-copy');
    if (copy) {
      const pre = copy.closest('.code-block').querySelector('pre');
      copyText(pre.textContent).then((ok) => {
        copy.textContent = ok ? 'Copied' : 'Copy failed';
        setTimeout(() => { copy.textContent = 'Copy'; }, 1500);
      });
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
    const link = ev.target.closest('a.parent');
    if (link) {
      ev.preventDefault();
      const target = $('t-' + link.dataset.parent);
      if (target) {
        target.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
        flash(target);
      }
      return;
    }
    const b = ev.target.closest('button.reply-button');
    if (b) {
      setReply(b.dataset.reply);
      renderThread(null);
    }
  }

  /* ---- the event stream ---- */

  // Parses SSE text (the WHATWG event-stream format) as it arrives; calls
  // onEvent(name, data, id) for each dispatched event.
  function sseParser(onEvent, onRetry) {
    let buf = '';
    let data = [];
    let name = '';
    let id = null;
    function line(l) {
      if (l === '') {
        if (data.length) onEvent(name || 'message', data.join('\n'), id);
        data = [];
        name = '';
        return;
      }
      if (l[0] === ':') return;          // a comment: the heartbeat
      const i = l.indexOf(':');
      const field = i === -1 ? l : l.slice(0, i);
      let value = i === -1 ? '' : l.slice(i + 1);
      if (value[0] === ' ') value = value.slice(1);
      if (field === 'data') data.push(value);
      else if (field === 'event') name = value;
      else if (field === 'id') {
        if (!value.includes('\0')) id = value;
      } else if (field === 'retry' && /^\d+$/.test(value)) onRetry(Number(value));
    }
    return (chunk) => {
      buf += chunk;
      let start = 0;
      for (;;) {
        let i = start;
        while (i < buf.length && buf[i] !== '\n' && buf[i] !== '\r') i++;
        if (i >= buf.length) break;
        // A lone \r at the end may be the first half of \r\n.
        if (buf[i] === '\r' && i + 1 === buf.length) break;
        line(buf.slice(start, i));
        start = i + (buf[i] === '\r' && buf[i + 1] === '\n' ? 2 : 1);
      }
      buf = buf.slice(start);
    };
  }

  function dispatch(name, data, id) {
    if (id) state.lastEventId = id;
    let j;
    try {
      j = JSON.parse(data);
    } catch (e) {
      return;
    }
    if (name === 'rooms') {
      roomsSoon();
      return;
    }
    // Another room's event: only its messages matter here, as unread.
    const room = j && typeof j.room_id === 'string' ? j.room_id : null;
    if (room && state.shown && room !== state.shown) {
      if (name === 'message' && countUnread(room, j)) renderRooms();
      return;
    }
    if (name === 'message') {
      onMessage(j);
      // Damping turns on and off with messages: status says which.
      statusSoon();
    }
    else if (name === 'receipt') onReceipt(j);
    else if (name === 'file') onFile(j);
    else if (name === 'presence') onPresence(j);
    else if (name === 'room') {
      statusSoon();   // roles changed: status has them
      if (j && j.kind === 'epoch') loadRoomLog().catch(function () {});
    }
  }

  async function follow() {
    let backoff = BACKOFF_MIN_MS;
    let retry = 2000;
    let opened = 0;
    for (;;) {
      const ctl = new AbortController();
      let stall = null;
      const arm = () => {
        clearTimeout(stall);
        stall = setTimeout(() => ctl.abort(), STALL_MS);
      };
      try {
        const used = token;
        const headers = authHeaders({ Accept: 'text/event-stream' });
        if (state.lastEventId) headers['Last-Event-ID'] = state.lastEventId;
        arm();
        const res = await fetch('/api/events?room=*&html=1', { headers, cache: 'no-store', signal: ctl.signal });
        if (res.status === 401) {
          clearTimeout(stall);
          setConn('auth', 'needs the token');
          await authorize(res, used);
          continue;
        }
        if (!res.ok || !res.body) throw new Error(await errorText(res));
        // Whatever happened while we were away: the rooms, status and
        // history again.
        if (opened++ > 0) await Promise.all([loadRooms(), loadStatus(), loadHistory()]);
        setConn('live', 'live');
        backoff = BACKOFF_MIN_MS;
        const parse = sseParser(dispatch, (ms) => { retry = ms; });
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          arm();
          parse(value);
        }
      } catch (e) {
        // Refused, reset or stalled: try again after the pause below.
      } finally {
        clearTimeout(stall);
        ctl.abort();               // whatever is left of this response
      }
      const wait = Math.min(Math.max(backoff, retry), BACKOFF_MAX_MS);
      const jitter = Math.floor(Math.random() * 250);
      setConn('down', 'reconnecting…');
      await sleep(wait + jitter);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  /* ---- start ---- */

  function wire() {
    ui.composer.addEventListener('submit', (ev) => {
      ev.preventDefault();
      send();
    });
    ui.text.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        send();
      } else if (ev.key === 'Escape' && state.replyTo) {
        setReply(null);
      }
    });
    ui.text.addEventListener('input', autosize);
    ui.replyCancel.addEventListener('click', () => setReply(null));
    ui.older.addEventListener('click', loadOlder);
    ui.newBelow.addEventListener('click', scrollToNew);
    ui.scroller.addEventListener('scroll', () => {
      // Scrolled to the bottom, the view follows the newest message again;
      // scrolled up, it stays where the reader put it.
      const pinned = nearBottom();
      if (state.below && pinned) renderBelow();
    }, { passive: true });
    // Content that grows after a layout (image previews decoded, fonts)
    // keeps a pinned view at the newest message.
    if (typeof ResizeObserver === 'function')
      new ResizeObserver(keepPinned).observe(ui.messages);
    ui.invite.addEventListener('click', () => {
      ui.inviteStatus.textContent = '';
      ui.inviteConfirm.hidden = false;
      ui.inviteCancel.focus();
    });
    ui.inviteCancel.addEventListener('click', () => {
      ui.inviteConfirm.hidden = true;
    });
    ui.inviteCopy.addEventListener('click', copyInvite);
    ui.search.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (state.search) state.search = null;   // Enter asks again
      runSearch(false);
    });
    ui.searchQ.addEventListener('input', () => {
      ui.searchClose.hidden = !ui.searchQ.value && ui.results.hidden;
      searchSoon();
    });
    ui.searchQ.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') {
        ev.preventDefault();
        closeSearch(true);
        ui.searchQ.blur();
      }
    });
    ui.searchClose.addEventListener('click', () => closeSearch(true));
    ui.searchAll.addEventListener('change', () => {
      if (ui.searchQ.value.trim()) runSearch(false);
    });
    ui.resultsMore.addEventListener('click', () => runSearch(true));
    ui.resultsList.addEventListener('click', (ev) => {
      const b = ev.target.closest('button.result-open');
      if (b) jumpTo(b.dataset.id, Number(b.dataset.ts), b.dataset.room);
    });
    ui.threadClose.addEventListener('click', closeThread);
    ui.threadList.addEventListener('click', onThreadClick);
    document.addEventListener('keydown', (ev) => {
      if (ev.key !== 'Escape' || ev.defaultPrevented) return;
      if (ev.target === ui.text && state.replyTo) return;   // stops replying
      if (!ui.results.hidden) closeSearch(true);
      else if (state.thread) closeThread();
    });
    window.addEventListener('hashchange', onHash);
    ui.roomPick.addEventListener('change', () => {
      location.hash = 'room=' + encodeURIComponent(ui.roomPick.value);
    });
    ui.attach.addEventListener('click', () => ui.attachInput.click());
    ui.attachInput.addEventListener('change', () => {
      state.attached = state.attached.concat([...ui.attachInput.files]);
      ui.attachInput.value = '';
      renderAttached();
    });
    ui.attached.addEventListener('click', (ev) => {
      const x = ev.target.closest('button.attach-remove');
      if (!x) return;
      state.attached.splice(Number(x.dataset.index), 1);
      renderAttached();
    });
    ui.messages.addEventListener('click', (ev) => {
      const dl = ev.target.closest('button.file-download');
      if (dl) {
        download(dl.dataset.ref, dl.dataset.name);
        return;
      }
      const fb = ev.target.closest('button.file-fetch');
      if (fb) {
        fb.disabled = true;
        fetchFile(fb.dataset.ref);
        return;
      }
      if (ev.target.closest('ul.files')) return;
      const copy = ev.target.closest('button.code-copy');
      if (copy) {
        const pre = copy.closest('.code-block').querySelector('pre');
        copyText(pre.textContent).then((ok) => {
          copy.textContent = ok ? 'Copied' : 'Copy failed';
          setTimeout(() => { copy.textContent = 'Copy'; }, 1500);
        });
        return;
      }
      const fold = ev.target.closest('button.fold-toggle');
      if (fold) {
        const li = fold.closest('li.msg');
        const key = li.dataset.key;
        if (state.expanded.has(key)) {
          state.expanded.delete(key);
        } else {
          state.expanded.add(key);
        }
        render();
        if (!state.expanded.has(key)) {
          const again = state.elems.get(key);
          if (again) again.scrollIntoView({ block: 'nearest' });
        }
        return;
      }
      // A link in a message opens (apart); text and code are selected.
      if (ev.target.closest('.md a, .md pre')) return;
      const link = ev.target.closest('a.parent');
      if (link) {
        ev.preventDefault();
        const target = $('m-' + link.dataset.parent);
        if (target) {
          target.scrollIntoView({ block: 'center', behavior: 'smooth' });
          target.classList.remove('flash');
          void target.offsetWidth;   // restart the animation
          target.classList.add('flash');
        }
        return;
      }
      if (ev.target.closest('button.thread-button')) {
        openThread(ev.target.closest('button.thread-button').dataset.thread);
        return;
      }
      if (ev.target.closest('button.reply-button')) {
        setReply(ev.target.closest('button.reply-button').dataset.reply);
        return;
      }
      // Clicking a message answers it, unless text is being selected.
      const li = ev.target.closest('li.msg');
      if (!li || !li.dataset.id || String(window.getSelection()).length) return;
      setReply(state.replyTo === li.dataset.id ? null : li.dataset.id);
    });
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden && state.unseen) {
        state.unseen = 0;
        renderStatus();
      }
      if (!document.hidden && ui.conn.dataset.state === 'live') statusSoon();
      if (!document.hidden) loadApprovals();
    });
    // Paths and round trips change without presence events.
    setInterval(() => {
      if (!document.hidden && ui.conn.dataset.state === 'live') loadStatus().catch(() => {});
      if (!document.hidden) loadApprovals();
    }, STATUS_EVERY_MS);
    // The network view (#net-box, with how this member is reached) is
    // the operator's: closed until asked for, on every screen.
    // Relative times ("seen 3 min ago") and clocks age.
    setInterval(() => {
      renderMembers();
      render();
    }, 30000);
  }

  /* ---- the invite ---- */

  // Copies the room's invite, asked after the confirmation: it holds the
  // room's key, so whoever gets it reads and writes here.
  async function copyInvite() {
    ui.inviteCopy.disabled = true;
    try {
      const j = await api(roomPath('/invite'));
      if (!j || typeof j.invite !== 'string') throw new Error('no invite in the answer');
      const ok = await copyText(j.invite);
      ui.inviteStatus.textContent = ok ? 'The invite is copied. Give it only to who should join.' :
        'The browser refused to copy it.';
      if (ok) setTimeout(() => { ui.inviteConfirm.hidden = true; }, 2500);
    } catch (e) {
      ui.inviteStatus.textContent = 'Could not get the invite: ' + e.message;
    } finally {
      ui.inviteCopy.disabled = false;
    }
  }

  /* ---- OAuth approvals (PAPO_OAUTH=on) ----
   * An MCP client's approval page can also be answered here, by the
   * person at this machine: the page then goes on with Continue. */

  function approvalItem(p, local) {
    const li = el('li', 'approval');
    const what = el('p', 'approval-text');
    what.append(el('strong', null, p.client_name),
      document.createTextNode(' (' + p.client_id + ') asks to act as this member; it goes back to '),
      el('strong', null, p.redirect_host), document.createTextNode('.'));
    li.append(what);
    if (p.approved) {
      li.append(el('p', 'approval-done', 'Approved: press Continue on its page.'));
      return li;
    }
    if (!local) {
      li.append(el('p', 'approval-done', 'Approve it on its page with the token (not from another machine).'));
      return li;
    }
    for (const [decision, label] of [['approve', 'Approve'], ['deny', 'Deny']]) {
      const b = el('button', 'approval-' + decision, label);
      b.type = 'button';
      b.addEventListener('click', async () => {
        try {
          await api('/api/oauth/decide', {
            method: 'POST', headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ request: p.request, decision }),
          });
        } catch (e) { /* gone or answered: the list says so */ }
        loadApprovals();
      });
      li.append(b, document.createTextNode(' '));
    }
    return li;
  }

  async function loadApprovals() {
    if (!state.oauth) return;
    let ans;
    try {
      ans = await api('/api/oauth/pending');
    } catch (e) {
      if (e.status === 404) state.oauth = false;
      return;
    }
    ui.approvals.hidden = ans.pending.length === 0;
    const items = ans.pending.map((p) => approvalItem(p, ans.local));
    const h = el('h2', 'approvals-title', 'Approve access?');
    const ol = el('ol', 'approval-list');
    ol.append(...items);
    ui.approvals.replaceChildren(h, ol);
  }

  async function start() {
    wire();
    setConn('connecting', 'connecting…');
    for (;;) {
      try {
        await loadRooms();
        if (!state.shown) {
          // The room in the URL, else the default.
          state.shown = resolveRoom(hashRoom()) || state.dflt;
          dropStaleHash();
          renderRooms();
        }
        await loadStatus();
        await loadHistory();
        // What came in the other rooms since they were last shown.
        countRooms(state.rooms.map((r) => r.id).filter((id) => id !== state.shown));
        loadApprovals();
        break;
      } catch (e) {
        setConn('down', 'cannot reach the daemon: ' + e.message);
        await sleep(3000);
      }
    }
    follow();
  }

  start();
})();
