// mcp_revisions.test.mjs: each MCP revision papo speaks gets the event
// streams its revision defines (issue 36).  A priming event (an id and
// empty data) and a `retry:` field are 2025-11-25's (SEP-1699); clients
// of 2025-06-18 and 2025-03-26 may parse every event's data as JSON: the
// TypeScript SDK inside Gemini CLI (2025-06-18) fails with "Unexpected
// end of JSON input" on an empty one and drops the server, and the
// Python SDK (httpx-sse) makes an event of any block with a field, a
// lone `retry:` too.  So this is a raw client that reads the streams as
// those do: two daemons (ana and bo) in one room; on ana, one agent per
// revision opens a GET stream, subscribes to the history, sets a log
// level, and calls wait with a progress token (answered as SSE); bo
// says something; then ana stops (when papo writes `retry:`).  Every
// event of the older revisions must carry data that parses as JSON;
// 2025-11-25's streams begin with the priming event, and end with
// `retry:`.  A tool result's structuredContent is 2025-06-18's: a
// 2025-03-26 client gets content alone.  A 2026-07-28 wait (no session) answered as SSE carries no
// event id, no request to the client and no notifications/message (it
// set no log level): what the conformance suite's checks
// sep-2575-http-server-no-independent-requests-on-stream and
// sep-2575-server-no-log-without-loglevel ask, which need its own tools.
//
// Run: PAPO=path/to/papo node --test tests/clients/mcp_revisions.test.mjs
import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { daemonSet, need, until, within } from './daemons.mjs';

const { bin: PAPO, root, papo, serve, stop, step, finish } = daemonSet('papo-revs-', { stepTimeout: 30_000 });
const REVISIONS = ['2025-03-26', '2025-06-18', '2025-11-25'];
const PRIMED = new Set(['2025-11-25']);
const MODERN = '2026-07-28';

// An SSE stream being read: its blocks (the text between blank lines),
// each parsed into its fields, as they come; done when it ends.
function sseReader(res) {
  const s = { blocks: [], done: null };
  const dec = new TextDecoder();
  let buf = '';
  s.done = (async () => {
    for await (const chunk of res.body) {
      buf += dec.decode(chunk, { stream: true });
      let i;
      while ((i = buf.search(/\r?\n\r?\n/)) !== -1) {
        const text = buf.slice(0, i);
        buf = buf.slice(i + buf.slice(i).match(/^\r?\n\r?\n/)[0].length);
        s.blocks.push(parseBlock(text));
      }
    }
    if (buf.trim() !== '') s.blocks.push(parseBlock(buf));
  })().catch(() => {});
  return s;
}

// A block's fields: comments (lines beginning with ':') apart; data
// lines joined with '\n', as SSE has it; null when no data line.
function parseBlock(text) {
  const b = { text, fields: [], data: null, id: undefined, retry: undefined, comment: true };
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith(':')) continue;
    b.comment = false;
    const m = line.match(/^([^:]*)(?::\s?(.*))?$/);
    const [name, value = ''] = [m[1], m[2]];
    b.fields.push(name);
    if (name === 'data') b.data = b.data === null ? value : `${b.data}\n${value}`;
    else if (name === 'id') b.id = value;
    else if (name === 'retry') b.retry = value;
  }
  return b;
}

// The blocks of a stream that a client sees as events (all but
// comments), each with its JSON-RPC message or the reason it has none.
function events(s) {
  return s.blocks.filter((b) => !b.comment).map((b) => {
    let msg, error;
    try {
      msg = JSON.parse(b.data ?? '');
    } catch (e) {
      error = e.message;
    }
    return { ...b, msg, error };
  });
}

// Every event of an older revision's stream carries a JSON-RPC message.
function allJson(rev, what, s) {
  for (const e of events(s))
    assert.ok(e.error === undefined && e.msg?.jsonrpc === '2.0',
      `${rev}: every event of ${what} carries JSON data (${e.error}): ${JSON.stringify(e.text)}; ` +
      `the stream: ${JSON.stringify(s.blocks.map((b) => b.text))}`);
}

describe('each revision gets the SSE streams it defines', { timeout: 120_000 }, () => {
  let A;
  const S = {}; // per revision: { url, sid, get, wait }

  before(async () => {
    assert.ok(fs.existsSync(PAPO), `no papo binary at ${PAPO} (set PAPO)`);
    papo(path.join(root, 'A'), ['new', '--name', 'ana']);
    A = await serve('A');
    papo(path.join(root, 'B'), ['join', A.info.invite, '--name', 'bo']);
    await serve('B');
    await until('ana to see bo online', async () => {
      const s = await (await fetch(`${A.info.http}/api/status`)).json();
      return s.members?.some((m) => m.name === 'bo' && m.online === true);
    }, 30_000, 200);
  });

  after(() => finish());

  // One POST of a session's: its JSON answer, or its SSE stream.
  async function post(rev, body, { sid, stream } = {}) {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    if (sid) {
      headers['MCP-Session-Id'] = sid;
      headers['MCP-Protocol-Version'] = rev;
    }
    const res = await fetch(S[rev].url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', ...body }) });
    if (stream) {
      assert.match(res.headers.get('content-type') || '', /text\/event-stream/, `${rev}: ${body.method} answers as SSE`);
      return sseReader(res);
    }
    const text = await res.text();
    assert.equal(res.status, res.status < 300 ? res.status : 200, `${rev} ${body.method}: ${res.status} ${text}`);
    return { res, json: text ? JSON.parse(text) : null };
  }

  step('each revision: initialize, a GET stream, a subscription, a log level', async () => {
    await Promise.all(REVISIONS.map(async (rev) => {
      S[rev] = { url: `${A.info.mcp}?agent=r${rev.replaceAll('-', '')}` };
      const { res, json } = await post(rev, {
        id: 1, method: 'initialize',
        params: { protocolVersion: rev, capabilities: {}, clientInfo: { name: `raw-${rev}`, version: '1' } },
      });
      assert.equal(json.result?.protocolVersion, rev, `${rev}: initialize gives the revision back: ${JSON.stringify(json)}`);
      const sid = S[rev].sid = res.headers.get('mcp-session-id');
      assert.ok(sid, `${rev}: a session id`);
      await post(rev, { method: 'notifications/initialized' }, { sid });
      const get = await fetch(S[rev].url, {
        headers: { Accept: 'text/event-stream', 'MCP-Session-Id': sid, 'MCP-Protocol-Version': rev },
      });
      assert.equal(get.status, 200, `${rev}: GET stream`);
      S[rev].get = sseReader(get);
      const sub = await post(rev, { id: 2, method: 'resources/subscribe', params: { uri: 'papo://room/history' } }, { sid });
      assert.deepEqual(sub.json.result, {}, `${rev}: subscribed: ${JSON.stringify(sub.json)}`);
      const lvl = await post(rev, { id: 3, method: 'logging/setLevel', params: { level: 'info' } }, { sid });
      assert.deepEqual(lvl.json.result, {}, `${rev}: log level set: ${JSON.stringify(lvl.json)}`);
    }));
  });

  // A 2026-07-28 request: no session, its revision in _meta and headers.
  async function postModern(agent, method, params, name) {
    const headers = {
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN, 'Mcp-Method': method,
    };
    if (name) headers['Mcp-Name'] = name;
    const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
    return fetch(`${A.info.mcp}?agent=${agent}`, {
      method: 'POST', headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 'm1', method, params: { ...params, _meta: { ...meta, ...params._meta } } }),
    });
  }

  step('a wait with a progress token, answered as SSE with the message bo says', async () => {
    need(REVISIONS.every((r) => S[r]?.get));
    const modern = await postModern('r20260728', 'tools/call',
      { name: 'wait', arguments: { timeout_s: 20 }, _meta: { progressToken: 'p-modern' } }, 'wait');
    assert.match(modern.headers.get('content-type') || '', /text\/event-stream/, `${MODERN}: the wait answers as SSE`);
    S[MODERN] = { wait: sseReader(modern) };
    for (const rev of REVISIONS)
      S[rev].wait = await post(rev, {
        id: 4, method: 'tools/call',
        params: { name: 'wait', arguments: { timeout_s: 20 }, _meta: { progressToken: `p-${rev}` } },
      }, { sid: S[rev].sid, stream: true });
    // Each wait is pending: it answered as SSE (a wait with something
    // to give at once answers as plain JSON, which post refuses).
    papo(path.join(root, 'B'), ['say', 'hello every revision']);
    for (const rev of REVISIONS) {
      await within(S[rev].wait.done, 20_000, `${rev}: the wait's stream ends`);
      const res = events(S[rev].wait).find((e) => e.msg?.id === 4);
      assert.ok(res, `${rev}: the wait's result came: ${JSON.stringify(S[rev].wait.blocks.map((b) => b.text))}`);
      // content's text is the JSON of the answer at every revision;
      // structuredContent is 2025-06-18's.
      assert.deepEqual(JSON.parse(res.msg.result.content[0].text).messages.map((m) => m.text), ['hello every revision'],
        `${rev}: the wait gives bo's message: ${JSON.stringify(res.msg)}`);
      if (rev === '2025-03-26')
        assert.equal(res.msg.result.structuredContent, undefined, `${rev}: no structuredContent: ${JSON.stringify(res.msg)}`);
      else
        assert.deepEqual(res.msg.result.structuredContent, JSON.parse(res.msg.result.content[0].text),
          `${rev}: structuredContent: ${JSON.stringify(res.msg)}`);
      if (PRIMED.has(rev)) {
        const first = S[rev].wait.blocks.find((b) => !b.comment);
        assert.ok(first && first.id && first.data === '', `${rev}: the wait's stream begins with a priming event: ${JSON.stringify(first?.text)}`);
      } else
        allJson(rev, "the wait's SSE answer", S[rev].wait);
    }
    const m = S[MODERN].wait;
    await within(m.done, 20_000, `${MODERN}: the wait's stream ends`);
    const blocks = JSON.stringify(m.blocks.map((b) => b.text));
    allJson(MODERN, "the wait's SSE answer", m);
    const evs = events(m);
    assert.ok(evs.every((e) => e.id === undefined), `${MODERN}: no event ids (streams are not resumed): ${blocks}`);
    assert.ok(evs.every((e) => !(e.msg.method && e.msg.id !== undefined)), `${MODERN}: no request to the client on a request's stream: ${blocks}`);
    assert.ok(evs.every((e) => e.msg.method !== 'notifications/message'), `${MODERN}: no notifications/message without a log level: ${blocks}`);
    const res = evs.find((e) => e.msg.id === 'm1');
    assert.equal(res?.msg.result?.resultType, 'complete', `${MODERN}: the result, complete: ${blocks}`);
    assert.deepEqual(res.msg.result.structuredContent.messages.map((x) => x.text), ['hello every revision'],
      `${MODERN}: the wait gives bo's message: ${blocks}`);
  });

  step('the GET streams carry the notifications of it', async () => {
    need(REVISIONS.every((r) => S[r]?.wait));
    for (const rev of REVISIONS) {
      const g = S[rev].get;
      await until(`${rev}: resources/updated and notifications/message on the GET stream`, () => {
        const ms = events(g).map((e) => e.msg?.method);
        return ms.includes('notifications/resources/updated') && ms.includes('notifications/message');
      }, 10_000).catch((e) => {
        throw new Error(`${e.message}: ${JSON.stringify(g.blocks.map((b) => b.text))}`);
      });
      if (PRIMED.has(rev)) {
        const first = g.blocks.find((b) => !b.comment);
        assert.ok(first.id && first.data === '', `${rev}: the GET stream begins with a priming event: ${JSON.stringify(first.text)}`);
      } else
        allJson(rev, 'the GET stream', g);
    }
  });

  step('the daemon stops: retry: for 2025-11-25 only, nothing an older client cannot parse', async () => {
    need(REVISIONS.every((r) => S[r]?.get));
    await stop(A);
    for (const rev of REVISIONS) {
      const g = S[rev].get;
      await within(g.done, 5_000, `${rev}: the GET stream ends with the daemon`);
      const retry = g.blocks.some((b) => b.retry !== undefined);
      if (PRIMED.has(rev))
        assert.ok(retry, `${rev}: the stream ends with retry: ${JSON.stringify(g.blocks.map((b) => b.text))}`);
      else {
        assert.ok(!retry, `${rev}: no retry: (2025-11-25's) ${JSON.stringify(g.blocks.map((b) => b.text))}`);
        allJson(rev, 'the GET stream, to its end', g);
      }
    }
  });
});
