/*
 * stream.js: every room's events in one stream (/api/events?room=*
 * &html=1), read with fetch() and parsed by sse.js.  Those of the room
 * shown (by their room_id) bring new messages, receipts, files and
 * presence; a message of another room counts as unread there; a "rooms"
 * event loads the list again.  It reconnects with backoff and
 * Last-Event-ID, and after every reconnection reloads the rooms, status
 * and history, so nothing said while the daemon was away (or
 * restarting) is missing.  It owns the id of the last event.
 */
import { openStream, errorText } from './api.js';
import { shown } from './current.js';
import { setConn, sleep } from './dom.js';
import { onFile } from './files.js';
import { loadRoomLog } from './history.js';
import { countUnread, loadRooms, renderRooms, roomsSoon } from './rooms.js';
import { sseParser } from './sse.js';
import { loadStatus, onPresence, statusSoon } from './status.js';
import { threadMessage } from './thread.js';
import { loadHistory, onMessage, onReceipt } from './timeline.js';

const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 15000;
const STALL_MS = 75000;            // 3 missed heartbeats (every 25 s): reconnect

let lastEventId = null;            // BOOT-SEQ of the last event, for resuming

function dispatch(name, data, id) {
  if (id) lastEventId = id;
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
  if (room && shown && room !== shown) {
    if (name === 'message' && countUnread(room, j)) renderRooms();
    return;
  }
  if (name === 'message') {
    onMessage(j);
    threadMessage(j);
    // Damping turns on and off with messages: status says which.
    statusSoon();
  }
  else if (name === 'receipt') onReceipt(j);
  else if (name === 'file') onFile(j);
  else if (name === 'presence') onPresence(j);
  else if (name === 'room') {
    statusSoon();   // roles changed: status has them
    if (j && j.kind === 'epoch') loadRoomLog().catch(() => {});
  }
}

// Follows the stream for as long as the page is open.
export async function follow() {
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
      const headers = { Accept: 'text/event-stream' };
      if (lastEventId) headers['Last-Event-ID'] = lastEventId;
      arm();
      const res = await openStream('/api/events?room=*&html=1', headers, ctl.signal, () => {
        clearTimeout(stall);
        setConn('auth', 'needs the token');
      });
      if (res === null) continue;
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
      ctl.abort();                 // whatever is left of this response
    }
    const wait = Math.min(Math.max(backoff, retry), BACKOFF_MAX_MS);
    const jitter = Math.floor(Math.random() * 250);
    setConn('down', 'reconnecting…');
    await sleep(wait + jitter);
    backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
  }
}
