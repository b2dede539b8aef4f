// limits.test.mjs: issue 14's limits as agents and a person see them,
// with the official MCP TypeScript SDK and Debian's headless Chromium
// (docs/SECURITY.md, "Rate limits and reply loops"; docs/MCP.md,
// "Limits").
//  - solo (PAPO_RATE=10/min,5): an agent sends 1,000 messages in a loop;
//    after the burst its send is a tool error with retry_after_s, and
//    after waiting that long it sends again.
//  - ana, bo, cy in one room (PAPO_DAMP=4/5m): two agents answer each
//    other through wait and send until damping refuses the next answer
//    (after 4), at both ends; status (tool, API, CLI) and ana's dashboard
//    say so; cy's message lets them go on; later a person's message from
//    ana's dashboard does too (on ana's daemon).
//
// Run: PAPO=path/to/papo node --test tests/clients/limits.test.mjs
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium } from 'playwright-core';
import { daemonSet, sleep, until } from './daemons.mjs';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const N = 4;
const { root, papo, serve, step, finish } = daemonSet('papo-limits-', { stepTimeout: Infinity });

async function connect(d, label) {
  const client = new Client({ name: `papo-test-${label}`, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(d.info.mcp)));
  return client;
}

async function api(d, p, body) {
  const init = {};
  if (body !== undefined)
    Object.assign(init, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const res = await fetch(d.info.http + p, init);
  const j = await res.json();
  if (!res.ok) throw new Error(`${p}: ${res.status} ${j.error}`);
  return j;
}

const send = (c, args) => c.callTool({ name: 'send', arguments: args });
const ok = (r, what) => {
  assert.notEqual(r.isError, true, `${what}: ${JSON.stringify(r)}`);
  return r.structuredContent;
};

// The next message for c's agent from the other member, through wait.
async function next(c, text) {
  return until(`the agent to be given '${text}'`, async () => {
    const r = await c.callTool({ name: 'wait', arguments: { timeout_s: 5 } }, undefined, { timeout: 20_000 });
    return ok(r, 'wait').messages.find((m) => m.text === text) || null;
  }, 30_000, 0);
}


describe('rate limits and reply-loop damping', { concurrency: false }, () => {
  let solo, A, B, C, ca, cb, browser, page;

  before(async () => {
    assert.ok(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}`);
    solo = await serve('solo', { member: 'solo', env: { PAPO_RATE: '10/min,5' } });
    const env = { PAPO_DAMP: `${N}/5m` };
    A = await serve('ana', { member: 'ana', env });
    papo(path.join(root, 'bo'), ['join', A.info.invite, '--name', 'bo']);
    papo(path.join(root, 'cy'), ['join', A.info.invite, '--name', 'cy']);
    B = await serve('bo', { env });
    C = await serve('cy', { env });
    await until('ana to see bo and cy online', async () => {
      const st = await api(A, '/api/status');
      return ['bo', 'cy'].every((n) => st.members.some((m) => m.name === n && m.online));
    }, 30_000, 200);
    ca = await connect(A, 'ana');
    cb = await connect(B, 'bo');
  });

  after(() => finish({ close: () => browser?.close(), lines: 20 }));

  step('an agent sending 1,000 messages in a loop is stopped after the burst', async () => {
    const c = await connect(solo, 'solo');
    const t0 = Date.now();
    let sent = 0, refused = 0, last = null;
    for (let i = 0; i < 1000; i++) {
      const r = await send(c, { text: `loop ${i}` });
      if (r.isError) {
        refused++;
        last = r;
        assert.equal(r.structuredContent?.limit, 'rate', JSON.stringify(r));
        assert.ok(r.structuredContent.retry_after_s >= 1 && r.structuredContent.retry_after_s <= 6,
          `retry_after_s: ${JSON.stringify(r.structuredContent)}`);
        assert.match(r.content[0].text, /too fast.*PAPO_RATE=10\/min,5.*retry in \d+ s/);
      } else {
        sent++;
      }
    }
    const secs = (Date.now() - t0) / 1000;
    // The burst of 5, and one more per 6 s the loop took.
    assert.ok(sent >= 5 && sent <= 5 + Math.ceil(secs / 6), `${sent} sent in ${secs} s`);
    assert.equal(sent + refused, 1000);
    const h = await api(solo, '/api/history?limit=500');
    assert.equal(h.messages.length, sent, 'only what was sent is in the log');
    await sleep(last.structuredContent.retry_after_s * 1000);
    ok(await send(c, { text: 'after waiting' }), 'send after retry_after_s');
    await c.close();
  });

  let lastId;
  step(`two agents answering each other are stopped after ${N} answers`, async () => {
    lastId = ok(await send(cb, { text: 'ping' }), 'ping').id;
    await next(ca, 'ping');
    let turn = 0, anaLast = null;
    for (; turn < 20; turn++) {
      const [me, other] = turn % 2 === 0 ? [ca, cb] : [cb, ca];
      const text = `answer ${turn}`;
      const r = await send(me, { text, reply_to: lastId });
      if (r.isError) {
        assert.equal(r.structuredContent?.limit, 'damping', JSON.stringify(r));
        assert.ok(r.structuredContent.retry_after_s > 0);
        assert.match(r.content[0].text, /reply loop: you and (bo|ana) have answered each other 4 times within 5m; stop and wait for a person or a third member/);
        break;
      }
      lastId = r.structuredContent.id;
      if (me === ca) anaLast = lastId;
      await next(other, text);
    }
    assert.equal(turn, N, `refused after ${N} answers, at answer ${turn + 1}`);
    // The other end is damped too: bo answering ana's last answer.
    const rb = await send(cb, { text: 'bo insists', reply_to: anaLast });
    assert.equal(rb.isError, true, JSON.stringify(rb));
    assert.equal(rb.structuredContent.limit, 'damping');
    // A message that answers nothing still goes.
    ok(await send(ca, { text: 'ana, not answering' }), 'a plain message');
  });

  step('status, the status tool and papo status show damping', async () => {
    const st = await api(A, '/api/status');
    assert.equal(st.damping.limit, `${N}/5m`);
    assert.equal(st.damping.on, true, JSON.stringify(st.damping));
    const e = st.damping.exchanges.find((x) => x.with === 'bo');
    assert.ok(e && e.damped && e.answers === N && e.retry_after_s > 0, JSON.stringify(st.damping));
    const tool = ok(await ca.callTool({ name: 'status', arguments: {} }), 'status tool');
    assert.equal(tool.damping.on, true);
    const text = papo(A.home, ['status']);
    assert.match(text, /damping: on \(4\/5m\): answers to bo refused for \d+ s/);
  });

  step('the dashboard shows that damping is on', async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
    page = await (await browser.newContext()).newPage();
    await page.goto(`${A.info.http}/`);
    await page.waitForSelector('#damping:not([hidden])', { timeout: 15_000 });
    const t = await page.textContent('#damping');
    assert.match(t, /Reply loop paused: ana and bo answered each other 4 times within 5m/);
    await page.screenshot({ path: path.join(root, 'damping.png') });
  });

  step('a third member speaking lets them go on, and the banner goes', async () => {
    papo(C.home, ['say', 'cy here: what do you two think?']);
    await next(ca, 'cy here: what do you two think?');
    await next(cb, 'cy here: what do you two think?');
    const r = ok(await send(ca, { text: 'ana goes on', reply_to: lastId }), 'ana after cy');
    await next(cb, 'ana goes on');
    ok(await send(cb, { text: 'bo goes on', reply_to: r.id }), 'bo after cy');
    await page.waitForSelector('#damping[hidden]', { state: 'attached', timeout: 20_000 });
    const st = await api(A, '/api/status');
    assert.equal(st.damping.on, false, JSON.stringify(st.damping));
  });

  step('a person writing from the dashboard lets both agents go on', async () => {
    // Damped again: bo answered once above; three more answers.
    let id = (await api(A, '/api/history?limit=1')).messages[0].id;
    for (let i = 0; i < 20; i++) {
      const [me, other] = i % 2 === 0 ? [ca, cb] : [cb, ca];
      const r = await send(me, { text: `again ${i}`, reply_to: id });
      if (r.isError) break;
      id = r.structuredContent.id;
      await next(other, `again ${i}`);
    }
    await page.waitForSelector('#damping:not([hidden])', { timeout: 20_000 });
    const refused = await send(ca, { text: 'ana refused', reply_to: id });
    assert.equal(refused.isError, true, JSON.stringify(refused));
    await page.fill('#text', 'A person: carry on, you two');
    await page.click('#send');
    await until('ana\'s damping to end', async () => !(await api(A, '/api/status')).damping.on, 15_000, 200);
    await page.waitForSelector('#damping[hidden]', { state: 'attached', timeout: 20_000 });
    const carried = ok(await send(ca, { text: 'ana carries on', reply_to: id }), 'ana after the person');
    // bo's daemon was told a person wrote (version 3): bo goes on too.
    await next(cb, 'A person: carry on, you two');
    await until('bo\'s damping to end', async () => !(await api(B, '/api/status')).damping.on, 15_000, 200);
    await until('bo to have ana\'s answer', async () =>
      (await api(B, '/api/history?limit=5')).messages.some((m) => m.text === 'ana carries on'), 15_000, 200);
    ok(await send(cb, { text: 'bo carries on', reply_to: carried.id }), 'bo after the person');
  });
});
