// delivery.test.mjs: how room messages reach an MCP session's agent
// (issue 10), as the agent and the message's author see it.  Two daemons,
// ana and bo, in one room (temporary homes, ports of their own choosing);
// bo talks, and agents on ana listen:
//
//  - a stock MCP client (the official TypeScript SDK, no notification
//    handler, no opt-in to channels) gets every message from `wait`, once,
//    in order, although the daemon pushes it on its GET stream too; bo
//    gets each `read` receipt for the wait that returned it (never on
//    arrival, nor for the push);
//  - `history` counts as shown: a later `wait` does not return what it
//    returned (and `resources/read` of the history gives messages too);
//  - a `wait` cancelled with notifications/cancelled ends at once without
//    an answer, and one whose connection is cut ends on the daemon: the
//    next wait is accepted and returns what came meanwhile, and no read
//    receipt goes out before it does;
//  - a session's queue keeps the last 500 and says how many it dropped;
//  - the stdio bridge (`papo mcp`) with a client that declares no
//    channels: every message through `wait`, once, in order;
//  - clients that opt in to channel pushes (capability, ?channels=on,
//    subscriptions/listen of a 2025 session and of 2026-07-28) get each
//    message once by push, never again from `wait`, and bo a read receipt
//    for each; `status` says channels and unread; an opted-in session
//    with no stream keeps messages until a stream opens (then pushed,
//    and only then a read receipt) or the next wait;
//  - a third member, cy, whose daemon ends sessions idle for 2 s
//    (PAPO_MCP_IDLE=2): 10,000 sessions initialized and left; every
//    initialize is answered, idle sessions end (404), RSS comes back, and
//    a live session gets every message; then, at the default idle time,
//    the cap of 4,096 sessions ends the longest-idle ones, never a new one.
//
// Run: PAPO=path/to/papo node --test tests/clients/delivery.test.mjs
//  or: node tests/clients/delivery.test.mjs path/to/papo
// (after `npm ci --prefix tests/clients`).  Figures (RSS, rates, times)
// are printed as lines starting "delivery:".  On a failure the daemons'
// last log lines are printed to stderr.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { cleanEnv, daemonSet, need, papoPath, sleep, until, within } from './daemons.mjs';

// A build with AddressSanitizer (the suite's second run): RSS says little there.
const SANITIZED = fs.readFileSync(papoPath()).includes('AddressSanitizer');

const { bin: PAPO, root, daemons, papo, serve, stop, step, finish } = daemonSet('papo-delivery-');
const V = '2025-11-25';
const MODERN = '2026-07-28';
const CHANNEL = 'notifications/claude/channel';
const MiB = 1024 * 1024;
const now = () => performance.now();
const say = (line) => console.log(`delivery: ${line}`);
const TAG = Math.floor(Math.random() * 0xffffffff).toString(16).padStart(8, '0');
const text = (what, i) => `delivery ${TAG} ${what} ${i}`;
const short = (x) => JSON.stringify(x).slice(0, 600);

// ---------------------------------------------------------------------------
// Server-sent events, read from a fetch body.

function parseBlock(block) {
  const e = { id: null, event: 'message', data: null };
  for (const line of block.split('\n')) {
    if (line === '' || line[0] === ':') continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    if (field === 'id') e.id = value;
    else if (field === 'event') e.event = value;
    else if (field === 'data') e.data = e.data === null ? value : `${e.data}\n${value}`;
  }
  return e;
}

// Calls onEvent for each event with data; resolves when the stream ends
// (rejects when it is cut).
async function readSse(body, onEvent) {
  const dec = new TextDecoder();
  let buf = '';
  for await (const chunk of body) {
    buf += dec.decode(chunk, { stream: true }).replace(/\r/g, '');
    let end;
    while ((end = buf.indexOf('\n\n')) !== -1) {
      const e = parseBlock(buf.slice(0, end));
      buf = buf.slice(end + 2);
      if (e.data !== null) onEvent(e);
    }
  }
}

// The same, fed chunk by chunk as they come off the socket: onEvent(e,
// t) runs at once, with t the time the chunk that completed it came.
function sseTap(onEvent) {
  const dec = new TextDecoder();
  let buf = '';
  return (chunk, t) => {
    buf += dec.decode(chunk, { stream: true }).replace(/\r/g, '');
    let end;
    while ((end = buf.indexOf('\n\n')) !== -1) {
      const e = parseBlock(buf.slice(0, end));
      buf = buf.slice(end + 2);
      if (e.data !== null) onEvent(e, t);
    }
  };
}

// Which came first, a read receipt or the answer (or push) it follows,
// is a matter of a millisecond or less on one machine; so both times are
// taken where the bytes come off their sockets (node:http calls back in
// the order the kernel had them ready), never after the promise chains
// of fetch and of the SDK.  timedFetch is a fetch on node:http for the
// SDK's transport and for raw requests: onHead({method, body, status,
// t}) when an answer's head comes, onChunk(info, chunk, t) for each
// chunk of its body.
function timedFetch({ onHead, onChunk } = {}) {
  return (url, init = {}) => new Promise((resolve, reject) => {
    const u = new URL(url);
    const h = Object.fromEntries(new Headers(init.headers ?? {}).entries());
    const body = typeof init.body === 'string' ? init.body : null;
    if (body !== null) h['content-length'] = String(Buffer.byteLength(body));
    const req = http.request({ hostname: u.hostname, port: u.port, path: u.pathname + u.search, method: init.method || 'GET', headers: h });
    let res = null;
    let ended = false;
    let controller = null;
    const aborted = () => new DOMException('This operation was aborted', 'AbortError');
    const fail = (e) => {
      if (ended) return;
      ended = true;
      if (controller) {
        try {
          controller.error(e);
        } catch {
          // already closed
        }
      } else reject(e);
    };
    if (init.signal) {
      if (init.signal.aborted) {
        reject(aborted());
        return;
      }
      init.signal.addEventListener('abort', () => {
        fail(aborted());
        req.destroy();
      }, { once: true });
    }
    req.on('error', (e) => fail(e));
    req.on('response', (r) => {
      res = r;
      const info = { method: req.method, body, status: r.statusCode, t: now() };
      onHead?.(info);
      const headers = new Headers();
      for (const [k, v] of Object.entries(r.headers)) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
      const stream = new ReadableStream({
        start(c) {
          controller = c;
          r.on('data', (chunk) => {
            onChunk?.(info, chunk, now());
            if (!ended) c.enqueue(new Uint8Array(chunk));
          });
          r.on('end', () => {
            if (ended) return;
            ended = true;
            c.close();
          });
          r.on('close', () => fail(new Error('the connection closed before the answer ended')));
          r.on('error', (e) => fail(e));
        },
        cancel() {
          ended = true;
          req.destroy();
        },
      });
      const noBody = [204, 205, 304].includes(r.statusCode);
      resolve(new Response(noBody ? null : stream, { status: r.statusCode, statusText: r.statusMessage, headers }));
    });
    req.end(body ?? undefined);
  });
}

// The JSON-RPC message of an event of an MCP stream, or null.
function rpcOf(e) {
  try {
    return JSON.parse(e.data);
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------
// MCP without the SDK: POSTs with the headers of a 2025-11-25 session.

function headers(sid, extra = {}) {
  const h = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': V,
    ...extra,
  };
  if (sid) h['MCP-Session-Id'] = sid;
  return h;
}

function post(url, sid, msg, { signal, extra } = {}) {
  return fetch(url, { method: 'POST', headers: headers(sid, extra), body: JSON.stringify(msg), signal });
}

function initMsg(name, capabilities = {}) {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: V, capabilities, clientInfo: { name, version: '1.0.0' } },
  };
}

// The /mcp URL of the agent named name: each session of these tests
// is an agent of its own (?agent=), so that what one is given is not
// another's; sessions of one agent share what it is given.
function agentUrl(url, name) {
  const u = new URL(url);
  u.searchParams.set('agent', name);
  return u.toString();
}

// A session made with initialize and notifications/initialized, as the
// agent named name.
async function rawSession(url, name, capabilities = {}) {
  url = agentUrl(url, name);
  const res = await post(url, null, initMsg(name, capabilities));
  const body = await res.text();
  assert.equal(res.status, 200, `initialize of ${name}: ${res.status} ${body}`);
  const sid = res.headers.get('mcp-session-id');
  assert.match(sid ?? '', /^[0-9a-f]{32}$/, `initialize of ${name} gave a session id: ${sid}`);
  const r2 = await post(url, sid, { jsonrpc: '2.0', method: 'notifications/initialized' });
  const b2 = await r2.text();
  assert.equal(r2.status, 202, `notifications/initialized of ${name}: ${r2.status} ${b2}`);
  let next = 2;
  const s = {
    url,
    sid,
    name,
    nextId: () => next++,
    // A request's result (its HTTP answer must be 200 JSON).
    async request(method, params) {
      const id = next++;
      const r = await post(url, sid, { jsonrpc: '2.0', id, method, params });
      const b = await r.text();
      assert.equal(r.status, 200, `${method} on ${name}'s session: ${r.status} ${b}`);
      const j = JSON.parse(b);
      assert.equal(j.id, id, `${method} on ${name}'s session answers its own id: ${b}`);
      assert.ok(j.result, `${method} on ${name}'s session answers a result, not an error: ${b}`);
      return j.result;
    },
    call(tool, args = {}) {
      return s.request('tools/call', { name: tool, arguments: args });
    },
    async end() {
      const r = await fetch(url, { method: 'DELETE', headers: headers(sid) });
      await r.text();
      assert.equal(r.status, 200, `DELETE of ${name}'s session`);
    },
  };
  return s;
}

// ---------------------------------------------------------------------------
// Tool results.

function parsedText(result) {
  assert.ok(Array.isArray(result.content) && result.content.length > 0, `result has content: ${short(result)}`);
  assert.equal(result.content[0].type, 'text');
  return JSON.parse(result.content[0].text);
}
function structured(result, what) {
  assert.notEqual(result.isError, true, `${what} is not an error: ${short(result)}`);
  assert.ok(result.structuredContent, `${what} has structuredContent: ${short(result)}`);
  assert.deepEqual(parsedText(result), result.structuredContent, `${what}: content[0].text is the JSON of structuredContent`);
  return result.structuredContent;
}

const MESSAGE_KEYS = ['id', 'from', 'from_id', 'to', 'reply_to', 'ts', 'text'];

// A wait's answer, checked: messages (each with its fields), timed_out
// exactly when it returned none, and "dropped" only where a queue
// overflowed (dropped: true).
function waitResult(result, what, { dropped = false } = {}) {
  const w = structured(result, what);
  assert.ok(Array.isArray(w.messages), `${what}: messages is an array: ${short(w)}`);
  assert.equal(typeof w.timed_out, 'boolean', `${what}: timed_out is a boolean: ${short(w)}`);
  assert.equal(w.timed_out, w.messages.length === 0, `${what}: timed_out says whether it returned nothing: ${short(w)}`);
  if (!dropped) assert.ok(!('dropped' in w), `${what}: no "dropped" when nothing overflowed: ${short(w)}`);
  for (const m of w.messages)
    for (const k of MESSAGE_KEYS) assert.ok(k in m, `${what}: a message has ${k}: ${short(m)}`);
  return w;
}

function statusResult(result, what) {
  const s = structured(result, what);
  assert.equal(typeof s.unread, 'number', `${what} has unread, a number: ${short(s)}`);
  assert.equal(typeof s.channels, 'boolean', `${what} has channels, a boolean: ${short(s)}`);
  return s;
}

// What /proc says of a process: VmRSS and VmHWM in bytes.
function rss(pid) {
  const t = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(t)[1]) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}
const mb = (b) => `${(b / MiB).toFixed(1)} MiB`;

// ---------------------------------------------------------------------------


/*
 * A client waits in a loop (every other time after a pause, so that
 * messages come both while it is inside a wait and between waits) while
 * bo sends n messages (send) with the gaps given.  Returns what bo sent ({ id,
 * t0, t1 }: when its send began and was answered), their texts, each
 * wait ({ start, answer, ids }; answer from answeredAt when given), and
 * every message the waits returned, a last short wait included.
 */
async function waitsWhileBoSends(client, { send, n, what, label, pauseMs, waitS, deadlineS, gapsMs, answeredAt }) {
  const sent = [];
  const texts = new Map();
  const waits = [];
  const got = [];
  let sending = true;
  const deadline = Date.now() + deadlineS * 1000;
  const reader = (async () => {
    for (let k = 0; ; k++) {
      assert.ok(Date.now() < deadline, `the waits${label} returned ${got.length} of ${n} messages in ${deadlineS} s`);
      if (k % 2 === 0) await sleep(pauseMs);
      const start = now();
      const r = await client.callTool({ name: 'wait', arguments: { timeout_s: waitS } }, undefined, { timeout: 30_000 });
      const w = waitResult(r, `wait ${k}${label}`);
      waits.push({ start, answer: answeredAt ? answeredAt() : null, ids: w.messages.map((m) => m.id) });
      got.push(...w.messages);
      if (!sending && (got.length >= n || w.messages.length === 0)) break;
    }
  })();
  const writer = (async () => {
    try {
      for (let i = 0; i < n; i++) {
        const t = text(what, i);
        const t0 = now();
        const id = await send(t);
        texts.set(id, t);
        sent.push({ id, t0, t1: now() });
        await sleep(gapsMs[i % gapsMs.length]);
      }
    } finally {
      sending = false;
    }
  })();
  await Promise.all([reader, writer]);
  // One more wait: nothing is left, nothing comes twice.
  const last = waitResult(await client.callTool({ name: 'wait', arguments: { timeout_s: 1 } }, undefined, { timeout: 20_000 }), `the last wait${label}`);
  got.push(...last.messages);
  return { sent, texts, waits, got };
}

describe('delivery of room messages to MCP sessions', { timeout: 900_000 }, () => {
  let A, B, C;
  let boId;
  let cyOnline = false;
  const started = Date.now();

  // Every receipt bo's /api/events shows, with the time it came.
  const receipts = [];
  let eventsEnd = null;
  let eventsReq = null;
  const readsOf = (id) => receipts.filter((r) => r.id === id && r.state === 'read');
  const firstRead = (id) => {
    const r = readsOf(id);
    return r.length ? Math.min(...r.map((x) => x.t)) : null;
  };
  // Waits until bo has a read receipt from ana for every id.
  async function allRead(ids, what) {
    await until(`read receipts for ${what}`, () => ids.every((id) => readsOf(id).length > 0), 20_000).catch((e) => {
      const missing = ids.filter((id) => readsOf(id).length === 0);
      throw new Error(`${e.message}: bo got no read receipt for ${missing.length} of ${ids.length}: ${missing.slice(0, 10).join(' ')}` +
        (eventsEnd ? `; bo's /api/events ended: ${eventsEnd}` : ''));
    });
    for (const id of ids)
      for (const r of readsOf(id)) assert.equal(r.by, 'ana', `the read receipt of ${id} is by ana: ${short(r)}`);
  }

  // bo says something (POST /api/send) and ana (and cy, when it runs)
  // stored it: the message's id.
  async function boSay(t) {
    const res = await fetch(`${B.info.http}/api/send`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: t }),
    });
    const body = await res.text();
    assert.equal(res.status, 200, `bo's /api/send of "${t}": ${body}`);
    const j = JSON.parse(body);
    assert.match(j.id ?? '', /^[a-z2-7]{10}$/, `bo's /api/send answers a message id: ${body}`);
    assert.equal(j.state, 'delivered', `bo's message "${t}" reached everyone online: ${body}`);
    return j.id;
  }

  // Checks a wait's messages against what bo sent (id -> text).
  function fromBo(messages, texts, what) {
    for (const m of messages) {
      assert.ok(texts.has(m.id), `${what} returned only bo's messages of this step, not ${short(m)}`);
      assert.equal(m.text, texts.get(m.id), `${what}: ${m.id} has the text bo sent: ${short(m)}`);
      assert.equal(m.from, 'bo', `${what}: ${m.id} is from bo: ${short(m)}`);
      assert.equal(m.from_id, boId, `${what}: ${m.id} has bo's id as from_id: ${short(m)}`);
      assert.equal(m.to, null, `${what}: ${m.id} was said to everyone (to: null): ${short(m)}`);
      assert.equal(m.reply_to, null, `${what}: ${m.id} replies to nothing: ${short(m)}`);
      assert.equal(typeof m.ts, 'number', `${what}: ${m.id} has a ts: ${short(m)}`);
    }
  }

  before(async () => {
    assert.ok(fs.existsSync(PAPO), `no papo binary at ${PAPO} (set PAPO)`);
    papo(path.join(root, 'A'), ['new', '--name', 'ana']);
    A = await serve('A');
    papo(path.join(root, 'B'), ['join', A.info.invite, '--name', 'bo']);
    B = await serve('B');
    for (const [d, other] of [[A, 'bo'], [B, 'ana']])
      await until(`${other} online`, async () => {
        const s = await (await fetch(`${d.info.http}/api/status`)).json();
        return s.members?.some((m) => m.name === other && m.online === true);
      }, 30_000, 200);
    boId = (await (await fetch(`${B.info.http}/api/status`)).json()).me.id;
    assert.match(boId, /^[a-z2-7]{52}$/, 'bo has an id');
    const status = await new Promise((resolve, reject) => {
      const u = new URL(`${B.info.http}/api/events`);
      eventsReq = http.get({ hostname: u.hostname, port: u.port, path: u.pathname, headers: { Accept: 'text/event-stream' } }, (res) => {
        const tap = sseTap((e, t) => {
          if (e.event === 'receipt') receipts.push({ ...JSON.parse(e.data), t });
        });
        res.on('data', (chunk) => tap(chunk, now()));
        res.on('end', () => (eventsEnd ??= 'the daemon ended it'));
        res.on('close', () => (eventsEnd ??= 'the connection closed'));
        resolve(res.statusCode);
      });
      eventsReq.on('error', (e) => {
        eventsEnd ??= String(e);
        reject(e);
      });
    });
    assert.equal(status, 200, 'bo\'s /api/events opens');
  });

  after(async () => {
    await finish({ close: () => eventsReq?.destroy() });
    say(`delivery.test.mjs took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  // -------------------------------------------------------------------------
  step('a stock SDK client gets each of 50 messages from wait once, in order; bo\'s read receipt comes only with the wait', async () => {
    need(A && B);
    const N = 50;
    const pushed = []; // meta.id of each notifications/claude/channel on the client's GET stream
    let getOpened;
    const getOpen = new Promise((r) => (getOpened = r));
    let lastWaitAnswer = 0; // when the HTTP answer to the last wait came
    // The SDK's fetch, watched: its GET stream is read here too (the SDK
    // drops the notifications it has no handler for), and the time each
    // wait's answer arrives is noted.
    const taps = new Map();
    const watched = timedFetch({
      onHead(info) {
        if (info.method === 'GET' && info.status === 200) {
          taps.set(info, sseTap((e) => {
            const j = rpcOf(e);
            if (j?.method === CHANNEL) pushed.push(j.params?.meta?.id);
          }));
          getOpened();
        }
        if (info.method === 'POST' && info.body?.includes('"name":"wait"')) lastWaitAnswer = info.t;
      },
      onChunk(info, chunk, t) {
        taps.get(info)?.(chunk, t);
      },
    });
    const client = new Client({ name: 'papo-test-stock', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(agentUrl(A.info.mcp, 'stock')), { fetch: watched });
    await client.connect(transport);
    try {
      await within(getOpen, 5_000, 'the SDK opened no GET stream after initialize');
      const s0 = statusResult(await client.callTool({ name: 'status', arguments: {} }), 'status');
      assert.equal(s0.channels, false, `status of a client that did not opt in says channels: false: ${short(s0)}`);
      assert.equal(s0.unread, 0, `status of a new session says unread: 0: ${short(s0)}`);

      const { sent, texts, waits, got } = await waitsWhileBoSends(client, {
        send: boSay, n: N, what: 'stock', label: '', pauseMs: 400, waitS: 10, deadlineS: 120,
        gapsMs: [0, 90, 260], answeredAt: () => lastWaitAnswer,
      });

      fromBo(got, texts, 'the waits');
      assert.deepEqual(got.map((m) => m.id), sent.map((s) => s.id), 'the waits returned every message bo sent, once each, in the order sent');
      // Which came while the client was inside the wait that returned it
      // (sent after that wait was), which between waits (answered before
      // the wait that returned it was sent).
      const waitOf = (id) => waits.find((x) => x.ids.includes(id));
      const inside = sent.filter((s) => waitOf(s.id).start < s.t0).length;
      const between = sent.filter((s) => waitOf(s.id).start > s.t1).length;
      say(`stock client: ${N} messages in ${waits.length} waits; ${inside} arrived while it was inside a wait, ${between} between waits`);
      assert.ok(inside >= 5 && between >= 5, `the messages came both inside waits (${inside}) and between them (${between})`);

      // The pushes went out anyway, on the GET stream, once each, for
      // the messages that came between waits; one that a pending wait
      // took was not pushed (a client that shows pushes would see it
      // twice).
      const betweenIds = sent.filter((s) => waitOf(s.id).start > s.t1).map((s) => s.id);
      // Inside for sure: sent 100 ms or more after the wait was.  One
      // sent just after may reach the daemon before the wait does (two
      // requests racing on a busy machine), and is then pushed, rightly.
      const insideIds = sent.filter((s) => waitOf(s.id).start + 100 < s.t0).map((s) => s.id);
      // How the two loops meet is left to the machine's timing, so one
      // message is made sure to come inside a wait: bo speaks a second
      // after the wait was called.
      const pending = client.callTool({ name: 'wait', arguments: { timeout_s: 20 } }, undefined, { timeout: 30_000 });
      await sleep(1000);
      const sureText = text('stock-inside', 0);
      const sureId = await boSay(sureText);
      texts.set(sureId, sureText);
      const sure = waitResult(await pending, 'the wait bo spoke into');
      fromBo(sure.messages, texts, 'the wait bo spoke into');
      assert.deepEqual(sure.messages.map((m) => m.id), [sureId], 'the wait bo spoke into returned that message alone');
      insideIds.push(sureId);
      await allRead([sureId], 'the message bo sent into a wait');
      await until('the pushes of the messages that came between waits', () => betweenIds.every((id) => pushed.includes(id)), 10_000).catch((e) => {
        throw new Error(`${e.message}: a client that did not opt in still gets pushes; missing ${betweenIds.filter((id) => !pushed.includes(id)).join(' ')}`);
      });
      assert.deepEqual(insideIds.filter((id) => pushed.includes(id)), [], 'a message a pending wait took was not pushed too');
      const twice = sent.filter((s) => pushed.filter((x) => x === s.id).length > 1).map((s) => s.id);
      assert.deepEqual(twice, [], 'each message was pushed on the GET stream once');

      // Read receipts: all of them, none before the wait that returned the
      // message was called.  That is what tells a receipt sent when the
      // message arrived, or for the courtesy push, from one sent for the
      // answer: the messages that came between waits arrived hundreds of
      // ms before it.  (Against the moment the answer came, the receipt is
      // 1 to 10 ms later on one machine, less than this process's event
      // loop can order two sockets by when it is busy; those figures are
      // printed, not asserted.)
      const ids = sent.map((s) => s.id);
      await allRead(ids, 'the 50 messages the waits returned');
      const early = [];
      let overtook = 0;
      let most = 0;
      for (const id of ids) {
        const w = waitOf(id);
        const r = firstRead(id);
        if (r < w.start) early.push(`${id}: read receipt ${(w.start - r).toFixed(1)} ms before the wait that returned it was called`);
        if (r < w.answer) {
          overtook++;
          most = Math.max(most, w.answer - r);
        }
      }
      const gaps = ids.map((id) => firstRead(id) - waitOf(id).answer).sort((a, b) => a - b);
      say(`stock client: read receipts came ${gaps[0].toFixed(1)} to ${gaps[gaps.length - 1].toFixed(1)} ms (median ` +
        `${gaps[gaps.length >> 1].toFixed(1)}) after the answer of the wait that returned their message` +
        (overtook ? `; ${overtook} of the ${N} came off their socket before that answer did, by up to ${most.toFixed(1)} ms` : ''));
      assert.deepEqual(early, [], 'no read receipt before the wait that returned the message was called');

      // status counts what waits for the next wait.
      const more = [];
      for (let i = 0; i < 3; i++) {
        const t = text('stock-unread', i);
        const id = await boSay(t);
        texts.set(id, t);
        more.push(id);
      }
      const s1 = await until('status to say unread: 3', async () => {
        const s = statusResult(await client.callTool({ name: 'status', arguments: {} }), 'status');
        return s.unread === 3 ? s : null;
      }, 10_000);
      assert.equal(s1.channels, false);
      const w = waitResult(await client.callTool({ name: 'wait', arguments: { timeout_s: 5 } }), 'wait after status');
      fromBo(w.messages, texts, 'wait after status');
      assert.deepEqual(w.messages.map((m) => m.id), more, 'the wait returns the 3 unread messages at once');
      const s2 = statusResult(await client.callTool({ name: 'status', arguments: {} }), 'status');
      assert.equal(s2.unread, 0, `status says unread: 0 after the wait: ${short(s2)}`);
      await allRead(more, 'the 3 unread messages');
    } finally {
      await transport.terminateSession().catch(() => {});
      await client.close().catch(() => {});
    }
  }, 180_000);

  // -------------------------------------------------------------------------
  step('history counts as shown: a later wait does not return what it returned; resources/read gives too', async () => {
    need(A && B);
    const s = await rawSession(A.info.mcp, 'papo-test-history');
    const texts = new Map();
    const ids = [];
    for (let i = 0; i < 4; i++) {
      const t = text('history', i);
      const id = await boSay(t);
      texts.set(id, t);
      ids.push(id);
    }
    await until('status to say unread: 4', async () => statusResult(await s.call('status'), 'status').unread === 4, 10_000);
    await sleep(500);
    assert.deepEqual(ids.filter((id) => readsOf(id).length), [], 'no read receipt for messages nobody was shown');

    const hStart = now();
    const h = structured(await s.call('history', { limit: 2 }), 'history');
    assert.deepEqual(h.messages.map((m) => m.id), ids.slice(2), `history limit 2 returns the last two: ${short(h)}`);
    const st = statusResult(await s.call('status'), 'status after history');
    assert.equal(st.unread, 2, `status after history says unread: 2 (history showed two of four): ${short(st)}`);
    const wStart = now();
    const w = waitResult(await s.call('wait', { timeout_s: 5 }), 'wait after history');
    fromBo(w.messages, texts, 'wait after history');
    assert.deepEqual(w.messages.map((m) => m.id), ids.slice(0, 2), 'the wait returns the two history did not show, and not the two it did');
    const w2 = waitResult(await s.call('wait', { timeout_s: 1 }), 'the next wait');
    assert.deepEqual(w2.messages, [], 'nothing is left for the next wait');

    await allRead(ids, 'the messages history and wait returned');
    for (const id of ids.slice(2)) assert.ok(firstRead(id) >= hStart, `the read receipt of ${id} came after history showed it`);
    for (const id of ids.slice(0, 2)) assert.ok(firstRead(id) >= wStart, `the read receipt of ${id} came after the wait that returned it was sent, not when history ran`);

    // resources/read of the history shows the messages it holds.
    const t = text('resource', 0);
    const m5 = await boSay(t);
    await until('status to say unread: 1', async () => statusResult(await s.call('status'), 'status').unread === 1, 10_000);
    await sleep(500);
    assert.equal(readsOf(m5).length, 0, 'no read receipt before the resource was read');
    const rStart = now();
    const rr = await s.request('resources/read', { uri: 'papo://room/history' });
    const contents = rr.contents?.[0]?.text;
    assert.equal(typeof contents, 'string', `resources/read answers text: ${short(rr)}`);
    assert.ok(contents.includes(m5), `the history resource holds ${m5}: ${contents.slice(-300)}`);
    await allRead([m5], 'the message resources/read showed');
    assert.ok(firstRead(m5) >= rStart, 'the read receipt came after resources/read');
    const w3 = waitResult(await s.call('wait', { timeout_s: 1 }), 'wait after resources/read');
    assert.deepEqual(w3.messages, [], 'a message resources/read showed is not returned again by wait (each message reaches a session once)');
    await s.end();
  }, 60_000);

  // -------------------------------------------------------------------------
  step('cancel: notifications/cancelled ends a pending wait at once, with no answer; the next wait gets what came', async () => {
    need(A && B);
    const s = await rawSession(A.info.mcp, 'papo-test-cancel');

    // A plain JSON wait.
    const id1 = s.nextId();
    const t0 = now();
    const pending = post(s.url, s.sid, { jsonrpc: '2.0', id: id1, method: 'tools/call', params: { name: 'wait', arguments: { timeout_s: 20 } } });
    await sleep(500);
    const c = await post(s.url, s.sid, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id1, reason: 'test' } });
    const cb = await c.text();
    assert.equal(c.status, 202, `notifications/cancelled answers 202: ${c.status} ${cb}`);
    const res = await within(pending, 3_000, 'the cancelled wait\'s HTTP request is still open 3 s after the cancel');
    const body = await res.text();
    const took = now() - t0;
    assert.equal(res.status, 202, `the cancelled wait ends with HTTP 202: ${res.status} ${body}`);
    assert.equal(body, '', 'the cancelled wait ends with an empty body (no JSON-RPC response)');
    assert.ok(took < 5_000, `the cancelled wait ended ${took.toFixed(0)} ms after it was sent, not at its 20 s timeout`);

    const t1 = text('cancel', 0);
    const m1 = await boSay(t1);
    const start1 = now();
    const w1 = waitResult(await s.call('wait', { timeout_s: 10 }), 'the wait after the cancel');
    fromBo(w1.messages, new Map([[m1, t1]]), 'the wait after the cancel');
    assert.deepEqual(w1.messages.map((m) => m.id), [m1], 'the next wait is accepted and returns the message that came in between');
    assert.ok(now() - start1 < 5_000, 'it returned at once');

    // A wait answered as SSE (progress token).
    const id2 = s.nextId();
    const res2 = await post(s.url, s.sid, {
      jsonrpc: '2.0',
      id: id2,
      method: 'tools/call',
      params: { name: 'wait', arguments: { timeout_s: 20 }, _meta: { progressToken: 'cancel-me' } },
    });
    assert.equal(res2.status, 200, 'a wait with a progress token answers 200');
    assert.match(res2.headers.get('content-type') || '', /text\/event-stream/, 'a wait with a progress token is answered as SSE');
    const events = [];
    const ended = readSse(res2.body, (e) => events.push(rpcOf(e)));
    await sleep(500);
    const t2 = now();
    const c2 = await post(s.url, s.sid, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id2 } });
    assert.equal(c2.status, 202, 'notifications/cancelled of the SSE wait answers 202');
    await c2.text();
    await within(ended, 3_000, 'the cancelled SSE wait\'s stream is still open 3 s after the cancel');
    assert.ok(now() - t2 < 3_000);
    const answers = events.filter((j) => j && 'id' in j && ('result' in j || 'error' in j));
    assert.deepEqual(answers, [], 'the cancelled SSE wait\'s stream ends without a JSON-RPC response');

    const t3 = text('cancel', 1);
    const m3 = await boSay(t3);
    const w3 = waitResult(await s.call('wait', { timeout_s: 10 }), 'the wait after the SSE cancel');
    fromBo(w3.messages, new Map([[m3, t3]]), 'the wait after the SSE cancel');
    assert.deepEqual(w3.messages.map((m) => m.id), [m3], 'the next wait is accepted and returns the message that came in between');
    await allRead([m1, m3], 'the messages returned after the cancels');
    await s.end();
  }, 60_000);

  // -------------------------------------------------------------------------
  step('abandon: a wait whose connection is cut ends; the next wait gets what came after, and only then a read receipt', async () => {
    need(A && B);
    const s = await rawSession(A.info.mcp, 'papo-test-abandon');
    const ac = new AbortController();
    const id = s.nextId();
    const pending = post(s.url, s.sid, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'wait', arguments: { timeout_s: 20 } } }, { signal: ac.signal });
    await sleep(1_000);
    ac.abort();
    await assert.rejects(pending, /abort/i, 'the fetch of the abandoned wait was aborted');
    await sleep(500);

    const t = text('abandon', 0);
    const m = await boSay(t);
    await until('status to say unread: 1', async () => statusResult(await s.call('status'), 'status').unread === 1, 10_000)
      .catch((e) => {
        throw new Error(`${e.message}: the message that came after the cut must wait for the next wait`);
      });
    await sleep(1_500);
    assert.equal(readsOf(m).length, 0, 'no read receipt for a message that only the abandoned wait could have taken');
    const start = now();
    const w = waitResult(await s.call('wait', { timeout_s: 10 }), 'the wait after the abandoned one');
    fromBo(w.messages, new Map([[m, t]]), 'the wait after the abandoned one');
    assert.deepEqual(w.messages.map((x) => x.id), [m], 'the next wait is accepted and returns the message sent after the cut');
    await allRead([m], 'the message the next wait returned');
    assert.ok(firstRead(m) >= start, 'its read receipt came after that wait');
    await s.end();
  }, 60_000);

  // -------------------------------------------------------------------------
  step('a session\'s queue keeps the last 500 and the next wait says how many were dropped', async () => {
    need(A && B);
    const s = await rawSession(A.info.mcp, 'papo-test-overflow');
    const N = 510;
    const ids = [];
    const texts = new Map();
    const t0 = Date.now();
    for (let i = 0; i < N; i++) {
      const t = text('overflow', i);
      const id = await boSay(t);
      ids.push(id);
      texts.set(id, t);
    }
    say(`overflow: bo sent ${N} messages one after the other in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await until('status to say unread: 500', async () => statusResult(await s.call('status'), 'status').unread === 500, 10_000);
    const got = [];
    let dropped = 0;
    for (let k = 0; got.length < 500; k++) {
      const w = waitResult(await s.call('wait', { timeout_s: 2 }), `wait ${k} after the overflow`, { dropped: true });
      if ('dropped' in w) {
        assert.equal(typeof w.dropped, 'number', `dropped is a number: ${short(w)}`);
        dropped += w.dropped;
      }
      if (w.messages.length === 0) break;
      got.push(...w.messages);
    }
    fromBo(got, texts, 'the waits after the overflow');
    assert.deepEqual(got.map((m) => m.id), ids.slice(N - 500), 'the waits return the last 500 messages, in order');
    assert.equal(dropped, N - 500, `the waits say ${N - 500} messages were dropped`);
    const w = waitResult(await s.call('wait', { timeout_s: 1 }), 'the wait after the queue was emptied');
    assert.deepEqual(w.messages, [], 'nothing is left');
    await s.end();
  }, 120_000);

  // -------------------------------------------------------------------------
  step('the stdio bridge (papo mcp), a client without channels: every message through wait, once, in order', async () => {
    need(A && B);
    const transport = new StdioClientTransport({
      command: PAPO,
      args: ['mcp', '--agent', 'stdio'],
      env: { ...cleanEnv, PAPO_HOME: A.home },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (b) => (stderr = (stderr + b).slice(-4000)));
    const client = new Client({ name: 'papo-test-stdio', version: '1.0.0' });
    try {
      await client.connect(transport);
      const s0 = statusResult(await client.callTool({ name: 'status', arguments: {} }), 'status through papo mcp');
      assert.equal(s0.channels, false, `a stdio client that declared no channels: channels false: ${short(s0)}`);
      const N = 20;
      const { sent: sentAt, texts, got } = await waitsWhileBoSends(client, {
        send: boSay, n: N, what: 'stdio', label: ' through papo mcp', pauseMs: 300, waitS: 5,
        deadlineS: 60, gapsMs: [0, 120, 250],
      });
      const sent = sentAt.map((x) => x.id);
      fromBo(got, texts, 'the waits through papo mcp');
      assert.deepEqual(got.map((m) => m.id), sent, 'the waits through papo mcp returned every message once, in the order sent');
      await allRead(sent, 'the messages returned through papo mcp');
    } catch (e) {
      e.message += `\npapo mcp's stderr:\n${stderr}`;
      throw e;
    } finally {
      await client.close().catch(() => {}); // closes its stdin: it ends the session
    }
  }, 120_000);

  // -------------------------------------------------------------------------
  // Opting in.  Each opted-in client: bo sends N messages while a wait of
  // the session is pending; each arrives once by push, in order; the
  // pending wait and one after return none; bo gets a read receipt for
  // each; status says channels: true, unread: 0.  Beside it, a session
  // that did not opt in counts them all as unread.

  const PER = 10;

  // bo's N messages of a case; pushes: [{ id, t, n }] filled by the client.
  async function sendAndCheckPushes(label, pushes, gives = true) {
    const ids = [];
    const texts = new Map();
    for (let i = 0; i < PER; i++) {
      const t = text(label, i);
      const id = await boSay(t);
      ids.push(id);
      texts.set(id, t);
      await sleep(i % 2 ? 100 : 0);
    }
    await until(`${label}: the push of all ${PER} messages`, () => ids.every((id) => pushes.some((p) => p.id === id)), 10_000).catch((e) => {
      throw new Error(`${e.message}: pushed ${short(pushes.map((p) => p.id))}, sent ${ids.join(' ')}`);
    });
    await sleep(300); // time for any second copy to show
    assert.deepEqual(pushes.map((p) => p.id), ids, `${label}: each message was pushed once, in the order sent, and nothing else`);
    for (const p of pushes) {
      assert.equal(p.n.params?.content, texts.get(p.id), `${label}: the push of ${p.id} carries its text: ${short(p.n)}`);
      assert.equal(p.n.params?.meta?.from, 'bo', `${label}: the push of ${p.id} says it is from bo: ${short(p.n)}`);
    }
    // The push gives the message: bo gets its read receipt (nothing else
    // here shows it to ana's agents).  Which comes first on this machine,
    // the push or the receipt, is not for this test to say: papo sends
    // the receipt as it queues the push, the push's bytes go out in the
    // daemon's next round, and the two cross the loopback within a
    // millisecond of each other.  That a receipt waits for its push is
    // checked where the push waits: the step after these.
    if (gives)
      await allRead(ids, `${label}'s pushed messages`);
    return ids;
  }

  // A session that did not opt in, made before the sends: its status
  // counts them as unread.
  async function bystanderChecks(label, bystander, n = PER) {
    const st = await until(`${label}: the other session's status to say unread: ${n}`, async () => {
      const x = statusResult(await bystander.call('status'), 'status of the session that did not opt in');
      return x.unread === n ? x : null;
    }, 10_000);
    assert.equal(st.channels, false, `${label}: a session that did not opt in says channels: false: ${short(st)}`);
    await bystander.end();
  }

  // gives: the client declared it takes pushes (then a push gives the
  // message, and wait does not repeat it); else only the URL asked, and
  // every pushed message still comes from wait.
  async function sdkOptIn(label, url, options, gives = true) {
    const pushes = []; // as the SDK handed them to the client
    const arrived = new Map(); // meta.id -> when its push came off the socket
    let getOpened;
    const getOpen = new Promise((r) => (getOpened = r));
    const taps = new Map();
    const watched = timedFetch({
      onHead(info) {
        if (info.method !== 'GET' || info.status !== 200) return;
        taps.set(info, sseTap((e, t) => {
          const j = rpcOf(e);
          if (j?.method === CHANNEL && !arrived.has(j.params?.meta?.id)) arrived.set(j.params?.meta?.id, t);
        }));
        getOpened();
      },
      onChunk(info, chunk, t) {
        taps.get(info)?.(chunk, t);
      },
    });
    const client = new Client({ name: `papo-test-${label}`, version: '1.0.0' }, options);
    client.fallbackNotificationHandler = async (n) => {
      if (n.method === CHANNEL) pushes.push({ id: n.params?.meta?.id, t: arrived.get(n.params?.meta?.id), n });
    };
    const transport = new StreamableHTTPClientTransport(new URL(agentUrl(url, label)), { fetch: watched });
    await client.connect(transport);
    try {
      await within(getOpen, 5_000, `${label}: the SDK opened no GET stream after initialize`);
      const s0 = statusResult(await client.callTool({ name: 'status', arguments: {} }), `${label}: status`);
      assert.equal(s0.channels, gives, `${label}: status says channels: ${gives}: ${short(s0)}`);
      const bystander = await rawSession(A.info.mcp, `papo-test-${label}-bystander`);
      const ids = await sendAndCheckPushes(label, pushes, gives);
      const w = waitResult(await client.callTool({ name: 'wait', arguments: { timeout_s: 1 } }, undefined, { timeout: 20_000 }), `${label}: wait after the pushes`);
      assert.deepEqual(w.messages.map((m) => m.id), gives ? [] : ids, gives ? `${label}: a wait after the pushes returns none of them` :
        `${label}: a wait after the pushes returns every one of them: the client never said it takes pushes`);
      const s1 = statusResult(await client.callTool({ name: 'status', arguments: {} }), `${label}: status`);
      assert.equal(s1.channels, gives, `${label}: status says channels: ${gives}: ${short(s1)}`);
      assert.equal(s1.unread, 0, `${label}: status says unread: 0 after the pushes: ${short(s1)}`);
      // A wait pending when a message comes takes it, and nothing pushes
      // it too: a client that shows pushes gets it once.
      const pending = client.callTool({ name: 'wait', arguments: { timeout_s: 10 } }, undefined, { timeout: 30_000 });
      pending.catch(() => {});
      await sleep(300);
      const before = pushes.length;
      const one = await boSay(text(`${label}-pending`, 0));
      const pw = waitResult(await pending, `${label}: the wait pending when bo spoke`);
      assert.deepEqual(pw.messages.map((m) => m.id), [one], `${label}: the pending wait returns the message at once`);
      await sleep(300);
      assert.equal(pushes.length, before, `${label}: the message the pending wait took was not pushed: ${short(pushes.slice(before).map((p) => p.id))}`);
      await bystanderChecks(label, bystander, PER + 1);
      return ids;
    } finally {
      await transport.terminateSession().catch(() => {});
      await client.close().catch(() => {});
    }
  }

  step('opt-in a: capabilities.experimental["claude/channel"]: each message once by push, never by wait', async () => {
    need(A && B);
    await sdkOptIn('optin-capability', A.info.mcp, { capabilities: { experimental: { 'claude/channel': {} } } });
  }, 60_000);

  step('opt-in b: /mcp?channels=on alone: each message pushed once, and still given by wait (the client declared nothing)', async () => {
    need(A && B);
    await sdkOptIn('optin-query', `${A.info.mcp}?channels=on`, {}, false);
  }, 60_000);

  step('opt-in c: subscriptions/listen of a 2025 session: each message once by push, never by wait', async () => {
    need(A && B);
    const label = 'optin-listen-2025';
    const s = await rawSession(A.info.mcp, `papo-test-${label}`);
    const listenId = s.nextId();
    const ac = new AbortController();
    const pushes = [];
    const notes = [];
    const tap = sseTap((e, t) => {
      const j = rpcOf(e);
      notes.push(j);
      if (j?.method === CHANNEL) pushes.push({ id: j.params?.meta?.id, t, n: j });
    });
    const res = await timedFetch({ onChunk: (info, chunk, t) => tap(chunk, t) })(s.url, {
      method: 'POST',
      headers: headers(s.sid),
      body: JSON.stringify({ jsonrpc: '2.0', id: listenId, method: 'subscriptions/listen', params: { notifications: { 'claude/channel': true } } }),
      signal: ac.signal,
    });
    assert.equal(res.status, 200, `subscriptions/listen of a 2025 session answers 200: ${res.status}`);
    assert.match(res.headers.get('content-type') || '', /text\/event-stream/, 'subscriptions/listen answers a stream');
    const ended = res.body.pipeTo(new WritableStream()).catch(() => {});
    try {
      const ack = await until(`${label}: the acknowledgement`, () => notes.find((j) => j?.method === 'notifications/subscriptions/acknowledged'), 5_000);
      assert.equal(ack.params?.notifications?.['claude/channel'], true, `${label}: the acknowledgement grants claude/channel: ${short(ack)}`);
      const bystander = await rawSession(A.info.mcp, `papo-test-${label}-bystander`);
      await sendAndCheckPushes(label, pushes);
      const w = waitResult(await s.call('wait', { timeout_s: 1 }), `${label}: wait after the pushes`);
      assert.deepEqual(w.messages.map((m) => m.id), [], `${label}: a wait after the pushes returns none of them`);
      await bystanderChecks(label, bystander);
      for (const p of pushes)
        assert.equal(p.n.params?._meta?.['io.modelcontextprotocol/subscriptionId'], listenId, `${label}: each push is tagged with the listen's id: ${short(p.n)}`);
      const s1 = statusResult(await s.call('status'), `${label}: status`);
      assert.equal(s1.unread, 0, `${label}: status says unread: 0: ${short(s1)}`);
      assert.equal(s1.channels, true, `${label}: status of a session that opted in by listening for claude/channel says channels: true: ${short(s1)}`);
    } finally {
      await s.end().catch(() => {});
      ac.abort();
      await ended;
    }
  }, 60_000);

  step('opt-in c: subscriptions/listen of revision 2026-07-28: each message once by push, a read receipt for each', async () => {
    need(A && B);
    const label = 'optin-listen-2026';
    const ac = new AbortController();
    const pushes = [];
    const notes = [];
    const tap = sseTap((e, t) => {
      const j = rpcOf(e);
      notes.push(j);
      if (j?.method === CHANNEL) pushes.push({ id: j.params?.meta?.id, t, n: j });
    });
    const res = await timedFetch({ onChunk: (info, chunk, t) => tap(chunk, t) })(agentUrl(A.info.mcp, label), {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': MODERN,
        'Mcp-Method': 'subscriptions/listen',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'l1',
        method: 'subscriptions/listen',
        params: {
          _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} },
          notifications: { 'claude/channel': true },
        },
      }),
      signal: ac.signal,
    });
    assert.equal(res.status, 200, `subscriptions/listen of 2026-07-28 answers 200: ${res.status}`);
    const ended = res.body.pipeTo(new WritableStream()).catch(() => {});
    try {
      const ack = await until(`${label}: the acknowledgement`, () => notes.find((j) => j?.method === 'notifications/subscriptions/acknowledged'), 5_000);
      assert.equal(ack.params?.notifications?.['claude/channel'], true, `${label}: the acknowledgement grants claude/channel: ${short(ack)}`);
      const bystander = await rawSession(A.info.mcp, `papo-test-${label}-bystander`);
      await sendAndCheckPushes(label, pushes);
      await bystanderChecks(label, bystander);
    } finally {
      ac.abort();
      await ended;
    }
  }, 60_000);

  step('opt-in without a stream: messages wait for the push when a stream opens, or for the next wait; receipts only then', async () => {
    need(A && B);
    const label = 'optin-nostream';
    const s = await rawSession(A.info.mcp, `papo-test-${label}`, { experimental: { 'claude/channel': {} } });
    const texts = new Map();
    const say3 = async (what, n) => {
      const ids = [];
      for (let i = 0; i < n; i++) {
        const t = text(what, i);
        const id = await boSay(t);
        ids.push(id);
        texts.set(id, t);
      }
      return ids;
    };
    const ids = await say3(label, 3);
    const st = await until('status to say unread: 3', async () => {
      const x = statusResult(await s.call('status'), `${label}: status`);
      return x.unread === 3 ? x : null;
    }, 10_000);
    assert.equal(st.channels, true, `${label}: a session initialized with the capability says channels: true: ${short(st)}`);
    await sleep(1_000);
    assert.deepEqual(ids.filter((id) => readsOf(id).length), [], `${label}: no read receipt while the session has no stream to push on`);

    // The GET stream opens: what waited is pushed, and only now given.
    const pushes = [];
    const tap = sseTap((e, t) => {
      const j = rpcOf(e);
      if (j?.method === CHANNEL) pushes.push({ id: j.params?.meta?.id, t, n: j });
    });
    const ac = new AbortController();
    const openedAt = now();
    const res = await timedFetch({ onChunk: (info, chunk, t) => tap(chunk, t) })(s.url, {
      headers: { ...headers(s.sid), Accept: 'text/event-stream' },
      signal: ac.signal,
    });
    assert.equal(res.status, 200, `${label}: the GET stream opens`);
    const ended = res.body.pipeTo(new WritableStream()).catch(() => {});
    try {
      await until(`${label}: the push of the 3 queued messages`, () => ids.every((id) => pushes.some((p) => p.id === id)), 10_000).catch((e) => {
        throw new Error(`${e.message}: pushed ${short(pushes.map((p) => p.id))}`);
      });
      await sleep(300);
      assert.deepEqual(pushes.map((p) => p.id), ids, `${label}: the queued messages were pushed once each, in order, when the stream opened`);
      for (const p of pushes) assert.equal(p.n.params?.content, texts.get(p.id), `${label}: the push carries the text: ${short(p.n)}`);
      await allRead(ids, `${label}: the messages pushed when the stream opened`);
      for (const id of ids) assert.ok(firstRead(id) >= openedAt, `${label}: the read receipt of ${id} came after the stream opened, not when the message arrived`);
      const st2 = statusResult(await s.call('status'), `${label}: status`);
      assert.equal(st2.unread, 0, `${label}: status says unread: 0 once they were pushed: ${short(st2)}`);
      const w = waitResult(await s.call('wait', { timeout_s: 1 }), `${label}: wait after the pushes`);
      assert.deepEqual(w.messages, [], `${label}: a wait does not return what was pushed`);
    } finally {
      ac.abort();
      await ended;
    }

    // The stream closed: the next messages wait for the next wait.
    await sleep(500);
    const later = await say3(`${label}-later`, 2);
    await until('status to say unread: 2', async () => statusResult(await s.call('status'), `${label}: status`).unread === 2, 10_000);
    await sleep(1_000);
    assert.deepEqual(later.filter((id) => readsOf(id).length), [], `${label}: no read receipt while the stream is closed and no wait asked`);
    const start = now();
    const w = waitResult(await s.call('wait', { timeout_s: 5 }), `${label}: wait with no stream`);
    fromBo(w.messages, texts, `${label}: wait with no stream`);
    assert.deepEqual(w.messages.map((m) => m.id), later, `${label}: with its stream closed, an opted-in session gets the next messages from wait`);
    assert.deepEqual(pushes.map((p) => p.id), ids, `${label}: nothing was pushed on the closed stream`);
    await allRead(later, `${label}: the messages the wait returned`);
    for (const id of later) assert.ok(firstRead(id) >= start, `${label}: the read receipt of ${id} came after the wait`);
    await s.end();
  }, 60_000);

  // -------------------------------------------------------------------------
  // cy: 10,000 sessions on a daemon that ends idle ones after 2 s.

  const IDLE = 2;
  const initOnly = async (url, n) => {
    const res = await post(url, null, initMsg(`papo-test-many-${n}`));
    const body = await res.text();
    return { status: res.status, sid: res.headers.get('mcp-session-id'), body };
  };
  // n initializes, 8 at a time; onProgress(done) after each.
  const INIT_WORKERS = 8;     // initializes in flight at once
  async function initMany(url, n, first, onProgress = () => {}) {
    const out = new Array(n);
    let next = 0;
    let done = 0;
    await Promise.all(Array.from({ length: INIT_WORKERS }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await initOnly(url, first + i);
        onProgress(++done);
      }
    }));
    return out;
  }
  const ping = async (url, sid) => {
    const r = await post(url, sid, { jsonrpc: '2.0', id: 99, method: 'ping' });
    await r.text();
    return r.status;
  };

  step('10,000 sessions left idle on a daemon with PAPO_MCP_IDLE=2: all accepted, ended when idle, RSS back, a live session gets every message', async () => {
    need(A && B);
    papo(path.join(root, 'C'), ['join', A.info.invite, '--name', 'cy']);
    C = await serve('C', { env: { PAPO_MCP_IDLE: String(IDLE) } });
    for (const d of [A, B])
      await until('cy online', async () => {
        const s = await (await fetch(`${d.info.http}/api/status`)).json();
        return s.members?.some((m) => m.name === 'cy' && m.online === true);
      }, 30_000, 200);
    cyOnline = true;
    // cy is sent what the room said before it joined: the live session
    // begins once cy holds as many messages as ana (what came before it
    // began is not its to wait for).
    const count = async (d) => (await (await fetch(`${d.info.http}/api/status`)).json()).messages;
    await until('cy to hold every message of the room', async () => (await count(C)) === (await count(A)), 60_000, 250);

    // The live session: the SDK, not opted in, waiting in a loop.
    const live = new Client({ name: 'papo-test-live', version: '1.0.0' });
    const liveT = new StreamableHTTPClientTransport(new URL(agentUrl(C.info.mcp, 'live')));
    await live.connect(liveT);
    const liveSid = liveT.sessionId;
    const liveGot = [];
    let liveRun = true;
    let liveError = null;
    let liveWaits = 0;
    const liveLoop = (async () => {
      try {
        while (liveRun) {
          const w = waitResult(await live.callTool({ name: 'wait', arguments: { timeout_s: 5 } }, undefined, { timeout: 60_000 }), 'the live session\'s wait');
          liveWaits++;
          liveGot.push(...w.messages);
        }
      } catch (e) {
        liveError = e;
      }
    })();

    // A session that only holds its GET stream open: not idle.
    const holder = await rawSession(C.info.mcp, 'papo-test-holder');
    const holdAbort = new AbortController();
    const hres = await fetch(C.info.mcp, { headers: { ...headers(holder.sid), Accept: 'text/event-stream' }, signal: holdAbort.signal });
    assert.equal(hres.status, 200, 'the holder\'s GET stream opens');
    const holding = readSse(hres.body, () => {}).catch(() => {});

    const sent = [];
    const texts = new Map();
    // n sessions while bo says m things, spread over the run.
    async function batch(what, n, m, first) {
      let made = 0;
      let done = false;
      const t0 = Date.now();
      const sender = (async () => {
        for (let i = 0; i < m; i++) {
          while (!done && made < (i * n) / m) await sleep(5);
          const t = text(what, i);
          const id = await boSay(t);
          sent.push(id);
          texts.set(id, t);
        }
      })();
      const r = await initMany(C.info.mcp, n, first, (k) => (made = k));
      done = true;
      await sender;
      return { r, ms: Date.now() - t0 };
    }
    const checkAll = (r, what) => {
      const bad = r.filter((x) => x.status !== 200 || !/^[0-9a-f]{32}$/.test(x.sid ?? ''));
      assert.deepEqual(bad.slice(0, 5).map((x) => `${x.status} ${x.sid} ${x.body.slice(0, 200)}`), [],
        `${what}: every initialize is answered 200 with a session id (${bad.length} of ${r.length} were not)`);
      assert.equal(new Set(r.map((x) => x.sid)).size, r.length, `${what}: every session has its own id`);
    };

    try {
      // Warm-up: the same pace as the run, for a while, then the idle ones end.
      const warm = await batch('warm', 3_000, 30, 0);
      checkAll(warm.r, 'warm-up');
      await sleep((3 * IDLE + 1) * 1000);
      assert.equal(await ping(C.info.mcp, warm.r[0].sid), 404, `a warm-up session idle for ${3 * IDLE + 1} s is ended (404)`);
      const base = rss(C.proc.pid);
      say(`sessions: warm-up of 3,000 sessions in ${(warm.ms / 1000).toFixed(1)} s; cy's RSS after they ended ${mb(base.rss)} (VmHWM ${mb(base.hwm)})`);

      const run = await batch('many', 10_000, 100, 3_000);
      const peak = rss(C.proc.pid);
      checkAll(run.r, 'the run');
      say(`sessions: 10,000 initializes in ${(run.ms / 1000).toFixed(1)} s (${(10_000 / (run.ms / 1000)).toFixed(0)}/s, 8 at a time), ` +
        `100 messages from bo meanwhile; cy's RSS at the end ${mb(peak.rss)} (VmHWM ${mb(peak.hwm)})`);
      await sleep((3 * IDLE + 1) * 1000);
      assert.equal(await ping(C.info.mcp, run.r[0].sid), 404, 'an early session of the run, idle for long, is ended (404)');
      assert.equal(await ping(C.info.mcp, run.r[run.r.length - 1].sid), 404, 'the last session of the run, idle for long, is ended (404)');
      assert.equal(await ping(C.info.mcp, holder.sid), 200, 'a session with an open GET stream and no request is not ended');
      const afterRss = rss(C.proc.pid);
      const bound = base.rss + 8 * MiB;
      say(`sessions: cy's RSS ${mb(afterRss.rss)} after the 10,000 ended (${mb(base.rss)} before, bound ${mb(bound)}: before + 8 MiB); VmHWM ${mb(afterRss.hwm)}`);
      // Under ASan the RSS is mostly the sanitizer's quarantine and shadow
      // (as in load.test.mjs): there the bound is the normal build's, and
      // LeakSanitizer at cy's exit (stop, below) checks that every
      // session was freed.
      if (SANITIZED)
        say('sessions: a sanitized build: the RSS bound is checked on the normal build; LeakSanitizer checks at exit');
      else
        assert.ok(afterRss.rss <= bound, `cy's RSS came back to ${mb(afterRss.rss)} after the sessions ended, within 8 MiB of ${mb(base.rss)} before`);

      // The live session got everything, once, in order.
      await until('the live session to have every message', () => liveError || liveGot.length >= sent.length, 20_000).catch(() => {});
      liveRun = false;
      await liveLoop;
      if (liveError) throw liveError;
      fromBo(liveGot, texts, 'the live session\'s waits');
      assert.deepEqual(liveGot.map((m) => m.id), sent, `the live session's waits (${liveWaits}) returned all ${sent.length} messages once, in order`);
      assert.equal(liveT.sessionId, liveSid, 'the live session is the one it began with');
    } finally {
      liveRun = false;
      await liveLoop;
      holdAbort.abort();
      await holding;
      await liveT.terminateSession().catch(() => {});
      await live.close().catch(() => {});
    }
  }, 400_000);

  step('at the cap of 4,096 sessions, a new initialize ends the longest-idle session, never a busy one, and is accepted', async () => {
    need(C && cyOnline);
    // cy again, with the default idle time: nothing ends by itself here.
    await stop(C);
    C = await serve('C');
    const CAP = 4096;
    const EXTRA = 100;
    // A session with its GET stream open, made first: busy, not idle.
    const keeper = new Client({ name: 'papo-test-keeper', version: '1.0.0' });
    let getOpened;
    const getOpen = new Promise((r) => (getOpened = r));
    const keeperT = new StreamableHTTPClientTransport(new URL(agentUrl(C.info.mcp, 'keeper')), {
      fetch: async (u, init = {}) => {
        const res = await fetch(u, init);
        if ((init.method || 'GET') === 'GET' && res.ok) getOpened();
        return res;
      },
    });
    await keeper.connect(keeperT);
    await within(getOpen, 5_000, 'the keeper has no GET stream');
    try {
      const t0 = Date.now();
      const r = await initMany(C.info.mcp, CAP + EXTRA, 0);
      const ms = Date.now() - t0;
      const bad = r.filter((x) => x.status !== 200 || !/^[0-9a-f]{32}$/.test(x.sid ?? ''));
      assert.deepEqual(bad.slice(0, 5).map((x) => `${x.status} ${x.body.slice(0, 200)}`), [],
        `every one of ${CAP + EXTRA} initializes is answered 200 with a session id, past the cap (${bad.length} were not)`);
      // Which ones ended, oldest first.
      const codes = [];
      for (const x of r) codes.push(await ping(C.info.mcp, x.sid));
      const ended = codes.flatMap((c, i) => (c === 404 ? [i] : []));
      const other = codes.filter((c) => c !== 404 && c !== 200);
      say(`cap: ${CAP + EXTRA} sessions (and a busy one) in ${(ms / 1000).toFixed(1)} s; ${ended.length} ended, the first ${ended.slice(0, 3).join(', ')}…`);
      assert.deepEqual(other, [], 'a ping on each session answers 200 or 404');
      // initMany makes them INIT_WORKERS at a time, so one may reach the
      // daemon up to INIT_WORKERS - 1 places before one asked earlier:
      // the longest-idle are the first made, give or take that window.
      assert.equal(ended.length, EXTRA + 1,
        `${EXTRA + 1} sessions over the cap of ${CAP} (the busy one counted) ended (${ended.length} did)`);
      assert.deepEqual(ended.filter((i) => i >= EXTRA + INIT_WORKERS), [],
        `the sessions that ended are the longest-idle ones, among the first ${EXTRA + INIT_WORKERS} made`);
      assert.equal(await ping(C.info.mcp, keeperT.sessionId), 200, 'the busy session (GET stream open) is not ended');
      const s = statusResult(await keeper.callTool({ name: 'status', arguments: {} }), 'the busy session\'s status');
      assert.equal(s.me?.name, 'cy', `the busy session still works: ${short(s)}`);
    } finally {
      await keeperT.terminateSession().catch(() => {});
      await keeper.close().catch(() => {});
    }
  }, 300_000);

  step('daemons stop cleanly on SIGTERM', async () => {
    eventsReq?.destroy();
    for (const d of Object.values(daemons)) await stop(d, 30_000);
  }, 120_000);
});
