// gemini.mjs: what gemini.test.mjs shares to run the REAL Gemini CLI
// (0.61.0, tests/agents/node_modules, pinned) against the scripted Gemini
// API of model_gemini.mjs and papo daemons of their own: the binary, a
// temporary HOME per case with nothing left to prompt, papo added by
// `papo setup gemini [--http]`, the folder trusted as a user would
// (~/.gemini/trustedFolders.json), the agent's script, `gemini -p`,
// interactive sessions in tmux, and reading what reached the model.
// Nothing here leaves loopback: the callers run inside a network
// namespace (run.sh, or unshare --net).
import { spawn, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isGenerate, isMain, jsonSchemaOf, fillSchema, parts, textOf, kindOf, toolNames } from './model_gemini.mjs';
import { cleanEnv, sleep, until } from '../clients/daemons.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// papo's tools as Gemini CLI names them for the model: mcp_SERVER_TOOL.
export const WAIT = 'mcp_papo_wait';
export const SEND = 'mcp_papo_send';
export const STATUS = 'mcp_papo_status';

export function geminiPath() {
  const bin = path.join(HERE, 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');
  if (!fs.existsSync(bin)) throw new Error(`no Gemini CLI under ${bin}: run npm install --no-save --prefix tests/agents`);
  return bin;
}

// What a user has in ~/.gemini/settings.json before papo: the auth
// method chosen (an API key; else the first run asks), nothing more.
export const USER_SETTINGS = { security: { auth: { selectedType: 'gemini-api-key' } } };

// A HOME for one Gemini CLI: settings.json as the user left it
// (USER_SETTINGS), then `papo setup gemini [--http]` with HOME and
// PAPO_HOME, then the working folder trusted in trustedFolders.json as
// papo setup tells the user to do.  Returns { home, cwd, settings (the
// path), before (settings.json's bytes before setup), setup (its output) }.
export function makeHome(root, name, { papo, papoHome, http = false, trust = true, user = USER_SETTINGS }) {
  const home = path.join(root, `home-${name}`);
  const cwd = path.join(home, 'work');
  const dir = path.join(home, '.gemini');
  fs.mkdirSync(dir, { recursive: true });
  fs.mkdirSync(cwd, { recursive: true });
  const settings = path.join(dir, 'settings.json');
  fs.writeFileSync(settings, JSON.stringify(user, null, 2) + '\n');
  const before = fs.readFileSync(settings);
  const setup = setupGemini(papo, home, papoHome, { http });
  if (trust) trustFolder(home, cwd);
  return { home, cwd, settings, before, setup };
}

// `papo setup gemini [--http] [--remove]`: its output (stdout and stderr).
export function setupGemini(papo, home, papoHome, { http = false, remove = false } = {}) {
  const args = ['setup', 'gemini'];
  if (http) args.push('--http');
  if (remove) args.push('--remove');
  const r = spawnSync(papo, args, { env: { ...cleanEnv, HOME: home, PAPO_HOME: papoHome }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`papo ${args.join(' ')} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return `${r.stdout}${r.stderr}`;
}

// The folder trusted, as a user does by answering Gemini CLI's trust
// dialog (or /permissions): ~/.gemini/trustedFolders.json.
export function trustFolder(home, cwd) {
  const p = path.join(home, '.gemini', 'trustedFolders.json');
  const j = fs.existsSync(p) ? JSON.parse(fs.readFileSync(p, 'utf8')) : {};
  j[cwd] = 'TRUST_FOLDER';
  fs.writeFileSync(p, JSON.stringify(j, null, 2));
}

// Gemini CLI's environment: only what it needs, offline, the model at
// model.url (GOOGLE_GEMINI_BASE_URL with an API key: settings choose the
// gemini-api-key method, else the env alone means "gateway", which
// 0.61.0 refuses: "Invalid auth method selected.").
export function geminiEnv(home, model, extra = {}) {
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TERM: 'xterm-256color',
    COLORTERM: 'truecolor',
    LANG: 'C.UTF-8',
    GEMINI_API_KEY: 'test',
    GOOGLE_GEMINI_BASE_URL: model.url,
    // papo mcp and papo hook, started by Gemini CLI, inherit these
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
//  - a side request that asks for JSON (the router's complexity score,
//    the next-speaker check): an answer that fits its schema;
//  - a side request without tools: "ok";
//  - fewer than `waits` calls of wait so far: await beforeWait(k), then
//    call wait;
//  - new input (a text part of a user turn after the first prompt: a
//    wake from papo's AfterAgent hook, a person's prompt): await
//    onInput(text), then call each of inputTools (default: wait) in turn;
//  - else end the turn (text).
// Every end of turn resolves agent.idle(k).
export function agentScript({ waits = 0, waitArgs = { timeout_s: 5 }, beforeWait = async () => {}, onInput = async () => {}, inputTools = [WAIT], sendText } = {}) {
  const ends = [];
  let endWaiters = [];
  const agent = {
    ends,
    seen: new Set(),
    pending: [],
    idle(after = ends.length) {
      if (ends.length > after) return Promise.resolve(ends[after]);
      return new Promise((r) => endWaiters.push({ after, r }));
    },
    script: async (body, req) => {
      const schema = jsonSchemaOf(body);
      if (schema) return JSON.stringify(fillSchema(schema, { next_speaker: 'user' }));
      if (!isMain(body)) return 'ok';
      const contents = body.contents ?? [];
      const calls = contents.filter((c) => c.role === 'model').flatMap((c) => (c.parts ?? []).filter((p) => p.functionCall));
      const waited = calls.filter((p) => p.functionCall.name === WAIT).length;
      const end = (text) => {
        ends.push({ n: req.n, t: Date.now() });
        const w = endWaiters;
        endWaiters = [];
        for (const x of w) if (ends.length > x.after) x.r(ends[x.after]);
        else endWaiters.push(x);
        return text;
      };
      const call = (name) => ({ functionCall: { name, args: name === WAIT ? waitArgs : name === SEND ? { text: sendText } : {} } });
      if (agent.pending.length) return { parts: [call(agent.pending.shift())] };
      if (waited < waits) {
        await beforeWait(waited);
        return { parts: [{ text: `waiting (${waited + 1})` }, call(WAIT)] };
      }
      const input = newInput(contents);
      if (input && !agent.seen.has(input.key)) {
        agent.seen.add(input.key);
        await onInput(input.text);
        agent.pending = [...inputTools];
        return { parts: [{ text: 'new input: looking' }, call(agent.pending.shift())] };
      }
      return end('done');
    },
  };
  return agent;
}

// The newest user turn's text when it comes after the model's last turn
// and is not the first prompt: { key, text } or null.
export function newInput(contents) {
  const firstModel = contents.findIndex((c) => c.role === 'model');
  if (firstModel < 0) return null;
  for (let m = contents.length - 1; m > firstModel; m--) {
    const c = contents[m];
    if (c.role === 'model') return null;
    const texts = (c.parts ?? []).filter((p) => typeof p.text === 'string' && p.text.trim());
    if (texts.length) return { key: `${m}`, text: texts.map((p) => p.text).join('\n') };
  }
  return null;
}

// ---------------------------------------------------------------------------
// What reached the model.

// The main requests' user parts that hold needle, each counted once by
// its place in the conversation (Gemini CLI resends the whole
// conversation every turn): [{ m, b, kind, name, text, n, t }].
export function userPartsWith(requests, needle, { kinds } = {}) {
  const seen = new Map();
  for (const r of requests) {
    if (!isGenerate(r) || !isMain(r.body)) continue;
    for (const { m, b, role, part } of parts(r.body)) {
      if (role !== 'user') continue;
      const kind = kindOf(part);
      if (kinds && !kinds.includes(kind)) continue;
      const text = textOf(part);
      if (!text.includes(needle)) continue;
      const k = `${m}/${b}/${text}`;
      if (!seen.has(k)) seen.set(k, { m, b, kind, name: part.functionResponse?.name, text, n: r.n, t: r.t });
    }
  }
  return [...seen.values()];
}

// How many times needle reached the model, over distinct user parts.
export function timesSeen(requests, needle, opts) {
  return userPartsWith(requests, needle, opts).reduce((n, x) => n + x.text.split(needle).length - 1, 0);
}

// The first main request after request number afterN whose user parts
// hold needle (resolves when it comes).
export function requestWith(model, needle, afterN = -1) {
  const has = (r) => r.n > afterN && isGenerate(r) && isMain(r.body) &&
    parts(r.body).some(({ role, part }) => role === 'user' && textOf(part).includes(needle));
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

// The function calls of the newest main request's conversation.
export function callsIn(model, name) {
  const last = model.requests.filter((r) => isGenerate(r) && isMain(r.body)).at(-1);
  return (last?.body.contents ?? []).filter((c) => c.role === 'model')
    .flatMap((c) => c.parts ?? []).filter((p) => p.functionCall && (!name || p.functionCall.name === name));
}

// What the model was sent, in short, for a failure's message.
export function conversation(model) {
  const main = model.requests.filter((r) => isGenerate(r) && isMain(r.body));
  const lines = [];
  const last = main.at(-1);
  if (last) {
    lines.push(`  tools: ${toolNames(last.body).filter((n) => n.startsWith('mcp_')).join(', ')}`);
    for (const { m, b, role, part } of parts(last.body))
      lines.push(`  [${m}.${b}] ${role} ${kindOf(part)}${part.functionCall ? ` ${part.functionCall.name}` : part.functionResponse ? ` ${part.functionResponse.name}` : ''}: ${textOf(part).replace(/\s+/g, ' ').slice(0, 300)}`);
  }
  const other = model.requests.filter((r) => r.unknown).map((r) => `${r.method} ${r.path}`);
  return `${main.length} main requests; the last:\n${lines.join('\n')}${other.length ? `\nunknown paths: ${other.join(', ')}` : ''}`;
}

// ---------------------------------------------------------------------------
// Running Gemini CLI.

// gemini -p PROMPT --yolo ARGS: resolves to { code, signal, stdout,
// stderr, ms }.  (--yolo: papo's tools run without asking, as a user who
// allowed them would have it.)
export function geminiPrint(env, cwd, prompt, args = [], { timeout = 120_000 } = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const p = spawn(process.execPath, [geminiPath(), '-p', prompt, '--yolo', ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
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

const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

// An interactive Gemini CLI in a tmux session of its own (its own tmux
// server socket): { screen(), keys(...k), type(text), submit(text),
// stop() }.
export async function geminiTmux(env, cwd, args, { name, root }) {
  const sock = path.join(root, `tmux-${name}.sock`);
  const errFile = path.join(root, `gemini-${name}.stderr`);
  const cmd = `cd ${q(cwd)} && exec env -i ${Object.entries(env).map(([k, v]) => q(`${k}=${v}`)).join(' ')} ${q(process.execPath)} ${q(geminiPath())} ${args.map(q).join(' ')} 2>${q(errFile)}`;
  const tmux = (...a) => spawnSync('tmux', ['-S', sock, ...a], { encoding: 'utf8' });
  const r = tmux('new-session', '-d', '-s', 'g', '-x', '200', '-y', '50', cmd);
  if (r.status !== 0) throw new Error(`tmux new-session: ${r.stderr}`);
  const pid = Number(tmux('display-message', '-p', '-t', 'g', '#{pane_pid}').stdout.trim());
  const screen = () => tmux('capture-pane', '-p', '-t', 'g').stdout ?? '';
  const keys = (...k) => tmux('send-keys', '-t', 'g', ...k);
  const t = {
    sock,
    pid,
    stderr: () => (fs.existsSync(errFile) ? fs.readFileSync(errFile, 'utf8').slice(-2000) : ''),
    screen,
    keys,
    type: (text) => keys('-l', text),
    // Types a prompt once the input box is there, and presses Enter
    // once the input line shows it (keys typed while Gemini CLI still
    // starts up may be lost: then the line is cleared and typed again).
    async submit(text) {
      await until('Gemini CLI\'s input box', () => /Type your message/.test(screen()), 60_000, 200);
      const typed = text.slice(0, 40);
      const shown = () => screen().split('\n').some((l) => /^\s*[>*!]\s/.test(l) && l.includes(typed));
      for (let i = 0; ; i++) {
        keys('-l', text);
        const t = Date.now();
        while (!shown() && Date.now() - t < 5000) await sleep(100);
        if (shown()) break;
        if (i === 4) throw new Error(`the prompt never showed in Gemini CLI's input line:\n${screen()}`);
        keys('C-u');
        await sleep(300);
      }
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
  return t;
}

// `gemini mcp list`'s output, offline.
export function mcpList(env, cwd) {
  const r = spawnSync(process.execPath, [geminiPath(), 'mcp', 'list'], { env, cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

export { execFileSync };

// The pids of the `papo hook gemini` processes under process root (a
// tmux pane's Gemini CLI).
export function hookPids(root) {
  const parent = new Map();
  const hooks = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      parent.set(Number(p), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      const cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      if (cmd[1] === 'hook' && cmd[2] === 'gemini' && /papo$/.test(cmd[0])) hooks.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return hooks.filter((h) => {
    for (let p = h, i = 0; p > 1 && i < 64; p = parent.get(p) ?? 0, i++) if (p === root) return true;
    return false;
  });
}
