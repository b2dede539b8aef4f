// mcp_rooms.test.mjs: one /mcp for every room (docs/MCP.md, "Rooms"), as
// the official MCP TypeScript SDK sees it.  One daemon in two rooms,
// alpha (the default) and beta: every tool lists room in its schema;
// status lists both rooms; initialize's instructions say how rooms
// work; a client bound by /mcp?room=beta acts on beta and is refused
// another room as a tool error; a wait of a client bound to a room that
// is then left ends at once saying so; ?room= naming no room fails the
// SDK's connect with papo's 404.
//
// Run: PAPO=path/to/papo node --test tests/clients/mcp_rooms.test.mjs
// (after `npm ci --prefix tests/clients`).
import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { daemonSet, sleep, until, within } from './daemons.mjs';

const { bin: PAPO, root, papo, serve, stop, step, finish } = daemonSet('papo-mcprooms-');

async function connect(url) {
  const client = new Client({ name: 'papo-test-rooms', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

describe('papo /mcp serves every room (MCP TypeScript SDK)', { timeout: 60_000 }, () => {
  let A, unbound, bound, gamma;

  before(async () => {
    assert.ok(fs.existsSync(PAPO), `no papo binary at ${PAPO} (set PAPO)`);
    papo(path.join(root, 'A'), ['new', '--name', 'ana', '--room', 'alpha']);
    A = await serve('A');
    papo(path.join(root, 'A'), ['new', '--name', 'ana', '--room', 'beta']);
  });

  after(() => finish({
    close: async () => {
      for (const c of [unbound, bound, gamma]) await c?.close().catch(() => {});
      if (A) await stop(A).catch(() => {});
    },
  }));

  step('every tool takes room, and status lists the rooms', async () => {
    unbound = await connect(A.info.mcp);
    const { tools } = await unbound.listTools();
    for (const name of ['send', 'wait', 'history', 'status']) {
      const t = tools.find((x) => x.name === name);
      assert.equal(t?.inputSchema?.properties?.room?.type, 'string', `${name} takes room`);
    }
    const s = (await unbound.callTool({ name: 'status', arguments: {} })).structuredContent;
    assert.deepEqual(s.rooms.map((r) => [r.name, r.default]), [['alpha', true], ['beta', false]]);
    assert.equal(s.room, 'alpha');
    assert.equal(s.bound, null);
  });

  step('initialize\'s instructions say how rooms work, within 2 KB', async () => {
    const ins = unbound.getInstructions();
    assert.equal(typeof ins, 'string', 'instructions');
    assert.ok(Buffer.byteLength(ins) <= 2048, `instructions fit in 2 KB: ${Buffer.byteLength(ins)} bytes`);
    assert.match(ins, /several rooms/, 'instructions say there may be several rooms');
    assert.match(ins, /status lists them/, 'instructions say status lists the rooms');
    assert.match(ins, /wait without room returns the messages of every room/, 'instructions say wait hears every room');
    assert.match(ins, /unless given room/, 'instructions name the room argument');
    assert.match(ins, /\?room=/, 'instructions say what ?room= does');
  });

  step('a client bound with ?room=beta acts on beta only', async () => {
    bound = await connect(`${A.info.mcp}?room=beta`);
    const s = (await bound.callTool({ name: 'status', arguments: {} })).structuredContent;
    assert.equal(s.room, 'beta');
    assert.equal(s.bound, s.room_id);
    const sent = await bound.callTool({ name: 'send', arguments: { text: 'to beta' } });
    assert.notEqual(sent.isError, true, JSON.stringify(sent));
    assert.equal(sent.structuredContent.room, 'beta');
    const other = await bound.callTool({ name: 'send', arguments: { text: 'x', room: 'alpha' } });
    assert.equal(other.isError, true);
    assert.match(other.content[0].text, /bound to room beta .*'alpha' does not name it/);
  });

  step('a wait on a room that is left ends at once, saying so', async () => {
    papo(path.join(root, 'A'), ['new', '--name', 'ana', '--room', 'gamma']);
    // The running daemon takes the new room up on its own time.
    await until('gamma served', async () => (await unbound.callTool({ name: 'status', arguments: {} }))
      .structuredContent.rooms.some((r) => r.name === 'gamma'), 15_000);
    gamma = await connect(`${A.info.mcp}?room=gamma`);
    const t0 = Date.now();
    const pending = gamma.callTool({ name: 'wait', arguments: { timeout_s: 30 } }, undefined, { timeout: 60_000 });
    await sleep(500);
    papo(path.join(root, 'A'), ['leave', 'gamma']);
    const res = await within(pending, 15_000, 'the wait on gamma to end');
    assert.ok(Date.now() - t0 < 15_000, `ended after ${Date.now() - t0} ms, not at its timeout`);
    assert.equal(res.isError, true, JSON.stringify(res));
    assert.match(res.content[0].text, /room gamma .*was left by this daemon while this wait was pending/);
    assert.equal(res.structuredContent?.left, true);
    const next = await gamma.callTool({ name: 'status', arguments: {} });
    assert.equal(next.isError, true);
    assert.match(next.content[0].text, /bound to room gamma .*which this daemon has left: start a new session/);
  });

  step('?room= naming no room: connect fails with the 404', async () => {
    await assert.rejects(connect(`${A.info.mcp}?room=nosuch`), /404|no room named 'nosuch'/);
  });
});
