// files.test.mjs: files between agents through MCP (docs/MCP.md, "Files"),
// as the official MCP TypeScript SDK sees them.  Two daemons, ana and bo,
// share a room.  ana's agent sends a message with a file of this machine
// (a path) and an inline PNG (base64); bo's agent gets the message through
// wait with both files listed (name, size, type, ref, state, uri) and no
// trailer in its text; fetch gives the text file's content as text, the
// PNG as image content (by its uri), saves to a path the same bytes
// (refusing to overwrite unless asked), and a file over 256 KiB only to a
// path; resources/read of a file's uri gives its content and
// resources/list lists it.  Mistakes are tool errors that send nothing:
// a missing path, a directory, data that is not base64, 17 attachments,
// and a fetch of a reference no message names.  With ana stopped, a
// fetch of a file only bo's message names answers, when its timeout runs
// out, with the file's state.
//
// Fetching between members needs the node's transfer engine
// (node/room/xfer.c).
//
// Run: PAPO=path/to/papo node --test tests/clients/files.test.mjs
// (after `npm ci --prefix tests/clients`).
import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { daemonSet, need, until } from './daemons.mjs';

const { bin: PAPO, root, papo, serve, stop, step, finish } = daemonSet('papo-files-', { stepTimeout: 60_000 });

// A 2x2 PNG, red and blue pixels: real image bytes, small.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4zwAE/xkgFAAb8gP91pbyKwAAAABJRU5ErkJggg==',
  'base64');
const NOTES = 'line one: the build failed\nline two: <script>not html</script>\nünïcödé ✓\n';

async function connect(url) {
  const client = new Client({ name: 'papo-test-files', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

function ok(result, what) {
  assert.notEqual(result.isError, true, `${what}: ${JSON.stringify(result).slice(0, 400)}`);
  return result;
}

function failed(result, re, what) {
  assert.equal(result.isError, true, `${what} is a tool error: ${JSON.stringify(result).slice(0, 400)}`);
  assert.match(result.content[0].text, re, what);
}

// Every message bo's agent gets within ms, by wait.
async function waitAll(client, ms = 1500) {
  const r = ok(await client.callTool({ name: 'wait', arguments: { timeout_s: ms / 1000 } }), 'wait');
  return r.structuredContent.messages;
}

describe('files through MCP (TypeScript SDK)', { timeout: 300_000 }, () => {
  let A, B, ana, bo, dir, notes, big, msg, txt, png, roomId;

  before(async () => {
    assert.ok(fs.existsSync(PAPO), `no papo binary at ${PAPO} (set PAPO)`);
    papo(path.join(root, 'A'), ['new', '--name', 'ana']);
    A = await serve('A');
    papo(path.join(root, 'B'), ['join', A.info.invite, '--name', 'bo']);
    B = await serve('B');
    dir = fs.mkdtempSync(path.join(root, 'files-'));
    notes = path.join(dir, 'notes.txt');
    fs.writeFileSync(notes, NOTES);
    big = path.join(dir, 'big.log');
    fs.writeFileSync(big, 'x'.repeat(300 * 1024));
    ana = await connect(A.info.mcp);
    bo = await connect(B.info.mcp);
    await until('ana and bo to see each other', async () => {
      const s = ok(await ana.callTool({ name: 'status', arguments: {} }), 'status').structuredContent;
      return s.members.some((m) => m.name === 'bo' && m.online);
    }, 30_000, 200);
    await waitAll(bo, 500);   // whatever came before
  });

  after(() => finish({
    close: async () => {
      for (const c of [ana, bo]) await c?.close().catch(() => {});
      for (const d of [A, B]) if (d) await stop(d).catch(() => {});
    },
  }));

  step('send and fetch are in tools/list, attachments documented', async () => {
    const { tools } = await ana.listTools();
    const send = tools.find((t) => t.name === 'send');
    const att = send.inputSchema.properties.attachments;
    assert.equal(att?.type, 'array', 'send takes attachments');
    assert.ok(att.items.properties.path && att.items.properties.data, 'path and data items');
    const fetch = tools.find((t) => t.name === 'fetch');
    assert.ok(fetch, 'a fetch tool');
    assert.deepEqual(fetch.inputSchema.required, ['ref']);
    for (const p of ['ref', 'path', 'overwrite', 'timeout_s', 'room'])
      assert.ok(fetch.inputSchema.properties[p], `fetch takes ${p}`);
  });

  step('mistakes are tool errors, and send nothing', async () => {
    failed(await ana.callTool({ name: 'send', arguments: { text: 'e1',
      attachments: [{ path: path.join(dir, 'nope.txt') }] } }), /no such file: .*nope\.txt/, 'a missing path');
    failed(await ana.callTool({ name: 'send', arguments: { text: 'e2',
      attachments: [{ path: notes }, { path: dir }] } }), /is a directory/, 'a directory');
    failed(await ana.callTool({ name: 'send', arguments: { text: 'e3',
      attachments: [{ name: 'x.bin', data: 'not base64 at all!' }] } }), /not base64/, 'bad base64');
    failed(await ana.callTool({ name: 'send', arguments: { text: 'e4',
      attachments: Array.from({ length: 17 }, () => ({ path: notes })) } }), /send: 17 attachments; at most 16 are allowed/, '17 attachments');
    failed(await ana.callTool({ name: 'send', arguments: { text: 'e5',
      attachments: [{ path: 'relative.txt' }] } }), /absolute path/, 'a relative path');
    failed(await ana.callTool({ name: 'send', arguments: { text: 'e6',
      attachments: [{ data: PNG.toString('base64') }] } }), /needs a name/, 'inline data without a name');
    failed(await ana.callTool({ name: 'send', arguments: { text: 'e7',
      attachments: [{ name: 'big.bin', data: Buffer.alloc((1 << 20) + 1).toString('base64') }] } }),
    /too big/, 'inline data over 1 MiB');
    failed(await ana.callTool({ name: 'send', arguments: { text: 'e8', attachments: 'x' } }),
      /attachments must be/, 'attachments not an array');
    // Nothing of them reached bo, nor ana's own history.
    const h = ok(await ana.callTool({ name: 'history', arguments: { limit: 50 } }), 'history').structuredContent;
    assert.deepEqual(h.messages.filter((m) => /^e\d$/.test(m.text)), [], 'no message of a failed send');
    const got = await waitAll(bo, 1000);
    assert.deepEqual(got.map((m) => m.text), [], 'bo got nothing');
  });

  step('ana sends a path and an inline PNG; bo\'s wait lists both files', async () => {
    const sent = ok(await ana.callTool({ name: 'send', arguments: { text: 'the log and a screenshot',
      attachments: [{ path: notes }, { name: 'shot.png', data: PNG.toString('base64') }] } }), 'send');
    assert.equal(typeof sent.structuredContent.id, 'string');
    const got = await until('bo\'s wait to return the message', async () =>
      (await waitAll(bo, 5000)).find((m) => m.text === 'the log and a screenshot'), 30_000, 0);
    msg = got;
    roomId = msg.room_id;
    assert.equal(msg.from, 'ana');
    assert.doesNotMatch(msg.text, /papo-file:|📎/, 'no trailer in the text');
    assert.equal(msg.files?.length, 2, `two files: ${JSON.stringify(msg)}`);
    [txt, png] = msg.files;
    assert.equal(txt.name, 'notes.txt');
    assert.equal(txt.size, Buffer.byteLength(NOTES));
    assert.match(txt.type, /^text\/plain/);
    assert.equal(png.name, 'shot.png');
    assert.equal(png.size, PNG.length);
    assert.equal(png.type, 'image/png');
    for (const f of [txt, png]) {
      assert.match(f.ref, /^[a-z2-7]{52}$/, `a reference: ${f.ref}`);
      assert.ok(['here', 'fetching', 'waiting', 'named'].includes(f.state), `a state: ${f.state}`);
      assert.equal(f.uri, `papo://rooms/${roomId}/files/${f.ref}`);
    }
  });

  step('fetch gives the text as text and the PNG as an image', async () => {
    need(txt && png);
    const t = ok(await bo.callTool({ name: 'fetch', arguments: { ref: txt.ref, timeout_s: 30 } }), 'fetch text');
    assert.equal(t.content[0].type, 'text');
    assert.equal(t.content[0].text, NOTES, 'the file\'s very text');
    const i = ok(await bo.callTool({ name: 'fetch', arguments: { ref: png.uri, timeout_s: 30 } }), 'fetch png');
    assert.equal(i.content[0].type, 'image');
    assert.equal(i.content[0].mimeType, 'image/png');
    assert.deepEqual(Buffer.from(i.content[0].data, 'base64'), PNG, 'the PNG\'s bytes');
  });

  step('fetch to a path writes the same bytes, and overwrites only when asked', async () => {
    need(png);
    const out = path.join(dir, 'got', 'shot.png');
    fs.mkdirSync(path.dirname(out));
    const r = ok(await bo.callTool({ name: 'fetch', arguments: { ref: png.ref, path: out } }), 'fetch to a path');
    assert.equal(r.structuredContent.path, out);
    assert.equal(r.structuredContent.size, PNG.length);
    assert.deepEqual(fs.readFileSync(out), PNG, 'identical bytes');
    assert.deepEqual(fs.readdirSync(path.dirname(out)), ['shot.png'], 'no .part left');
    fs.writeFileSync(out, 'mine');
    failed(await bo.callTool({ name: 'fetch', arguments: { ref: png.ref, path: out } }),
      /exists: give overwrite true/, 'an existing file');
    assert.equal(fs.readFileSync(out, 'utf8'), 'mine', 'left as it was');
    ok(await bo.callTool({ name: 'fetch', arguments: { ref: png.ref, path: out, overwrite: true } }), 'overwrite');
    assert.deepEqual(fs.readFileSync(out), PNG, 'replaced');
    failed(await bo.callTool({ name: 'fetch', arguments: { ref: png.ref, path: 'rel.png' } }),
      /absolute path/, 'a relative path');
  });

  step('a file over 256 KiB comes only to a path', async () => {
    // A message may be its file alone.
    ok(await ana.callTool({ name: 'send', arguments: { attachments: [{ path: big }] } }), 'send big');
    const m = await until('bo to get it', async () =>
      (await waitAll(bo, 5000)).find((x) => x.files?.[0]?.name === 'big.log'), 30_000, 0);
    assert.equal(m.text, '', 'no text');
    const f = m.files[0];
    assert.equal(f.size, 300 * 1024);
    failed(await bo.callTool({ name: 'fetch', arguments: { ref: f.ref, timeout_s: 30 } }),
      /more than the 262144 .*give path/, 'too big to return');
    const out = path.join(dir, 'big-copy.log');
    ok(await bo.callTool({ name: 'fetch', arguments: { ref: f.ref, path: out, timeout_s: 30 } }), 'to a path');
    assert.ok(fs.readFileSync(out).equals(fs.readFileSync(big)), 'identical bytes');
  });

  step('resources/read of a file\'s uri gives its content; resources/list lists it', async () => {
    need(txt);
    const r = await bo.readResource({ uri: txt.uri });
    assert.equal(r.contents[0].uri, txt.uri);
    assert.equal(r.contents[0].text, NOTES);
    const p = await bo.readResource({ uri: png.uri });
    assert.deepEqual(Buffer.from(p.contents[0].blob, 'base64'), PNG);
    const { resources } = await bo.listResources();
    const listed = resources.find((x) => x.uri === txt.uri);
    assert.ok(listed, `the file is listed: ${JSON.stringify(resources.map((x) => x.uri))}`);
    assert.equal(listed.name, 'notes.txt');
    await assert.rejects(bo.readResource({ uri: `papo://rooms/${roomId}/files/${'a'.repeat(52)}` }),
      /no such file/, 'a reference no message names');
  });

  step('with no member holding it, fetch answers with the state when its time runs out', async () => {
    const late = path.join(dir, 'late.bin');
    fs.writeFileSync(late, Buffer.alloc(300 * 1024, 7));
    ok(await ana.callTool({ name: 'send', arguments: { text: 'late', attachments: [{ path: late }] } }), 'send');
    const m = await until('bo to get it', async () =>
      (await waitAll(bo, 5000)).find((x) => x.text === 'late'), 30_000, 0);
    assert.equal(m.files[0].state, 'named', 'over PAPO_FILES_AUTO: named only');
    await ana.close();
    ana = null;
    await stop(A);
    A = null;
    const t0 = Date.now();
    const r = await bo.callTool({ name: 'fetch', arguments: { ref: m.files[0].ref, timeout_s: 2 } });
    const took = Date.now() - t0;
    failed(r, /is not here yet after 2 s: it is (waiting, no member online holds it|fetching)/, 'the state');
    assert.ok(took >= 1900 && took < 10_000, `waited its timeout: ${took} ms`);
    assert.equal(r.structuredContent?.ref, m.files[0].ref, `the state as structuredContent: ${JSON.stringify(r)}`);
    assert.equal(r.structuredContent.have, 0);
  });

  step('a reference that names nothing is a tool error', async () => {
    failed(await bo.callTool({ name: 'fetch', arguments: { ref: 'b'.repeat(52), timeout_s: 2 } }),
      /no such file/, 'an unknown ref');
    failed(await bo.callTool({ name: 'fetch', arguments: { ref: '../etc/passwd' } }),
      /ref must be a file's ref or uri/, 'not a reference');
  });
});
