// oauth.test.mjs: papo's built-in OAuth 2.1 authorization server
// (PAPO_OAUTH=on) as remote MCP clients meet it, on plain HTTP over
// loopback (the development setting; HTTPS comes from the https branch).
// The official MCP TypeScript SDK's OAuth client provider goes the whole
// way: the 401 and its WWW-Authenticate, discovery (RFC 9728, RFC 8414),
// dynamic registration, the approval page (submitted by the test, as a
// person would), the code with PKCE, tokens/call; then its access token
// expires and it refreshes; an old refresh token used again revokes the
// grant.  Then by hand: a token or code for another resource, a Client
// ID Metadata Document served by the test on loopback, malformed
// registrations, oversized and lying documents, redirect URI mismatches,
// replayed codes, wrong verifiers, expired codes and tokens (each a clear
// OAuth error, nothing granted), `papo tokens` listing and revoking, and
// the start-up refusals.
//
// Run: PAPO=path/to/papo node --test tests/clients/oauth.test.mjs
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { chromium } from 'playwright-core';
import { cleanEnv, daemonSet, sleep, until, within } from './daemons.mjs';

const { bin: PAPO, root, serve, stop, killAll } = daemonSet('papo-oauth-');
const TOKEN = 'the-daemons-own-token-0123456789abc';
// The CLI as the person runs it, with the daemon's token.
const papo = (home, args) => execFileSync(PAPO, args, { env: { ...cleanEnv, PAPO_HOME: home, PAPO_TOKEN: TOKEN }, encoding: 'utf8', timeout: 30_000 });
const REDIRECT = 'http://127.0.0.1:1/callback'; // never fetched: the test reads Location
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

const b64url = (buf) => Buffer.from(buf).toString('base64url');
function pkce() {
  const verifier = b64url(crypto.randomBytes(32));
  return { verifier, challenge: b64url(crypto.createHash('sha256').update(verifier).digest()) };
}

// An OAuthClientProvider as a client application keeps one: in memory,
// with the authorization URL it was sent to kept for the test to open.
class Provider {
  constructor() {
    this.saved = {};
    this.authUrl = null;
  }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return { client_name: 'SDK test client', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  state() { return 'state-' + crypto.randomBytes(8).toString('hex'); }
  clientInformation() { return this.saved.client; }
  saveClientInformation(c) { this.saved.client = c; }
  tokens() { return this.saved.tokens; }
  saveTokens(t) { (this.saved.history ??= []).push(t); this.saved.tokens = t; }
  redirectToAuthorization(url) { this.authUrl = new URL(url); }
  saveCodeVerifier(v) { this.saved.verifier = v; }
  codeVerifier() { return this.saved.verifier; }
}

// Opens the approval page at url, checks it, and submits it with token
// and decision; returns { page, res } (res: the answer to the POST, not
// followed).
async function approve(base, url, { token = TOKEN, decision = 'approve' } = {}) {
  const page = await fetch(url, { redirect: 'manual' });
  const html = await page.text();
  assert.equal(page.status, 200, `the approval page opens: ${html.slice(0, 300)}`);
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
  assert.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/);
  assert.equal(page.headers.get('cache-control'), 'no-store');
  const request = html.match(/name="request" value="([^"]+)"/)?.[1];
  assert.ok(request, 'the page has its anti-CSRF request field');
  const res = await fetch(`${base}/authorize`, {
    method: 'POST', headers: FORM, redirect: 'manual',
    body: new URLSearchParams({ request, token, decision }),
  });
  return { html, request, res };
}

async function post(url, params) {
  const res = await fetch(url, { method: 'POST', headers: FORM, body: new URLSearchParams(params) });
  return { status: res.status, headers: res.headers, json: await res.json().catch(() => null) };
}
async function register(base, body) {
  const res = await fetch(`${base}/register`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json().catch(() => null) };
}
const status = (base, tok) => fetch(`${base}/api/status`, { headers: { authorization: `Bearer ${tok}` } }).then((r) => r.status);
const clientsIn = (home) => {
  try {
    return JSON.parse(fs.readFileSync(path.join(home, 'oauth.json'), 'utf8'));
  } catch {
    return { clients: [], grants: [] };
  }
};

// The code flow by hand for client (id, redirect): the code from the
// redirect after approval.
async function codeFor(d, clientId, { redirect = REDIRECT, resource, state = 's1', challenge, scope = 'papo' } = {}) {
  const base = d.info.http;
  const u = new URL(`${base}/authorize`);
  u.search = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: redirect,
    code_challenge: challenge, code_challenge_method: 'S256', state, scope,
    resource: resource ?? `${base}/mcp`,
  });
  const { res } = await approve(base, u);
  assert.equal(res.status, 302, 'approval redirects back to the client');
  const loc = new URL(res.headers.get('location'));
  assert.equal(`${loc.origin}${loc.pathname}`, redirect.replace(/\?.*/, ''));
  assert.equal(loc.searchParams.get('state'), state, 'state comes back');
  assert.equal(loc.searchParams.get('iss'), base, 'iss (RFC 9207) is the issuer');
  return loc.searchParams.get('code');
}

let A, B, doc;
describe('papo OAuth', { concurrency: false }, () => {
  before(async () => {
    // A: lifetimes shortened so that expiry is seen in seconds.
    A = await serve('a', { member: 'ana', token: TOKEN, env: { PAPO_OAUTH: 'on', PAPO_OAUTH_ACCESS_TTL: '5', PAPO_OAUTH_CODE_TTL: '4' } });
    // B: may fetch metadata documents from loopback (the test's server).
    // Over HTTPS the test serves them over HTTPS too, from its own CA.
    B = await serve('b', { member: 'bo', token: TOKEN, env: { PAPO_OAUTH: 'on', PAPO_OAUTH_CIMD_PRIVATE: '1', PAPO_OAUTH_CIMD_CA: process.env.NODE_EXTRA_CA_CERTS ?? '' } });
    doc = await docServer();
  });
  after(async () => {
    doc?.server.close();
    try {
      for (const d of [A, B]) if (d) await stop(d);
    } finally {
      await killAll();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('the SDK: 401, discovery, registration, approval, code, tools/call', async () => {
    const provider = new Provider();
    const seen = [];
    const rec = async (url, init = {}) => {
      const res = await fetch(url, init);
      seen.push({ url: String(url), method: init.method || 'GET', status: res.status, www: res.headers.get('www-authenticate') });
      return res;
    };
    const mcp = new URL(A.info.mcp);
    let transport = new StreamableHTTPClientTransport(mcp, { authProvider: provider, fetch: rec });
    let client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await assert.rejects(client.connect(transport), UnauthorizedError, 'with no token the SDK is sent to authorize');
    const first = seen.find((s) => s.status === 401);
    assert.ok(first, 'the first answer is 401');
    assert.equal(first.www, `Bearer resource_metadata="${A.info.http}/.well-known/oauth-protected-resource/mcp", scope="papo"`);
    assert.ok(seen.some((s) => s.url.endsWith('/.well-known/oauth-protected-resource/mcp') && s.status === 200), 'protected resource metadata fetched');
    assert.ok(seen.some((s) => s.url.endsWith('/.well-known/oauth-authorization-server') && s.status === 200), 'authorization server metadata fetched');
    assert.ok(seen.some((s) => s.url.endsWith('/register') && s.status === 201), 'registered dynamically');
    assert.match(provider.saved.client.client_id, /^c_/);

    const auth = provider.authUrl;
    assert.ok(auth, 'redirected to authorize');
    assert.equal(auth.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(auth.searchParams.get('resource'), `${A.info.http}/mcp`);
    const { html, res } = await approve(A.info.http, auth);
    assert.match(html, /SDK test client/, 'the page names the client');
    assert.match(html, /id="redirect-host">127\.0\.0\.1:1</, 'and where the browser goes back to');
    assert.equal(res.status, 302);
    const loc = new URL(res.headers.get('location'));
    assert.equal(loc.searchParams.get('iss'), A.info.http);
    assert.equal(loc.searchParams.get('state'), auth.searchParams.get('state'));
    await transport.finishAuth(loc.searchParams.get('code'));
    assert.ok(provider.tokens().access_token && provider.tokens().refresh_token);
    assert.equal(provider.tokens().token_type, 'Bearer');

    transport = new StreamableHTTPClientTransport(mcp, { authProvider: provider, fetch: rec });
    client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(transport);
    const st = await client.callTool({ name: 'status', arguments: {} });
    assert.notEqual(st.isError, true, JSON.stringify(st));
    assert.equal(st.structuredContent.me.name, 'ana', 'status through an OAuth token');
    const sent = await client.callTool({ name: 'send', arguments: { text: 'hello by oauth' } });
    assert.notEqual(sent.isError, true, JSON.stringify(sent));
    assert.match(papo(A.home, ['history']), /hello by oauth/, 'the message is in the room');
    // The grant is listed for the person.
    const list = papo(A.home, ['tokens']);
    assert.match(list, /SDK test client/);
    assert.match(list, /created .*last used .*expires /);
    // Tokens are stored as hashes only.
    const file = fs.readFileSync(path.join(A.home, 'oauth.json'), 'utf8');
    assert.equal(fs.statSync(path.join(A.home, 'oauth.json')).mode & 0o777, 0o600);
    assert.ok(!file.includes(provider.tokens().access_token) && !file.includes(provider.tokens().refresh_token), 'no token in oauth.json');

    // Refresh: the access token expires (5 s here); the SDK's next call
    // gets 401, refreshes, and goes on with rotated tokens.
    const old = provider.tokens();
    await until('the access token to expire', async () => (await status(A.info.http, old.access_token)) === 401, 15_000, 250);
    const st2 = await client.callTool({ name: 'status', arguments: {} });
    assert.notEqual(st2.isError, true, JSON.stringify(st2));
    const now = provider.tokens();
    assert.notEqual(now.refresh_token, old.refresh_token, 'the refresh token rotated');
    assert.notEqual(now.access_token, old.access_token);
    assert.equal(await status(A.info.http, now.access_token), 200);

    // The old refresh token used again: refused, and the grant is gone.
    const again = await post(`${A.info.http}/token`, { grant_type: 'refresh_token', refresh_token: old.refresh_token, client_id: provider.saved.client.client_id });
    assert.equal(again.status, 400);
    assert.equal(again.json.error, 'invalid_grant');
    assert.match(again.json.error_description, /used already.*revoked/);
    assert.equal(await status(A.info.http, now.access_token), 401, 'the current access token is revoked with the chain');
    const cur = await post(`${A.info.http}/token`, { grant_type: 'refresh_token', refresh_token: now.refresh_token, client_id: provider.saved.client.client_id });
    assert.equal(cur.json.error, 'invalid_grant', 'and so is the current refresh token');
    assert.doesNotMatch(papo(A.home, ['tokens']), /SDK test client/);
    await transport.close();
  });

  it('a token or a code for another resource is refused', async () => {
    const base = A.info.http;
    const reg = await register(base, { client_name: 'other-resource', redirect_uris: [REDIRECT] });
    assert.equal(reg.status, 201);
    const id = reg.json.client_id;
    // At /authorize: invalid_target, on papo's page while no one has
    // approved this client (no redirect to an unvetted URI).
    const p = pkce();
    const u = new URL(`${base}/authorize`);
    u.search = new URLSearchParams({ response_type: 'code', client_id: id, redirect_uri: REDIRECT, code_challenge: p.challenge, code_challenge_method: 'S256', state: 'x', resource: 'https://elsewhere.example/mcp' });
    let r = await fetch(u, { redirect: 'manual' });
    assert.equal(r.status, 400);
    assert.equal(r.headers.get('location'), null);
    assert.match(await r.text(), /invalid_target/);
    // At /token: a good code, exchanged for another resource, gives
    // nothing.
    const code = await codeFor(A, id, { challenge: p.challenge });
    const t = await post(`${base}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: p.verifier, client_id: id, resource: 'https://elsewhere.example/mcp' });
    assert.equal(t.status, 400);
    assert.equal(t.json.error, 'invalid_target');
    assert.ok(!('access_token' in t.json));
    assert.equal(t.headers.get('cache-control'), 'no-store');
    assert.equal(clientsIn(A.home).grants.filter((g) => g.client_id === id).length, 0, 'no grant');
    // The code was not used up by the refused request: it still works
    // once for papo's own resource.
    const ok = await post(`${base}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: p.verifier, client_id: id, resource: `${base}/mcp` });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.equal(await status(base, ok.json.access_token), 200);
    // Approved once: now back to the client with invalid_target.
    r = await fetch(u, { redirect: 'manual' });
    assert.equal(r.status, 302);
    const loc = new URL(r.headers.get('location'));
    assert.equal(loc.searchParams.get('error'), 'invalid_target');
    assert.equal(loc.searchParams.get('state'), 'x');
    // A made-up bearer token, even of the right shape, is nobody's.
    assert.equal(await status(base, b64url(crypto.randomBytes(32))), 401);
  });

  it('codes: replayed, wrong verifier, wrong redirect, expired; tokens expire', async () => {
    const base = A.info.http;
    // Loopback hosts as lib/addr tells them: [::1] too (refused before
    // issue 38, the host cut at its first ':'), and all of 127.0.0.0/8.
    const loopbacks = ['http://localhost:2/cb', 'http://[::1]:3/cb', 'http://127.0.0.2:4/cb', 'http://LOCALHOST/cb'];
    const reg = await register(base, { client_name: 'codes', redirect_uris: [REDIRECT, ...loopbacks] });
    assert.equal(reg.status, 201, JSON.stringify(reg.json));
    const id = reg.json.client_id;
    const grants = () => clientsIn(A.home).grants.filter((g) => g.client_id === id).length;

    // A wrong verifier: invalid_grant, and the code is used up.
    let p = pkce();
    let code = await codeFor(A, id, { challenge: p.challenge });
    let t = await post(`${base}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: pkce().verifier, client_id: id });
    assert.equal(t.json.error, 'invalid_grant');
    assert.match(t.json.error_description, /code_verifier/);
    t = await post(`${base}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: p.verifier, client_id: id });
    assert.equal(t.json.error, 'invalid_grant', 'a code has one try');
    assert.equal(grants(), 0);

    // Another redirect URI than the code went to.
    p = pkce();
    code = await codeFor(A, id, { challenge: p.challenge });
    t = await post(`${base}/token`, { grant_type: 'authorization_code', code, redirect_uri: 'http://localhost:2/cb', code_verifier: p.verifier, client_id: id });
    assert.equal(t.json.error, 'invalid_grant');
    assert.match(t.json.error_description, /redirect_uri/);

    // Replayed: the second use fails and takes back what the first gave.
    p = pkce();
    code = await codeFor(A, id, { challenge: p.challenge });
    const good = await post(`${base}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: p.verifier, client_id: id });
    assert.equal(good.status, 200);
    assert.equal(grants(), 1);
    t = await post(`${base}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: p.verifier, client_id: id });
    assert.equal(t.json.error, 'invalid_grant');
    assert.match(t.json.error_description, /used already/);
    assert.equal(await status(base, good.json.access_token), 401, 'the replay revoked the first exchange');
    assert.equal(grants(), 0);

    // Expired: codes live 4 s on A.
    p = pkce();
    code = await codeFor(A, id, { challenge: p.challenge });
    await sleep(5000);
    t = await post(`${base}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: p.verifier, client_id: id });
    assert.equal(t.json.error, 'invalid_grant');
    assert.match(t.json.error_description, /expired/);
    assert.equal(grants(), 0);

    // An access token expires (5 s on A), its refresh token still works.
    // Scopes papo does not have are ignored, and the answer says so.
    p = pkce();
    code = await codeFor(A, id, { challenge: p.challenge, scope: 'papo openid offline_access' });
    const g = await post(`${base}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: p.verifier, client_id: id });
    assert.equal(g.json.expires_in, 5);
    assert.equal(g.json.scope, 'papo', 'granted: papo only');
    assert.equal(await status(base, g.json.access_token), 200);
    await until('the access token to expire', async () => (await status(base, g.json.access_token)) === 401, 15_000, 250);
    const r = await post(`${base}/token`, { grant_type: 'refresh_token', refresh_token: g.json.refresh_token, client_id: 'c_someone_else' });
    assert.equal(r.json.error, 'invalid_grant', 'another client cannot use the refresh token');
    const r2 = await post(`${base}/token`, { grant_type: 'refresh_token', refresh_token: g.json.refresh_token, client_id: id });
    assert.equal(r2.status, 200);
    assert.equal(await status(base, r2.json.access_token), 200);
  });

  it('/authorize refuses what cannot be trusted, and the page guards itself', async () => {
    const base = A.info.http;
    const id = (await register(base, { client_name: 'pages', redirect_uris: [REDIRECT] })).json.client_id;
    const p = pkce();
    const q = (o) => { const u = new URL(`${base}/authorize`); u.search = new URLSearchParams(o); return u; };
    const full = { response_type: 'code', client_id: id, redirect_uri: REDIRECT, code_challenge: p.challenge, code_challenge_method: 'S256', state: 'z' };
    // Unknown client, unregistered redirect: an error page, no redirect.
    for (const [o, re] of [
      [{ ...full, client_id: 'c_nobody' }, /not registered/],
      [{ ...full, redirect_uri: 'http://127.0.0.1:1/other' }, /not one the client .* registered/],
      [{ ...full, redirect_uri: 'https://attacker.example/cb' }, /not one the client .* registered/],
    ]) {
      const r = await fetch(q(o), { redirect: 'manual' });
      assert.equal(r.status, 400);
      assert.equal(r.headers.get('location'), null, 'no redirect to an unverified URI');
      assert.match(await r.text(), re);
    }
    // Errors the client can be told: on papo's own page while no one has
    // approved this client with this redirect URI (anyone may register
    // any URI: no open redirector); once a grant holds, back to it with
    // error and state (RFC 6749 4.1.2.1).
    const errors = [
      [{ ...full, code_challenge_method: 'plain' }, 'invalid_request'],
      [{ ...full, code_challenge: undefined }, 'invalid_request'],
      [{ ...full, response_type: 'token' }, 'unsupported_response_type'],
      [{ ...full, scope: 'papo  "x"' }, 'invalid_scope'],
    ];
    for (const [o] of errors) for (const k in o) if (o[k] === undefined) delete o[k];
    for (const [o, err] of errors) {
      const r = await fetch(q(o), { redirect: 'manual' });
      assert.equal(r.status, 400, JSON.stringify(o));
      assert.equal(r.headers.get('location'), null, 'never approved: no redirect');
      const text = await r.text();
      assert.match(text, new RegExp(`not valid \\(${err}:`), JSON.stringify(o));
      assert.match(text, /no one has approved this client/);
    }
    const once = pkce();
    const code = await codeFor(A, id, { challenge: once.challenge });
    const g = await post(`${base}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: once.verifier, client_id: id });
    assert.equal(g.status, 200, JSON.stringify(g.json));
    for (const [o, err] of errors) {
      const r = await fetch(q(o), { redirect: 'manual' });
      assert.equal(r.status, 302);
      const loc = new URL(r.headers.get('location'));
      assert.equal(loc.searchParams.get('error'), err, JSON.stringify(o));
      assert.equal(loc.searchParams.get('state'), 'z');
      assert.equal(loc.searchParams.get('iss'), base);
    }
    // A wrong token: the page again with the reason; five: void.
    let { request, res } = await approve(base, q(full), { token: 'wrong' });
    assert.equal(res.status, 403);
    assert.match(await res.text(), /not this daemon&#39;s token/);
    for (let i = 0; i < 4; i++)
      res = await fetch(`${base}/authorize`, { method: 'POST', headers: FORM, redirect: 'manual', body: new URLSearchParams({ request, token: 'wrong', decision: 'approve' }) });
    assert.match(await res.text(), /Too many wrong tokens/);
    res = await fetch(`${base}/authorize`, { method: 'POST', headers: FORM, redirect: 'manual', body: new URLSearchParams({ request, token: TOKEN, decision: 'approve' }) });
    assert.equal(res.status, 400, 'the voided request cannot be approved any more');
    // A forged request id (another site posting the form): refused.
    res = await fetch(`${base}/authorize`, { method: 'POST', headers: FORM, redirect: 'manual', body: new URLSearchParams({ request: b64url(crypto.randomBytes(32)), token: TOKEN, decision: 'approve' }) });
    assert.equal(res.status, 400);
    assert.match(await res.text(), /unknown or has expired/);
    // Posted from another origin: the Origin guard stops it first.
    res = await fetch(`${base}/authorize`, { method: 'POST', headers: { ...FORM, origin: 'https://evil.example' }, redirect: 'manual', body: new URLSearchParams({ request, token: TOKEN, decision: 'approve' }) });
    assert.equal(res.status, 403);
    // Deny: back to the client with access_denied.
    ({ res } = await approve(base, q(full), { decision: 'deny' }));
    assert.equal(res.status, 302);
    assert.equal(new URL(res.headers.get('location')).searchParams.get('error'), 'access_denied');
  });

  it('bad /token and /register requests: each a clear OAuth error, nothing kept', async () => {
    const base = A.info.http;
    const before = clientsIn(A.home).clients.length;
    const cases = [
      ['not JSON', '{"redirect_uris":', 'invalid_client_metadata'],
      ['an array', '[]', 'invalid_client_metadata'],
      ['no redirect_uris', { client_name: 'x' }, 'invalid_redirect_uri'],
      ['empty redirect_uris', { redirect_uris: [] }, 'invalid_redirect_uri'],
      ['plain http off loopback', { redirect_uris: ['http://example.com/cb'] }, 'invalid_redirect_uri'],
      ...['localhost.', 'localhost.example.com', '127.0.0.1x', '128.0.0.1', '[::2]', '[::1', 'localhost:x', 'user@localhost'].map((h) =>
        [`http to ${h}`, { redirect_uris: [`http://${h}/cb`] }, 'invalid_redirect_uri']),
      ['a javascript: URI', { redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
      ['a fragment', { redirect_uris: ['https://ok.example/cb#frag'] }, 'invalid_redirect_uri'],
      ['a number', { redirect_uris: [42] }, 'invalid_redirect_uri'],
      ['nine URIs', { redirect_uris: Array.from({ length: 9 }, (_, i) => `https://ok.example/${i}`) }, 'invalid_redirect_uri'],
      ['a confidential client', { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
      ['the password grant', { redirect_uris: [REDIRECT], grant_types: ['password'] }, 'invalid_client_metadata'],
      ['a name too long', { redirect_uris: [REDIRECT], client_name: 'n'.repeat(200) }, 'invalid_client_metadata'],
      ['a malformed scope', { redirect_uris: [REDIRECT], scope: ' papo' }, 'invalid_client_metadata'],
    ];
    for (const [what, body, err] of cases) {
      const r = await register(base, body);
      assert.equal(r.status, 400, what);
      assert.equal(r.json.error, err, what);
      assert.ok(r.json.error_description, what);
    }
    assert.equal(clientsIn(A.home).clients.length, before, 'no client registered');
    // /token.
    for (const [what, params, err] of [
      ['no grant_type', {}, 'invalid_request'],
      ['client credentials', { grant_type: 'client_credentials' }, 'unsupported_grant_type'],
      ['no code', { grant_type: 'authorization_code', client_id: 'c_x', code_verifier: pkce().verifier }, 'invalid_request'],
      ['an unknown code', { grant_type: 'authorization_code', code: 'nope', client_id: 'c_x', code_verifier: pkce().verifier, redirect_uri: REDIRECT }, 'invalid_grant'],
      ['an unknown refresh token', { grant_type: 'refresh_token', refresh_token: 'nope', client_id: 'c_x' }, 'invalid_grant'],
      ['a malformed scope', { grant_type: 'refresh_token', refresh_token: 'nope', client_id: 'c_x', scope: 'papo\\x' }, 'invalid_scope'],
    ]) {
      const r = await post(`${base}/token`, params);
      assert.equal(r.status, 400, what);
      assert.equal(r.json.error, err, what);
      assert.equal(r.headers.get('cache-control'), 'no-store');
    }
    const dup = await fetch(`${base}/token`, { method: 'POST', headers: FORM, body: 'grant_type=refresh_token&grant_type=authorization_code' });
    assert.equal((await dup.json()).error, 'invalid_request', 'a parameter given twice');
    const enc = await fetch(`${base}/token`, { method: 'POST', headers: FORM, body: 'grant_type=authorization%zz_code' });
    assert.equal((await enc.json()).error, 'invalid_request', 'a broken percent-escape');
    const nul = await fetch(`${base}/token`, { method: 'POST', headers: FORM, body: 'grant_type=refresh_token&refresh_token=a%00b&client_id=c_x' });
    assert.equal((await nul.json()).error, 'invalid_request', 'a NUL in a value');
    const json = await fetch(`${base}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(json.status, 415, '/token takes forms');
  });

  it('a Client ID Metadata Document served on loopback', async () => {
    const base = B.info.http;
    const url = `${doc.url}/client.json`;
    if (process.env.PAPO_TLS_CERT) assert.match(url, /^https:/, 'over HTTPS the document is served over HTTPS');
    const p = pkce();
    const code = await codeFor(B, url, { challenge: p.challenge, redirect: 'http://127.0.0.1:1/cimd-cb' });
    assert.equal(doc.hits['/client.json'], 1, 'the document was fetched once');
    const t = await post(`${base}/token`, { grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:1/cimd-cb', code_verifier: p.verifier, client_id: url, resource: `${base}/mcp` });
    assert.equal(t.status, 200, JSON.stringify(t.json));
    assert.equal(await status(base, t.json.access_token), 200);
    assert.match(papo(B.home, ['tokens']), /CIMD test client/);
    // Cached: a second authorization does not fetch it again.
    await codeFor(B, url, { challenge: pkce().challenge, redirect: 'http://127.0.0.1:1/cimd-cb' });
    assert.equal(doc.hits['/client.json'], 1, 'cached');

    const page = async (d, id, redirect = 'http://127.0.0.1:1/cimd-cb') => {
      const u = new URL(`${d.info.http}/authorize`);
      u.search = new URLSearchParams({ response_type: 'code', client_id: id, redirect_uri: redirect, code_challenge: pkce().challenge, code_challenge_method: 'S256' });
      const r = await fetch(u, { redirect: 'manual' });
      return { status: r.status, location: r.headers.get('location'), text: await r.text() };
    };
    for (const [what, pathName, re] of [
      ['an oversized document', '/big.json', /larger than 5120 bytes/],
      ['a document naming another client_id', '/liar.json', /client_id is not the URL/],
      ['a confidential client', '/secret.json', /public clients only/],
      ['not JSON', '/junk.json', /not a JSON object/],
      ['a 404', '/missing.json', /answered HTTP 404/],
      ['a redirect', '/moved.json', /answered HTTP 302/],
    ]) {
      const r = await page(B, `${doc.url}${pathName}`);
      assert.equal(r.status, 400, what);
      assert.equal(r.location, null, what);
      assert.match(r.text, re, what);
    }
    // A redirect URI the document does not list.
    const r = await page(B, url, 'http://127.0.0.1:1/not-listed');
    assert.equal(r.status, 400);
    assert.match(r.text, /not one the client/);
    // Without the test setting, loopback is never fetched, nor plain
    // http taken for a document's URL.
    const before = doc.hits['/client.json'];
    const ra = await page(A, url.replace(/^http:/, 'https:'));
    assert.equal(ra.status, 400);
    assert.match(ra.text, /private, loopback or link-local/);
    const rb = await page(A, url.replace(/^https:/, 'http:'));
    assert.match(rb.text, /not registered/, 'an http client id is no document');
    assert.equal(doc.hits['/client.json'], before, 'nothing fetched');
  });

  it('papo tokens lists and revokes; only the daemon token may', async () => {
    const base = B.info.http;
    const id = (await register(base, { client_name: 'to revoke', redirect_uris: [REDIRECT] })).json.client_id;
    const p = pkce();
    const code = await codeFor(B, id, { challenge: p.challenge });
    const t = await post(`${base}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: p.verifier, client_id: id });
    const listed = JSON.parse(papo(B.home, ['tokens', '--json']));
    const g = listed.grants.find((x) => x.client_id === id);
    assert.ok(g, 'listed');
    assert.equal(g.client_name, 'to revoke');
    assert.ok(g.expires - g.created >= 29 * 24 * 3600, 'refresh lives 30 days');
    // An OAuth client cannot see or revoke grants.
    const r = await fetch(`${base}/api/tokens`, { headers: { authorization: `Bearer ${t.json.access_token}` } });
    assert.equal(r.status, 403);
    assert.match(papo(B.home, ['tokens', 'revoke', g.id]), new RegExp(`revoked ${g.id}`));
    assert.equal(await status(base, t.json.access_token), 401, 'its access token stops at once');
    const rr = await post(`${base}/token`, { grant_type: 'refresh_token', refresh_token: t.json.refresh_token, client_id: id });
    assert.equal(rr.json.error, 'invalid_grant', 'and its refresh token');
    const bad = spawnSync(PAPO, ['tokens', 'revoke', 'nosuchgrant'], { env: { ...cleanEnv, PAPO_HOME: B.home, PAPO_TOKEN: TOKEN }, encoding: 'utf8' });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /there is no grant nosuchgrant/);
  });

  it('streams end with their grant: revoked, or the token expired', async () => {
    // D grants tokens that live an hour; eve, in D's room, writes to it.
    const D = await serve('d', { member: 'dan', token: TOKEN, env: { PAPO_OAUTH: 'on' } });
    papo(path.join(root, 'e'), ['join', D.info.invite, '--name', 'eve']);
    const E = await serve('e', { token: TOKEN });
    try {
      const t = await tokenOf(D, 'streams');
      const ev = openStream(`${D.info.http}/api/events`, { authorization: `Bearer ${t.access_token}` });
      const mcp = await mcpStream(D.info.http, t.access_token);
      await until('both streams to open', async () => ev.status === 200 && mcp.stream.status === 200);
      papo(E.home, ['say', 'before the revocation']);
      await until('the message on both streams', async () =>
        ev.text.includes('before the revocation') && mcp.stream.text.includes('before the revocation'));
      const id = JSON.parse(papo(D.home, ['tokens', '--json'])).grants.find((g) => g.client_name === 'streams').id;
      papo(D.home, ['tokens', 'revoke', id]);
      await within(Promise.all([ev.done, mcp.stream.done]), 10_000, 'the streams to end at the revocation');
      for (const s of [ev, mcp.stream]) {
        assert.equal(s.error, undefined, `the stream ended, not cut: ${s.error}`);
        assert.match(s.text, /revoked/, 'and said why');
      }
      papo(E.home, ['say', 'after the revocation']);
      const check = openStream(`${D.info.http}/api/events`, { authorization: `Bearer ${TOKEN}` });
      await until('the next message to be sent', async () => check.text.includes('after the revocation'));
      check.ac.abort();
      assert.doesNotMatch(ev.text + mcp.stream.text, /after the revocation/);
      assert.equal(await status(D.info.http, t.access_token), 401, 'a new request gets 401');

      // Expiry: A's tokens live 5 s; both streams end then, by a timer.
      const x = await tokenOf(A, 'expiring');
      const born = Date.now();
      const ev2 = openStream(`${A.info.http}/api/events`, { authorization: `Bearer ${x.access_token}` });
      const mcp2 = await mcpStream(A.info.http, x.access_token);
      await within(Promise.all([ev2.done, mcp2.stream.done]), 20_000, 'the streams to end when the token expires');
      assert.ok(Date.now() - born >= 3_000, 'not before the token expired');
      for (const s of [ev2, mcp2.stream]) {
        assert.equal(s.status, 200);
        assert.equal(s.error, undefined, `the stream ended, not cut: ${s.error}`);
        assert.match(s.text, /expired/, 'and said why');
      }
      papo(A.home, ['say', 'after the expiry']);
      await sleep(500);
      assert.doesNotMatch(ev2.text + mcp2.stream.text, /after the expiry/);
      assert.equal(await status(A.info.http, x.access_token), 401);
      // The static token is no grant: its stream stays.
      const mine = openStream(`${A.info.http}/api/events`, { authorization: `Bearer ${TOKEN}` });
      await until('the static token\'s stream to open', async () => mine.status === 200);
      await sleep(1000);
      assert.equal(mine.ended, false);
      mine.ac.abort();
    } finally {
      await stop(E);
      await stop(D);
    }
  });

  it('mcp-remote as a stdio proxy, approved without a browser', async () => {
    const base = B.info.http;
    const proxy = path.join(path.dirname(new URL(import.meta.url).pathname), 'node_modules', 'mcp-remote', 'dist', 'proxy.js');
    const cfg = fs.mkdtempSync(path.join(root, 'mcp-auth-'));
    const port = await new Promise((r) => { const s = http.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => r(p)); }); });
    // BROWSER=true: xdg-open "opens" the page with true(1); the test is
    // the person.
    const child = spawn(process.execPath, [proxy, B.info.mcp, String(port)], {
      env: { ...cleanEnv, MCP_REMOTE_CONFIG_DIR: cfg, BROWSER: 'true', DISPLAY: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const lines = readline.createInterface({ input: child.stdout });
    const answers = new Map();
    lines.on('line', (l) => { try { const m = JSON.parse(l); if (m.id !== undefined) answers.set(m.id, m); } catch {} });
    const ask = async (id, method, params) => {
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
      return until(`mcp-remote's answer to ${method}`, () => answers.get(id), 30_000, 100);
    };
    try {
      const url = await until('mcp-remote to ask for authorization', () => err.match(/Please authorize this client by visiting:\s+(\S+)/)?.[1], 30_000, 100);
      const { html, res } = await approve(base, url);
      assert.match(html, /MCP CLI|mcp-remote|Client/i);
      assert.equal(res.status, 302);
      const cb = res.headers.get('location');
      assert.match(cb, new RegExp(`^http://localhost:${port}/oauth/callback\\?code=`));
      // mcp-remote prints the URL before its callback server listens:
      // a refused connection delivered nothing, so it is tried again.
      assert.equal(await until('mcp-remote\'s callback server', async () => (await fetch(cb)).status, 30_000, 200), 200, 'mcp-remote took the code');
      const init = await ask(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stdio-test', version: '1' } });
      assert.equal(init.result?.serverInfo?.name, 'papo', JSON.stringify(init));
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
      const st = await ask(2, 'tools/call', { name: 'status', arguments: {} });
      assert.equal(st.result?.structuredContent?.me?.name, 'bo', JSON.stringify(st).slice(0, 300));
      assert.match(papo(B.home, ['tokens']), /mcp-remote|MCP CLI/i, 'its grant is listed');
    } catch (e) {
      e.message += `\nmcp-remote's stderr:\n${err.slice(-2000)}`;
      throw e;
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('approved on the dashboard of a loopback session, then Continue', async () => {
    const base = B.info.http;
    const id = (await register(base, { client_name: 'Dashboard-approved app', redirect_uris: [REDIRECT] })).json.client_id;
    const p = pkce();
    const u = new URL(`${base}/authorize`);
    u.search = new URLSearchParams({ response_type: 'code', client_id: id, redirect_uri: REDIRECT, code_challenge: p.challenge, code_challenge_method: 'S256', state: 'dash' });
    const html = await (await fetch(u)).text();
    assert.match(html, /value="continue"/, 'the page offers Continue');
    const request = html.match(/name="request" value="([^"]+)"/)[1];
    const cont = () => fetch(`${base}/authorize`, { method: 'POST', headers: FORM, redirect: 'manual', body: new URLSearchParams({ request, decision: 'continue' }) });
    let r = await cont();
    assert.equal(r.status, 409, 'not approved yet');
    assert.match(await r.text(), /not approved on the dashboard yet/);
    // Only the person at this machine, with PAPO_TOKEN, may decide.
    const decide = (headers) => fetch(`${base}/api/oauth/decide`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers }, body: JSON.stringify({ request, decision: 'approve' }) });
    assert.equal((await decide({ 'x-forwarded-for': '203.0.113.9' })).status, 403, 'not through a tunnel');
    assert.equal((await cont()).status, 409, 'still not approved');

    // The dashboard, in Chromium, shows the request and approves it.
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox', ...chromiumTrust()], headless: true });
    try {
      const ctx = await browser.newContext();
      await ctx.addInitScript((t) => localStorage.setItem('papo.token', t), TOKEN);
      const page = await ctx.newPage();
      const problems = [];
      page.on('pageerror', (e) => problems.push(String(e)));
      page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) problems.push(m.text()); });
      await page.goto(`${base}/`);
      const item = page.locator('#approvals .approval', { hasText: 'Dashboard-approved app' });
      await item.waitFor({ timeout: 20_000 });
      assert.match(await item.textContent(), /goes back to 127\.0\.0\.1:1/);
      await item.locator('button.approval-approve').click();
      await page.locator('#approvals .approval-done', { hasText: 'press Continue' }).waitFor({ timeout: 20_000 });
      assert.deepEqual(problems, [], 'no script or CSP errors');
    } finally {
      await browser.close();
    }
    r = await cont();
    assert.equal(r.status, 302, 'Continue goes back to the client');
    const loc = new URL(r.headers.get('location'));
    assert.equal(loc.searchParams.get('state'), 'dash');
    assert.equal(loc.searchParams.get('iss'), base);
    const t = await post(`${base}/token`, { grant_type: 'authorization_code', code: loc.searchParams.get('code'), redirect_uri: REDIRECT, code_verifier: p.verifier, client_id: id });
    assert.equal(t.status, 200, JSON.stringify(t.json));
    assert.equal(await status(base, t.json.access_token), 200);
    // An OAuth client cannot approve others on the dashboard's API.
    const pending = await fetch(`${base}/api/oauth/pending`, { headers: { authorization: `Bearer ${t.json.access_token}` } });
    assert.equal(pending.status, 403);
    assert.equal((await cont()).status, 400, 'the request was used up');
  });

  it('registration is rate-limited', async () => {
    let last;
    for (let i = 0; i < 25; i++) {
      last = await register(B.info.http, { client_name: `n${i}`, redirect_uris: [REDIRECT] });
      if (last.status === 429) break;
    }
    assert.equal(last.status, 429);
    assert.equal(last.json.error, 'temporarily_unavailable');
  });

  it('start-up refusals, and OAuth off advertises nothing', async () => {
    const run = (env, args = []) => spawnSync(PAPO, ['serve', '--listen', '127.0.0.1:0', ...args], { env: { ...cleanEnv, PAPO_HOME: path.join(root, 'refused'), ...env }, encoding: 'utf8', timeout: 20_000 });
    let r = run({ PAPO_OAUTH: 'on' }, ['--http', '127.0.0.1:0']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /PAPO_OAUTH=on needs a token/);
    r = run({ PAPO_OAUTH: 'on', PAPO_TOKEN: TOKEN }, ['--http', '0.0.0.0:0']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /only over HTTPS, or on loopback/);
    r = run({ PAPO_OAUTH: 'on', PAPO_TOKEN: TOKEN, PAPO_PUBLIC_URL: 'http://papo.example' }, ['--http', '127.0.0.1:0']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /PAPO_PUBLIC_URL must be https/);
    r = run({ PAPO_OAUTH: 'maybe' }, ['--http', '127.0.0.1:0']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /PAPO_OAUTH must be on or off/);

    const off = await serve('off', { token: TOKEN });
    const m = await fetch(off.info.mcp, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(m.status, 401);
    assert.equal(m.headers.get('www-authenticate'), 'Bearer realm="papo"', 'no resource_metadata when off');
    for (const p of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-authorization-server', '/authorize'])
      assert.equal((await fetch(`${off.info.http}${p}`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 404, p);
    assert.match(papo(off.home, ['tokens']), /OAuth is off/);
    await stop(off);
  });

  it('grants outlive a restart; the static token still works', async () => {
    const id = (await register(A.info.http, { client_name: 'restart', redirect_uris: [REDIRECT] })).json.client_id;
    const p = pkce();
    const code = await codeFor(A, id, { challenge: p.challenge });
    const t = await post(`${A.info.http}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: p.verifier, client_id: id });
    assert.equal(t.status, 200);
    const port = new URL(A.info.http).port;
    await stop(A);
    A = await serve('a', { member: 'ana', token: TOKEN, http: `127.0.0.1:${port}`, env: { PAPO_OAUTH: 'on' } });
    const r = await post(`${A.info.http}/token`, { grant_type: 'refresh_token', refresh_token: t.json.refresh_token, client_id: id });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(await status(A.info.http, r.json.access_token), 200);
    assert.equal(await status(A.info.http, TOKEN), 200, 'PAPO_TOKEN as before');
  });
});

// A grant for a new client named name on d, by the code flow: its
// token answer.
async function tokenOf(d, name) {
  const base = d.info.http;
  const id = (await register(base, { client_name: name, redirect_uris: [REDIRECT] })).json.client_id;
  const p = pkce();
  const code = await codeFor(d, id, { challenge: p.challenge });
  const t = await post(`${base}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: p.verifier, client_id: id });
  assert.equal(t.status, 200, JSON.stringify(t.json));
  return t.json;
}

// Reads a streamed answer as it comes: status, text so far, ended, and
// error when it was cut rather than ended; done settles at its end.
function openStream(url, headers) {
  const ac = new AbortController();
  const s = { text: '', ended: false, ac };
  s.done = fetch(url, { headers, signal: ac.signal }).then(async (res) => {
    s.status = res.status;
    const dec = new TextDecoder();
    for await (const chunk of res.body) s.text += dec.decode(chunk, { stream: true });
  }).catch((e) => {
    if (e.name !== 'AbortError') s.error = e;
  }).finally(() => { s.ended = true; });
  return s;
}

// An MCP session on base with token, and its GET stream.
async function mcpStream(base, token) {
  const headers = { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
  const res = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'streams', version: '1' } } }) });
  assert.equal(res.status, 200);
  await res.text();
  const sid = res.headers.get('mcp-session-id');
  const more = { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
  assert.equal((await fetch(`${base}/mcp`, { method: 'POST', headers: more, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).status, 202);
  return { sid, stream: openStream(`${base}/mcp`, { ...more, accept: 'text/event-stream' }) };
}

// The test's own server of metadata documents, on loopback.
// Chromium does not read NODE_EXTRA_CA_CERTS: over HTTPS
// (oauth_https.sh) it is told to trust the daemons' certificate by the
// SHA-256 of its public key, and that key only.
function chromiumTrust() {
  const cert = process.env.PAPO_TLS_CERT;
  if (!cert) return [];
  const spki = new crypto.X509Certificate(fs.readFileSync(cert)).publicKey.export({ type: 'spki', format: 'der' });
  return [`--ignore-certificate-errors-spki-list=${crypto.createHash('sha256').update(spki).digest('base64')}`];
}

function docServer() {
  return new Promise((resolve) => {
    const hits = {};
    let url;
    const tls = process.env.PAPO_TLS_CERT;
    const handler = (req, res) => {
      hits[req.url] = (hits[req.url] || 0) + 1;
      const self = `${url}${req.url}`;
      const json = (o) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify(o)); };
      switch (req.url) {
        case '/client.json':
          return json({ client_id: self, client_name: 'CIMD test client', redirect_uris: ['http://127.0.0.1:1/cimd-cb'], token_endpoint_auth_method: 'none' });
        case '/big.json':
          return json({ client_id: self, client_name: 'big', redirect_uris: ['http://127.0.0.1:1/cimd-cb'], padding: 'x'.repeat(8000) });
        case '/liar.json':
          return json({ client_id: 'https://trusted.example/client.json', redirect_uris: ['http://127.0.0.1:1/cimd-cb'] });
        case '/secret.json':
          return json({ client_id: self, redirect_uris: ['http://127.0.0.1:1/cimd-cb'], token_endpoint_auth_method: 'private_key_jwt' });
        case '/junk.json':
          return res.end('<html>not json</html>');
        case '/moved.json':
          res.writeHead(302, { location: '/client.json' });
          return res.end();
        default:
          res.writeHead(404);
          return res.end();
      }
    };
    const server = tls ?
      https.createServer({ cert: fs.readFileSync(tls), key: fs.readFileSync(process.env.PAPO_TLS_KEY) }, handler) :
      http.createServer(handler);
    server.listen(0, '127.0.0.1', () => {
      url = `${tls ? 'https' : 'http'}://127.0.0.1:${server.address().port}`;
      resolve({ server, hits, get url() { return url; } });
    });
  });
}
