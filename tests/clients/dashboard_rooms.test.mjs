// dashboard_rooms.test.mjs: the dashboard of a daemon in several rooms
// (issue 23), as a person sees it in a browser.  ana's daemon holds
// alpha (its first room, the default) and beta; bo's daemon joins both,
// to speak in them.  A headless Chromium (Debian's, driven by
// playwright-core) opens ana's dashboard and checks: the list of rooms
// with the room shown and the default marked; a message in the room not
// shown raising its unread count, live, and not appearing in the room
// shown; switching rooms showing that room's messages, members and name
// and clearing its count, without reloading the page; sending from the
// box going to the room shown only; the room kept in the URL across a
// reload, with the unread count of the other room counted again from its
// history; a room made while the page is open appearing (its hostile
// name shown as text), and one left disappearing; an unknown room in the
// URL showing the default; the default moving; the compact selector
// at phone width.  It saves dashboard-rooms.png (desktop) and
// dashboard-rooms-phone.png (390 px wide) beside itself.
//
// Run: PAPO=path/to/papo node --test tests/clients/dashboard_rooms.test.mjs
// (after `npm ci --prefix tests/clients`; needs /usr/bin/chromium, or
// CHROMIUM=path).  On a failure the page's console and the daemons'
// last log lines are printed to stderr.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { daemonSet, until, watchPage } from './daemons.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const XSS = '<img src=x onerror=alert(1)>';

const { bin: PAPO, root, papo, serve: start, stop, step, finish } = daemonSet('papo-webrooms-');
const serve = (name, opts = {}) => start(name, { member: name, ...opts });

// The JSON API of a daemon: GET, or POST body, or DELETE.
async function api(d, p, body, method) {
  const init = { method: method || (body !== undefined ? 'POST' : 'GET'), headers: {} };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(d.info.http + p, init);
  const j = await res.json();
  if (!res.ok) throw new Error(`${p}: ${res.status} ${j.error}`);
  return j;
}

const texts = async (d, room) =>
  (await api(d, `/api/rooms/${encodeURIComponent(room)}/history?limit=500`)).messages.map((m) => m.text);

const online = async (d, room, who) =>
  (await api(d, `/api/rooms/${encodeURIComponent(room)}/status`)).members.some((m) => m.name === who && m.online);

// The list of rooms as the user reads it: each entry's name, whether it
// is the one shown and the default, its unread count ('' for none).
function roomList(page) {
  return page.evaluate(() => {
    const nav = document.getElementById('rooms');
    const items = [...document.querySelectorAll('#room-list li.room-item')].map((li) => ({
      id: li.dataset.id,
      name: li.querySelector('.room-name')?.textContent,
      shown: li.querySelector('a')?.getAttribute('aria-current') === 'page',
      dflt: !!li.querySelector('.room-default'),
      unread: li.querySelector('.unread')?.textContent || '',
      html: li.innerHTML,
    }));
    return { visible: nav.getBoundingClientRect().height > 0 && !nav.hidden, items };
  });
}

const entry = async (page, name) => (await roomList(page)).items.find((r) => r.name === name);

// The texts of the messages on the page.
const onPage = (page) => page.evaluate(() =>
  [...document.querySelectorAll('#messages li.msg .text')].map((e) => e.textContent));

async function shows(page, text) {
  return (await onPage(page)).includes(text);
}


describe('papo dashboard with several rooms', { timeout: 280_000 }, () => {
  let A, B, browser, ctx, page, alpha, beta, xssId;
  const dialogs = [];
  const problems = [];
  const consoleLog = [];
  let loads = 0;

  const watch = (p, label) => watchPage(p, label, { dialogs, problems, consoleLog });

  before(async () => {
    assert.ok(fs.existsSync(PAPO), `no papo binary at ${PAPO} (set PAPO)`);
    assert.ok(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`);
    A = await serve('ana', { env: { PAPO_ROOM: 'alpha' } });
    const made = await api(A, '/api/rooms', { room: 'beta', name: 'ana' });
    papo(path.join(root, 'bo'), ['join', A.info.invite, '--name', 'bo']);
    B = await serve('bo');
    await api(B, '/api/rooms', { invite: made.invite, name: 'bo' });
    const list = (await api(A, '/api/rooms')).rooms;
    alpha = list.find((r) => r.name === 'alpha').id;
    beta = list.find((r) => r.name === 'beta').id;
    assert.equal(made.id, beta);
    await until('ana to see bo online in alpha', () => online(A, alpha, 'bo'), 30_000, 200);
    await until('ana to see bo online in beta', () => online(A, beta, 'bo'), 30_000, 200);
    // Said before the page was ever opened: a room this browser has not
    // seen starts with nothing unread.
    await api(B, `/api/rooms/${beta}/send`, { text: 'beta before the page' });
    await until('ana has it', async () => (await texts(A, beta)).includes('beta before the page'));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
    ctx = await browser.newContext({ viewport: { width: 1280, height: 820 } });
    page = await ctx.newPage();
    watch(page, 'desktop');
    page.on('load', () => loads++);
  });

  after(() => finish({
    close: () => browser?.close(),
    report: () => {
      console.error('page console:');
      for (const l of consoleLog.slice(-40)) console.error('  ' + l);
    },
    lines: 25,
  }));

  step('the list shows both rooms, the default one shown and marked, nothing unread', async () => {
    await page.goto(`${A.info.http}/`);
    await until('the stream open', async () => (await page.getAttribute('#conn', 'data-state')) === 'live');
    const l = await until('two rooms listed', async () => {
      const x = await roomList(page);
      return x.items.length === 2 ? x : null;
    });
    assert.ok(l.visible, 'the list is on the screen');
    assert.deepEqual(l.items.map((r) => [r.name, r.shown, r.dflt, r.unread]),
      [['alpha', true, true, ''], ['beta', false, false, '']]);
    assert.equal(await page.textContent('#room'), 'alpha');
    assert.equal(await page.isVisible('#room-pick'), false, 'no selector on a wide screen');
    // The page is kept: a variable set now must survive every switch.
    await page.evaluate(() => { window.papoKept = 'still here'; });
  });

  step('a message in beta, not shown, raises its count live and stays out of alpha', async () => {
    await api(B, `/api/rooms/${beta}/send`, { text: 'beta one' });
    await until('beta: 1 unread', async () => (await entry(page, 'beta'))?.unread === '1', 10_000);
    await api(B, `/api/rooms/${beta}/send`, { text: 'beta two' });
    await until('beta: 2 unread', async () => (await entry(page, 'beta'))?.unread === '2', 10_000);
    await api(B, `/api/rooms/${alpha}/send`, { text: 'alpha from bo' });
    await until('alpha\'s message shown', () => shows(page, 'alpha from bo'), 10_000);
    const now = await onPage(page);
    for (const t of ['beta one', 'beta two', 'beta before the page'])
      assert.ok(!now.includes(t), `beta's "${t}" is not shown in alpha: ${JSON.stringify(now)}`);
    assert.equal((await entry(page, 'alpha')).unread, '', 'the room shown counts nothing');
    assert.equal((await entry(page, 'beta')).unread, '2');
  });

  step('clicking beta shows beta, clears its count, and does not reload the page', async () => {
    await page.click('#room-list a:has-text("beta")');
    await until('beta\'s messages shown', async () =>
      (await shows(page, 'beta one')) && (await shows(page, 'beta two')) &&
      (await shows(page, 'beta before the page')), 10_000);
    assert.ok(!(await shows(page, 'alpha from bo')), 'alpha\'s message is gone from the view');
    assert.equal(await page.textContent('#room'), 'beta');
    assert.match(await page.title(), /^beta · papo$/);
    const l = await roomList(page);
    assert.deepEqual(l.items.map((r) => [r.name, r.shown, r.unread]),
      [['alpha', false, ''], ['beta', true, '']]);
    assert.equal(new URL(page.url()).hash, `#room=${beta}`, 'the URL names the room shown');
    assert.equal(await page.evaluate(() => window.papoKept), 'still here', 'the page was not reloaded');
    assert.equal(loads, 1, 'one page load');
    // beta's members: bo, online.
    await until('bo online in beta\'s member list', () => page.evaluate(() =>
      !!document.querySelector('#members li.member.online[data-name="bo"]')), 10_000);
  });

  step('a message sent from the box goes to the room shown only', async () => {
    await page.fill('#text', 'ana writes in beta');
    await page.click('#send');
    await until('bo has it in beta', async () => (await texts(B, beta)).includes('ana writes in beta'), 20_000);
    await until('shown on the page', () => shows(page, 'ana writes in beta'));
    assert.ok(!(await texts(B, alpha)).includes('ana writes in beta'), 'not in bo\'s alpha');
    assert.ok(!(await texts(A, alpha)).includes('ana writes in beta'), 'not in ana\'s alpha');
    assert.equal((await entry(page, 'alpha')).unread, '', 'our own words are not unread anywhere');
  });

  step('the URL keeps the room across a reload; alpha\'s unread is counted again from its history', async () => {
    await api(B, `/api/rooms/${alpha}/send`, { text: 'alpha while beta is shown' });
    await until('alpha: 1 unread', async () => (await entry(page, 'alpha'))?.unread === '1', 10_000);
    assert.ok(!(await shows(page, 'alpha while beta is shown')));
    await page.reload();
    await until('beta shown again', async () => (await page.textContent('#room')) === 'beta' &&
      (await shows(page, 'ana writes in beta')), 10_000);
    await until('alpha still 1 unread after the reload', async () =>
      (await entry(page, 'alpha'))?.unread === '1', 10_000);
    assert.equal((await entry(page, 'beta')).unread, '');
    // Back in alpha, its message is there and the count is gone.
    await page.click('#room-list a:has-text("alpha")');
    await until('alpha shows it', () => shows(page, 'alpha while beta is shown'), 10_000);
    assert.equal((await entry(page, 'alpha')).unread, '');
    await page.evaluate(() => { window.papoKept = 'still here'; });
  });

  step('a room made while the page is open appears, its hostile name as text', async () => {
    const made = await api(A, '/api/rooms', { room: XSS, name: 'ana' });
    xssId = made.id;
    const e = await until('the new room listed', () => entry(page, XSS), 10_000);
    assert.equal(e.unread, '');
    assert.doesNotMatch(e.html, /<img/i, 'no element made of the name');
    assert.equal(await page.evaluate(() => document.querySelectorAll('#rooms img').length), 0);
    // The picture: three rooms, alpha shown, beta with something unread.
    await api(B, `/api/rooms/${beta}/send`, { text: 'beta again' });
    await until('beta: 1 unread', async () => (await entry(page, 'beta'))?.unread === '1', 10_000);
    await page.screenshot({ path: path.join(HERE, 'dashboard-rooms.png'), animations: 'disabled' });
    assert.ok(fs.statSync(path.join(HERE, 'dashboard-rooms.png')).size > 10_000, 'dashboard-rooms.png saved');
    await page.click(`#room-list li[data-id="${xssId}"] a`);
    await until('its name as the title', async () => (await page.textContent('#room')) === XSS, 10_000);
    assert.equal(await page.evaluate(() => document.querySelectorAll('header img').length), 0);
    assert.equal(await page.evaluate(() => window.papoKept), 'still here', 'the page was not reloaded');
    assert.equal(loads, 2, 'no load since the reload');
  });

  step('a room left while it is shown disappears, and the default is shown', async () => {
    await api(A, `/api/rooms/${xssId}`, undefined, 'DELETE');
    await until('the room gone from the list', async () => !(await entry(page, XSS)), 10_000);
    await until('alpha shown', async () => (await page.textContent('#room')) === 'alpha' &&
      (await shows(page, 'alpha from bo')), 10_000);
    assert.equal((await roomList(page)).items.length, 2);
    assert.equal(new URL(page.url()).hash, '', 'the URL no longer names the room left');
    // A link to a room this daemon does not hold shows the default.
    await page.goto(`${A.info.http}/#room=nosuch`);
    await until('alpha shown for an unknown room', async () => (await page.textContent('#room')) === 'alpha' &&
      (await shows(page, 'alpha from bo')), 10_000);
    assert.equal(new URL(page.url()).hash, '');
    // ... and says so, rather than silently (issue 37).
    assert.equal(await page.textContent('#room-note'),
      'No room \u201cnosuch\u201d here (left, or mistyped): showing the default room, alpha.');
    assert.equal(await page.isVisible('#room-note'), true);
    // The default moves, and the list says so at once.
    await api(A, `/api/rooms/${beta}/default`, {});
    await until('beta marked the default', async () => (await entry(page, 'beta'))?.dflt &&
      !(await entry(page, 'alpha')).dflt, 10_000);
    await api(A, `/api/rooms/${alpha}/default`, {});
    await until('alpha the default again', async () => (await entry(page, 'alpha'))?.dflt, 10_000);
  });

  step('a phone gets a selector with the counts, and switching works there too', async () => {
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
    });
    try {
      const p = await phone.newPage();
      watch(p, 'phone');
      await p.goto(`${A.info.http}/#room=${alpha}`);
      await until('alpha on the phone', () => shows(p, 'alpha from bo'), 10_000);
      await api(B, `/api/rooms/${beta}/send`, { text: 'beta for the phone' });
      const opt = await until('beta\'s option counts it', () => p.evaluate((id) =>
        document.querySelector(`#room-pick option[value="${id}"]`)?.textContent.endsWith('1 unread') &&
        document.querySelector(`#room-pick option[value="${id}"]`).textContent, beta), 10_000);
      assert.equal(opt, 'beta · 1 unread');
      assert.equal(await p.textContent('#room-pick-unread'), '1 unread');
      assert.equal(await p.isVisible('#room-pick'), true, 'the selector is shown');
      assert.equal(await p.isVisible('#rooms'), false, 'no sidebar list on a phone');
      assert.equal(await p.isVisible('#room'), false, 'the selector names the room');
      const fit = await p.evaluate(() => ({
        pick: document.getElementById('room-pick-box').getBoundingClientRect().toJSON(),
        scrollWidth: document.documentElement.scrollWidth,
      }));
      assert.ok(fit.pick.left >= 0 && fit.pick.right <= 390, `the selector fits: ${JSON.stringify(fit.pick)}`);
      assert.ok(fit.scrollWidth <= 390, `nothing wider than the phone: ${fit.scrollWidth}`);
      await p.screenshot({ path: path.join(HERE, 'dashboard-rooms-phone.png'), animations: 'disabled' });
      await p.selectOption('#room-pick', beta);
      await until('beta on the phone', () => shows(p, 'beta for the phone'), 10_000);
      assert.equal(new URL(p.url()).hash, `#room=${beta}`);
      assert.equal(await p.isVisible('#room-pick-unread'), false, 'nothing unread elsewhere');
    } finally {
      await phone.close();
    }
    assert.ok(fs.statSync(path.join(HERE, 'dashboard-rooms-phone.png')).size > 10_000, 'dashboard-rooms-phone.png saved');
  });

  step('nothing ran that should not have, and the daemons stop cleanly', async () => {
    assert.deepEqual(dialogs, [], 'no dialog opened');
    assert.deepEqual(problems, [], 'no page error or CSP violation');
    await stop(B);
    await stop(A);
  });
});
