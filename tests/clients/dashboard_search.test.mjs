// dashboard_search.test.mjs: issue 25's search box and thread view on
// the dashboard, in a headless Chromium (Debian's, driven by
// playwright-core).  Two daemons, ana (whose page is watched) and bo,
// share a room; both write through the API, and ana's page:
//  - searches as the words are typed (or on Enter): words with their
//    accents left off, a "phrase", a prefix*, CJK; the hits in each
//    excerpt are <mark> elements and nothing else is an element;
//  - shows a message holding <img onerror> and Markdown links, found by
//    search, inert: no dialog, no page error, no request elsewhere;
//  - pages with "More results" (the cursor), closes on Escape;
//  - jumps from a hit to a message older than the pages loaded: earlier
//    pages are loaded until it is there, it is scrolled to and flashes;
//  - with a second room, "all rooms" finds both rooms' hits, and a hit in
//    the other room shows that room at the message;
//  - opens a reply's thread in a side panel: the first message and its
//    replies in time order (reaching back past the pages loaded), and a
//    reply written from it has reply_to set;
//  - works at phone width (nothing wider than the screen).
// It saves dashboard-search.png (hits), dashboard-search-thread.png and
// dashboard-search-phone.png next to this file, to be looked at.
//
// Run: PAPO=path/to/papo node --test tests/clients/dashboard_search.test.mjs
// (after `npm ci --prefix tests/clients`; needs /usr/bin/chromium, or
// CHROMIUM=path).
import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { daemonSet, need, until, watchPage } from './daemons.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
// ana writes a few hundred messages: more than a history page (200).
const RATE = { PAPO_RATE: '6000/min,1000' };
const FILLERS = 230;

const { bin: PAPO, root, papo, serve: start, stop, finish, step } = daemonSet('papo-search-');
const serve = (name, opts = {}) => start(name, { member: name, ...opts });

const HOSTILE = 'needle <img src=x onerror=alert(1)> and [a link](javascript:alert(2)) ' +
  'or [this](http://evil.example/p) ![t](http://evil.example/t.png)';

async function api(d, p, body) {
  const init = { headers: {} };
  if (body !== undefined) {
    init.method = 'POST';
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(d.info.http + p, init);
  const j = await res.json();
  if (!res.ok) throw new Error(`${p}: ${res.status} ${j.error}`);
  return j;
}

// The hits the page shows: each one's author, text and marked words,
// and the tags of every element in its excerpt.
function hits(page) {
  return page.evaluate(() => [...document.querySelectorAll('#results-list li.result')].map((li) => ({
    id: li.querySelector('button.result-open').dataset.id,
    from: li.querySelector('.from').textContent,
    room: li.querySelector('.result-room')?.textContent ?? null,
    date: li.querySelector('time').textContent,
    excerpt: li.querySelector('.result-excerpt').textContent,
    marks: [...li.querySelectorAll('.result-excerpt mark')].map((m) => m.textContent),
    tags: [...li.querySelectorAll('.result-excerpt *')].map((e) => e.tagName),
  })));
}

// Waits until the timeline is shown (no search results over it) and has
// stopped moving: a view pinned to the newest message scrolls there as
// it is laid out again, and a click aimed at a button that then moves
// would land beside it.
async function settled(page) {
  let top = -1;
  await until('the timeline shown and still', async () => {
    const now = await page.evaluate(() => {
      const s = document.getElementById('scroller');
      return s.hidden || !document.getElementById('results').hidden ? -2 : s.scrollTop;
    });
    const still = now >= 0 && now === top;
    top = now;
    return still;
  }, 10_000, 200);
}

describe('the dashboard\'s search and threads', { timeout: 120_000 }, () => {
  let A, B, browser, ctx, page;
  const ids = {};
  const dialogs = [];
  const problems = [];
  const consoleLog = [];
  const elsewhere = [];

  // Types q in the search box and waits for its hits.
  async function search(q, { enter = false } = {}) {
    await page.fill('#search-q', q);
    if (enter) await page.press('#search-q', 'Enter');
    await until(`the hits for ${q}`, async () =>
      /for “/.test(await page.textContent('#results-status')) &&
      (await page.textContent('#results-status')).includes(q), 10_000, 100);
    return hits(page);
  }

  before(async () => {
    assert.ok(fs.existsSync(PAPO), `no papo binary at ${PAPO} (set PAPO)`);
    assert.ok(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}`);
    A = await serve('ana', { env: RATE });
    papo(path.join(root, 'bo'), ['join', A.info.invite, '--name', 'bo']);
    B = await serve('bo', { env: RATE });
    await until('ana to see bo online', async () =>
      (await api(A, '/api/status')).members.some((m) => m.name === 'bo' && m.online), 30_000, 200);
    // The oldest first: what a jump and the thread reach back to.
    ids.ancient = (await api(A, '/api/send', { text: 'the ancientmarker decision, long ago' })).id;
    ids.root = (await api(A, '/api/send', { text: 'Which port should the relay use?' })).id;
    ids.r1 = (await api(B, '/api/send', { text: 'Port 3478, as coturn does.', reply_to: ids.root })).id;
    await until('bo\'s reply at ana', async () =>
      (await api(A, '/api/history?limit=5')).messages.some((m) => m.id === ids.r1), 10_000, 100);
    for (let i = 0; i < FILLERS; i += 10) {
      await Promise.all(Array.from({ length: Math.min(10, FILLERS - i) }, (_, k) =>
        api(A, '/api/send', { text: `pagingword filler ${i + k}` })));
    }
    ids.accents = (await api(B, '/api/send', { text: 'Déploiement du café prévu vendredi' })).id;
    ids.phrase = (await api(A, '/api/send', { text: 'The quarterly rollout plan is approved' })).id;
    ids.notPhrase = (await api(A, '/api/send', { text: 'plan the rollout later' })).id;
    ids.cjk = (await api(B, '/api/send', { text: '会议 决定 发布 新版本' })).id;
    ids.hostile = (await api(A, '/api/send', { text: HOSTILE })).id;
    ids.r2 = (await api(A, '/api/send', { text: 'Then **3478** it is.', reply_to: ids.r1 })).id;
    await until('bo\'s messages at ana', async () => {
      const h = await api(A, '/api/history?limit=10');
      return h.messages.some((m) => m.id === ids.cjk) && h.messages.some((m) => m.id === ids.accents);
    }, 10_000, 100);
    // A new page gets what the stream still holds as well as a history
    // page: a restarted daemon's stream holds nothing older.
    await stop(A);
    A = await serve('ana', { env: RATE });

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
    ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    ctx.on('request', (r) => {
      const u = r.url();
      if (!u.startsWith(A.info.http + '/') && !u.startsWith(B.info.http + '/') &&
          !u.startsWith('blob:') && !u.startsWith('data:')) elsewhere.push(u);
    });
    page = await ctx.newPage();
    watchPage(page, 'ana', { dialogs, problems, consoleLog });
    await page.goto(`${A.info.http}/`);
    await until('the stream open', async () => (await page.getAttribute('#conn', 'data-state')) === 'live');
    await until('the newest message shown', () => page.isVisible('#m-' + ids.r2), 10_000);
  });

  after(() => finish({
    close: () => browser?.close(),
    report: () => {
      console.error('page console:');
      for (const l of consoleLog.slice(-40)) console.error('  ' + l);
    },
  }));

  step('html=1 on /api/search and /api/history?thread= adds the rendered Markdown', async () => {
    const s = await api(A, '/api/search?q=3478&html=1');
    const r2 = s.messages.find((m) => m.id === ids.r2);
    assert.ok(r2, 'the reply found');
    assert.match(r2.html, /<strong>3478<\/strong>/);
    assert.equal('html' in (await api(A, '/api/search?q=3478')).messages[0], false, 'none without it');
    const t = await api(A, `/api/history?thread=${ids.root}&html=1`);
    assert.deepEqual(t.messages.map((m) => m.id), [ids.root, ids.r1, ids.r2]);
    assert.ok(t.messages.every((m) => typeof m.html === 'string'));
    const bad = await fetch(`${A.info.http}/api/search?q=x&html=2`);
    assert.equal(bad.status, 400);
  });

  step('words typed search the room: accents left off find them, marked', async () => {
    const h = await search('deploiement cafe');
    assert.equal(h.length, 1, JSON.stringify(h));
    assert.equal(h[0].id, ids.accents);
    assert.equal(h[0].from, 'bo');
    assert.match(h[0].room, /^#papo-/);
    // The time as the timeline writes it (issue 37 item 23): today's
    // as 13:29, an older one as "Dec 5 13:29".
    assert.match(h[0].date, /^([A-Z][a-z]{2} \d{1,2}( \d{4})? )?\d\d:\d\d$/, `the hit's time: ${h[0].date}`);
    assert.deepEqual(h[0].marks, ['Déploiement', 'café']);
    assert.equal(h[0].excerpt, 'Déploiement du café prévu vendredi');
    assert.equal(await page.isVisible('#scroller'), false, 'the hits in the timeline\'s place');
  });

  step('a phrase, a prefix and CJK', async () => {
    let h = await search('"rollout plan"', { enter: true });
    assert.deepEqual(h.map((x) => x.id), [ids.phrase], 'only the words in that order');
    assert.deepEqual(h[0].marks, ['rollout plan'], 'the phrase marked whole');
    h = await search('quarter*');
    assert.deepEqual(h.map((x) => x.id), [ids.phrase]);
    assert.deepEqual(h[0].marks, ['quarterly']);
    h = await search('决定');
    assert.deepEqual(h.map((x) => x.id), [ids.cjk]);
    assert.deepEqual(h[0].marks, ['决定']);
    assert.equal(h[0].excerpt, '会议 决定 发布 新版本');
  });

  step('a hostile message found by search is rendered as the timeline renders it: no element of its own', async () => {
    const h = await search('needle');
    assert.equal(h.length, 1);
    // The excerpt is Markdown rendered by the daemon (a paragraph, the
    // word found marked): nothing the message wrote becomes an element.
    assert.deepEqual(h[0].tags, ['P', 'MARK']);
    assert.deepEqual(h[0].marks, ['needle']);
    assert.match(h[0].excerpt, /<img src=x onerror=alert\(1\)>/, 'the tag shown as text');
    assert.match(h[0].excerpt, /a link/, 'a javascript: link left as its text');
    assert.doesNotMatch(h[0].excerpt, /javascript:/, '... its URL dropped, as in the timeline');
    assert.equal(await page.locator('#results img, #results a, #results script').count(), 0);
    // Jumping to it: the timeline's Markdown, links made safe.
    await page.click(`#results-list button[data-id="${ids.hostile}"]`);
    await until('the results closed', async () => !(await page.isVisible('#results')), 5_000);
    const m = await page.evaluate((i) => {
      const li = document.getElementById('m-' + i);
      return { img: li.querySelectorAll('img').length,
        hrefs: [...li.querySelectorAll('a.md-link')].map((a) => a.getAttribute('href')) };
    }, ids.hostile);
    assert.equal(m.img, 0);
    assert.deepEqual(m.hrefs, ['http://evil.example/p', 'http://evil.example/t.png']);
    await page.waitForTimeout(300);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(problems, []);
    assert.deepEqual(elsewhere, []);
  });

  step('pages with "More results"; Escape goes back to the room', async () => {
    let h = await search('pagingword');
    assert.equal(h.length, 20);
    assert.equal(await page.isVisible('#results-more'), true);
    await page.click('#results-more');
    await until('the second page', async () => (await hits(page)).length === 40, 10_000, 100);
    h = await hits(page);
    assert.equal(new Set(h.map((x) => x.id)).size, 40, 'no hit twice');
    assert.ok(h.every((x) => x.marks.length === 1 && x.marks[0] === 'pagingword'));
    await page.evaluate(() => { document.getElementById('results').scrollTop = 0; });
    await page.screenshot({ path: path.join(HERE, 'dashboard-search.png'), animations: 'disabled' });
    await page.press('#search-q', 'Escape');
    assert.equal(await page.isVisible('#results'), false);
    assert.equal(await page.isVisible('#scroller'), true);
    assert.equal(await page.inputValue('#search-q'), '');
    // The close button too.
    await search('vendredi');
    await page.click('#search-close');
    assert.equal(await page.isVisible('#results'), false);
  });

  step('a thread opens at the side: its first message and replies in order; a reply from it', async () => {
    // The first message is older than the page loaded.
    assert.equal(await page.locator('#m-' + ids.root).count(), 0, 'not loaded yet');
    const tb = page.locator(`#m-${ids.r2} button.thread-button`);
    assert.equal(await tb.count(), 1, 'a reply has a Thread button');
    assert.equal(await page.locator(`#m-${ids.phrase} button.thread-button`).count(), 0,
      'a message outside any thread has none');
    await settled(page);
    await tb.click();
    await until('the thread', async () =>
      (await page.locator('#thread-list li.msg').count()) === 3, 10_000, 100);
    const t = await page.evaluate(() => [...document.querySelectorAll('#thread-list li.msg')].map((li) => ({
      id: li.dataset.id, from: li.querySelector('.from').textContent,
      text: li.querySelector('.text').textContent })));
    assert.deepEqual(t.map((x) => x.id), [ids.root, ids.r1, ids.r2]);
    assert.deepEqual(t.map((x) => x.from), ['ana', 'bo', 'ana']);
    assert.equal(t[2].text, 'Then 3478 it is.');
    assert.equal(await page.textContent('#thread-count'), '3');
    assert.deepEqual(await page.$$eval('#thread-list .parent-from', (e) => e.map((x) => x.textContent)),
      ['ana', 'bo'], 'each reply names the message it answers');
    await page.screenshot({ path: path.join(HERE, 'dashboard-search-thread.png'), animations: 'disabled' });
    await page.click(`#thread-list li[data-id="${ids.root}"] button.reply-button`);
    assert.equal(await page.isVisible('#replying'), true);
    await page.fill('#text', 'Noted, from the thread');
    await page.press('#text', 'Enter');
    const sent = await until('the reply stored', async () =>
      (await api(A, '/api/history?limit=3')).messages.find((m) => m.text === 'Noted, from the thread'), 10_000);
    assert.equal(sent.reply_to, ids.root);
    await until('the reply in the thread', async () =>
      (await page.locator('#thread-list li.msg').count()) === 4, 5_000, 100);
    await page.press('body', 'Escape');
    assert.equal(await page.isVisible('#thread-panel'), false, 'Escape closes the thread');
  });

  step('a hit older than the pages loaded: earlier pages load, it is shown and flashes', async () => {
    assert.equal(await page.locator('#m-' + ids.ancient).count(), 0, 'not loaded yet');
    const h = await search('ancientmarker');
    assert.deepEqual(h.map((x) => x.id), [ids.ancient]);
    await page.click(`#results-list button[data-id="${ids.ancient}"]`);
    await until('the old message shown', () => page.isVisible('#m-' + ids.ancient), 15_000, 100);
    const r = await page.evaluate((i) => {
      const li = document.getElementById('m-' + i);
      const b = li.getBoundingClientRect();
      const s = document.getElementById('scroller').getBoundingClientRect();
      return { flash: li.classList.contains('flash'), inView: b.top >= s.top && b.bottom <= s.bottom };
    }, ids.ancient);
    assert.deepEqual(r, { flash: true, inView: true });
  });

  step('"all rooms" searches every room; a hit in another room shows that room', async () => {
    assert.equal(await page.isVisible('#search-all-box'), false, 'no choice with one room');
    const home = (await api(A, '/api/status')).room;
    const made = await api(A, '/api/rooms', { room: 'beta', name: 'ana' });
    const beta = (await api(A, '/api/rooms')).rooms.find((r) => r.name === 'beta').id;
    assert.ok(made && beta);
    ids.bananaHome = (await api(A, '/api/send', { text: 'bananaword here' })).id;
    ids.bananaBeta = (await api(A, `/api/rooms/${beta}/send`, { text: 'bananaword in beta' })).id;
    await until('the choice, with two rooms', () => page.isVisible('#search-all-box'), 10_000, 100);
    let h = await search('bananaword');
    assert.deepEqual(h.map((x) => x.id), [ids.bananaHome], 'the room shown only');
    await page.check('#search-all');
    await until('both rooms\' hits', async () => (await hits(page)).length === 2, 10_000, 100);
    h = await hits(page);
    assert.deepEqual(h.map((x) => x.room).sort(), ['#' + home, '#beta'].sort());
    assert.match(await page.textContent('#results-status'), /in all rooms/);
    await page.click(`#results-list button[data-id="${ids.bananaBeta}"]`);
    await until('beta shown, at its message', async () =>
      (await page.textContent('#room')) === 'beta' && await page.isVisible('#m-' + ids.bananaBeta),
      10_000, 100);
    assert.match(await page.evaluate(() => location.hash), new RegExp('room=' + beta));
    assert.equal(await page.evaluate((i) => document.getElementById('m-' + i).classList.contains('flash'),
      ids.bananaBeta), true);
    await page.uncheck('#search-all');
    await page.press('#search-q', 'Escape');
  });

  step('phone width: the box, the hits and the thread fit the screen', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true,
      hasTouch: true, locale: 'en-US' });
    const pp = await phone.newPage();
    watchPage(pp, 'phone', { dialogs, problems, consoleLog });
    await pp.goto(`${A.info.http}/`);
    await until('the phone\'s page', () => pp.isVisible('#m-' + ids.r2), 15_000);
    assert.equal(await pp.isVisible('#search-q'), true);
    await pp.fill('#search-q', 'rollout');
    await until('the hits', async () => (await pp.locator('#results-list li.result').count()) === 2, 10_000, 100);
    const w = await pp.evaluate(() => ({ page: document.documentElement.scrollWidth, view: innerWidth }));
    assert.ok(w.page <= w.view, `nothing wider than the phone: ${JSON.stringify(w)}`);
    await pp.screenshot({ path: path.join(HERE, 'dashboard-search-phone.png'), animations: 'disabled' });
    await pp.press('#search-q', 'Escape');
    await settled(pp);
    // A tap focuses the button first: nothing of the message may change
    // size then (its id shown in the line did: the message grew, the
    // view at the newest message scrolled, the tap landed beside it).
    const tall = await pp.evaluate((i) => {
      const li = document.getElementById('m-' + i);
      const before = li.getBoundingClientRect().height;
      li.querySelector('button.thread-button').focus();
      return [before, li.getBoundingClientRect().height];
    }, ids.r2);
    assert.equal(tall[1], tall[0], `the message keeps its height when its button has focus: ${tall}`);
    await pp.locator(`#m-${ids.r2} button.thread-button`).click();
    await until('the thread', async () => (await pp.locator('#thread-list li.msg').count()) >= 3, 10_000, 100);
    const box = await pp.locator('#thread-panel').boundingBox();
    assert.ok(box.x === 0 && box.width === 390, `the thread covers the screen: ${JSON.stringify(box)}`);
    await pp.screenshot({ path: path.join(HERE, 'dashboard-search-phone-thread.png'), animations: 'disabled' });
    await phone.close();
    assert.deepEqual(dialogs, []);
    assert.deepEqual(problems, []);
    assert.deepEqual(elsewhere, []);
  });

  step('both daemons stop cleanly', async () => {
    need(A && B);
    await browser.close();
    browser = null;
    await stop(B);
    await stop(A);
  });
});
