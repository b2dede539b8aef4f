/*
 * main.js: papo's dashboard starts here (index.html loads it as a
 * module; the others are imported from it, each served as it is from
 * web/js/).  The dashboard is a static client of the daemon's API (SPEC
 * "HTTP API"): it loads the list of rooms, then the room shown's status
 * and history, and follows every room's events in one stream.  What
 * each module owns is in docs/ARCHITECTURE.md ("The dashboard"); this
 * one wires them together: the listeners that span modules, the timers,
 * and the start, retried until the daemon answers.
 */
import * as approvals from './approvals.js';
import * as composer from './composer.js';
import { ui, setConn, sleep } from './dom.js';
import * as invite from './invite.js';
import * as privateView from './private.js';
import * as marks from './marks.js';
import * as rooms from './rooms.js';
import * as search from './search.js';
import { loadStatus, renderMembers, seenAll, statusSoon } from './status.js';
import { follow } from './stream.js';
import * as thread from './thread.js';
import * as timeline from './timeline.js';

const STATUS_EVERY_MS = 15000;     // status again (paths, RTTs) while shown

function storage() {
  try {
    return window.localStorage;
  } catch (e) {
    return null;                   // refused: marks last as long as the page
  }
}

function wire() {
  composer.wire();
  timeline.wire({ reply: composer.setReply, thread: thread.openThread });
  thread.wire(composer.setReplyInThread);
  search.wire();
  invite.wire();
  privateView.wire();
  rooms.wire();
  document.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Escape' || ev.defaultPrevented) return;
    if (ev.target === ui.text && timeline.replyTo) return;   // stops replying
    if (!ui.results.hidden) search.closeSearch(true);
    else if (thread.isOpen()) thread.closeThread();
  });
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) seenAll();
    if (!document.hidden && ui.conn.dataset.state === 'live') statusSoon();
    if (!document.hidden) approvals.loadApprovals();
  });
  // Paths and round trips change without presence events.
  setInterval(() => {
    if (!document.hidden && ui.conn.dataset.state === 'live') loadStatus().catch(() => {});
    if (!document.hidden) approvals.loadApprovals();
  }, STATUS_EVERY_MS);
  // Relative times ("seen 3 min ago") and clocks age.
  setInterval(() => {
    renderMembers();
    timeline.render();
  }, 30000);
}

async function start() {
  marks.load(storage());
  wire();
  setConn('connecting', 'connecting…');
  for (;;) {
    try {
      await rooms.openFirst();
      approvals.loadApprovals();
      break;
    } catch (e) {
      setConn('down', 'cannot reach the daemon: ' + e.message);
      await sleep(3000);
    }
  }
  follow();
}

start();
