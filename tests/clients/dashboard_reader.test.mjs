// dashboard_reader.test.mjs: issue 25's dashboard as a reader, in a
// headless Chromium (Debian's, driven by playwright-core).  Two daemons,
// ana (the owner) and bo, share a room; bo writes through the API and
// ana's page shows:
//  - Markdown the daemon rendered (?html=1 on /history and /events; the
//    API's JSON unchanged without it): headings, lists, links that open
//    apart (rel=noopener noreferrer), code blocks in a monospace font
//    whose copy button puts the code on the clipboard;
//  - hostile Markdown harmless: javascript: and data: links, an image
//    from elsewhere, raw <script> and <img onerror>, HTML in code spans,
//    live (the stream) and after a reload (history): no dialog, no page
//    error, no CSP report, no request to anywhere but the daemon, no
//    element made of them, their text shown;
//  - a 49 KB message folded (not 21,000 px tall) behind "Show more";
//  - times with dates and day separators (the history's times moved to
//    earlier days on the way to a second page: a daemon's messages are
//    all of today);
//  - messages that came while scrolled up counted on a button, under a
//    "New messages" line, the button scrolling down to them;
//  - "Copy invite" for the owner, only after a confirmation, giving the
//    invite of GET /api/invite; none for a member (bo's own page).
// It saves dashboard-reader.png, dashboard-reader-new.png (the count of
// new messages) and dashboard-reader-phone.png (dark) next to this file, to be
// looked at.
//
// Run: PAPO=path/to/papo node --test tests/clients/dashboard_reader.test.mjs
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
// Both may send more than the default burst of 10 in this test.
const RATE = { PAPO_RATE: '600/min,200' };

const { bin: PAPO, root, papo, serve: start, stop, finish, step } = daemonSet('papo-reader-');
const serve = (name, opts = {}) => start(name, { member: name, ...opts });

const CODE = 'for (let i = 0; i < 3; i++) {\n  console.log("<b>" + i);\n}';
const MARKDOWN = [
  '## Plan for today',
  '',
  'We **decided** to ship; see [the notes](https://example.org/notes?a=1&b=2).',
  '',
  '- first item',
  '- second `inline <code>`',
  '',
  '```js',
  CODE,
  '```',
].join('\n');

// Each hostile text, and what the page must show of it as text.
const HOSTILE = [
  { text: '[click me](javascript:alert(1))', shows: 'click me' },
  { text: '![tracker](http://evil.example/x.png)', shows: 'tracker' },
  { text: '<script>alert(2)</script>', shows: '<script>alert(2)</script>' },
  { text: 'hi <img src=x onerror=alert(3)> there', shows: 'hi <img src=x onerror=alert(3)> there' },
  { text: 'code `<img src=x onerror=alert(4)>` span', shows: 'code <img src=x onerror=alert(4)> span' },
  { text: '[d](data:text/html;base64,PHNjcmlwdD5hbGVydCg1KTwvc2NyaXB0Pg==) and <a href="javascript:alert(6)">a</a>',
    shows: 'd and <a href="javascript:alert(6)">a</a>' },
  { text: '<iframe src="http://evil.example/"></iframe>\n\n*after*', shows: '<iframe src="http://evil.example/"></iframe>after' },
];

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

// What the page shows of message id.
function shown(page, id) {
  return page.evaluate((i) => {
    const li = document.getElementById('m-' + i);
    if (!li) return null;
    const body = li.querySelector('.text');
    return {
      text: body ? body.textContent : null,
      html: body ? body.innerHTML : null,
      md: !!body && body.classList.contains('md'),
      height: li.getBoundingClientRect().height,
      folded: !!body && body.classList.contains('folded'),
      fold: li.querySelector('button.fold-toggle')?.textContent ?? null,
    };
  }, id);
}

describe('the dashboard as a reader', { timeout: 240_000 }, () => {
  let A, B, browser, ctx, page, ids = {};
  const dialogs = [];
  const problems = [];
  const consoleLog = [];
  const elsewhere = [];         // requests to anywhere but the daemons

  before(async () => {
    assert.ok(fs.existsSync(PAPO), `no papo binary at ${PAPO} (set PAPO)`);
    assert.ok(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}`);
    A = await serve('ana', { env: RATE });
    papo(path.join(root, 'bo'), ['join', A.info.invite, '--name', 'bo']);
    B = await serve('bo', { env: RATE });
    await until('ana to see bo online', async () =>
      (await api(A, '/api/status')).members.some((m) => m.name === 'bo' && m.online), 30_000, 200);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
    ctx = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: 'en-US' });
    await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: A.info.http });
    ctx.on('request', (r) => {
      const u = r.url();
      if (!u.startsWith(A.info.http + '/') && !u.startsWith(B.info.http + '/') &&
          !u.startsWith('blob:') && !u.startsWith('data:')) elsewhere.push(u);
    });
    page = await ctx.newPage();
    watchPage(page, 'reader', { dialogs, problems, consoleLog });
    await page.goto(`${A.info.http}/`);
    await until('the stream open', async () => (await page.getAttribute('#conn', 'data-state')) === 'live');
  });

  after(() => finish({
    close: () => browser?.close(),
    report: () => {
      console.error('page console:');
      for (const l of consoleLog.slice(-40)) console.error('  ' + l);
    },
  }));

  step('Markdown is rendered: a heading, a list, a link that opens apart, code in a monospace block', async () => {
    ids.md = (await api(B, '/api/send', { text: MARKDOWN })).id;
    const m = await until('the message, rendered', async () => {
      const s = await shown(page, ids.md);
      return s && s.md ? s : null;
    }, 20_000);
    const dom = await page.evaluate((i) => {
      const li = document.getElementById('m-' + i);
      const a = li.querySelector('.md a');
      const pre = li.querySelector('.md pre');
      return {
        h2: li.querySelector('.md h2')?.textContent,
        strong: li.querySelector('.md strong')?.textContent,
        items: [...li.querySelectorAll('.md ul > li')].map((e) => e.textContent),
        inline: li.querySelector('.md li code')?.textContent,
        a: a && { href: a.getAttribute('href'), rel: a.rel, target: a.target, text: a.textContent },
        code: pre?.textContent,
        font: pre && getComputedStyle(pre).fontFamily,
        bodyFont: getComputedStyle(li.querySelector('.md p')).fontFamily,
        lang: li.querySelector('.code-lang')?.textContent,
        copy: !!li.querySelector('.code-block button.code-copy'),
      };
    }, ids.md);
    assert.equal(dom.h2, 'Plan for today');
    assert.equal(dom.strong, 'decided');
    assert.deepEqual(dom.items, ['first item', 'second inline <code>']);
    assert.equal(dom.inline, 'inline <code>');
    assert.deepEqual(dom.a, { href: 'https://example.org/notes?a=1&b=2', rel: 'noopener noreferrer',
      target: '_blank', text: 'the notes' });
    assert.equal(dom.code, CODE + '\n');
    assert.equal(dom.lang, 'js');
    assert.match(dom.font, /mono/i, `code in a monospace font: ${dom.font}`);
    assert.notEqual(dom.font, dom.bodyFont, 'not the text\'s font');
    assert.ok(dom.copy, 'a copy button on the code block');
    assert.doesNotMatch(m.text, /##|\*\*|```/, 'no Markdown syntax left in sight');
  });

  step('the copy button puts the code on the clipboard', async () => {
    need(ids.md);
    await page.evaluate(() => navigator.clipboard.writeText('before'));
    await page.click(`#m-${ids.md} button.code-copy`);
    await until('"Copied" on the button', async () =>
      (await page.textContent(`#m-${ids.md} button.code-copy`)) === 'Copied', 5_000);
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), CODE + '\n');
    assert.equal(await page.evaluate(() => document.getElementById('replying').hidden), true,
      'copying does not start a reply');
  });

  step('the API: html only when asked, on /api/history and /api/events', async () => {
    need(ids.md);
    const plain = await api(A, '/api/history?limit=5');
    const m = plain.messages.find((x) => x.id === ids.md);
    assert.equal(m.text, MARKDOWN);
    assert.ok(!('html' in m), 'no html for other clients');
    const rich = await api(A, '/api/history?limit=5&html=1');
    const r = rich.messages.find((x) => x.id === ids.md);
    assert.equal(r.text, MARKDOWN);
    assert.match(r.html, /^<h2>Plan for today<\/h2>/);
    assert.deepEqual(Object.keys(r).filter((k) => k !== 'html'), Object.keys(m), 'the same fields besides');
    const bad = await fetch(A.info.http + '/api/history?html=yes');
    assert.equal(bad.status, 400);
    // The stream: one message event with its html, one without.
    const read = async (q) => {
      const ctl = new AbortController();
      const res = await fetch(`${A.info.http}/api/events${q}`, { signal: ctl.signal });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      try {
        while (!buf.includes(ids.md)) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
        }
      } finally {
        ctl.abort();
      }
      const line = buf.split('\n').find((l) => l.startsWith('data: ') && l.includes(ids.md));
      return JSON.parse(line.slice(6));
    };
    const ev = await read('?html=1');
    assert.equal(ev.text, MARKDOWN);
    assert.equal(ev.html, r.html);
    assert.ok(!('html' in await read('')), 'no html in the stream unless asked');
  });

  step('hostile Markdown: nothing runs, nothing loads from elsewhere, the text is shown', async () => {
    ids.hostile = [];
    for (const h of HOSTILE) ids.hostile.push((await api(B, '/api/send', { text: h.text })).id);
    const check = async (when) => {
      for (const [i, h] of HOSTILE.entries()) {
        const s = await until(`${when}: hostile message ${i}`, async () => {
          const x = await shown(page, ids.hostile[i]);
          return x && x.md ? x : null;
        }, 20_000);
        assert.equal(s.text.replace(/\n/g, ''), h.shows, `${when}: message ${i} shows its text`);
      }
      const dom = await page.evaluate(() => {
        const root = document.getElementById('messages');
        return {
          bad: [...root.querySelectorAll('script, img, iframe, object, embed, svg, style, link')].map((e) => e.outerHTML),
          handlers: [...root.querySelectorAll('*')].flatMap((e) => [...e.attributes].map((a) => a.name))
            .filter((n) => n.startsWith('on') || n === 'style' || n === 'src' || n === 'srcdoc'),
          hrefs: [...root.querySelectorAll('a[href]')].map((a) => a.getAttribute('href')),
        };
      });
      assert.deepEqual(dom.bad, [], `${when}: no element made of the messages`);
      assert.deepEqual(dom.handlers, [], `${when}: no handler or source attribute`);
      for (const h of dom.hrefs)
        assert.doesNotMatch(h, /^\s*(javascript|data|vbscript):/i, `${when}: a harmless link: ${h}`);
      // The image from elsewhere is a link to it, never loaded.
      const img = await page.evaluate((i) => {
        const a = document.querySelector(`#m-${i} .md a`);
        return a && { href: a.getAttribute('href'), rel: a.rel, text: a.textContent };
      }, ids.hostile[1]);
      assert.deepEqual(img, { href: 'http://evil.example/x.png', rel: 'noopener noreferrer', text: 'tracker' });
    };
    await check('live');
    // The javascript: link is text: clicking it runs nothing.
    await page.click(`#m-${ids.hostile[0]} .text`);
    await page.reload();
    await until('the stream open again', async () => (await page.getAttribute('#conn', 'data-state')) === 'live');
    await check('from history');
    await page.waitForTimeout(300);
    assert.deepEqual(dialogs, [], 'no dialog');
    assert.deepEqual(problems, [], 'no page error, no CSP report');
    assert.deepEqual(elsewhere, [], 'no request to anywhere else');
  });

  step('a 49 KB message folds behind "Show more", and opens', async () => {
    const lines = [];
    for (let i = 0; lines.join('\n').length < 49_000; i++)
      lines.push(`${i}. line ${i} of a very long report, with **bold** words and \`code\` in it`);
    const text = lines.join('\n').slice(0, 49_000);
    ids.long = (await api(B, '/api/send', { text })).id;
    const s = await until('the long message, folded', async () => {
      const x = await shown(page, ids.long);
      return x && x.folded ? x : null;
    }, 20_000);
    assert.ok(s.height < 600, `folded: ${s.height} px tall`);
    assert.equal(s.fold, 'Show more');
    // Short ones do not fold.
    const short = await shown(page, ids.md);
    assert.equal(short.folded, false);
    assert.equal(short.fold, null, 'no button on a short message');
    await page.click(`#m-${ids.long} button.fold-toggle`);
    const open = await until('opened', async () => {
      const x = await shown(page, ids.long);
      return x && !x.folded && x.fold === 'Show less' ? x : null;
    }, 5_000);
    assert.ok(open.height > 5000, `whole: ${open.height} px`);
    assert.match(open.text, /line 40 of a very long report/);
    await page.click(`#m-${ids.long} button.fold-toggle`);
    const again = await until('folded again', async () => {
      const x = await shown(page, ids.long);
      return x && x.folded ? x : null;
    }, 5_000);
    assert.ok(again.height < 600);
    assert.equal(again.fold, 'Show more');
  });

  step('messages that come while scrolled up: a count on a button and a "New messages" line', async () => {
    need(ids.long);
    await page.evaluate(() => { document.getElementById('scroller').scrollTop = 0; });
    assert.equal(await page.isVisible('#new-below'), false, 'no button before');
    const fresh = [];
    for (let i = 1; i <= 3; i++) fresh.push((await api(B, '/api/send', { text: `news ${i}` })).id);
    await until('"3 new messages" on the button', async () =>
      (await page.isVisible('#new-below')) && (await page.textContent('#new-below')) === '3 new messages ↓', 20_000);
    assert.equal(await page.evaluate(() => document.getElementById('scroller').scrollTop), 0, 'the reader stays where they are');
    const marker = await page.evaluate(() => [...document.querySelectorAll('.new-marker')].map((e) =>
      ({ text: e.textContent, id: e.closest('li.msg').dataset.id })));
    assert.deepEqual(marker, [{ text: 'New messages', id: fresh[0] }], 'the line above the first of them');
    await page.screenshot({ path: path.join(HERE, 'dashboard-reader-new.png'), animations: 'disabled' });
    await page.click('#new-below');
    await until('scrolled down, the button gone', async () => !(await page.isVisible('#new-below')), 5_000);
    const where = await page.evaluate((i) => {
      const s = document.getElementById('scroller').getBoundingClientRect();
      const m = document.getElementById('m-' + i).getBoundingClientRect();
      return { top: m.top - s.top, bottom: s.bottom - m.bottom };
    }, fresh[2]);
    assert.ok(where.top >= 0 && where.bottom >= 0, `the newest in view: ${JSON.stringify(where)}`);
    // At the bottom, a new message comes without a count.
    ids.after = (await api(B, '/api/send', { text: 'seen as it came' })).id;
    await until('it is shown', async () => !!(await shown(page, ids.after)), 20_000);
    await page.waitForTimeout(100);
    assert.equal(await page.isVisible('#new-below'), false);
  });

  step('times with dates, and a separator for each day', async () => {
    need(ids.md);
    // A second page of the same daemon, its history's times moved back
    // a day per message from the newest: what a room used for a week shows.
    const p = await ctx.newPage();
    watchPage(p, 'days', { dialogs, problems, consoleLog });
    const DAY = 24 * 3600 * 1000;
    await p.route(/\/history\?/, async (route) => {
      const res = await route.fetch();
      const j = await res.json();
      const n = j.messages.length;
      j.messages.forEach((m, i) => { m.ts -= Math.min(n - 1 - i, 3) * DAY; });
      await route.fulfill({ response: res, json: j });
    });
    await p.goto(`${A.info.http}/`);
    const days = await until('day separators', async () => {
      const d = await p.evaluate(() => [...document.querySelectorAll('#messages > li.day')].map((e) => e.textContent));
      return d.length >= 4 ? d : null;
    }, 20_000);
    const label = (ts) => {
      const d = new Date(ts);
      return d.toLocaleDateString('en-US', { weekday: 'long', day: 'numeric', month: 'long',
        ...(d.getFullYear() !== new Date().getFullYear() ? { year: 'numeric' } : {}) });
    };
    const now = Date.now();
    assert.deepEqual(days, [label(now - 3 * DAY), label(now - 2 * DAY), 'Yesterday', 'Today']);
    const stamps = await p.evaluate(() => [...document.querySelectorAll('#messages li.msg time.ts')]
      .map((t) => ({ text: t.textContent, title: t.title })));
    assert.match(stamps[0].text, /[A-Za-z]/, `an older message's time has its date: ${stamps[0].text}`);
    assert.match(stamps.at(-1).text, /^\d\d:\d\d$/, `today's, the time: ${stamps.at(-1).text}`);
    assert.match(stamps.at(-1).title, /\d{4}/, 'the full date on hover');
    await p.close();
  });

  step('"Copy invite" for the owner, after a confirmation; none for a member', async () => {
    await until('the button shown to ana, the owner', () => page.isVisible('#invite'), 10_000);
    assert.equal(await page.isVisible('#invite-confirm'), false);
    await page.evaluate(() => navigator.clipboard.writeText('nothing yet'));
    await page.click('#invite');
    assert.equal(await page.isVisible('#invite-confirm'), true, 'a confirmation first');
    assert.match(await page.textContent('#invite-q'), /key/);
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'nothing yet', 'nothing copied yet');
    await page.click('#invite-cancel');
    assert.equal(await page.isVisible('#invite-confirm'), false);
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'nothing yet', 'nothing copied on cancel');
    await page.click('#invite');
    await page.click('#invite-copy');
    const want = (await api(A, '/api/invite')).invite;
    await until('the invite on the clipboard', async () =>
      (await page.evaluate(() => navigator.clipboard.readText())) === want, 5_000);
    assert.match(await page.textContent('#invite-status'), /copied/);
    // bo is a member: its own page has no such button.
    const pb = await ctx.newPage();
    watchPage(pb, 'bo', { dialogs, problems, consoleLog });
    await pb.goto(`${B.info.http}/`);
    await until('bo\'s page loaded', async () => (await pb.textContent('#me')) === 'bo', 20_000);
    await pb.waitForTimeout(300);
    assert.equal(await pb.isVisible('#invite'), false, 'no invite button for a member');
    await pb.close();
  });

  step('screenshots (desktop and phone), no dialog, no page error, nothing from elsewhere', async () => {
    need(ids.long);
    // The first day and the Markdown message in view; the folded one on the phone.
    if (await page.isVisible('#invite-confirm')) await page.click('#invite-cancel');
    await page.evaluate(() => { document.getElementById('scroller').scrollTop = 0; });
    await page.screenshot({ path: path.join(HERE, 'dashboard-reader.png'), animations: 'disabled' });
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true,
      colorScheme: 'dark' });   // the other theme too
    const pp = await phone.newPage();
    watchPage(pp, 'phone', { dialogs, problems, consoleLog });
    await pp.goto(`${A.info.http}/`);
    await until('the phone\'s page with the long message', async () => !!(await shown(pp, ids.long))?.folded, 20_000);
    const w = await pp.evaluate(() => ({ page: document.documentElement.scrollWidth, view: innerWidth }));
    assert.ok(w.page <= w.view, `nothing wider than the phone: ${JSON.stringify(w)}`);
    await pp.evaluate((i) => document.getElementById('m-' + i).scrollIntoView({ block: 'center' }), ids.long);
    await pp.screenshot({ path: path.join(HERE, 'dashboard-reader-phone.png'), animations: 'disabled' });
    await phone.close();
    assert.deepEqual(dialogs, []);
    assert.deepEqual(problems, []);
    assert.deepEqual(elsewhere, []);
    // Nothing the pages asked for failed (a route the dashboard asks
    // of every daemon, answered 404 where OAuth is off, did).
    assert.deepEqual(consoleLog.filter((l) => / error: /.test(l)), [], 'no error on any page\'s console');
  });

  step('both daemons stop cleanly (no sanitizer report)', async () => {
    need(A && B);
    await browser.close();
    browser = null;
    await stop(B);
    await stop(A);
  });
});
