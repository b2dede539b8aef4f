// codex.mjs: what codex.test.mjs (and measure_codex.mjs) share to run the
// REAL Codex CLI (tests/agents/node_modules, @openai/codex pinned) against
// the scripted Responses endpoint of model_responses.mjs and papo daemons
// of their own: a temporary HOME whose config.toml points Codex at the
// endpoint (no login, the folder trusted), papo added by `papo setup
// codex [--http]`, its hooks trusted as a person does in /hooks, the
// agent's script, `codex exec`, the TUI in tmux, and reading what reached
// the model.  Nothing here leaves loopback: the callers run inside a
// network namespace (run.sh, or unshare --net by hand).
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { textOf, toolsOf, turns } from './model_responses.mjs';
import { cleanEnv, sleep, until } from '../clients/daemons.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const NS = 'mcp__papo'; // the namespace Codex gives papo's tools
export const WAKE = "Call papo's wait tool"; // in every wake text of papo's

export function codexPath() {
  const p = path.join(HERE, 'node_modules', '.bin', 'codex');
  if (!fs.existsSync(p)) throw new Error(`no Codex under ${p}: run npm install --no-save --prefix tests/agents`);
  return p;
}

// ---------------------------------------------------------------------------
// The HOME.

// A person's own ~/.codex/config.toml before papo: the scripted model as
// the provider, the working folder trusted.
export function baseConfig(model, cwd) {
  return `model = "scripted"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "${model.url}"
wire_api = "responses"
env_key = "SCRIPTED_KEY"

[projects."${cwd}"]
trust_level = "trusted"
`;
}

// `papo setup codex [--http] [--remove]` for home: its output (stdout and
// stderr), or it throws with them.
export function setupCodex(papo, home, papoHome, { http = false, remove = false } = {}) {
  const args = ['setup', 'codex'];
  if (http) args.push('--http');
  if (remove) args.push('--remove');
  const r = spawnSync(papo, args, { env: { ...cleanEnv, HOME: home, PAPO_HOME: papoHome }, encoding: 'utf8', timeout: 30_000 });
  const out = `${r.stdout}${r.stderr}`;
  if (r.status !== 0) throw new Error(`papo ${args.join(' ')} exited ${r.status}: ${out}`);
  return out;
}

// Codex's trust hash of a command hook (hooks/src/engine/discovery.rs:
// sha256 of the normalized identity as compact JSON, keys sorted).
const LABEL = { Stop: 'stop', SessionStart: 'session_start', UserPromptSubmit: 'user_prompt_submit', PreToolUse: 'pre_tool_use', PostToolUse: 'post_tool_use', PermissionRequest: 'permission_request', SubagentStop: 'subagent_stop' };
const canon = (v) => (Array.isArray(v) ? v.map(canon)
  : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])])) : v);
export function hookHash(event, group, h) {
  const handler = { type: 'command', command: h.command, timeout: Math.max(1, h.timeout ?? 600), async: !!h.async };
  if (h.statusMessage != null) handler.statusMessage = h.statusMessage;
  const id = { event_name: LABEL[event], hooks: [handler] };
  if (group.matcher != null && event !== 'Stop' && event !== 'UserPromptSubmit') id.matcher = group.matcher;
  return `sha256:${crypto.createHash('sha256').update(JSON.stringify(canon(id))).digest('hex')}`;
}

// What a person does in Codex's /hooks ("trust"): every hook of
// ~/.codex/hooks.json trusted in config.toml's [hooks.state].  Returns
// how many.
export function trustHooks(home) {
  const file = path.join(home, '.codex', 'hooks.json');
  if (!fs.existsSync(file)) return 0;
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  let toml = '';
  let n = 0;
  for (const [ev, groups] of Object.entries(j.hooks ?? {}))
    groups.forEach((g, gi) => (g.hooks ?? []).forEach((h, hi) => {
      if (h.type !== 'command') return;
      toml += `\n[hooks.state."${file}:${LABEL[ev]}:${gi}:${hi}"]\ntrusted_hash = "${hookHash(ev, g, h)}"\n`;
      n++;
    }));
  fs.appendFileSync(path.join(home, '.codex', 'config.toml'), toml);
  return n;
}

// A HOME for one Codex: its config (baseConfig), papo added by `papo
// setup codex [--http]`, papo's hooks trusted (trust: false leaves them
// as setup wrote them).  Returns { home, cwd, setup (its output) }.
export function makeHome(root, name, { papo, papoHome, model, http = false, trust = true }) {
  const home = path.join(root, `home-${name}`);
  const cwd = path.join(home, 'work');
  fs.mkdirSync(path.join(home, '.codex'), { recursive: true });
  fs.mkdirSync(cwd, { recursive: true });
  fs.writeFileSync(path.join(home, '.codex', 'config.toml'), baseConfig(model, cwd));
  const setup = setupCodex(papo, home, papoHome, { http });
  if (trust) trustHooks(home);
  return { home, cwd, setup };
}

// Codex's environment: only what it needs, the model's key.
export function codexEnv(home, extra = {}) {
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    SCRIPTED_KEY: 'test',
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
// request (Codex resends the whole conversation each time).
//
//  - the title side request ("Generate a concise ... title"): a title;
//  - new input since the model last spoke (a wake from papo's Stop hook,
//    papo's context at SessionStart or at a prompt, a person's prompt
//    after the first): await onInput(text), then the tools inputTools
//    (default: wait), one a request;
//  - fewer than `waits` calls of wait so far: await beforeWait(k), then
//    call wait (afterCall(k) runs once the answer is sent);
//  - then each of `sends` (texts) through papo's send;
//  - else await beforeEnd(k) (k: ends so far) and end the turn.
// Every end of turn resolves agent.idle() (a new one after each).
export function agentScript({ waits = 0, waitArgs = { timeout_s: 5 }, sends = [], beforeWait = async () => {}, afterCall = () => {}, onInput = async () => {}, inputTools = ['wait'], beforeEnd = async () => {} } = {}) {
  const ends = [];
  let endWaiters = [];
  const seen = new Set();
  let pending = [];
  const call = (name, args) => ({ output: [{ type: 'function_call', namespace: NS, name, arguments: args }] });
  const agent = {
    ends,
    idle(after = ends.length) {
      if (ends.length > after) return Promise.resolve(ends[after]);
      return new Promise((r) => endWaiters.push({ after, r }));
    },
    script: async (body, req) => {
      const input = body?.input ?? [];
      if (!toolsOf(body).some((t) => t.namespace === NS && t.name === 'wait')) return 'papo';
      if (/Generate a concise, single-line task title/.test(textOf(input.at(-1)))) return 'papo session';
      const calls = input.filter((i) => i.type === 'function_call' && i.namespace === NS);
      const waited = calls.filter((c) => c.name === 'wait').length;
      const sent = calls.filter((c) => c.name === 'send').length;
      const inp = newInput(input);
      if (inp && !seen.has(inp.key)) {
        seen.add(inp.key);
        await onInput(inp.text);
        pending = [...inputTools];
      }
      if (pending.length) {
        const name = pending.shift();
        return call(name, name === 'wait' ? waitArgs : {});
      }
      if (waited < waits) {
        await beforeWait(waited);
        setImmediate(() => afterCall(waited, req));
        return call('wait', waitArgs);
      }
      if (sent < sends.length) return call('send', { text: sends[sent] });
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

// Text that came in after the model last spoke (its last function call
// or message): the user and developer messages that speak of papo (a
// wake, papo's context) or that a person typed after the first prompt.
// { key, text } or null; key: its place (acted on once).
export function newInput(input) {
  const texts = [];
  let first = true;
  for (let i = input.length - 1; i >= 0; i--) {
    const it = input[i];
    if (it.type === 'function_call' || it.type === 'function_call_output' || (it.type === 'message' && it.role === 'assistant')) {
      first = false;
      break;
    }
    if (it.type === 'message' && (it.role === 'user' || it.role === 'developer')) texts.unshift({ i, text: textOf(it.content) });
  }
  // The first turn's own prompt is the test's, not new input; papo's
  // context beside it is.
  const mine = texts.filter(({ text }) => text.includes(WAKE) || text.includes('<hook_prompt') || (!first && !text.startsWith('<environment_context>')));
  if (!mine.length) return null;
  return { key: `${mine[0].i}:${mine[0].text}`, text: mine.map((x) => x.text).join('\n') };
}

// ---------------------------------------------------------------------------
// What reached the model.

// Every distinct input item of every request that holds needle, once
// each (a tool answer by its call_id, a message by its place and text):
// [{ key, type, role, text, n (first request), t }].
export function itemsWith(model, needle, { types } = {}) {
  const seen = new Map();
  for (const r of turns(model)) {
    (r.body?.input ?? []).forEach((it, i) => {
      if (types && !types.includes(it.type)) return;
      if (it.type === 'function_call' || (it.type === 'message' && it.role === 'assistant')) return;
      const text = textOf(it);
      if (!text.includes(needle)) return;
      const key = it.call_id ? `call:${it.call_id}` : `${i}:${it.type}:${text}`;
      if (!seen.has(key)) seen.set(key, { key, type: it.type, role: it.role, text, n: r.n, t: r.t });
    });
  }
  return [...seen.values()];
}

// How many times needle reached the model (its occurrences in every
// distinct input item: tool answers, prompts, wakes, context).
export function timesSeen(model, needle, opts) {
  return itemsWith(model, needle, opts).reduce((n, x) => n + x.text.split(needle).length - 1, 0);
}

// The first request after request number afterN with an input item
// (not the model's own) holding needle; resolves when it comes.
export function requestWith(model, needle, afterN = -1, { types } = {}) {
  const has = (r) => r.n > afterN && r.method === 'POST' && r.path.endsWith('/responses') &&
    (r.body?.input ?? []).some((it) => (!types || types.includes(it.type)) && it.type !== 'function_call' &&
      !(it.type === 'message' && it.role === 'assistant') && textOf(it).includes(needle));
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
// Running Codex.

// codex exec --skip-git-repo-check ARGS PROMPT, stdin /dev/null: resolves
// to { code, signal, stdout, stderr, t0, t1 (exit time) }.
export function codexExec(env, cwd, prompt, args = [], { timeout = 60_000 } = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const p = spawn(codexPath(), ['exec', '--skip-git-repo-check', ...args, prompt], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeout);
    p.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, t0, t1: Date.now() });
    });
  });
}

const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

// The interactive Codex (the TUI, --no-daemon: no background app-server
// that would outlive the test) in a tmux session of its own (its own
// server socket): { screen(), keys(...k), type(text), stop(), stderr() }.
export async function codexTmux(env, cwd, args, { name, root }) {
  const sock = path.join(root, `tmux-${name}.sock`);
  const errFile = path.join(root, `codex-${name}.stderr`);
  const cmd = `cd ${q(cwd)} && exec env -i ${Object.entries(env).map(([k, v]) => q(`${k}=${v}`)).join(' ')} ${q(codexPath())} --no-daemon ${args.map(q).join(' ')} 2>${q(errFile)}`;
  const tmux = (...a) => spawnSync('tmux', ['-S', sock, ...a], { encoding: 'utf8' });
  const r = tmux('new-session', '-d', '-s', 'cx', '-x', '200', '-y', '50', cmd);
  if (r.status !== 0) throw new Error(`tmux new-session: ${r.stderr}`);
  const pid = Number(tmux('display-message', '-p', '-t', 'cx', '#{pane_pid}').stdout.trim());
  const screen = () => tmux('capture-pane', '-p', '-t', 'cx').stdout ?? '';
  const keys = (...k) => tmux('send-keys', '-t', 'cx', ...k);
  return {
    sock,
    pid,
    screen,
    keys,
    type: (text) => keys('-l', text),
    stderr: () => (fs.existsSync(errFile) ? fs.readFileSync(errFile, 'utf8').slice(-2000) : ''),
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

// The processes whose HOME is home and whose command line has word
// (e.g. papo's hooks of one case's Codex): [{ pid, args }].
export function processesOf(home, word) {
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const env = fs.readFileSync(`/proc/${d}/environ`, 'utf8').split('\0');
      if (!env.includes(`HOME=${home}`)) continue;
      const args = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (args.includes(word)) out.push({ pid: Number(d), args: args.join(' ') });
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

export const hasTmux = () => spawnSync('tmux', ['-V']).status === 0;

// The daemon's history (bo's or ana's): its messages.
export async function history(d) {
  const h = await (await fetch(`${d.info.http}/api/history?limit=100`)).json();
  return h.messages ?? [];
}

export { until, sleep, execFileSync };
