/*
 * api.js: calls to the daemon's API (SPEC "HTTP API") with its token.
 * It owns the token (kept in localStorage under papo.token) and the
 * token form: a 401 shows the form once, however many calls need it,
 * and the calls try again with what was entered.
 */
import { ui, setConn } from './dom.js';

const TOKEN_KEY = 'papo.token';

function storedToken() {
  try {
    return localStorage.getItem(TOKEN_KEY) || '';
  } catch (e) {
    return '';
  }
}

let token = storedToken();
let asking = null;                 // the pending token form, shared by all callers

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

export function authHeaders(extra) {
  const h = Object.assign({}, extra || {});
  if (token) h.Authorization = 'Bearer ' + token;
  return h;
}

export async function errorText(res) {
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

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// fetch() with the token, asked for again on a 401; a Response that is
// ok, else an ApiError.
export async function authFetch(path, init) {
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
    return res;
  }
}

// An API call: its JSON answer.
export async function api(path, init) {
  return (await authFetch(path, init)).json();
}

// The event stream's request, which stream.js reads itself.  A 401
// calls refused() (the caller's indicator), asks for the token and
// resolves null, for the caller to try again.
export async function openStream(path, headers, signal, refused) {
  const used = token;
  const res = await fetch(path, { headers: authHeaders(headers), cache: 'no-store', signal });
  if (res.status !== 401) return res;
  refused();
  await authorize(res, used);
  return null;
}
