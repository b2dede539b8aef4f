// cors.test.mjs: a browser-based MCP client as headless Chromium runs
// it.  A daemon started with PAPO_CORS_ORIGINS listing one origin (a
// page this test serves on another loopback port); the page calls /mcp
// with fetch: the preflight passes, initialize answers, and the page's
// script reads Mcp-Session-Id from the answer and uses it for
// tools/call.  The same page served from an origin not listed is
// refused: its fetch fails, and nothing reaches the room.
//
// Run: PAPO=path/to/papo node --test tests/clients/cors.test.mjs
// (after `npm ci --prefix tests/clients`; needs /usr/bin/chromium, or
// CHROMIUM=path).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { chromium } from 'playwright-core';
import { daemonSet } from './daemons.mjs';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const { serve, stop, finish } = daemonSet('papo-cors-');

// A loopback server of one empty page; its origin is http://127.0.0.1:PORT.
async function pageServer() {
  const srv = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><title>cors</title><p>client</p>');
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return { srv, origin: `http://127.0.0.1:${srv.address().port}` };
}

// What the page's script does: initialize, read the session id, call a
// tool with it.  Runs inside the page.
async function mcpFromPage(url) {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const init = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'cors-page', version: '1' } },
    }),
  });
  const session = init.headers.get('Mcp-Session-Id');
  const body = await init.json();
  const call = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'send', arguments: { text: 'from a web page' } } }),
  });
  return { status: init.status, session, server: body.result?.serverInfo?.name, callStatus: call.status, call: await call.json() };
}

describe('CORS for browser-based MCP clients', () => {
  let browser, allowed, other, daemon;

  before(async () => {
    allowed = await pageServer();
    other = await pageServer();
    daemon = await serve('ana', { member: 'ana', env: { PAPO_CORS_ORIGINS: `https://elsewhere.example ${allowed.origin}` } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
  });

  after(async () => {
    if (daemon) await stop(daemon);
    // finish: no daemon left, and the root (the daemon's home) removed.
    await finish({
      close: async () => {
        await browser?.close();
        allowed?.srv.close();
        other?.srv.close();
      },
    });
  });

  it('a page of a listed origin initializes, reads Mcp-Session-Id and calls a tool', async () => {
    const page = await browser.newPage();
    const preflights = [];
    page.on('request', (r) => { if (r.method() === 'OPTIONS') preflights.push(r.url()); });
    await page.goto(allowed.origin + '/');
    const got = await page.evaluate(mcpFromPage, daemon.info.mcp);
    assert.equal(got.status, 200, JSON.stringify(got));
    assert.equal(got.server, 'papo');
    assert.match(got.session ?? '', /^[\x21-\x7e]+$/, `the page read the session id: ${JSON.stringify(got)}`);
    assert.equal(got.callStatus, 200, JSON.stringify(got));
    assert.notEqual(got.call.result?.isError, true, JSON.stringify(got.call));
    const hist = await (await fetch(daemon.info.http + '/api/history')).json();
    assert.ok(hist.messages.some((m) => m.text === 'from a web page'), 'the page\'s message is in the room');
    await page.close();
  });

  it('the same page from an origin not listed is refused', async () => {
    const page = await browser.newPage();
    await page.goto(other.origin + '/');
    const err = await page.evaluate(async (url) => {
      try {
        await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
        return 'answered';
      } catch (e) {
        return String(e);
      }
    }, daemon.info.mcp);
    assert.match(err, /TypeError|Failed to fetch/, `the fetch fails: ${err}`);
    // What the daemon answers that origin, as curl would see it.
    const res = await fetch(daemon.info.mcp, { method: 'OPTIONS', headers: { Origin: other.origin, 'Access-Control-Request-Method': 'POST' } });
    assert.equal(res.status, 403);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    await page.close();
  });
});
