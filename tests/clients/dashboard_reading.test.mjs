// dashboard_reading.test.mjs: issue 37's dashboard items 8, 11, 19, 23
// and 25, in a headless Chromium (Debian's, driven by playwright-core).
// Two daemons, ana (the owner) and bo, share a room; ana's page shows:
//  - every message where its time puts it: a message that got a reply
//    stays above it (not moved down under it), with "1 reply" that opens
//    the thread at the side; the reply quotes it;
//  - consecutive messages of one author grouped: the name once;
//  - a room whose newest messages hold an image opened at its newest
//    message (scrolled to the bottom once the image is in);
//  - ana's receipts ("delivered to bo") after ana's daemon
//    restarts and the page is loaded again (from /api/history's
//    "receipts");
//  - one format: the timeline's time and the search result's time the
//    same, a size in KiB as the CLI writes it, "1 of 1 online" as
//    `papo rooms` says it;
//  - the network panel (NAT, address, diagram) closed until asked for;
//  - GitHub's Markdown (a table, strikethrough, a bare URL) and @names
//    rendered, and a search excerpt rendered as its message is.
// It saves dashboard-reading.png next to this file, to be looked at.
//
// Run: PAPO=path/to/papo node --test tests/clients/dashboard_reading.test.mjs
// (after `npm ci --prefix tests/clients`; needs /usr/bin/chromium, or
// CHROMIUM=path).
import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { daemonSet, png, sleep, until, watchPage } from './daemons.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const RATE = { PAPO_RATE: '600/min,200' };

const { bin: PAPO, root, papo, serve: start, stop, finish, step } = daemonSet('papo-reading-');
const serve = (name, opts = {}) => start(name, { member: name, ...opts });

async function api(d, p, body, { raw, type } = {}) {
  const init = { headers: {} };
  if (raw !== undefined) {
    init.method = 'POST';
    init.headers['Content-Type'] = type || 'application/octet-stream';
    init.body = raw;
  } else if (body !== undefined) {
    init.method = 'POST';
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(d.info.http + p, init);
  const j = await res.json();
  if (!res.ok) throw new Error(`${p}: ${res.status} ${j.error}`);
  return j;
}

// Sends one after the other, a few ms apart, so that times order them.
async function say(d, body) {
  const r = await api(d, '/api/send', body);
  await sleep(15);
  return r.id;
}

// The timeline as the reader sees it: each message's id, whether its
// author's name is shown, its text, its delivery line and its replies.
function timeline(page) {
  return page.evaluate(() => [...document.querySelectorAll('#messages li.msg')].map((li) => {
    const from = li.querySelector('.from');
    return {
      id: li.dataset.id,
      from: from?.textContent,
      nameShown: !!from && from.checkVisibility(),
      text: li.querySelector('.text')?.textContent ?? null,
      delivery: li.querySelector('.delivery')?.textContent ?? '',
      replies: li.querySelector('.replies-count')?.textContent ?? null,
      quote: li.querySelector('a.parent')?.innerText ?? null,
      time: li.querySelector('time.ts')?.textContent ?? null,
    };
  }));
}

// The view's distance from the bottom, and whether the last message is
// wholly in view.
function bottom(page) {
  return page.evaluate(() => {
    const s = document.getElementById('scroller');
    const all = document.querySelectorAll('#messages li.msg');
    const last = all[all.length - 1];
    const sr = s.getBoundingClientRect();
    const lr = last.getBoundingClientRect();
    return {
      gap: s.scrollHeight - s.scrollTop - s.clientHeight,
      lastInView: lr.top >= sr.top - 1 && lr.bottom <= sr.bottom + 1,
      lastId: last.dataset.id,
      images: [...document.querySelectorAll('#messages img.file-image')]
        .map((i) => i.complete && i.naturalHeight > 0 && i.getBoundingClientRect().height > 100),
    };
  });
}

describe('the dashboard for reading', { timeout: 300_000 }, () => {
  let A, B, browser, ctx, page, httpPort, quicAddr;
  const ids = {};
  const dialogs = [];
  const problems = [];
  const consoleLog = [];

  before(async () => {
    assert.ok(fs.existsSync(PAPO), `no papo binary at ${PAPO} (set PAPO)`);
    assert.ok(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}`);
    A = await serve('ana', { env: RATE });
    httpPort = new URL(A.info.http).port;
    quicAddr = A.info.quic;
    papo(path.join(root, 'bo'), ['join', A.info.invite, '--name', 'bo']);
    B = await serve('bo', { env: RATE });
    await until('ana to see bo online', async () =>
      (await api(A, '/api/status')).members.some((m) => m.name === 'bo' && m.online), 30_000, 200);

    // A conversation: ana's plan, bo's three lines, bo's answer to the
    // plan, ana's thanks.  The answer comes after the three lines.
    ids.plan = await say(A, { text: 'the plan, by ana' });
    ids.b1 = await say(B, { text: 'bo chats one' });
    ids.b2 = await say(B, { text: 'bo chats two' });
    ids.b3 = await say(B, { text: 'bo chats three' });
    ids.answer = await say(B, { text: 'bo answers the plan', reply_to: ids.plan });
    ids.thanks = await say(A, { text: 'thanks, from ana' });
    // Enough lines to fill the view, then a picture and a last line.
    for (let i = 0; i < 30; i++) ids.last = await say(B, { text: `filler line ${i} from bo` });
    const pic = await api(A, '/api/blobs?name=tall.png', undefined, { raw: png(300, 600), type: 'image/png' });
    const notes = await api(A, '/api/blobs?name=notes.txt', undefined, { raw: 'n'.repeat(8900), type: 'text/plain' });
    ids.picture = await say(A, { text: 'a picture', files: [pic.ref, notes.ref] });
    ids.last = await say(A, { text: 'the newest line, under the picture' });
    await until('ana\'s picture in her history', async () => {
      const h = await api(A, '/api/history?limit=100');
      return h.messages.some((m) => m.id === ids.picture) || null;
    });

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
    ctx = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: 'en-US' });
    page = await ctx.newPage();
    watchPage(page, 'reading', { dialogs, problems, consoleLog });
  });

  after(() => finish({
    close: () => browser?.close(),
    report: () => {
      console.error('page console:');
      for (const l of consoleLog.slice(-40)) console.error('  ' + l);
    },
  }));

  step('a room with an image opens at its newest message, once the image is in', async () => {
    await page.goto(`${A.info.http}/`);
    await until('the stream open', async () => (await page.getAttribute('#conn', 'data-state')) === 'live');
    await until('the picture shown', async () => (await bottom(page)).images.some(Boolean) || null, 20_000);
    await sleep(500);   // what a late layout would move
    const b = await bottom(page);
    assert.equal(b.lastId, ids.last, 'the newest message is the last one shown');
    assert.ok(b.gap < 2, `scrolled to the bottom (${b.gap} px above it)`);
    assert.ok(b.lastInView, 'the newest message is in view');
  });

  step('a message that got a reply stays where its time puts it; the reply quotes it', async () => {
    const t = await timeline(page);
    const order = t.map((m) => m.id).filter((id) =>
      [ids.plan, ids.b1, ids.b2, ids.b3, ids.answer, ids.thanks].includes(id));
    assert.deepEqual(order, [ids.plan, ids.b1, ids.b2, ids.b3, ids.answer, ids.thanks],
      'in time order: the plan above bo\'s lines, the answer after them');
    const times = t.map((m) => m.id);
    assert.ok(times.indexOf(ids.plan) < times.indexOf(ids.answer), 'the parent above its reply');
    const plan = t.find((m) => m.id === ids.plan);
    assert.equal(plan.replies, '1 reply', 'the plan counts its reply');
    const answer = t.find((m) => m.id === ids.answer);
    assert.match(answer.quote || '', /ana.*the plan, by ana/, `the reply quotes the plan: ${answer.quote}`);
    // The count opens the conversation at the side, oldest first.
    await page.click(`#m-${ids.plan} button.replies-count`);
    await until('the thread panel', async () =>
      (await page.locator('#thread-list li.msg').count()) === 2, 10_000, 100);
    assert.deepEqual(await page.$$eval('#thread-list li.msg', (e) => e.map((x) => x.dataset.id)),
      [ids.plan, ids.answer]);
    await page.click('#thread-close');
  });

  step('consecutive messages of one author are grouped: the name once', async () => {
    const t = await timeline(page);
    const at = (id) => t.find((m) => m.id === id);
    assert.equal(at(ids.b1).nameShown, true, 'bo named on the first of his lines');
    assert.equal(at(ids.b2).nameShown, false, 'not again on the second');
    assert.equal(at(ids.b3).nameShown, false, 'nor on the third');
    assert.equal(at(ids.answer).nameShown, false, 'his answer, a minute later at most, continues the group');
    assert.equal(at(ids.thanks).nameShown, true, 'ana named again');
    // Ids are for who asks: not shown until hovered.
    assert.equal(await page.locator(`#m-${ids.b2} .mid`).isVisible(), false, 'no id shown');
    await page.hover(`#m-${ids.b2} .text`);
    assert.equal(await page.locator(`#m-${ids.b2} .mid`).isVisible(), true, 'the id on hover');
  });

  step('one format: times as in search, sizes in KiB, online as papo rooms says it; the network panel closed', async () => {
    const t = await timeline(page);
    const plan = t.find((m) => m.id === ids.plan);
    assert.match(plan.time, /^\d\d:\d\d$/, `today's time: ${plan.time}`);
    await page.fill('#search-q', 'plan');
    await page.press('#search-q', 'Enter');
    const hit = await until('the search result', () => page.evaluate((id) => {
      const b = document.querySelector(`#results-list button.result-open[data-id="${id}"]`);
      return b ? b.querySelector('time.ts').textContent : null;
    }, ids.plan), 15_000);
    assert.equal(hit, plan.time, 'the result\'s time as the timeline\'s');
    await page.click('#search-close');
    const sizes = await page.$$eval(`#m-${ids.picture} .file-size`, (e) => e.map((x) => x.textContent));
    assert.ok(sizes.includes('8.7 KiB'), `8,900 bytes as the CLI writes them: ${sizes}`);
    assert.equal(await page.textContent('#members-count'), '1 of 1 online');
    assert.equal(await page.getAttribute('#net-box', 'open'), null, 'the network panel is closed');
    assert.equal(await page.isVisible('#net'), false, 'no network diagram in the way');
    assert.equal(await page.isVisible('#reach'), false, 'nor the NAT and address');
    await page.click('#net-box summary');
    assert.equal(await page.isVisible('#net'), true, 'opened when asked');
    await page.click('#net-box summary');
    await page.screenshot({ path: path.join(HERE, 'dashboard-reading.png'), animations: 'disabled' });
  });

  step('receipts shown stay after the daemon restarts', async () => {
    const plan = await until('the plan shown with its receipt', async () => {
      const m = (await timeline(page)).find((x) => x.id === ids.plan);
      return m && /bo/.test(m.delivery) ? m : null;
    });
    const before = plan.delivery;
    assert.match(before, /(delivered to|read by) bo/);
    const thanks = (await timeline(page)).find((x) => x.id === ids.thanks);
    assert.match(thanks.delivery, /delivered to bo/);
    await stop(A);
    A = await serve('ana', { http: `127.0.0.1:${httpPort}`, listen: quicAddr, env: RATE });
    const h = await api(A, '/api/history?limit=100');
    const hp = h.messages.find((m) => m.id === ids.plan);
    assert.ok(Array.isArray(hp.receipts) && hp.receipts.some((r) => r.by === 'bo' && r.state === 'delivered'),
      `/api/history carries the plan's receipts: ${JSON.stringify(hp.receipts)}`);
    assert.equal(h.messages.find((m) => m.id === ids.b1).receipts, undefined, 'none on others\' messages');
    await page.reload();
    await until('the page live again', async () =>
      (await page.getAttribute('#conn', 'data-state')) === 'live', 40_000);
    const after = await until('the plan shown again', async () =>
      (await timeline(page)).find((x) => x.id === ids.plan) || null);
    assert.equal(after.delivery, before, 'the same receipts as before the restart');
    assert.match((await timeline(page)).find((x) => x.id === ids.thanks).delivery, /delivered to bo/);
    assert.deepEqual(problems, [], 'no page error');
    assert.deepEqual(dialogs, []);
  });

  step('GitHub\'s Markdown: a table, ~~struck~~, a bare URL, @bo; a search excerpt rendered too', async () => {
    const id = await say(A, { text: '| plan | cost |\n|---|--:|\n| zebrafish | 12 |\n\n' +
      '~~oldword~~ for @bo: see https://example.com/zebra' });
    const got = await until('the message rendered', async () => page.evaluate((mid) => {
      const li = document.querySelector(`[data-id="${mid}"]`);
      const t = li && li.querySelector('.text.md');
      if (!t || !t.querySelector('table')) return null;
      const td = t.querySelector('td:last-child');
      const a = t.querySelector('a.md-link');
      return {
        cells: [...t.querySelectorAll('th, td')].map((c) => c.textContent),
        align: td.style.textAlign,
        del: t.querySelector('del')?.textContent,
        mention: t.querySelector('.mention')?.textContent,
        href: a?.getAttribute('href'),
      };
    }, id), 20_000);
    assert.deepEqual(got.cells, ['plan', 'cost', 'zebrafish', '12']);
    assert.equal(got.align, 'right', 'the column aligned as its delimiter says');
    assert.equal(got.del, 'oldword');
    assert.equal(got.mention, '@bo');
    assert.equal(got.href, 'https://example.com/zebra', 'the bare URL a link');
    await page.fill('#search-q', 'oldword');
    await page.press('#search-q', 'Enter');
    const hit = await until('the hit', async () => page.evaluate(() => {
      const ex = document.querySelector('.result .result-excerpt');
      return ex && ex.querySelector('mark') ? {
        text: ex.textContent,
        struck: ex.querySelector('del mark')?.textContent,
        raw: /~~/.test(ex.textContent),
      } : null;
    }), 20_000);
    assert.equal(hit.struck, 'oldword', `the word found, marked inside its strikethrough: ${hit.text}`);
    assert.equal(hit.raw, false, 'no raw Markdown in the excerpt');
    assert.deepEqual(problems, [], 'no page error');
  });
});
