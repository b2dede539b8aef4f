// copilot.mjs: what copilot.test.mjs shares to run the REAL GitHub
// Copilot CLI (@github/copilot 1.0.102, pinned in package.json) against
// the scripted Chat Completions model of model_chat.mjs and papo daemons
// of their own: a temporary HOME with papo added by `papo setup copilot
// [--http]` (by hand, as it would, when this papo has none), Copilot's
// offline environment (COPILOT_OFFLINE, COPILOT_PROVIDER_BASE_URL: no
// login), `copilot -p`, the interactive UI in tmux.  FINDINGS-copilot.md
// says what was learned.
//
// It also holds what the Chat Completions harnesses share (qwen.mjs and
// qwen.test.mjs use it): printRun (a -p run), cliTmux (an interactive CLI
// in tmux), configTree (a config folder's bytes), and chatSuite (the
// cases, given a harness).  Nothing here leaves loopback: the callers run
// inside a network namespace (run.sh, or unshare --net by hand).
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toolNames, textOf, startChatModel, chatAgent, chats, messagesWith, timesSeen, requestWith } from './model_chat.mjs';
import { room } from './claude.mjs';
import { cleanEnv, papoPath, sleep, until, within } from '../clients/daemons.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const TOOLS = { wait: 'papo-wait', send: 'papo-send' }; // Copilot names MCP tools SERVER-TOOL

export function copilotPath() {
  const p = path.join(HERE, 'node_modules', '.bin', 'copilot');
  if (!fs.existsSync(p)) throw new Error(`no Copilot CLI under ${p}: run npm install --no-save --prefix tests/agents`);
  return p;
}

// Does this papo's setup know CLIENT?
export function setupKnows(papo, client) {
  const r = spawnSync(papo, ['setup', client, '--print'], { env: { ...cleanEnv, HOME: '/nonexistent-papo-probe', PAPO_HOME: '/nonexistent-papo-probe' }, encoding: 'utf8' });
  return !/unknown client/.test(`${r.stdout}${r.stderr}`) && (r.status === 0 || /would be added/.test(r.stdout));
}

// `papo setup CLIENT [--http] [--remove]` for HOME: its output.
export function papoSetup(papo, client, home, papoHome, { http = false, remove = false } = {}) {
  const args = ['setup', client];
  if (http) args.push('--http');
  if (remove) args.push('--remove');
  return execFileSync(papo, args, { env: { ...cleanEnv, HOME: home, PAPO_HOME: papoHome }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

// A HOME for one Copilot CLI, papo added by `papo setup copilot`; when
// this papo has no setup for it, by hand as setup writes it (the MCP entry
// in mcp-config.json, the hooks in hooks/papo.json).  { home, cwd, setup }.
export function makeHome(root, name, { papo, papoHome, http = false }) {
  const home = path.join(root, `home-${name}`);
  const cwd = path.join(home, 'work');
  fs.mkdirSync(cwd, { recursive: true });
  if (setupKnows(papo, 'copilot')) return { home, cwd, setup: papoSetup(papo, 'copilot', home, papoHome, { http }) };
  const dir = path.join(home, '.copilot');
  fs.mkdirSync(path.join(dir, 'hooks'), { recursive: true });
  const serve = JSON.parse(fs.readFileSync(path.join(papoHome, 'serve.json'), 'utf8'));
  fs.writeFileSync(path.join(dir, 'mcp-config.json'), JSON.stringify({
    mcpServers: { papo: http ? { type: 'http', tools: ['*'], url: serve.mcp } : { type: 'stdio', tools: ['*'], command: papo, args: ['mcp'], env: { PAPO_HOME: papoHome } } },
  }, null, 2));
  const cmd = `PAPO_HOME='${papoHome}' ${papo} hook copilot`;
  fs.writeFileSync(path.join(dir, 'hooks', 'papo.json'), JSON.stringify({
    version: 1,
    hooks: {
      sessionStart: [{ type: 'command', bash: cmd }],
      userPromptSubmitted: [{ type: 'command', bash: cmd }],
      agentStop: [{ type: 'command', bash: cmd, timeoutSec: 86400 }],
    },
  }, null, 2));
  return { home, cwd, setup: null };
}

// Copilot CLI unpacks its 235 MB package under $XDG_CACHE_HOME (else
// ~/.cache) on a HOME's first run: 2 s alone, 28 s with ten at once.  The
// cases share one cache, filled once (by `copilot mcp list`), removed
// when the process exits.
let cache = null;
export function copilotCache() {
  if (cache) return cache;
  cache = fs.mkdtempSync(path.join(os.tmpdir(), 'papo-agents-copilot-cache-'));
  process.on('exit', () => fs.rmSync(cache, { recursive: true, force: true }));
  const home = path.join(cache, 'home');
  fs.mkdirSync(home);
  spawnSync(copilotPath(), ['mcp', 'list'], { env: { PATH: process.env.PATH, HOME: home, XDG_CACHE_HOME: cache, COPILOT_OFFLINE: 'true' }, stdio: 'ignore', timeout: 120_000 });
  return cache;
}

// Copilot CLI's environment: offline, no login, the model at model.v1.
export function copilotEnv(home, model, extra = {}) {
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
    COPILOT_OFFLINE: 'true',
    COPILOT_PROVIDER_BASE_URL: model.v1,
    COPILOT_PROVIDER_API_KEY: 'test',
    COPILOT_MODEL: 'scripted',
    COPILOT_AUTO_UPDATE: 'false',
    XDG_CACHE_HOME: copilotCache(),
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

// Copilot's main conversation: the requests that offer papo's wait.
export const copilotMain = (body) => toolNames(body).includes(TOOLS.wait);

// ---------------------------------------------------------------------------
// Shared by the Chat Completions harnesses.

// A non-interactive run (copilot -p, qwen -p): resolves to { code, signal,
// stdout, stderr, exited (ms) }.
export function printRun(bin, args, env, cwd, { timeout = 60_000 } = {}) {
  return new Promise((resolve) => {
    const p = spawn(bin, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeout);
    p.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, exited: Date.now() });
    });
  });
}

const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;
export const hasTmux = () => spawnSync('tmux', ['-V']).status === 0;

// An interactive CLI in a tmux session of its own (its own server
// socket).  dialogs: [{ match: RegExp, keys: [...] }] answered as they
// come up in the first 30 s.  { screen(), keys(...), type(text),
// submit(text), stderr(), stop() }.
export function cliTmux(bin, args, env, cwd, { name, root, dialogs = [] }) {
  const sock = path.join(root, `tmux-${name}.sock`);
  const errFile = path.join(root, `${name}.stderr`);
  const cmd = `cd ${q(cwd)} && exec env -i ${Object.entries(env).map(([k, v]) => q(`${k}=${v}`)).join(' ')} ${q(bin)} ${args.map(q).join(' ')} 2>${q(errFile)}`;
  const tmux = (...a) => spawnSync('tmux', ['-S', sock, ...a], { encoding: 'utf8' });
  const r = tmux('new-session', '-d', '-s', 'cli', '-x', '180', '-y', '50', cmd);
  if (r.status !== 0) throw new Error(`tmux new-session: ${r.stderr}`);
  const pid = Number(tmux('display-message', '-p', '-t', 'cli', '#{pane_pid}').stdout.trim());
  let stopped = false;
  const screen = () => tmux('capture-pane', '-p', '-t', 'cli').stdout ?? '';
  const keys = (...k) => tmux('send-keys', '-t', 'cli', ...k);
  const watcher = (async () => {
    const deadline = Date.now() + 30_000;
    const done = new Set();
    while (!stopped && Date.now() < deadline && done.size < dialogs.length) {
      const s = screen();
      dialogs.forEach((d, i) => {
        if (!done.has(i) && d.match.test(s)) {
          done.add(i);
          keys(...d.keys);
        }
      });
      await sleep(200);
    }
  })();
  return {
    pid,
    screen,
    keys,
    stderr: () => (fs.existsSync(errFile) ? fs.readFileSync(errFile, 'utf8').slice(-2000) : ''),
    // Types text and presses Enter (a person's prompt).
    async submit(text) {
      keys('-l', text);
      await sleep(300);
      keys('Enter');
    },
    async stop() {
      stopped = true;
      const last = screen();
      tmux('kill-server');
      await watcher;
      for (let i = 0; i < 50 && pid > 0; i++) {
        try {
          process.kill(pid, 0);
        } catch {
          break;
        }
        if (i === 25) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone
          }
        }
        await sleep(100);
      }
      return last;
    },
  };
}

// Every file and folder under dir (a harness's config folder):
// Map(relative path -> bytes; a folder's path ends in / and maps to
// nothing).
export function configTree(dir) {
  const out = new Map();
  const walk = (d) => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        out.set(`${path.relative(dir, p)}/`, Buffer.alloc(0));
        walk(p);
      } else out.set(path.relative(dir, p), fs.readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

// The copilot -p run and the interactive session, for chatSuite.
export const copilotHarness = {
  name: 'GitHub Copilot CLI 1.0.102',
  client: 'copilot',
  tools: TOOLS,
  // Copilot heeds 8 agentStop blocks in a row, then ends the turn until
  // the person's next prompt (FINDINGS-copilot.md).
  maxWakes: 8,
  main: copilotMain,
  configDir: (home) => path.join(home, '.copilot'),
  makeHome,
  // A person's own configuration before papo (for the --remove case): an
  // MCP server added by `copilot mcp add` (Copilot's own writing), a
  // settings.json with a hook and a comment, a hook file of theirs.
  personal(home) {
    const dir = path.join(home, '.copilot');
    const r = spawnSync(copilotPath(), ['mcp', 'add', 'other', '--', 'other-mcp', 'arg1'], { env: { PATH: process.env.PATH, HOME: home, COPILOT_OFFLINE: 'true' }, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`copilot mcp add: ${r.stdout}${r.stderr}`);
    fs.mkdirSync(path.join(dir, 'hooks'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'settings.json'), '{\n  // mine\n  "banner": "never",\n  "hooks": {"agentStop": [{"type": "command", "bash": "true"}]}\n}\n');
    fs.writeFileSync(path.join(dir, 'hooks', 'mine.json'), JSON.stringify({ version: 1, hooks: { sessionStart: [{ type: 'command', bash: 'echo hi' }] } }));
  },
  print: (home, cwd, model, prompt) => printRun(copilotPath(), ['-p', prompt, '--allow-all-tools'], copilotEnv(home, model), cwd),
  interactive: (home, cwd, model, { name, root }) => cliTmux(copilotPath(), ['--allow-all-tools'], copilotEnv(home, model), cwd, {
    name, root,
    // The folder-trust dialog of every new folder: 1. Yes (this session).
    dialogs: [{ match: /Do you trust the files in this folder\?/, keys: ['1'] }],
  }),
  ready: (s) => /\/ commands · \? help/.test(s) && !/Confirm folder trust/.test(s),
  exitInfo: (res) => `copilot -p exited ${res.code}${res.signal ? ` (${res.signal})` : ''}; stdout: ${res.stdout.slice(-800)}; stderr: ${res.stderr.slice(-800)}`,
};

// ---------------------------------------------------------------------------
// The cases, for a harness H (copilotHarness, qwen.mjs's qwenHarness):
// each over stdio and over HTTP, after `papo setup H.client [--http]`:
//  - -p: bo speaks before the run and during four waits: each message
//    reaches the model in full exactly once (in a tool message); the
//    agent's send is in bo's history; the run ends on its own;
//  - -p: a message bo says as the turn ends is given before the run ends;
//  - interactive (tmux): the idle session woken five times by bo's says,
//    each message once; a burst of 20 wakes it once, one wait gives all;
//    woken after 40 s idle (stdio);
//  - `papo setup H.client --remove` leaves the config folder as it was.
// The say -> model request times are printed ("agents: ..." lines).
export function chatSuite(H) {
  const PAPO = papoPath();
  const TAG = Math.floor(Math.random() * 0xffffffff).toString(16).padStart(8, '0');
  const say = (line) => console.log(`agents: ${H.client}: ${line}`);
  const PAYLOAD = 'abcdefghijklmnopqrstuvwxyz'.repeat(6);
  // A message of bo's: longer than a wake's preview, its end unique.
  const text = (kind, i = 0) => `agents ${TAG} ${kind} ${i} ${PAYLOAD} end-${kind}-${i}-${TAG}`;
  const head = (kind) => `agents ${TAG} ${kind} `;
  const needTmux = hasTmux() ? {} : { skip: 'tmux is not installed: the interactive cases need a terminal' };
  const setupTodo = setupKnows(PAPO, H.client) || process.env.PAPO_AGENTS_STRICT ? {} : { todo: `papo setup has no ${H.client} yet` };
  const lat = { during: [], idle: [] };
  // The long idle: past Copilot CLI's default hook timeout (30 s), yet
  // within the 55 s papo hook qwen holds a Qwen Code session at most
  // (Qwen Code gives up on a stop hook after 60 s: FINDINGS-qwen.md);
  // PAPO_AGENTS_IDLE_S to change it.
  const IDLE_S = Number(process.env.PAPO_AGENTS_IDLE_S || 40);
  const T0 = Date.now();

  function conversation(model) {
    const main = chats(model.requests).filter((r) => H.main(r.body));
    const lines = (main.at(-1)?.body.messages ?? []).map((m, i) => `  [${i}] ${m.role}${m.tool_calls ? ` calls ${m.tool_calls.map((c) => `${c.function.name}(${c.function.arguments})`).join(', ')}` : ''}: ${textOf(m.content).replace(/\s+/g, ' ').slice(0, m.role === 'system' ? 80 : 300)}`);
    const other = model.requests.filter((r) => r.unknown).map((r) => `${r.method} ${r.path}`);
    return `${chats(model.requests).length} chat requests, ${main.length} main; the last main:\n${lines.join('\n')}${other.length ? `\nunknown paths: ${other.join(', ')}` : ''}`;
  }

  async function withCase(name, agentOpts, body) {
    const R = await room(`${H.client}-${name}`, PAPO);
    const agent = chatAgent({ tools: H.tools, main: H.main, ...agentOpts(R) });
    const model = await startChatModel({ log: path.join(R.D.root, 'model.jsonl'), script: (b, r) => agent.script(b, r) });
    const ctx = { R, agent, model, extra: [] };
    try {
      await body(ctx);
    } catch (e) {
      e.message += `\n--- what reached the model: ${conversation(model)}\n${ctx.extra.map((f) => f()).join('\n')}\n${R.tails()}`;
      throw e;
    } finally {
      await model.close();
      await R.close();
    }
  }

  // Each text reached the model in full exactly once, in a tool message.
  function onceEach(model, texts, what) {
    for (const t of texts) {
      const all = messagesWith(model.requests, t, { main: false });
      const n = timesSeen(model.requests, t, { main: false });
      assert.equal(n, 1, `${what}: "${t.slice(0, 60)}…" reached the model ${n} times, not once: ${JSON.stringify(all.map((x) => `${x.role} at ${x.m}`))}`);
      assert.equal(all[0].role, 'tool', `${what}: "${t.slice(0, 60)}…" came in a tool result`);
    }
  }

  const boHas = (R, t) => until(`bo stores "${t.slice(0, 40)}…"`, async () => {
    const h = await (await fetch(`${R.bo.info.http}/api/history?limit=100`)).json();
    return (h.messages ?? []).some((m) => m.text === t && m.from === 'ana');
  }, 20_000, 200);

  // A tool message that carries needle, in a request after number n.
  const inToolAfter = (model, needle, n = -1) => chats(model.requests).find((r) => r.n > n &&
    (r.body?.messages ?? []).some((m) => m.role === 'tool' && textOf(m.content).includes(needle)));

  const interactive = (name, transport, agentOpts, body) => withCase(name, agentOpts, async (ctx) => {
    const { R, model } = ctx;
    const { home, cwd } = H.makeHome(R.D.root, 'a', { papo: PAPO, papoHome: R.ana.home, http: transport === 'http' });
    let tm = null;
    ctx.extra.push(() => tm ? `--- the screen:\n${tm.screen()}\n--- stderr:\n${tm.stderr()}` : '');
    try {
      // A CLI that, under load, never sends its first request (Copilot CLI
      // on 2 loaded cores: FINDINGS-copilot.md) is started once more:
      // what is tested begins with that first turn, not with the CLI's
      // own start.
      for (let attempt = 1; ; attempt++) {
        tm = H.interactive(home, cwd, model, { name: attempt === 1 ? name : `${name}-${attempt}`, root: R.D.root });
        ctx.tm = tm;
        await until('the UI is ready for a prompt', () => H.ready(tm.screen()), 60_000, 200);
        await tm.submit('You are ana in a papo room: wait to be woken.');
        try {
          await within(ctx.agent.idle(0), 60_000, 'the session never ended its first turn');
          break;
        } catch (e) {
          if (attempt > 1 || chats(model.requests).length > 0) throw e;
          say(`interactive ${name}: the CLI sent no request in 60 s; started again`);
          await tm.stop();
        }
      }
      await sleep(1500); // idle: the stop hook running
      await body(ctx);
    } finally {
      await tm?.stop();
    }
  });

  describe(`${H.name} as ana's agent`, { concurrency: 5 }, () => {
    for (const transport of ['stdio', 'http']) {
      it(`-p over ${transport}: bo's words said before the first wait and during four waits reach the model once each; ana's send reaches bo; the run ends on its own`, async () => {
        const said = [];
        const times = [];
        const reply = `ana answers ${TAG} ${transport}`;
        let sayError = null;
        await withCase(`p-${transport}`, (R) => ({
          waits: 5,
          // (not the same arguments each time: Qwen Code halts a run whose
          // model makes the same call 5 times in a row, FINDINGS-qwen.md)
          waitArgs: (k) => ({ timeout_s: 5 + k }),
          sendText: reply,
          duringWait: async (k) => {
            if (k === 0) return;
            await sleep(1000);
            const m = text(`during-${transport}`, k);
            said.push(m);
            const t0 = Date.now();
            times.push({ m, t0 });
            await R.say(m).catch((e) => (sayError = e));
          },
        }), async (ctx) => {
          const { R, model, agent } = ctx;
          const m0 = text(`before-${transport}`);
          said.push(m0);
          await R.say(m0);
          const { home, cwd } = H.makeHome(R.D.root, 'p', { papo: PAPO, papoHome: R.ana.home, http: transport === 'http' });
          const res = await H.print(home, cwd, model, 'You are ana in a papo room: call wait five times, answer bo, then stop.');
          ctx.extra.push(() => H.exitInfo(res));
          assert.equal(sayError, null, 'bo\'s says went through');
          assert.ok(agent.ends.length >= 1, 'the model ended its turn');
          for (const { m, t0 } of times) {
            const r = inToolAfter(model, m);
            if (r) lat.during.push(r.t - t0);
          }
          onceEach(model, said, `-p ${transport}`);
          assert.equal(said.length, 5, `bo spoke 5 times (${said.length})`);
          await boHas(R, reply);
          const tail = res.exited - agent.ends.at(-1).t;
          say(`-p ${transport}: the run ended ${tail} ms after the model's last answer`);
          assert.equal(res.code, 0, `the run exits 0: ${H.exitInfo(res)}`);
          assert.ok(tail < 5000, `the run ends on its own within 5 s of its turn (${tail} ms)`);
        });
      });

      it(`-p over ${transport}: a message bo says as the turn ends is given to the model before the run ends`, async () => {
        const m = text(`unread-${transport}`);
        await withCase(`unread-${transport}`, (R) => ({
          beforeEnd: async (k) => {
            if (k !== 0) return;
            await R.say(m);
            await R.anaHas(m);
          },
        }), async (ctx) => {
          const { R, model, agent } = ctx;
          const { home, cwd } = H.makeHome(R.D.root, 'p', { papo: PAPO, papoHome: R.ana.home, http: transport === 'http' });
          const res = await H.print(home, cwd, model, 'You are ana in a papo room: say hello, then stop.');
          ctx.extra.push(() => H.exitInfo(res));
          assert.equal(agent.inputs.length, 1, `the run went on once with papo's note (${agent.inputs.length} inputs)`);
          assert.match(agent.inputs[0].text, /papo/, 'the new input is papo\'s');
          onceEach(model, [m], `-p ${transport}, unread at the end`);
          const tail = res.exited - agent.ends.at(-1).t;
          say(`-p ${transport}, unread at the end: the run ended ${tail} ms after the model's last answer`);
          assert.equal(res.code, 0, `the run exits 0: ${H.exitInfo(res)}`);
          assert.ok(tail < 5000, `then the run ends on its own within 5 s (${tail} ms)`);
        });
      });

      it(`interactive over ${transport}: an idle session is woken by each of five says of bo's, each message once`, needTmux, async () => {
        const ms = Array.from({ length: 5 }, (_, i) => text(`wake-${transport}`, i));
        await interactive(`wake-${transport}`, transport, () => ({ onInput: () => sleep(200), waitArgs: (k) => ({ timeout_s: 5 + k }) }), async ({ R, model, agent }) => {
          for (let i = 0; i < ms.length; i++) {
            const before = model.requests.at(-1).n;
            const t0 = Date.now();
            await R.say(ms[i]);
            const woke = await within(requestWith(model, ms[i].slice(0, head(`wake-${transport}`).length + 2), before), 20_000, `wake ${i}: no model request carried bo's words`);
            lat.idle.push(woke.t - t0);
            await until(`wake ${i}: the model has bo's whole message`, () => inToolAfter(model, ms[i]), 20_000);
            await within(agent.idle(i + 1), 20_000, `wake ${i}: the woken turn never ended`);
            await sleep(1000); // idle again: the stop hook running
          }
          onceEach(model, ms, `woken over ${transport}`);
          assert.equal(agent.inputs.length, ms.length, `one new input per say (${agent.inputs.length})`);
          for (const x of agent.inputs) assert.match(x.text, /papo/, 'each new input is papo\'s wake');
          assert.match(fs.readFileSync(R.D.daemons.ana.errFile, 'utf8'), /woke agent by hook/, 'the wakes came by the stop hook (ana\'s log)');
        });
      });

      it(`interactive over ${transport}: a burst of 20 wakes an idle session once; one wait gives all 20`, needTmux, async () => {
        const ms = Array.from({ length: 20 }, (_, i) => text(`burst-${transport}`, i));
        await interactive(`burst-${transport}`, transport, () => ({ onInput: () => sleep(1000) }), async ({ R, model }) => {
          const before = model.requests.at(-1).n;
          const t0 = Date.now();
          const sent = await R.burst(ms);
          assert.ok(sent.every((s) => s.id), `bo sent 20: ${JSON.stringify(sent.slice(0, 2))}`);
          const woke = await within(requestWith(model, head(`burst-${transport}`), before), 20_000, 'no model request carried bo\'s words');
          say(`interactive ${transport}: a burst of 20, the first send to the woken model's request: ${woke.t - t0} ms`);
          await until('the model has all 20', () => ms.every((m) => inToolAfter(model, m)), 20_000);
          await sleep(3000); // a second wake would have come by now
          onceEach(model, ms, `burst over ${transport}`);
          const wakes = messagesWith(model.requests, head(`burst-${transport}`), { main: false }).filter((x) => x.role !== 'tool');
          assert.equal(wakes.length, 1, `one wake for the burst, not ${wakes.length}: ${JSON.stringify(wakes.map((w) => w.text.slice(-300)))}`);
          const results = messagesWith(model.requests, head(`burst-${transport}`), { roles: ['tool'], main: false });
          assert.equal(results.length, 1, `one wait gave all 20 (${results.length} tool messages carried them)`);
        });
      });

      if (H.maxWakes && transport === 'stdio') {
        it(`interactive over ${transport}: ${H.maxWakes} wakes in a row, the most the harness heeds; the next message waits unread and comes with the person's next prompt`, needTmux, async () => {
          const ms = Array.from({ length: H.maxWakes + 1 }, (_, i) => text(`cap-${transport}`, i));
          await interactive(`cap-${transport}`, transport, () => ({ onInput: () => sleep(100), waitArgs: (k) => ({ timeout_s: 5 + k }) }), async ({ R, model, agent, tm }) => {
            for (let i = 0; i < H.maxWakes; i++) {
              const before = model.requests.at(-1).n;
              await R.say(ms[i]);
              await within(requestWith(model, ms[i].slice(0, head(`cap-${transport}`).length + 3), before), 20_000, `wake ${i}: no model request carried bo's words`);
              await until(`wake ${i}: the model has bo's whole message`, () => inToolAfter(model, ms[i]), 20_000);
              await within(agent.idle(i + 1), 20_000, `wake ${i}: the woken turn never ended`);
              await sleep(800);
            }
            const last = ms[H.maxWakes];
            const n = model.requests.at(-1).n;
            await R.say(last);
            await until('ana has the last message unread', async () => (await R.status()).unread === 1, 10_000);
            await sleep(3000); // a wake would have come by now
            assert.equal(model.requests.at(-1).n, n, `no wake past the ${H.maxWakes}th in a row (the harness would drop it)`);
            await tm.submit('Anything new?');
            await until('the model has the last message, with the person\'s prompt', () => inToolAfter(model, last, n), 20_000);
            assert.match(agent.inputs.at(-1).text, /Anything new\?/, 'the last input is the person\'s prompt');
            assert.match(agent.inputs.at(-1).text, /papo/, 'the person\'s prompt came with papo\'s note of what waits (userPromptSubmitted)');
            onceEach(model, ms, `${H.maxWakes} wakes and one more`);
          });
        });
      }

      if (transport === 'stdio') {
        it(`interactive over ${transport}: an idle session is still woken after ${IDLE_S} s idle (longer than a short stop-hook timeout)`, needTmux, async () => {
          const m = text(`long-${transport}`);
          await interactive(`long-${transport}`, transport, () => ({ onInput: () => sleep(200) }), async ({ R, model }) => {
            await sleep(IDLE_S * 1000 - 1500); // idle that long (interactive() idled 1.5 s)
            const before = model.requests.at(-1).n;
            const t0 = Date.now();
            await R.say(m);
            const woke = await within(requestWith(model, head(`long-${transport}`), before), 20_000, `after ${IDLE_S} s idle, no model request carried bo's words`);
            say(`interactive ${transport}: after ${IDLE_S} s idle, bo's say to the woken model's request: ${woke.t - t0} ms`);
            await until('the model has bo\'s whole message', () => inToolAfter(model, m), 20_000);
            onceEach(model, [m], `woken after ${IDLE_S} s idle`);
          });
        });
      }

      it(`papo setup ${H.client}${transport === 'http' ? ' --http' : ''} --remove leaves the config folder byte for byte as it was`, setupTodo, async () => {
        const R = await room(`${H.client}-remove-${transport}`, PAPO);
        try {
          const home = path.join(R.D.root, 'home-r');
          fs.mkdirSync(home, { recursive: true });
          H.personal(home);
          const dir = H.configDir(home);
          const before = configTree(dir);
          const out = papoSetup(PAPO, H.client, home, R.ana.home, { http: transport === 'http' });
          const mid = configTree(dir);
          assert.notDeepEqual([...mid.entries()].map(([k, v]) => [k, v.toString('base64')]), [...before.entries()].map(([k, v]) => [k, v.toString('base64')]), `setup changed something: ${out}`);
          const rm = papoSetup(PAPO, H.client, home, R.ana.home, { http: transport === 'http', remove: true });
          const after = configTree(dir);
          assert.deepEqual([...after.keys()].sort(), [...before.keys()].sort(), `the same files after --remove: ${rm}`);
          for (const [k, v] of before) {
            const a = after.get(k);
            let i = 0;
            while (i < v.length && i < a.length && v[i] === a[i]) i++;
            assert.ok(a.equals(v), `${k} is byte for byte as before (${v.length} bytes before, ${a.length} after, first difference at byte ${i}: ${JSON.stringify(v.subarray(i, i + 20).toString())} before, ${JSON.stringify(a.subarray(i, i + 20).toString())} after):\n--- before\n${v}\n--- after\n${a}\n--- setup --remove said: ${rm}`);
          }
        } finally {
          await R.close();
        }
      });
    }
  });

  const median = (a) => (a.length ? [...a].sort((x, y) => x - y)[Math.floor((a.length - 1) / 2)] : NaN);
  process.on('exit', () => {
    say(`bo's say -> the model request carrying it, during a wait: median ${median(lat.during)} ms over ${lat.during.length} (${lat.during.join(', ')})`);
    say(`bo's say -> the model request carrying it, from idle: median ${median(lat.idle)} ms over ${lat.idle.length} (${lat.idle.join(', ')})`);
    say(`all cases: ${((Date.now() - T0) / 1000).toFixed(1)} s`);
  });
}
