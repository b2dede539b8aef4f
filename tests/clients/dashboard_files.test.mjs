// dashboard_files.test.mjs: files on papo's dashboard as a person sees
// them in a browser (docs/FILES.md).  Two daemons, ana and bo, share a
// room; bo shares a PNG, a text file holding "<script>" and a text file
// named like an HTML element, through the API; a headless Chromium
// (Debian's, driven by playwright-core) on ana's dashboard shows the
// three under the message with their sizes, the image previewed (a
// blob: URL the CSP allows), the text's first bytes previewed as text,
// and the hostile name and content as text; the download gives the same
// bytes; a file larger than ana's PAPO_FILES_AUTO waits for the Fetch
// button, then comes (its state from the stream's file events); a file
// attached with the composer's attach button reaches bo.
// The page raises no dialog and no CSP violation.  It saves
// papo-dashboard-files.png in $SHOTS, else the system's temporary
// folder (the path is printed), to be looked at.
//
// Fetching between members needs the node's transfer engine
// (node/room/xfer.c).
//
// Run: PAPO=path/to/papo node --test tests/clients/dashboard_files.test.mjs
// (after `npm ci --prefix tests/clients`; needs /usr/bin/chromium, or
// CHROMIUM=path).
import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { daemonSet, need, png, until, watchPage } from './daemons.mjs';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const XSS_NAME = '<img src=x onerror=alert(1)>.txt';
const NOTES = '<script>alert("no")</script>\nfirst line of the log\n';

const { bin: PAPO, root, papo, serve: start, stop, step, finish } = daemonSet('papo-webfiles-');
const serve = (name, opts = {}) => start(name, { member: name, ...opts });

async function api(d, p, body, { raw, type } = {}) {
  const headers = {};
  if (d.token) headers.Authorization = `Bearer ${d.token}`;
  const init = { headers };
  if (raw !== undefined) {
    init.method = 'POST';
    headers['Content-Type'] = type || 'application/octet-stream';
    init.body = raw;
  } else if (body !== undefined) {
    init.method = 'POST';
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(d.info.http + p, init);
  const j = await res.json();
  if (!res.ok) throw new Error(`${p}: ${res.status} ${j.error}`);
  return j;
}

async function blob(d, ref, room) {
  const headers = d.token ? { Authorization: `Bearer ${d.token}` } : {};
  const res = await fetch(`${d.info.http}/api/blobs/${ref}?room=${room}`, { headers });
  if (!res.ok) throw new Error(`GET /api/blobs/${ref}: ${res.status} ${await res.text()}`);
  return Buffer.from(await res.arrayBuffer());
}

// What the page shows of the message whose text is text.
function shownFiles(page, text) {
  return page.evaluate((t) => {
    const li = [...document.querySelectorAll('#messages li.msg')].reverse()
      .find((e) => e.querySelector('.text')?.textContent === t);
    if (!li) return null;
    return [...li.querySelectorAll('ul.files > li.file')].map((f) => {
      const img = f.querySelector('img.file-image');
      return {
        ref: f.dataset.ref,
        state: f.dataset.state,
        name: f.querySelector('.file-name')?.textContent,
        size: f.querySelector('.file-size')?.textContent,
        download: !!f.querySelector('button.file-download'),
        img: img ? { src: img.getAttribute('src'), w: img.naturalWidth, shown: img.complete && img.naturalWidth > 0 } : null,
        text: f.querySelector('pre.file-text')?.textContent ?? null,
        html: f.innerHTML,
      };
    });
  }, text);
}

describe('files on the dashboard', { timeout: 240_000 }, () => {
  let A, B, browser, page, pic, refs;
  const dialogs = [];
  const problems = [];
  const consoleLog = [];

  before(async () => {
    assert.ok(fs.existsSync(PAPO), `no papo binary at ${PAPO} (set PAPO)`);
    assert.ok(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}`);
    // ana fetches at once only files of at most 4 KiB: larger ones wait
    // for the Fetch button.
    A = await serve('ana', { env: { PAPO_FILES_AUTO: '4K' } });
    papo(path.join(root, 'bo'), ['join', A.info.invite, '--name', 'bo']);
    B = await serve('bo');
    await until('ana to see bo online', async () =>
      (await api(A, '/api/status')).members.some((m) => m.name === 'bo' && m.online), 30_000, 200);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
    const ctx = await browser.newContext({ viewport: { width: 1100, height: 900 }, acceptDownloads: true });
    page = await ctx.newPage();
    watchPage(page, 'files', { dialogs, problems, consoleLog });
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

  step('bo shares a PNG and two text files: ana\'s page lists them with previews', async () => {
    pic = png(96, 64);
    const p = await api(B, '/api/blobs?name=chart.png', undefined, { raw: pic, type: 'image/png' });
    const t = await api(B, '/api/blobs?name=notes.txt', undefined, { raw: NOTES, type: 'text/plain' });
    const x = await api(B, `/api/blobs?name=${encodeURIComponent(XSS_NAME)}`, undefined, { raw: '<b>bold?</b>', type: 'text/plain' });
    refs = { png: p.ref, notes: t.ref, xss: x.ref };
    await api(B, '/api/send', { text: 'files for ana', files: [p.ref, t.ref, x.ref] });
    const files = await until('the three files, previewed', async () => {
      const f = await shownFiles(page, 'files for ana');
      return f && f.length === 3 && f[0].img?.shown && f[1].text !== null && f[2].text !== null ? f : null;
    }, 45_000, 200);
    assert.deepEqual(files.map((f) => f.name), ['chart.png', 'notes.txt', XSS_NAME]);
    assert.match(files[0].size, /^\d+(\.\d)? (bytes|KiB)$/, `a human size: ${files[0].size}`);
    assert.equal(files[0].img.w, 96, 'the image itself');
    assert.match(files[0].img.src, /^blob:/, 'shown from a blob: URL');
    assert.ok(files.every((f) => f.state === 'here' && f.download), 'each here, with a download');
    // Hostile content and names are text.
    assert.equal(files[1].text, NOTES, 'the text\'s first bytes, as text');
    assert.doesNotMatch(files[1].html, /<script/, 'no script element made of it');
    assert.equal(files[2].text, '<b>bold?</b>');
    assert.doesNotMatch(files[2].html, /<img src="?x/, 'no element made of the name');
    assert.doesNotMatch(files[2].html, /<b>/, 'no element made of the content');
  });

  step('the download gives the same bytes', async () => {
    need(refs);
    const btn = page.locator(`li.file[data-ref="${refs.png}"] button.file-download`);
    const [dl] = await Promise.all([page.waitForEvent('download'), btn.click()]);
    assert.equal(dl.suggestedFilename(), 'chart.png');
    const saved = path.join(root, 'downloaded.png');
    await dl.saveAs(saved);
    assert.deepEqual(fs.readFileSync(saved), pic, 'identical bytes');
    const btn2 = page.locator(`li.file[data-ref="${refs.notes}"] button.file-download`);
    const [dl2] = await Promise.all([page.waitForEvent('download'), btn2.click()]);
    const saved2 = path.join(root, 'downloaded.txt');
    await dl2.saveAs(saved2);
    assert.equal(fs.readFileSync(saved2, 'utf8'), NOTES);
  });

  step('a file larger than PAPO_FILES_AUTO has a Fetch button, then downloads', async () => {
    const data = Buffer.alloc(200 * 1024);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7919) % 251;
    const up = await api(B, '/api/blobs?name=data.bin', undefined, { raw: data });
    await api(B, '/api/send', { text: 'a large one', files: [up.ref] });
    const named = await until('the file shown as named, with Fetch', async () => {
      const f = await shownFiles(page, 'a large one');
      return f && f.length === 1 && f[0].state === 'named' ? f[0] : null;
    }, 30_000, 200);
    assert.equal(named.name, 'data.bin');
    assert.equal(named.size, '200.0 KiB');
    assert.equal(named.download, false, 'no download before it is here');
    await page.click(`li.file[data-ref="${up.ref}"] button.file-fetch`);
    await until('the file here, from the file events', async () => {
      const f = await shownFiles(page, 'a large one');
      return f && f[0].state === 'here' && f[0].download;
    }, 30_000, 200);
    const [dl] = await Promise.all([page.waitForEvent('download'),
      page.click(`li.file[data-ref="${up.ref}"] button.file-download`)]);
    const saved = path.join(root, 'data.bin');
    await dl.saveAs(saved);
    assert.ok(fs.readFileSync(saved).equals(data), 'identical bytes');
  });

  step('a file attached with the attach button reaches bo', async () => {
    const file = path.join(root, 'from-ana.txt');
    const body = 'ana attached this\n'.repeat(20);
    fs.writeFileSync(file, body);
    await page.setInputFiles('#attach-input', file);
    await until('the file listed in the composer', async () =>
      (await page.textContent('#attached'))?.includes('from-ana.txt'));
    await page.fill('#text', 'here is my file');
    await page.click('#send');
    const m = await until('bo to have the message with its file', async () => {
      const h = await api(B, '/api/history?limit=20');
      return h.messages.find((x) => x.text === 'here is my file' && x.files?.length === 1);
    }, 30_000, 200);
    assert.equal(m.files[0].name, 'from-ana.txt');
    assert.equal(m.files[0].size, Buffer.byteLength(body));
    const room = (await api(B, '/api/status')).room_id;
    const got = await until('bo to hold it', () => blob(B, m.files[0].ref, room), 30_000, 300);
    assert.equal(got.toString(), body, 'the same bytes at bo');
    assert.equal(await page.isVisible('#attached'), false, 'the composer is empty again');
  });

  step('a screenshot, no dialog, no CSP violation', async () => {
    const shot = path.join(process.env.SHOTS || os.tmpdir(), 'papo-dashboard-files.png');
    await page.locator(`li.file[data-ref="${refs?.png}"]`).scrollIntoViewIfNeeded().catch(() => {});
    await page.screenshot({ path: shot });
    console.log(`screenshot: ${shot}`);
    assert.ok(fs.statSync(shot).size > 5000, 'a screenshot was taken');
    assert.deepEqual(dialogs, [], 'no dialog (no injected script ran)');
    assert.deepEqual(problems, [], 'no page error or CSP violation');
  });
});
