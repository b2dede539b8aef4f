// dashboard.test.mjs: papo's dashboard at / as a person sees it in a
// browser.  Two daemons (ana and bo, in temporary homes) share a room; a
// headless Chromium (Debian's, driven by playwright-core) opens ana's
// dashboard and checks what is on the screen: the room, the members and
// their online state, messages arriving live from bo, messages sent from
// the page reaching bo (to everyone, to one member, as a reply), hostile
// text shown as text, the event stream coming back after ana's daemon
// restarts, and the token form of a daemon started with --token.  It
// saves dashboard.png (desktop) and dashboard-phone.png (390 px wide)
// beside itself.
//
// Run: PAPO=path/to/papo node --test tests/clients/dashboard.test.mjs
// (after `npm ci --prefix tests/clients`; needs /usr/bin/chromium, or
// CHROMIUM=path).  On a failure the page's console and the daemons'
// last log lines are printed to stderr.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { daemonSet, until } from './daemons.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const XSS = '<img src=x onerror=alert(1)>';
const TOKEN = 'dash-s3cret-token';

const { bin: PAPO, root, daemons, papo, serve: start, stop, killAll } = daemonSet('papo-web-');
// Starts `papo serve` for name, as the member name (the room is created on
// ana's first start), and waits for its serve.json.
const serve = (name, opts = {}) => start(name, { member: name, ...opts });

// The JSON API of a daemon, with its token.
async function api(d, p, body) {
  const headers = {};
  if (d.token) headers.Authorization = `Bearer ${d.token}`;
  const init = { headers };
  if (body !== undefined) {
    init.method = 'POST';
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(d.info.http + p, init);
  const j = await res.json();
  if (!res.ok) throw new Error(`${p}: ${res.status} ${j.error}`);
  return j;
}

async function historyHas(d, pred) {
  const h = await api(d, '/api/history?limit=200');
  return h.messages.find(pred);
}

// What the page shows of the message whose text is exactly text (the
// last one), or null.
function shown(page, text) {
  return page.evaluate((t) => {
    const all = [...document.querySelectorAll('#messages li.msg')];
    const li = all.reverse().find((e) => e.querySelector('.text')?.textContent === t);
    if (!li) return null;
    const thread = li.closest('li.thread');
    const parent = li.querySelector('a.parent');
    return {
      id: li.dataset.id || null,
      from: li.querySelector('.from')?.textContent,
      to: li.querySelector('.to-name')?.textContent || null,
      meta: li.querySelector('.meta')?.innerText,
      delivery: li.querySelector('.delivery')?.textContent || '',
      inReplies: !!li.closest('ol.replies'),
      threadRoot: thread?.querySelector(':scope > li.msg')?.dataset.id || null,
      parentHref: parent?.getAttribute('href') || null,
      parentText: parent?.innerText || null,
      visible: li.getBoundingClientRect().height > 0,
    };
  }, text);
}

// The member row of name as the user reads it.
function memberRow(page, name) {
  return page.evaluate((n) => {
    const li = [...document.querySelectorAll('#members li.member')].find(
      (e) => e.querySelector('.member-name')?.textContent === n);
    return li ? { text: li.innerText, online: li.classList.contains('online'), html: li.innerHTML } : null;
  }, name);
}

async function sendFromPage(page, text, { to = '', enter = false } = {}) {
  await page.selectOption('#to', to);
  await page.fill('#text', text);
  if (enter) await page.press('#text', 'Enter');
  else await page.click('#send');
}

let failed = false;
function step(name, fn, timeout = 60_000) {
  it(name, { timeout }, async (t) => {
    try {
      await fn(t);
    } catch (e) {
      failed = true;
      throw e;
    }
  });
}

describe('papo dashboard in a browser', { timeout: 280_000 }, () => {
  let A, B, browser, ctx, page, status, boId, httpPort, quicAddr;
  let boMsg, pageMsg;
  const dialogs = [];
  const problems = []; // page errors and CSP violations
  const consoleLog = [];
  let navigations = 0;

  function watch(p, label) {
    p.on('dialog', (d) => {
      dialogs.push(`${label}: ${d.type()} ${d.message()}`);
      d.dismiss().catch(() => {});
    });
    p.on('pageerror', (e) => problems.push(`${label}: page error: ${e.message}`));
    p.on('console', (m) => {
      consoleLog.push(`${label} ${m.type()}: ${m.text()}`);
      if (/Content Security Policy/i.test(m.text())) problems.push(`${label}: ${m.text()}`);
    });
  }

  before(async () => {
    assert.ok(fs.existsSync(PAPO), `no papo binary at ${PAPO} (set PAPO)`);
    assert.ok(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`);
    A = await serve('ana');
    httpPort = new URL(A.info.http).port;
    quicAddr = A.info.quic;
    papo(path.join(root, 'bo'), ['join', A.info.invite, '--name', 'bo', '--about', 'tests <b>bold</b> & co']);
    B = await serve('bo');
    boId = (await api(B, '/api/status')).me.id;
    await until('ana to see bo online', async () =>
      (await api(A, '/api/status')).members.some((m) => m.name === 'bo' && m.online), 30_000, 200);
    status = await api(A, '/api/status');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
    ctx = await browser.newContext({ viewport: { width: 1280, height: 820 } });
    page = await ctx.newPage();
    watch(page, 'desktop');
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations++;
    });
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await killAll();
    if (failed) {
      console.error('page console:');
      for (const l of consoleLog.slice(-40)) console.error('  ' + l);
      for (const d of Object.values(daemons)) {
        let log = '';
        try { log = fs.readFileSync(d.errFile, 'utf8'); } catch { /* none */ }
        console.error(`${d.name}'s log (last lines):\n${log.split('\n').slice(-25).join('\n')}`);
      }
    }
    fs.rmSync(root, { recursive: true, force: true });
  });

  step('the files are served under the strict CSP, without the token', async () => {
    for (const [p, type] of [['/', 'text/html'], ['/app.js', 'text/javascript'], ['/style.css', 'text/css']]) {
      const res = await fetch(A.info.http + p);
      assert.equal(res.status, 200, `GET ${p}`);
      assert.match(res.headers.get('content-type'), new RegExp(type));
      const csp = res.headers.get('content-security-policy') || '';
      assert.match(csp, /script-src 'self'/, `${p} has the CSP: ${csp}`);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, `${p} has a strict CSP`);
      await res.arrayBuffer();
    }
  });

  step('the page shows the room, this member and bo online', async () => {
    await page.goto(A.info.dashboard || `${A.info.http}/`);
    await until('the room name', async () => (await page.textContent('#room')) === status.room);
    assert.equal(await page.textContent('#me'), 'ana');
    const row = await until('bo listed online', async () => {
      const r = await memberRow(page, 'bo');
      return r && r.online && /\bonline\b/.test(r.text) ? r : null;
    });
    // bo's about, room-provided text, is shown as it was typed.
    assert.match(row.text, /tests <b>bold<\/b> & co/, `bo's about shown literally: ${row.text}`);
    assert.doesNotMatch(row.html, /<b>/, 'no element made of the about');
    const me = await memberRow(page, 'ana');
    assert.ok(me && /you/.test(me.text), `ana is listed as you: ${JSON.stringify(me)}`);
    await until('the stream open', async () => (await page.getAttribute('#conn', 'data-state')) === 'live');
    assert.equal(await page.textContent('#conn-text'), 'live');
  });

  step('a message bo sends appears without a reload', async () => {
    const r = await api(B, '/api/send', { text: 'hello ana, this is bo' });
    boMsg = r.id;
    const m = await until('bo\'s message on the page', () => shown(page, 'hello ana, this is bo'));
    assert.equal(m.id, boMsg);
    assert.equal(m.from, 'bo');
    assert.ok(m.visible, 'the message is visible');
    assert.match(m.meta, /\d\d:\d\d/, `the time is shown: ${m.meta}`);
    assert.equal(navigations, 1, 'the page was not reloaded');
  });

  step('a message typed on the page reaches bo and shows as delivered', async () => {
    await sendFromPage(page, 'hello bo, from the page');
    const got = await until('the message in bo\'s history', () =>
      historyHas(B, (m) => m.text === 'hello bo, from the page'));
    assert.equal(got.from, 'ana');
    assert.equal(got.to, null);
    pageMsg = got.id;
    const m = await until('the message shown as delivered', async () => {
      const s = await shown(page, 'hello bo, from the page');
      return s && s.id === got.id && /delivered/.test(s.delivery) ? s : null;
    });
    assert.equal(m.from, 'ana');
    assert.equal(await page.inputValue('#text'), '', 'the box is empty after sending');
  });

  step('when bo\'s agent reads it, the page says so', async () => {
    // An MCP client on bo's daemon is shown the history: a read receipt.
    const client = new Client({ name: 'bo-agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(B.info.mcp));
    await client.connect(transport);
    try {
      const r = await client.callTool({ name: 'history', arguments: { limit: 10 } });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assert.match(JSON.stringify(r.structuredContent), /hello bo, from the page/);
    } finally {
      // The session ends: later messages are not shown to this agent.
      await transport.terminateSession().catch(() => {});
      await client.close();
    }
    const m = await until('the message shown as read', async () => {
      const s = await shown(page, 'hello bo, from the page');
      return s && /read by bo/.test(s.delivery) ? s : null;
    });
    assert.equal(m.id, pageMsg);
    // bo's own message gets no delivery line on ana's page.
    assert.equal((await shown(page, 'hello ana, this is bo')).delivery, '');
  });

  step('a message to one member carries to, and shows it', async () => {
    await sendFromPage(page, 'just for you, bo', { to: boId });
    const got = await until('the message in bo\'s history', () =>
      historyHas(B, (m) => m.text === 'just for you, bo'));
    assert.equal(got.to, 'bo');
    const m = await until('the message on the page', () => shown(page, 'just for you, bo'));
    assert.equal(m.to, 'bo', `the page shows it is for bo: ${m.meta}`);
  });

  step('clicking a message answers it: the reply carries reply_to and sits in its thread', async () => {
    await page.click(`#m-${boMsg} .text`);
    await until('the reply bar', async () => await page.isVisible('#replying') &&
      /bo/.test(await page.textContent('#replying-to')));
    await sendFromPage(page, 'a reply from the page', { enter: true });
    const got = await until('the reply in bo\'s history', () =>
      historyHas(B, (m) => m.text === 'a reply from the page'));
    assert.equal(got.reply_to, boMsg, 'the reply carries reply_to');
    const m = await until('the reply in its thread', async () => {
      const s = await shown(page, 'a reply from the page');
      return s && s.id ? s : null;
    });
    assert.ok(m.inReplies, 'the reply is shown among the replies');
    assert.equal(m.threadRoot, boMsg, 'under the message it answers');
    assert.equal(m.parentHref, `#m-${boMsg}`, 'with a link to it');
    assert.match(m.parentText, /bo/, `the link names the parent's author: ${m.parentText}`);
    assert.equal(await page.isVisible('#replying'), false, 'the reply bar is gone after sending');

    // bo answers the page's message: it appears in that thread, live.
    await api(B, '/api/send', { text: 'bo answers the page', reply_to: pageMsg });
    const b = await until('bo\'s reply on the page', () => shown(page, 'bo answers the page'));
    assert.equal(b.threadRoot, pageMsg);
    assert.ok(b.inReplies);

    // The link to the parent leads to it.
    await page.click(`#messages li.msg[data-id="${m.id}"] a.parent`);
    await until('the parent highlighted', () =>
      page.evaluate((id) => document.getElementById('m-' + id).classList.contains('flash'), boMsg));
  });

  step('hostile text is shown as text and runs nothing', async () => {
    const fromBo = (await api(B, '/api/send', { text: XSS })).id;
    await sendFromPage(page, XSS);
    const fromPage = (await until('the page\'s copy in bo\'s history', () =>
      historyHas(B, (m) => m.text === XSS && m.from === 'ana'))).id;
    for (const id of [fromBo, fromPage]) {
      const text = await until(`message ${id} on the page`, () => page.evaluate((i) =>
        document.querySelector(`#m-${i} .text`)?.textContent, id));
      assert.equal(text, XSS, `message ${id} shows the literal text`);
    }
    assert.equal(await page.locator('#messages img').count(), 0, 'no img element in the messages');
    assert.equal(await page.locator('img').count(), 0, 'no img element anywhere');
    assert.deepEqual(dialogs, [], 'no dialog opened');
    assert.deepEqual(problems, [], 'no page error or CSP violation');
  });

  step('screenshots: desktop and a 390 px phone', async () => {
    await page.screenshot({ path: path.join(HERE, 'dashboard.png'), animations: 'disabled' });
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
    });
    try {
      const p = await phone.newPage();
      watch(p, 'phone');
      await p.goto(`${A.info.http}/`);
      await until('history on the phone', () => shown(p, 'bo answers the page'));
      await until('bo online on the phone', async () => (await memberRow(p, 'bo'))?.online);
      const fit = await p.evaluate(() => {
        const box = (s) => document.querySelector(s).getBoundingClientRect();
        return {
          scrollWidth: document.documentElement.scrollWidth,
          send: box('#send'), text: box('#text'), room: box('#room'), last: box('#messages > li:last-child'), composer: box('#composer'),
          bo: box('#members li.member[data-name="bo"]'),
          height: window.innerHeight,
        };
      });
      assert.ok(fit.scrollWidth <= 390, `nothing wider than the phone: ${fit.scrollWidth}`);
      for (const k of ['send', 'text', 'room', 'bo']) {
        assert.ok(fit[k].width > 0 && fit[k].left >= 0 && fit[k].right <= 390, `${k} fits across: ${JSON.stringify(fit[k])}`);
        assert.ok(fit[k].top >= 0 && fit[k].bottom <= fit.height, `${k} is on screen: ${JSON.stringify(fit[k])}`);
      }
      assert.ok(fit.last.bottom <= fit.composer.top + 1 && fit.last.bottom > 0, 'the newest message is in view, above the box');
      // Sending works with a thumb too.
      await p.fill('#text', 'from a phone');
      await p.tap('#send');
      await until('the phone\'s message at bo', () => historyHas(B, (m) => m.text === 'from a phone'));
      await until('and on the desktop page, live', () => shown(page, 'from a phone'));
      await p.screenshot({ path: path.join(HERE, 'dashboard-phone.png'), animations: 'disabled' });
    } finally {
      await phone.close();
    }
    for (const f of ['dashboard.png', 'dashboard-phone.png'])
      assert.ok(fs.statSync(path.join(HERE, f)).size > 10_000, `${f} saved`);
  });

  step('the stream comes back after the daemon restarts, with what was said meanwhile', async () => {
    await stop(A);
    await until('the page says it is reconnecting', async () =>
      (await page.getAttribute('#conn', 'data-state')) === 'down');
    // bo speaks while ana is away: it is queued at bo.
    await api(B, '/api/send', { text: 'said while ana was away' });
    A = await serve('ana', { http: `127.0.0.1:${httpPort}`, listen: quicAddr });
    assert.equal(new URL(A.info.http).port, httpPort, 'the same HTTP port');
    await until('the page live again', async () =>
      (await page.getAttribute('#conn', 'data-state')) === 'live', 40_000);
    await until('what bo said meanwhile', () => shown(page, 'said while ana was away'), 60_000);
    await until('ana to see bo online', async () =>
      (await api(A, '/api/status')).members.some((m) => m.name === 'bo' && m.online), 60_000, 200);
    await api(B, '/api/send', { text: 'after the restart' });
    await until('bo\'s new message on the page', () => shown(page, 'after the restart'), 30_000);
    assert.equal(navigations, 1, 'the page was not reloaded');
    const m = await shown(page, 'after the restart');
    assert.equal(m.from, 'bo');
    // Nothing shown twice after the replay and the reload.
    const twice = await page.evaluate(() => {
      const ids = [...document.querySelectorAll('#messages li.msg')].map((e) => e.dataset.id);
      return ids.filter((id, i) => ids.indexOf(id) !== i);
    });
    assert.deepEqual(twice, [], 'no message shown twice');
  }, 150_000);

  step('bo stopping shows offline at once, and online again when back', async () => {
    await stop(B);
    const off = await until('bo shown offline', async () => {
      const r = await memberRow(page, 'bo');
      return r && !r.online && /offline/.test(r.text) ? r : null;
    }, 30_000);
    assert.match(off.text, /seen/, `when bo was last seen: ${off.text}`);
    assert.doesNotMatch(off.text, /\bonline\b/);
    B = await serve('bo');
    await until('bo shown online again', async () => (await memberRow(page, 'bo'))?.online, 60_000);
    assert.equal(navigations, 1, 'the page was not reloaded');
  }, 120_000);

  step('with a token the page asks for it, refuses a wrong one, and works with the right one', async () => {
    await stop(A);
    A = await serve('ana', { http: `127.0.0.1:${httpPort}`, listen: quicAddr, token: TOKEN });
    const bare = await fetch(`${A.info.http}/api/status`);
    assert.equal(bare.status, 401, 'the API needs the token now');
    await bare.arrayBuffer();

    // The page that was open finds out when its stream reconnects.
    await until('the token form on the open page', () => page.isVisible('#auth'), 40_000);
    assert.equal(await page.isVisible('#auth-error'), false, 'no error before a token was given');

    // A fresh browser: asked before anything is shown.
    const fresh = await browser.newContext({ viewport: { width: 1000, height: 700 } });
    try {
      const p = await fresh.newPage();
      watch(p, 'token');
      await p.goto(`${A.info.http}/`);
      await until('the token form', () => p.isVisible('#auth'));
      await p.fill('#auth-token', 'not-the-token');
      await p.click('#auth-form button[type=submit]');
      await until('the wrong token refused', async () => await p.isVisible('#auth') &&
        await p.isVisible('#auth-error') && /refused/.test(await p.textContent('#auth-error')));
      await p.fill('#auth-token', TOKEN);
      await p.click('#auth-form button[type=submit]');
      await until('the room after the token', async () => (await p.textContent('#room')) === status.room &&
        !(await p.isVisible('#auth')));
      await until('the history', () => shown(p, 'after the restart'));
      // Kept: a reload does not ask again.
      await p.reload();
      await until('the room after a reload', async () => (await p.textContent('#room')) === status.room);
      assert.equal(await p.isVisible('#auth'), false, 'not asked again after a reload');
    } finally {
      await fresh.close();
    }

    // The open page: a wrong token, then the right one.
    await page.fill('#auth-token', 'wrong');
    await page.click('#auth-form button[type=submit]');
    await until('the error on the open page', async () => await page.isVisible('#auth-error') &&
      /refused/.test(await page.textContent('#auth-error')));
    await page.fill('#auth-token', TOKEN);
    await page.click('#auth-form button[type=submit]');
    await until('the open page live again', async () =>
      !(await page.isVisible('#auth')) && (await page.getAttribute('#conn', 'data-state')) === 'live', 30_000);
    await until('bo online for the restarted ana', async () => (await memberRow(page, 'bo'))?.online, 60_000);
    await sendFromPage(page, 'sent with the token');
    await until('the message at bo', () => historyHas(B, (m) => m.text === 'sent with the token'), 30_000);
    await api(B, '/api/send', { text: 'bo, after the token' });
    await until('bo\'s message live on the page', () => shown(page, 'bo, after the token'), 30_000);
    assert.equal(navigations, 1, 'the open page was never reloaded');
  }, 200_000);

  step('nothing ran that should not have, and the daemons stop cleanly', async () => {
    assert.deepEqual(dialogs, [], 'no dialog opened');
    assert.deepEqual(problems, [], 'no page error or CSP violation');
    await stop(B);
    await stop(A);
  });
});
