// daemons.mjs: what the Node tests of tests/clients/ share to run papo
// daemons of their own: the papo binary to test, an environment without
// the caller's papo settings, a temporary root for the daemons' homes,
// `papo serve` on ports of the daemon's own choosing (waited for through
// serve.json), the papo CLI, polling, a clean stop, and the steps of a
// test with the report of a failure.  No daemon outlives the test process,
// whatever happens.  Importing it starts nothing: load.test.mjs's stream
// process imports it too.
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ANY = '127.0.0.1:0'; // the daemon picks the port, serve.json tells it
const SANITIZER = /ERROR: (Address|Leak)Sanitizer|runtime error:/;

// The papo to test: $PAPO, else the first argument (node x.test.mjs
// path/to/papo), else the default build's.
export function papoPath() {
  return path.resolve(
    process.env.PAPO ||
      (process.argv[2] && !process.argv[2].endsWith('.mjs') ? process.argv[2] : '') ||
      path.join(HERE, '..', '..', 'build', 'papo'),
  );
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The environment of the daemons, the CLI and any Node child: nothing of
// the caller's papo settings, and not node --test's context (a Node child
// that inherits it takes itself for a test file of the runner's).
export const cleanEnv = { ...process.env };
for (const k of ['PAPO_HOME', 'PAPO_NAME', 'PAPO_ROOM', 'PAPO_INVITE', 'PAPO_HTTP', 'PAPO_LISTEN', 'PAPO_TOKEN', 'PAPO_MCP_IDLE', 'NODE_TEST_CONTEXT'])
  delete cleanEnv[k];
// Tests send traffic only to loopback: no LAN beacons, and no asking a
// router for a port, on this machine's interfaces.
cleanEnv.PAPO_LAN = 'off';
cleanEnv.PAPO_PORTMAP = 'off';
// The tests send far faster than an agent may (PAPO_RATE's default is
// 20/min,10): a rate no test reaches, unless a test sets its own.
if (!cleanEnv.PAPO_RATE) cleanEnv.PAPO_RATE = '1000000/s';

// The promise's value, or an error after ms (the timer does not outlive it).
export function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} (after ${ms} ms)`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

// Polls fn until it returns something truthy, and returns that; the last
// error, or else the last value, is in the message when it never does.
// An error fn throws with final set ends the wait at once.
export async function until(what, fn, ms = 30_000, every = 150) {
  const deadline = Date.now() + ms;
  let last, seen;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      seen = v;
    } catch (e) {
      if (e.final) throw e;
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${ms} ms waiting for ${what}` +
        (last ? `: ${last.message}` : seen !== undefined ? ` (last: ${JSON.stringify(seen)})` : ''));
    await sleep(every);
  }
}

const running = (proc) => proc.exitCode === null && proc.signalCode === null;

// A set of daemons whose homes are under a new temporary root (prefix:
// its name's start, as papo-mcp-).  daemons maps the name each was
// started with to the last one started with it: { name, home, proc,
// exit (a promise of {code, signal}), errFile (its stderr), token, info
// (its serve.json) }.  The caller removes root when it is done (finish
// does).  stepTimeout: the default time a step may take.
export function daemonSet(prefix, { stepTimeout = 60_000 } = {}) {
  const bin = papoPath();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const daemons = {};
  const started = []; // every one, restarts included
  process.on('exit', () => {
    // Whatever happened, leave no daemon behind.
    for (const d of started) if (running(d.proc)) d.proc.kill('SIGKILL');
  });

  // The papo CLI with home as PAPO_HOME: its stdout, or it throws.
  function papo(home, args) {
    return execFileSync(bin, args, {
      env: { ...cleanEnv, PAPO_HOME: home },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 30_000,
    });
  }

  // Starts `papo serve` in root/name (its stderr appended to
  // root/name.err) and waits for the serve.json it writes, with this
  // process's pid: one left by an earlier daemon in that home does not
  // count.  http and listen: the addresses (a port of its choosing by
  // default); member: --name; token: --token; env: variables added to
  // the daemon's environment (as { PAPO_MCP_IDLE: '2' }).
  async function serve(name, { http = ANY, listen = ANY, member, token, env = {} } = {}) {
    const home = path.join(root, name);
    const errFile = path.join(root, `${name}.err`);
    const args = ['serve', '--http', http, '--listen', listen];
    if (member) args.push('--name', member);
    if (token) args.push('--token', token);
    const err = fs.openSync(errFile, 'a');
    const proc = spawn(bin, args, { env: { ...cleanEnv, ...env, PAPO_HOME: home }, stdio: ['ignore', 'ignore', err] });
    fs.closeSync(err);
    const exit = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
    const d = { name, home, proc, exit, errFile, token };
    daemons[name] = d;
    started.push(d);
    const tail = () => fs.readFileSync(errFile, 'utf8').split('\n').slice(-6).join('\n');
    d.info = await until(`${name}'s serve.json`, () => {
      if (!running(proc))
        throw Object.assign(new Error(`papo serve exited ${proc.exitCode ?? proc.signalCode}`), { final: true });
      const j = JSON.parse(fs.readFileSync(path.join(home, 'serve.json'), 'utf8'));
      if (j.pid !== proc.pid) throw new Error(`serve.json is of pid ${j.pid}, not ${proc.pid}`);
      return j.http && j.mcp && j.invite ? j : null;
    }).catch((e) => {
      throw new Error(`${e.message}\n${tail()}`);
    });
    for (const k of ['http', 'mcp', 'invite', 'quic', 'pid'])
      assert.ok(k in d.info, `serve.json has ${k}: ${JSON.stringify(d.info)}`);
    // Run over HTTPS (https.sh sets a certificate for every daemon): the
    // URLs must say so, or the run would silently test plain HTTP.
    if ((env.PAPO_TLS_CERT || cleanEnv.PAPO_TLS_CERT))
      assert.match(d.info.http, /^https:\/\//, `${name} serves https: ${d.info.http}`);
    return d;
  }

  // Stops d as a person would (SIGTERM) and checks that it stopped
  // cleanly within ms: exit code 0, no sanitizer report.  Returns its
  // stderr.
  async function stop(d, ms = 60_000) {
    d.proc.kill('SIGTERM');
    const { code, signal } = await within(d.exit, ms, `${d.name} still runs after SIGTERM`);
    assert.equal(code, 0, `${d.name} exits 0 on SIGTERM (signal ${signal})`);
    const log = fs.readFileSync(d.errFile, 'utf8');
    assert.doesNotMatch(log, SANITIZER, `${d.name}: no sanitizer report`);
    return log;
  }

  // Kills what still runs (after a failure) and waits until all are gone.
  async function killAll() {
    for (const d of started) if (running(d.proc)) d.proc.kill('SIGKILL');
    await Promise.all(started.map((d) => d.exit));
  }

  // Steps of a test that builds on its earlier steps: a test (node:test's
  // it) whose failure is noted, so that finish reports the daemons' logs.
  let failed = false;
  function step(name, fn, timeout = stepTimeout) {
    it(name, { timeout }, async (t) => {
      try {
        await fn(t);
      } catch (e) {
        failed = true;
        throw e;
      }
    });
  }

  // The after hook of a test: close (its own things: browsers, clients,
  // servers) undone first, whatever fails there; then no daemon left
  // running; after a failed step, report (the test's own lines, as the
  // page's console) and the last lines of every daemon's stderr; the
  // root removed.  close's error, if any, is thrown last.
  async function finish({ close, report, lines = 40 } = {}) {
    let closeError;
    try {
      await close?.();
    } catch (e) {
      closeError = e;
    }
    await killAll();
    if (failed) {
      report?.();
      for (const d of started.filter((x) => daemons[x.name] === x)) {
        let log = '';
        try { log = fs.readFileSync(d.errFile, 'utf8'); } catch { /* none */ }
        const all = log.split('\n');
        console.error(`${d.name}'s stderr (last ${Math.min(lines, all.length)} of ${all.length} lines):\n` +
          all.slice(-lines).map((l) => `  ${l}`).join('\n'));
      }
    }
    fs.rmSync(root, { recursive: true, force: true });
    if (closeError) throw closeError;
  }

  return { bin, root, daemons, papo, serve, stop, killAll, step, finish, failed: () => failed };
}

// A step that needs what an earlier one set up says so, instead of a
// TypeError.
export function need(ok) {
  assert.ok(ok, 'needs the earlier steps (see the first failure above)');
}

/*
 * A browser page watched as the dashboard tests watch theirs: dialogs
 * (an alert an injected script would raise) dismissed and noted, page
 * errors and Content Security Policy violations noted as problems, the
 * console kept for a failure's report; each line begins with label.
 */
export function watchPage(p, label, { dialogs, problems, consoleLog }) {
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

// A PNG of w x h pixels in four coloured quarters, made here (the
// dashboard tests' images).
export function png(w, h) {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const rows = [];
  for (let y = 0; y < h; y++) {
    const row = [0];
    for (let x = 0; x < w; x++) {
      const q = (x < w / 2 ? 0 : 1) + (y < h / 2 ? 0 : 2);
      row.push(...[[220, 40, 40], [40, 160, 60], [40, 80, 220], [240, 200, 40]][q]);
    }
    rows.push(Buffer.from(row));
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))]);
}
