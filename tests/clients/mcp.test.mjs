// mcp.test.mjs: papo's /mcp as a real MCP client sees it.  Two daemons
// (ana and bo, in temporary homes, on ports of their own choosing) in one
// room; the official MCP TypeScript SDK connects to each over Streamable
// HTTP and drives initialize, tools/list, the four tools, the push of room
// messages as notifications/claude/channel, tool errors and the end of a
// session.  Each step's answer is also compared with the papo CLI's.
//
// Run: PAPO=path/to/papo node --test tests/clients/mcp.test.mjs
//  or: node tests/clients/mcp.test.mjs path/to/papo
// (after `npm ci --prefix tests/clients`).  On a failure the HTTP
// exchanges of both clients are printed to stderr.
import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { daemonSet, need, sleep, until, within } from './daemons.mjs';

const { bin: PAPO, root, daemons, papo, serve, stop, step, finish } = daemonSet('papo-mcp-', { stepTimeout: 30_000 });

// HTTP exchanges of the clients, for the report when something fails.
const exchanges = [];
let getStreamOpened = {};
function recordingFetch(label) {
  let opened;
  getStreamOpened[label] = new Promise((r) => (opened = r));
  return async (url, init = {}) => {
    const h = new Headers(init.headers);
    const e = {
      who: label,
      method: init.method || 'GET',
      session: h.get('mcp-session-id'),
      version: h.get('mcp-protocol-version'),
      lastEventId: h.get('last-event-id'),
      body: typeof init.body === 'string' ? init.body.slice(0, 300) : undefined,
    };
    exchanges.push(e);
    let res;
    try {
      res = await fetch(url, init);
    } catch (err) {
      e.error = String(err);
      throw err;
    }
    e.status = res.status;
    e.type = res.headers.get('content-type');
    e.sessionOut = res.headers.get('mcp-session-id');
    if (e.method === 'GET' && res.ok && /text\/event-stream/.test(e.type || '')) opened();
    if (!res.ok || /application\/json/.test(e.type || ''))
      res.clone().text().then((t) => (e.response = t.slice(0, 300)), () => {});
    return res;
  };
}

async function connect(label, url) {
  const client = new Client({ name: `papo-test-${label}`, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch(label) });
  await client.connect(transport);
  return { client, transport };
}

function parsedText(result) {
  assert.ok(Array.isArray(result.content) && result.content.length > 0, 'result has content');
  assert.equal(result.content[0].type, 'text');
  return JSON.parse(result.content[0].text);
}
// A tool's structured answer, checked against its JSON text.
function structured(result, what) {
  assert.notEqual(result.isError, true, `${what} is not an error: ${JSON.stringify(result)}`);
  assert.ok(result.structuredContent, `${what} has structuredContent: ${JSON.stringify(result)}`);
  assert.deepEqual(parsedText(result), result.structuredContent, `${what}: content[0].text is the JSON of structuredContent`);
  return result.structuredContent;
}
function errorText(result) {
  assert.equal(result.isError, true, `isError: ${JSON.stringify(result)}`);
  return result.content.map((c) => c.text || '').join('\n');
}

describe('papo /mcp with the MCP TypeScript SDK', { timeout: 85_000 }, () => {
  let A, B, c1, c2;
  const notes = []; // notifications client2 got
  let M0, M1, pendingWait;

  before(async () => {
    assert.ok(fs.existsSync(PAPO), `no papo binary at ${PAPO} (set PAPO)`);
    papo(path.join(root, 'A'), ['new', '--name', 'ana']);
    A = await serve('A');
    papo(path.join(root, 'B'), ['join', A.info.invite, '--name', 'bo']);
    B = await serve('B');
    await until('ana to see bo online', async () => {
      const s = await (await fetch(`${A.info.http}/api/status`)).json();
      return s.members?.some((m) => m.name === 'bo' && m.online === true);
    }, 30_000, 200);
  });

  after(() => finish({
    close: () => Promise.all([c1, c2].map((c) => c?.client.close().catch(() => {}))),
    report: () => {
      console.error('HTTP exchanges of the clients:');
      for (const e of exchanges) console.error('  ' + JSON.stringify(e));
    },
    lines: Infinity,
  }));

  step('initialize: capabilities and instructions', async () => {
    c1 = await connect('client1', A.info.mcp);
    c2 = await connect('client2', B.info.mcp);
    c2.client.fallbackNotificationHandler = async (n) => {
      notes.push(n);
    };
    for (const { client, transport } of [c1, c2]) {
      const caps = client.getServerCapabilities();
      assert.ok(caps, 'server capabilities');
      assert.ok(caps.tools, `capabilities.tools: ${JSON.stringify(caps)}`);
      assert.ok(caps.logging, `capabilities.logging: ${JSON.stringify(caps)}`);
      assert.ok(caps.resources, `capabilities.resources: ${JSON.stringify(caps)}`);
      assert.equal(caps.resources.subscribe, true, `capabilities.resources.subscribe: ${JSON.stringify(caps)}`);
      assert.ok(caps.experimental?.['claude/channel'], `capabilities.experimental["claude/channel"]: ${JSON.stringify(caps)}`);
      const ins = client.getInstructions();
      assert.equal(typeof ins, 'string', 'instructions');
      assert.match(ins, /data/i, 'instructions say room text is data');
      assert.match(ins, /instruction/i, 'instructions say room text is not instructions');
      // Claude Code's tool search shows the model the instructions and
      // the tools' names only, cut at 2 KB: they must say how to listen,
      // what counts as read and how to answer, within that.
      assert.ok(Buffer.byteLength(ins) <= 2048, `instructions fit in 2 KB: ${Buffer.byteLength(ins)} bytes`);
      assert.match(ins, /wait[^.]*loop/i, 'instructions say to call wait in a loop');
      assert.match(ins, /history[^.]*read/i, 'instructions say history counts as read');
      assert.match(ins, /reply_to/, 'instructions say how to answer a message');
      assert.match(ins, /wake/i, 'instructions say what a wake is');
      assert.ok(transport.sessionId, 'the server gave a session id');
      assert.match(transport.sessionId, /^[\x21-\x7e]+$/, 'session id is visible ASCII');
    }
    assert.notEqual(c1.transport.sessionId, c2.transport.sessionId);
  });

  step('tools/list: send, wait, history, status', async () => {
    need(c1 && c2);
    for (const { client } of [c1, c2]) {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name).sort();
      for (const n of ['history', 'send', 'status', 'wait'])
        assert.ok(names.includes(n), `tool ${n} listed: ${names}`);
      for (const t of tools) {
        assert.equal(t.inputSchema?.type, 'object', `${t.name}'s inputSchema is an object schema`);
        assert.equal(typeof t.description, 'string', `${t.name} has a description`);
      }
    }
  });

  step('a pending wait; send and reply_to; the push to the other session', async () => {
    // The standalone GET stream (opened by the SDK after initialize) is
    // where the pushes go: it must be open first.
    need(c1 && c2);
    await within(getStreamOpened.client2, 5_000, 'client2 has no GET event stream open after initialize');
    pendingWait = c2.client.callTool({ name: 'wait', arguments: { timeout_s: 20 } }, undefined, { timeout: 40_000 });
    pendingWait.catch(() => {}); // awaited in the next step
    await sleep(300);

    const r0 = structured(await c1.client.callTool({ name: 'send', arguments: { text: 'first' } }), 'send first');
    assert.match(r0.id, /^[a-z2-7]{10}$/, `message id: ${JSON.stringify(r0)}`);
    assert.equal(r0.state, 'delivered', `send first: ${JSON.stringify(r0)}`);
    assert.deepEqual(r0.delivered_to, ['bo']);
    M0 = r0.id;

    const r1 = structured(
      await c1.client.callTool({ name: 'send', arguments: { text: 'hello bo', reply_to: M0 } }),
      'send hello bo',
    );
    assert.match(r1.id, /^[a-z2-7]{10}$/);
    assert.notEqual(r1.id, M0);
    assert.equal(r1.state, 'delivered', `send hello bo: ${JSON.stringify(r1)}`);
    assert.deepEqual(r1.delivered_to, ['bo']);
    M1 = r1.id;

    const n = await until(
      'notifications/claude/channel "hello bo" on client2',
      () => notes.find((x) => x.method === 'notifications/claude/channel' && x.params?.content === 'hello bo'),
      10_000,
    ).catch((e) => {
      throw new Error(`${e.message}; client2 got: ${JSON.stringify(notes)}`);
    });
    assert.equal(n.params.meta?.from, 'ana', JSON.stringify(n));
    assert.equal(n.params.meta.id, M1, JSON.stringify(n));
    assert.equal(n.params.meta.reply_to, M0, JSON.stringify(n));
    // Sent to everyone: no addressee (meta.to absent or null).
    assert.ok(n.params.meta.to === undefined || n.params.meta.to === null, `meta.to: ${JSON.stringify(n)}`);
    assert.ok(['number', 'string'].includes(typeof n.params.meta.ts) && n.params.meta.ts,
      `meta has ts: ${JSON.stringify(n)}`);
    // "first" came while client2's wait was pending: the wait takes it,
    // and nothing pushes it too (a client that shows pushes would see
    // it twice).
    const n0 = notes.find((x) => x.method === 'notifications/claude/channel' && x.params?.content === 'first');
    assert.equal(n0, undefined, `"first", which the pending wait took, was not pushed: ${JSON.stringify(notes)}`);
  }, 45_000);

  step('the pending wait answers with the first message; the waits return each once, in order', async () => {
    // client2 did not opt in to channel pushes (no claude/channel
    // capability): the pushes it got are a courtesy, and each message
    // still waits for its wait, exactly once.
    need(c2 && pendingWait);
    const w = structured(await pendingWait, 'wait');
    assert.ok(Array.isArray(w.messages), `wait.messages is an array: ${JSON.stringify(w)}`);
    assert.ok(w.messages.length >= 1, `wait returned a message: ${JSON.stringify(w)}`);
    assert.equal(w.messages[0].id, M0, `the pending wait answers with the first message to arrive, "first": ${JSON.stringify(w)}`);
    const got = w.messages.map((m) => m.id);
    while (got.length < 2) {
      const more = structured(
        await c2.client.callTool({ name: 'wait', arguments: { timeout_s: 5 } }, undefined, { timeout: 20_000 }),
        'next wait',
      );
      if (more.messages.length === 0) break;
      got.push(...more.messages.map((m) => m.id));
    }
    assert.deepEqual(got, [M0, M1], 'the waits return "first" and "hello bo" once each, in order, though both were pushed');
    const t0 = Date.now();
    const w2 = structured(
      await c2.client.callTool({ name: 'wait', arguments: { timeout_s: 2 } }, undefined, { timeout: 20_000 }),
      'last wait',
    );
    assert.deepEqual(w2.messages, [], `a message a wait already returned is not returned again: ${JSON.stringify(w2)}`);
    assert.equal(w2.timed_out, true, `the last wait timed out: ${JSON.stringify(w2)}`);
    assert.ok(Date.now() - t0 >= 1_500, 'the last wait waited its timeout');
  });

  step('history tool = papo history --json', async () => {
    need(c2 && M0 && M1);
    const h = structured(await c2.client.callTool({ name: 'history', arguments: { limit: 10 } }), 'history');
    assert.ok(Array.isArray(h.messages), JSON.stringify(h));
    assert.deepEqual(
      h.messages.map((m) => m.text),
      ['first', 'hello bo'],
      `history has both, oldest first: ${JSON.stringify(h)}`,
    );
    assert.deepEqual(h.messages.map((m) => m.id), [M0, M1]);
    assert.equal(h.messages[1].reply_to, M0);
    assert.equal(h.messages[0].from, 'ana');
    const cli = JSON.parse(papo(B.home, ['history', '--json']));
    assert.deepEqual(
      h.messages.map((m) => m.id),
      cli.messages.map((m) => m.id),
      'same ids in the same order as papo history --json',
    );
  });

  step('status tool = papo status --json', async () => {
    need(c1);
    const s = structured(await c1.client.callTool({ name: 'status', arguments: {} }), 'status');
    assert.equal(s.me?.name, 'ana', JSON.stringify(s));
    assert.ok(Array.isArray(s.members), JSON.stringify(s));
    const bo = s.members.find((m) => m.name === 'bo');
    assert.ok(bo, `bo is a member: ${JSON.stringify(s)}`);
    assert.equal(bo.online, true);
    const cli = JSON.parse(papo(A.home, ['status', '--json']));
    const pick = (ms) => ms.map((m) => [m.name, m.online]).sort();
    assert.deepEqual(pick(s.members), pick(cli.members), 'same members and online states as papo status --json');
  });

  step('tool errors: unknown addressee, text too long', async () => {
    need(c1);
    const e1 = errorText(await c1.client.callTool({ name: 'send', arguments: { text: 'x', to: 'nobody' } }));
    assert.match(e1, /bo/, `the error lists the members: ${e1}`);
    const e2 = errorText(await c1.client.callTool({ name: 'send', arguments: { text: 'a'.repeat(50_000) } }));
    assert.match(e2, /49152|48 ?KiB/i, `the error gives the limit: ${e2}`);
  });

  // MCP 2025-11-25 (SEP-1303): a mistake in a tool's input is the
  // model's to correct, so it is a tool result with isError naming the
  // argument, not a JSON-RPC error (which the SDK throws at the client).
  step('input mistakes are tool errors naming the argument', async () => {
    need(c1);
    const cases = [
      ['send', { text: 'x', sender: 'bo' }, /unknown argument 'sender'.*text, to, reply_to/],
      ['wait', { timeout_s: 600 }, /timeout_s.*0 to 55/],
      ['wait', { timeout_s: 'soon' }, /timeout_s/],
      ['wait', { from: 7 }, /from must be a string/],
      ['send', { text: 7 }, /text must be a string/],
      ['send', { text: 'x', to: ['bo'] }, /\bto must be a string/],
      ['send', {}, /text is missing/],
      ['history', { limit: 0 }, /limit must be a whole number from 1 to 500/],
      ['history', { since: 'yesterday' }, /since must be a whole number/],
      ['status', { verbose: true }, /unknown argument 'verbose': status takes room/],
    ];
    for (const [name, args, want] of cases) {
      const res = await c1.client.callTool({ name, arguments: args });
      const text = errorText(res);
      assert.match(text, want, `${name} ${JSON.stringify(args)}: ${text}`);
    }
    // An unknown tool is the protocol's: -32602, as the spec says.
    await assert.rejects(c1.client.callTool({ name: 'shout', arguments: {} }),
      (err) => err.code === -32602 && /no tool named 'shout'/.test(err.message));
  });

  step('session end: DELETE, then the old session id gets 404', async () => {
    need(c1);
    const url = A.info.mcp;
    const sid = c1.transport.sessionId;
    assert.ok(sid);
    const before = exchanges.length;
    await c1.transport.terminateSession();
    const del = exchanges.slice(before).find((e) => e.who === 'client1' && e.method === 'DELETE');
    assert.ok(del, 'the SDK sent DELETE');
    assert.ok(del.status >= 200 && del.status < 300, `DELETE answered ${del.status} (2xx ends the session)`);
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'MCP-Session-Id': sid,
        'MCP-Protocol-Version': '2025-11-25',
        Accept: 'application/json, text/event-stream',
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }),
    });
    const body = await res.text();
    assert.equal(res.status, 404, `POST with the ended session: ${res.status} ${body}`);
  });

  step('daemons stop cleanly on SIGTERM', async () => {
    for (const c of [c1, c2]) await c?.client.close().catch(() => {});
    c1 = c2 = undefined;
    for (const d of Object.values(daemons)) await stop(d, 15_000);
  }, 40_000);
});
