/*
 * search.js: the search box (#search): the room's ranked hits
 * (/api/search?html=1) in #results, over the timeline, "More results"
 * by the cursor, "all rooms" with several (one search of every room,
 * the daemon ranking their hits together); a hit jumps to its message
 * in its room, earlier pages loaded until it is there.  It owns the
 * search shown.
 */
import { api } from './api.js';
import { gen, onLeave, roomPath, shown } from './current.js';
import { $, ui, el, flash, timeEl } from './dom.js';
import { clock, hue, snippet } from './format.js';
import { moreBefore, oldestTs } from './history.js';
import { excerptParts } from './markdown.js';
import { markdownBody } from './message.js';
import { roomOf, rooms, showRoom } from './rooms.js';
import { loadOlder } from './timeline.js';

const SEARCH_PAGE = 20;            // hits per page of results
const SEARCH_DEBOUNCE_MS = 300;    // typing pauses this long before a search
const JUMP_PAGES_MAX = 100;        // older pages loaded at most to reach a hit

let search = null;                 // { q, all, room, gen, count, next } of the results shown
let searchTimer = null;

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
  meta.append(timeEl(m.ts, clock(m.ts)));
  let ex;
  if (typeof m.excerpt_html === 'string' && m.excerpt) {
    // Rendered as the timeline renders a message, the words marked.
    ex = markdownBody(m.excerpt_html, 'span', 'result-excerpt md');
  } else if (typeof m.excerpt === 'string' && m.excerpt) {
    // The words the index found as <mark> elements, the rest text.
    ex = el('span', 'result-excerpt');
    ex.append(...excerptParts(m.excerpt, m.marks).map((p) =>
      p.hit ? el('mark', 'hit', p.text) : document.createTextNode(p.text)));
  } else {
    ex = el('span', 'result-excerpt',
      snippet(m.text || (m.files || []).map((f) => f.name).join(', '), 160));
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
  const all = ui.searchAll.checked && rooms.length > 1;
  if (!more && search && search.q === q && search.all === all &&
      !ui.results.hidden) return;
  // The search shown, and the cursor of its next page (undefined: its
  // first; null: no more).  All rooms: one search of every room, the
  // daemon ranking their hits together.
  const s = more && search ? search :
    { q, all, room: shown, gen, count: 0, next: undefined };
  search = s;
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
    if (search !== s || s.gen !== gen) return;   // asked again since
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
    if (search !== s) return;
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
export function closeSearch(clear) {
  clearTimeout(searchTimer);
  searchTimer = null;
  search = null;
  ui.results.hidden = true;
  ui.resultsList.replaceChildren();
  ui.scroller.hidden = false;
  if (clear !== false) ui.searchQ.value = '';
  ui.searchClose.hidden = !ui.searchQ.value;
}

// Shows message id (written at ts) in the timeline: older pages are
// loaded until it is there, then it is scrolled to and flashes.
async function jumpTo(id, ts, room) {
  closeSearch(false);
  if (room && room !== shown && roomOf(room)) {
    const loading = showRoom(room);
    location.hash = 'room=' + encodeURIComponent(room);
    await loading;
  }
  const asked = gen;
  for (let n = 0; !$('m-' + id) && moreBefore && n < JUMP_PAGES_MAX; n++) {
    if (oldestTs !== null && oldestTs < ts) break;   // not in this room's pages
    ui.sendStatus.textContent = 'Loading earlier messages…';
    await loadOlder();
    if (asked !== gen) return;
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

export function wire() {
  ui.search.addEventListener('submit', (ev) => {
    ev.preventDefault();
    search = null;                 // Enter asks again
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
}

onLeave(() => closeSearch(false));
