// opencode.mjs: what opencode.test.mjs shares to run the REAL opencode CLI
// (opencode-ai 1.18.33, pinned in tests/agents) against the scripted Chat
// Completions model of model_chat.mjs and papo daemons of their own
// (claude.mjs's room()): the binary, a temporary HOME per case, papo added
// by `papo setup opencode [--http]` (its MCP entry and its plugin,
// server/cli/opencode_plugin.js), the agent's script, `opencode run`, the
// TUI in tmux, and reading what reached the model.  Nothing here leaves
// loopback: the callers run inside a network namespace (run.sh).
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMain, textOf, toolCalls } from './model_chat.mjs';
import { cleanEnv, sleep } from '../clients/daemons.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// opencode names an MCP server's tools SERVER_TOOL.
export const WAIT = 'papo_wait';
export const SEND = 'papo_send';
export const PROVIDER = 'scripted';
export const MODEL = 'scripted-1';

// The native binary (the platform package's; bin/opencode.exe is the
// same file once the postinstall has linked it).
export function opencodePath() {
  const nm = path.join(HERE, 'node_modules');
  for (const p of ['opencode-linux-x64', 'opencode-linux-x64-baseline', 'opencode-linux-arm64', 'opencode-linux-x64-musl', 'opencode-linux-arm64-musl']) {
    const b = path.join(nm, p, 'bin', 'opencode');
    if (fs.existsSync(b)) return b;
  }
  const b = path.join(nm, 'opencode-ai', 'bin', 'opencode.exe');
  if (fs.existsSync(b) && fs.statSync(b).size > 1e6) return b;
  throw new Error(`no opencode binary under ${nm}: run npm install --no-save --prefix tests/agents`);
}

export const configDir = (home) => path.join(home, '.config', 'opencode');

// The files and folders of opencode's config dir, path -> content
// ('dir' for a folder, its path ending in /): --remove's byte compare.
export function snapshot(home) {
  const out = {};
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        out[`${path.relative(home, p)}/`] = 'dir';
        walk(p);
      } else out[path.relative(home, p)] = fs.readFileSync(p, 'latin1');
    }
  };
  walk(configDir(home));
  return out;
}

// A HOME for one opencode, as a user has it before `papo setup opencode`:
// opencode.json with a provider at the scripted model (a Chat Completions
// endpoint through the bundled @ai-sdk/openai-compatible, nothing fetched),
// and the config dir's dependencies as opencode leaves them after its
// first run online.
//
// Why the last: at every start opencode installs @opencode-ai/plugin into
// each config dir (Npm.install: Arborist reify, in the background) unless
// the dir has node_modules/ and a package-lock.json whose root lists it;
// with any plugin to load it first waits for that install, which offline
// fails only after ~65 s of npm's retries (FINDINGS-opencode.md).  Online,
// the first start makes node_modules/@opencode-ai/plugin, package.json and
// package-lock.json; here node_modules/ is empty (papo's plugin imports
// nothing) and the lock says what opencode checks.
export function makeHome(root, name, model, { deps = true, config = {} } = {}) {
  const home = path.join(root, `home-${name}`);
  const cwd = path.join(home, 'work');
  const dir = configDir(home);
  fs.mkdirSync(dir, { recursive: true });
  fs.mkdirSync(cwd, { recursive: true });
  fs.writeFileSync(path.join(dir, 'opencode.json'), JSON.stringify({
    $schema: 'https://opencode.ai/config.json',
    model: `${PROVIDER}/${MODEL}`,
    small_model: `${PROVIDER}/${MODEL}`,
    autoupdate: false,
    share: 'disabled',
    provider: {
      [PROVIDER]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted',
        options: { baseURL: model.v1, apiKey: 'test' },
        models: { [MODEL]: { name: 'Scripted 1', tool_call: true, limit: { context: 200000, output: 8192 } } },
      },
    },
    ...config,
  }, null, 2) + '\n');
  if (deps) {
    const version = '1.18.33';
    fs.mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ dependencies: { '@opencode-ai/plugin': version } }, null, 2) + '\n');
    fs.writeFileSync(path.join(dir, 'package-lock.json'), JSON.stringify({
      name: 'opencode', lockfileVersion: 3, requires: true,
      packages: { '': { dependencies: { '@opencode-ai/plugin': version } } },
    }, null, 2) + '\n');
  }
  return { home, cwd };
}

// `papo setup opencode [--http] [--remove]` for this HOME: its output.
export function setup(papo, home, papoHome, { http = false, remove = false } = {}) {
  const args = ['setup', 'opencode'];
  if (http) args.push('--http');
  if (remove) args.push('--remove');
  const env = { ...cleanEnv, HOME: home, PAPO_HOME: papoHome };
  delete env.XDG_CONFIG_HOME;
  return execFileSync(papo, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

// opencode's environment: only what it needs, offline.
export function opencodeEnv(home, extra = {}) {
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_CLAUDE_CODE: '1',
    // papo mcp and papo hook, started by opencode, inherit these
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
// conversation it is sent (Chat Completions messages).
//
//  - fewer than `waits` calls of wait so far: await beforeWait(k), then
//    call wait;
//  - a user message after the assistant's last turn that is not the first
//    prompt (papo's wake from the plugin, or a person's prompt): await
//    onInput(text), then call wait;
//  - sendText given and not sent yet: call send with it;
//  - else await beforeEnd(k) (k: ends so far), then end the turn (text
//    "done").
// Side requests (titles: no tools) get a plain answer.  agent.idle(k)
// resolves at the k-th end of turn.
export function agentScript({ waits = 0, waitArgs = { timeout_s: 5 }, beforeWait = async () => {}, onInput = async () => {}, inputTools = [WAIT], sendText, beforeEnd = async () => {} } = {}) {
  const ends = [];
  let endWaiters = [];
  const agent = {
    ends,
    seen: new Set(),
    pending: [],
    inputs: [], // { n, t, text } of each new input acted on
    idle(after = ends.length) {
      if (ends.length > after) return Promise.resolve(ends[after]);
      return new Promise((r) => endWaiters.push({ after, r }));
    },
    script: async (body, req) => {
      if (!isMain(body)) return 'A title';
      const msgs = body.messages;
      const calls = toolCalls(body);
      const waited = calls.filter((c) => c.name === WAIT).length;
      const call = (name) => ({ tool_calls: [{ name, arguments: name === WAIT ? waitArgs : name === SEND ? { text: sendText } : {} }] });
      if (agent.pending.length) return call(agent.pending.shift());
      if (waited < waits) {
        await beforeWait(waited);
        return { content: `waiting (${waited + 1})`, ...call(WAIT) };
      }
      if (sendText !== undefined && !calls.some((c) => c.name === SEND)) return { content: 'saying', ...call(SEND) };
      const input = newInput(msgs);
      if (input && !agent.seen.has(input.key)) {
        agent.seen.add(input.key);
        agent.inputs.push({ n: req.n, t: Date.now(), text: input.text });
        await onInput(input.text);
        agent.pending = [...inputTools];
        return { content: 'new input: looking', ...call(agent.pending.shift()) };
      }
      await beforeEnd(ends.length);
      const e = { n: req.n, t: Date.now() };
      ends.push(e);
      const w = endWaiters;
      endWaiters = [];
      for (const x of w) if (ends.length > x.after) x.r(ends[x.after]);
      else endWaiters.push(x);
      return 'done';
    },
  };
  return agent;
}

// A user message after the assistant's last message that is not the
// conversation's first user message: { key, text } or null.
export function newInput(msgs) {
  const firstUser = msgs.findIndex((m) => m.role === 'user');
  for (let m = msgs.length - 1; m > firstUser; m--) {
    const msg = msgs[m];
    if (msg.role === 'assistant') return null;
    if (msg.role === 'user') return { key: `${m}`, text: textOf(msg.content) };
  }
  return null;
}

// ---------------------------------------------------------------------------
// Running opencode.

// opencode run PROMPT ARGS: resolves to { code, signal, stdout, stderr, ms }.
export function opencodeRun(env, cwd, prompt, args = [], { timeout = 120_000 } = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const p = spawn(opencodePath(), ['run', ...args, prompt], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeout);
    p.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

// `opencode mcp list`'s output, offline.
export function mcpList(env, cwd) {
  const r = spawnSync(opencodePath(), ['mcp', 'list'], { env, cwd, encoding: 'utf8', timeout: 90_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

// The opencode TUI in a tmux session of its own (its own tmux server
// socket): { screen(), keys(...k), type(text), submit(text), stop() }.
export function opencodeTmux(env, cwd, { name, root, args = [] }) {
  const sock = path.join(root, `tmux-${name}.sock`);
  const errFile = path.join(root, `opencode-${name}.stderr`);
  const cmd = `cd ${q(cwd)} && exec env -i ${Object.entries(env).map(([k, v]) => q(`${k}=${v}`)).join(' ')} ${q(opencodePath())} ${args.map(q).join(' ')} 2>${q(errFile)}`;
  const tmux = (...a) => spawnSync('tmux', ['-S', sock, ...a], { encoding: 'utf8' });
  const r = tmux('new-session', '-d', '-s', 'oc', '-x', '200', '-y', '50', cmd);
  if (r.status !== 0) throw new Error(`tmux new-session: ${r.stderr}`);
  const pid = Number(tmux('display-message', '-p', '-t', 'oc', '#{pane_pid}').stdout.trim());
  const screen = () => tmux('capture-pane', '-p', '-t', 'oc').stdout ?? '';
  const keys = (...k) => tmux('send-keys', '-t', 'oc', ...k);
  return {
    sock,
    pid,
    stderr: () => (fs.existsSync(errFile) ? fs.readFileSync(errFile, 'utf8').slice(-2000) : ''),
    screen,
    keys,
    type: (text) => keys('-l', text),
    async submit(text) {
      keys('-l', text);
      await sleep(200);
      keys('Enter');
    },
    async stop() {
      const last = screen();
      tmux('kill-server');
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

// papo hook processes whose PAPO_HOME is home (left behind by a plugin).
export function hooksOf(papoHome) {
  const out = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (!cmd[0].endsWith('papo') || cmd[1] !== 'hook') continue;
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (env.includes(`PAPO_HOME=${papoHome}`)) out.push(Number(pid));
    } catch {
      // gone
    }
  }
  return out;
}
