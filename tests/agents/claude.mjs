// claude.mjs: what claude.test.mjs and measure.mjs share to run the REAL
// Claude Code CLI (tests/agents/node_modules, pinned) against the scripted
// model of model.mjs and papo daemons of their own: the binary, a
// temporary HOME per case with nothing left to prompt, papo added the way
// `papo setup claude-code` adds it (by hand when this papo has no setup),
// the agent's script, `claude -p`, interactive sessions in tmux, and
// reading what reached the model.  Nothing here leaves loopback: the
// callers run inside a network namespace (run.sh).
import { spawn, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { blocks, isMain, textOf } from './model.mjs';
import { cleanEnv, daemonSet, papoPath, sleep, until } from '../clients/daemons.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const WAIT = 'mcp__papo__wait';
export const STATUS = 'mcp__papo__status';

// The native binary: bin/claude.exe once the package's postinstall has
// run; the platform package's own binary if it did not.
export function claudePath() {
  const pkg = path.join(HERE, 'node_modules', '@anthropic-ai');
  const bin = path.join(pkg, 'claude-code', 'bin', 'claude.exe');
  try {
    if (fs.statSync(bin).size > 1e6) return bin;
  } catch {
    // not installed: below
  }
  for (const p of ['linux-x64', 'linux-arm64', 'linux-x64-musl', 'linux-arm64-musl']) {
    const b = path.join(pkg, `claude-code-${p}`, 'claude');
    if (fs.existsSync(b)) return b;
  }
  throw new Error(`no Claude Code binary under ${pkg}: run npm install --no-save --prefix tests/agents`);
}

// Claude Code runs only where nothing can leave the machine: in a
// network namespace whose only interface is loopback (run.sh makes one).
// Anywhere else this exits at once, before anything starts.
export function offlineOrExit() {
  // /proc/self/net/dev is this process's namespace's (sysfs may be the host's)
  const ifs = fs.readFileSync('/proc/self/net/dev', 'utf8').split('\n').slice(2)
    .map((l) => l.split(':')[0].trim()).filter((n) => n && n !== 'lo');
  if (ifs.length) {
    console.log(`agents: refusing to run Claude Code with network interfaces up (${ifs.join(', ')}): run it through tests/agents/run.sh`);
    process.exit(1);
  }
}

export const hasTmux = () => spawnSync('tmux', ['-V']).status === 0;

// Does this papo have `papo setup`?
export function hasSetup(papo) {
  return spawnSync(papo, ['setup', '--help'], { stdio: 'ignore' }).status === 0;
}

// A HOME for one Claude Code: onboarding done, the API key "test"
// approved, cwd trusted, bypass mode's disclaimer accepted; papo added
// (stdio through `papo mcp`, or http at the daemon's /mcp) by `papo setup
// claude-code` when there is one, else by hand as it would.  extra*:
// more keys for ~/.claude.json and ~/.claude/settings.json.  Returns
// { home, cwd, setup (its output, or null) }.
export function makeHome(root, name, { papo, papoHome, http = false, acceptInbound = true, claudeJson = {}, settings = {} }) {
  const home = path.join(root, `home-${name}`);
  const cwd = path.join(home, 'work');
  fs.mkdirSync(path.join(home, '.claude'), { recursive: true });
  fs.mkdirSync(cwd, { recursive: true });
  fs.writeFileSync(path.join(home, '.claude.json'), JSON.stringify({
    hasCompletedOnboarding: true,
    customApiKeyResponses: { approved: ['test'], rejected: [] },
    projects: { [cwd]: { hasTrustDialogAccepted: true } },
    ...claudeJson,
  }, null, 2));
  fs.writeFileSync(path.join(home, '.claude', 'settings.json'), JSON.stringify({
    skipDangerousModePermissionPrompt: true,
    ...settings,
  }, null, 2));
  let setup = null;
  if (hasSetup(papo)) {
    const args = ['setup', 'claude-code'];
    if (http) args.push('--http');
    if (acceptInbound) args.push('--accept-inbound');
    setup = execFileSync(papo, args, {
      env: { ...cleanEnv, HOME: home, PAPO_HOME: papoHome },
      encoding: 'utf8',
    });
  } else {
    const j = JSON.parse(fs.readFileSync(path.join(home, '.claude.json'), 'utf8'));
    const serve = JSON.parse(fs.readFileSync(path.join(papoHome, 'serve.json'), 'utf8'));
    j.mcpServers = {
      papo: http
        ? { type: 'http', url: serve.mcp }
        : { type: 'stdio', command: papo, args: ['mcp'], env: { PAPO_HOME: papoHome } },
    };
    fs.writeFileSync(path.join(home, '.claude.json'), JSON.stringify(j, null, 2));
    if (acceptInbound) {
      const s = JSON.parse(fs.readFileSync(path.join(home, '.claude', 'settings.json'), 'utf8'));
      s.crossSessionInbound = 'accept';
      fs.writeFileSync(path.join(home, '.claude', 'settings.json'), JSON.stringify(s, null, 2));
    }
  }
  return { home, cwd, setup };
}

// Sets a key of ~/.claude.json (after setup, so setup sees the file as
// a person's).
export function editClaudeJson(home, f) {
  const p = path.join(home, '.claude.json');
  const j = JSON.parse(fs.readFileSync(p, 'utf8'));
  f(j);
  fs.writeFileSync(p, JSON.stringify(j, null, 2));
}

// Claude Code's environment: only what it needs, offline, the model at
// model.url.
export function claudeEnv(home, model, extra = {}) {
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: 'test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    IS_SANDBOX: '1',
    // papo mcp, started by Claude Code, inherits these
    PAPO_LAN: 'off',
    PAPO_PORTMAP: 'off',
    PAPO_RATE: cleanEnv.PAPO_RATE,
  };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

// ---------------------------------------------------------------------------
// The agent's script: what the scripted model does, decided from the
// conversation it is sent.
//
//  - papo's wait not loaded yet (tool search): ToolSearch select it (and
//    status), as a real model does;
//  - fewer than `waits` calls of wait so far: await beforeWait(k) (the
//    test makes bo speak, restarts a daemon...), then call wait;
//  - new input in the newest user message after the prompt (a wake from
//    papo, a channel push, a person's prompt): await onInput(text), then
//    the tools `onInputTools` (default: wait);
//  - else end the turn.
// Every end of turn resolves the promise `agent.idle()` returns (a new
// one after each).  Side requests (no tools) get a plain answer.
export function agentScript({ waits = 0, waitArgs = { timeout_s: 5 }, beforeWait = async () => {}, onInput = async () => {}, inputTools = [WAIT] } = {}) {
  const ends = [];
  let endWaiters = [];
  const agent = {
    ends, // { n, t } of each end_turn answer
    idle(after = ends.length) {
      if (ends.length > after) return Promise.resolve(ends[after]);
      return new Promise((r) => endWaiters.push({ after, r }));
    },
    script: async (body, req) => {
      if (!isMain(body)) return 'ok';
      const msgs = body.messages;
      const names = new Set(body.tools.map((t) => t.name));
      const used = msgs.filter((m) => m.role === 'assistant' && Array.isArray(m.content))
        .flatMap((m) => m.content.filter((b) => b.type === 'tool_use'));
      const waited = used.filter((u) => u.name === WAIT).length;
      const end = (text) => {
        const e = { n: req.n, t: Date.now() };
        ends.push(e);
        const w = endWaiters;
        endWaiters = [];
        for (const x of w) if (ends.length > x.after) x.r(ends[x.after]);
        else endWaiters.push(x);
        return text;
      };
      if (!names.has(WAIT) && !used.some((u) => u.name === 'ToolSearch') && names.has('ToolSearch'))
        return { content: [{ type: 'tool_use', name: 'ToolSearch', input: { query: `select:${WAIT},${STATUS}`, max_results: 5 } }] };
      // The pending sequence of tools for new input.
      const pending = agent.pendingInput;
      if (pending?.length) {
        const name = pending.shift();
        return { content: [{ type: 'tool_use', name, input: name === WAIT ? waitArgs : {} }] };
      }
      if (waited < waits) {
        await beforeWait(waited);
        return { content: [{ type: 'text', text: `waiting (${waited + 1})` }, { type: 'tool_use', name: WAIT, input: waitArgs }] };
      }
      const input = newInput(msgs);
      if (input && !agent.seen.has(input.key)) {
        agent.seen.add(input.key);
        await onInput(input.text);
        agent.pendingInput = [...inputTools];
        const name = agent.pendingInput.shift();
        return { content: [{ type: 'text', text: 'new input: looking' }, { type: 'tool_use', name, input: name === WAIT ? waitArgs : {} }] };
      }
      return end('done');
    },
    seen: new Set(),
    pendingInput: [],
  };
  return agent;
}

// Text that came in after the first user message and after the
// assistant's last turn: a user message's text blocks that are not tool
// results, not "Tool loaded.", not system reminders.  { key, text } or
// null.  key: where it is (so it is acted on once).
export function newInput(msgs) {
  for (let m = msgs.length - 1; m > 0; m--) {
    const msg = msgs[m];
    if (msg.role === 'assistant') return null;
    if (msg.role !== 'user') continue;
    const content = typeof msg.content === 'string' ? [{ type: 'text', text: msg.content }] : msg.content;
    // A system reminder is input when it speaks of papo (a Stop hook's
    // wake comes as one).
    const texts = content.map((b, i) => ({ b, i })).filter(({ b }) => b.type === 'text' && b.text.trim() !== 'Tool loaded.' &&
      (!b.text.startsWith('<system-reminder>') || /papo/.test(b.text)));
    if (texts.length) return { key: `${m}/${texts[0].i}`, text: texts.map(({ b }) => b.text).join('\n') };
  }
  return null;
}

// ---------------------------------------------------------------------------
// What reached the model.

// The main requests' user blocks that hold needle, each block counted
// once by its place in the conversation (Claude Code resends the whole
// conversation on every turn): [{ m, b, type, text, n (first request) }].
export function userBlocksWith(requests, needle, { types } = {}) {
  const seen = new Map();
  for (const r of requests) {
    if (r.path !== '/v1/messages' || !isMain(r.body)) continue;
    for (const { m, b, role, block } of blocks(r.body)) {
      if (role !== 'user') continue;
      if (types && !types.includes(block.type)) continue;
      const text = textOf(block);
      if (!text.includes(needle)) continue;
      const k = `${m}/${b}/${text}`;
      if (!seen.has(k)) seen.set(k, { m, b, type: block.type, text, n: r.n, t: r.t });
    }
  }
  return [...seen.values()];
}

// How many times needle reached the model: its occurrences in every
// distinct user block (tool results, prompts, wakes, channel pushes).
export function timesSeen(requests, needle, opts) {
  return userBlocksWith(requests, needle, opts).reduce((n, x) => n + x.text.split(needle).length - 1, 0);
}

// The first main request after request number n whose user blocks hold
// needle (resolves when it comes; the model's onRequest).
export function requestWith(model, needle, afterN = -1) {
  const has = (r) => r.n > afterN && r.path === '/v1/messages' && isMain(r.body) &&
    blocks(r.body).some(({ role, block }) => role === 'user' && textOf(block).includes(needle));
  const found = model.requests.find(has);
  if (found) return Promise.resolve(found);
  return new Promise((resolve) => {
    const off = model.onRequest((r) => {
      if (has(r)) {
        off();
        resolve(r);
      }
    });
  });
}

// ---------------------------------------------------------------------------
// Running Claude Code.

// claude -p PROMPT --output-format stream-json --verbose ARGS: resolves to
// { code, signal, stdout, stderr, lines (the JSON lines) }.
export function claudePrint(env, cwd, prompt, args = [], { timeout = 120_000 } = {}) {
  return new Promise((resolve) => {
    const p = spawn(claudePath(), ['-p', prompt, '--output-format', 'stream-json', '--verbose', ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeout);
    p.on('exit', (code, signal) => {
      clearTimeout(timer);
      const lines = stdout.split('\n').filter(Boolean).map((l) => {
        try {
          return JSON.parse(l);
        } catch {
          return { raw: l };
        }
      });
      resolve({ code, signal, stdout, stderr, lines });
    });
  });
}

// Shell quoting for tmux's command line.
const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

// An interactive Claude Code in a tmux session of its own (its own tmux
// server socket): { screen(), keys(...k), type(text), stop(), log }.
// It presses Enter at the development-channels warning (the one answer
// that goes on).
export async function claudeTmux(env, cwd, args, { name, root }) {
  const sock = path.join(root, `tmux-${name}.sock`);
  const errFile = path.join(root, `claude-${name}.stderr`);
  const cmd = `cd ${q(cwd)} && exec env -i ${Object.entries(env).map(([k, v]) => q(`${k}=${v}`)).join(' ')} ${q(claudePath())} ${args.map(q).join(' ')} 2>${q(errFile)}`;
  const tmux = (...a) => spawnSync('tmux', ['-S', sock, ...a], { encoding: 'utf8' });
  const r = tmux('new-session', '-d', '-s', 'cc', '-x', '200', '-y', '50', cmd);
  if (r.status !== 0) throw new Error(`tmux new-session: ${r.stderr}`);
  let stopped = false;
  const pid = Number(tmux('display-message', '-p', '-t', 'cc', '#{pane_pid}').stdout.trim());
  const screen = () => tmux('capture-pane', '-p', '-t', 'cc').stdout ?? '';
  const keys = (...k) => tmux('send-keys', '-t', 'cc', ...k);
  const screens = [];
  // Dialogs that may come up at start.
  const watcher = (async () => {
    const deadline = Date.now() + 30_000;
    while (!stopped && Date.now() < deadline) {
      const s = screen();
      if (s.includes('I am using this for local development')) {
        keys('Enter');
        await sleep(500);
      }
      await sleep(200);
    }
  })();
  return {
    sock,
    pid,
    stderr: () => (fs.existsSync(errFile) ? fs.readFileSync(errFile, 'utf8').slice(-2000) : ''),
    screen,
    keys,
    type: (text) => keys('-l', text),
    snap: () => {
      const s = screen();
      screens.push(s);
      return s;
    },
    async stop() {
      stopped = true;
      const last = screen();
      tmux('kill-server');
      await watcher;
      // Claude Code gets SIGHUP; wait until it is gone (it writes its
      // HOME on the way out).
      for (let i = 0; i < 50 && pid > 0; i++) {
        try {
          process.kill(pid, 0);
        } catch {
          break;
        }
        if (i === 25) process.kill(pid, 'SIGKILL');
        await sleep(100);
      }
      return last;
    },
  };
}

// `claude mcp list`'s output (stdout and stderr), offline.
export function mcpList(env, cwd) {
  const r = spawnSync(claudePath(), ['mcp', 'list'], { env, cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

// ---------------------------------------------------------------------------
// A room of two for one case.

export async function room(name, PAPO = papoPath()) {
  const D = daemonSet(`papo-agents-${name}-`);
  D.papo(path.join(D.root, 'ana'), ['new', '--name', 'ana']);
  const ana = await D.serve('ana');
  D.papo(path.join(D.root, 'bo'), ['join', ana.info.invite, '--name', 'bo']);
  const bo = await D.serve('bo');
  for (const [d, other] of [[ana, 'bo'], [bo, 'ana']])
    await until(`${other} online`, async () => {
      const s = await (await fetch(`${d.info.http}/api/status`)).json();
      return s.members?.some((m) => m.name === other && m.online === true);
    }, 30_000, 200);
  const r = {
    D,
    get ana() {
      return D.daemons.ana;
    },
    bo,
    // bo's `papo say` (async: it may wait for ana up to 8 s).
    say: (t) => new Promise((resolve, reject) => {
      const p = spawn(PAPO, ['say', t], { env: { ...cleanEnv, PAPO_HOME: bo.home }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.stderr.on('data', (d) => (out += d));
      p.on('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`papo say exited ${code}: ${out}`))));
    }),
    // bo's messages sent side by side through its /api/send.
    burst: (texts) => Promise.all(texts.map((t) => fetch(`${bo.info.http}/api/send`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: t }),
    }).then((x) => x.json()))),
    // ana's daemon stopped and started again on the same addresses.
    async restartAna(meanwhile = async () => {}) {
      const a = D.daemons.ana;
      const http = new URL(a.info.http).host;
      const listen = a.info.quic;
      await D.stop(a);
      const m = await meanwhile();
      await D.serve('ana', { http, listen });
      return m;
    },
    // ana stored it (its history has it).
    anaHas: (t) => until(`ana stores "${t.slice(0, 40)}…"`, async () => {
      const h = await (await fetch(`${D.daemons.ana.info.http}/api/history?limit=100`)).json();
      return (h.messages ?? []).some((m) => m.text === t);
    }, 40_000, 200),
    // ana's status, as its agent's status tool gives it (a 2026-07-28
    // tools/call, no session: the daemon's own agent).
    async status() {
      const body = {
        jsonrpc: '2.0', id: 1, method: 'tools/call',
        params: {
          name: 'status', arguments: {},
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
        },
      };
      const res = await fetch(D.daemons.ana.info.mcp, {
        method: 'POST',
        headers: {
          'content-type': 'application/json', accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'status',
        },
        body: JSON.stringify(body),
      });
      const j = await res.json();
      return j.result?.structuredContent ?? j;
    },
    async close() {
      await D.killAll();
      if (process.env.PAPO_AGENTS_KEEP) return void console.log(`agents: kept ${D.root}`);
      try {
        fs.rmSync(D.root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
      } catch (e) {
        console.log(`agents: note: ${D.root} not removed: ${e.message}`);
      }
    },
    tails() {
      return Object.values(D.daemons).map((d) => `--- ${d.name}.err\n${fs.readFileSync(d.errFile, 'utf8').split('\n').slice(-15).join('\n')}`).join('\n');
    },
  };
  return r;
}


export { until, sleep };
