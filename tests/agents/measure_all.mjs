// measure_all.mjs: bo's `papo say` -> the model request that carries his
// words, for every agent CLI of tests/agents (the real CLIs, scripted
// models on loopback), each after `papo setup NAME [--http]` only, over
// stdio and over HTTP, two ways:
//
//  - during a wait: one non-interactive run (claude -p, codex exec,
//    gemini -p, copilot -p, qwen -p, opencode run) whose model calls
//    papo's wait RUNS times; bo speaks DURING_MS after the model's answer
//    that calls each wait (the CLI is then inside the wait); the time runs
//    to the model request whose tool result holds his words;
//  - from idle: one interactive session (tmux) whose turn is over; IDLE_MS
//    after the end of each turn (papo's daemon counts an agent idle 1.5 s
//    after its last wait) bo speaks; the time runs to the model request
//    that carries his words (papo's wake, which quotes their start: the
//    stop hook's new prompt, Claude Code's inbox over stdio, opencode's
//    plugin).
//
// One room and one session per harness x transport x kind, RUNS samples
// each (default 20), one measurement at a time (JOBS, default 1: the
// figures are latencies, and the CLIs share the machine's cores).  Prints
// a table: harness, transport, kind, n, median, p99 (nearest rank: the
// largest of 20), min, max in ms, and the machine (nproc, load average at
// the start and during the run) and the date.  Figures only: it fails
// (exit 1) only when a measurement could not be made.
//
// Offline only (a network namespace with only loopback):
//   unshare --net bash -c 'ip link set lo up && PAPO=build/papo node tests/agents/measure_all.mjs [CLI...]'
//   (CLI: claude codex gemini copilot qwen opencode, default all;
//    env RUNS, DURING_MS, IDLE_MS, JOBS, KINDS=during,idle, TRANSPORTS=stdio,http)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { within } from '../clients/daemons.mjs';
import * as C from './claude.mjs';
import { startModel } from './model.mjs';
import * as X from './codex.mjs';
import { startResponses, turns } from './model_responses.mjs';
import * as G from './gemini.mjs';
import { startModel as startGemini, jsonSchemaOf, fillSchema } from './model_gemini.mjs';
import { copilotHarness, copilotPath, copilotEnv, printRun } from './copilot.mjs';
import { qwenHarness, qwenPath, qwenEnv } from './qwen.mjs';
import { startChatModel, chatAgent, requestWith as chatRequestWith } from './model_chat.mjs';
import * as O from './opencode.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
C.offlineOrExit();
process.setMaxListeners(0); // every room adds an exit listener
// The papo to measure: $PAPO, else the default build's (the arguments
// are CLI names, not a papo path: papoPath() of the helpers reads $PAPO).
const PAPO = path.resolve(process.env.PAPO || path.join(HERE, '..', '..', 'build', 'papo'));
process.env.PAPO = PAPO;
const { sleep, until } = C;
const N = Number(process.env.RUNS ?? 20);
const DURING_MS = Number(process.env.DURING_MS ?? 1000);
const IDLE_MS = Number(process.env.IDLE_MS ?? 2000);
const JOBS = Number(process.env.JOBS ?? 1);
const KINDS = (process.env.KINDS ?? 'during,idle').split(',');
const TRANSPORTS = (process.env.TRANSPORTS ?? 'stdio,http').split(',');
const TAG = Math.floor(Math.random() * 0xffffffff).toString(16).padStart(8, '0');
// bo's k-th message of a measurement, and its start (unique: "… 1 " is
// not the start of "… 10 "), which papo's wake quotes (its first 120
// bytes) and wait's answer holds in full.
const head = (id, k) => `measure ${TAG} ${id} ${k} `;
const text = (id, k) => `${head(id, k)}${'x'.repeat(40)} end-${k}`;
const log = (line) => console.log(`measure: ${line}`);

// The hooks papo setup gave a session (papo hook, PAPO_HOME ana's) that
// outlive it: ended.
function killHooks(papoHome) {
  for (const pid of O.hooksOf(papoHome)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

// One measurement: a room of its own (ana, bo), a model, the run; the
// room closed whatever happens.  body(R, ms) pushes samples into ms;
// returns { ms, error }.
async function measurement(name, body) {
  const R = await C.room(`m-${name}`, PAPO);
  const ms = [];
  try {
    await body(R, ms);
    return { ms };
  } catch (e) {
    return { ms, error: e.message.split('\n')[0].slice(0, 300) };
  } finally {
    killHooks(R.ana.home);
    await R.close();
  }
}

// "During a wait": said[k] is scheduled once, DURING_MS after the model
// answers with its k-th wait call; each sample runs from bo's say to the
// first model request holding his k-th message.  schedule(k) is what the
// agent's script calls when it answers with that call.
function duringSays(R, id) {
  const said = [];
  const schedule = (k) => {
    if (said[k]) return;
    said[k] = sleep(DURING_MS).then(() => {
      const t = Date.now();
      return R.say(text(id, k)).then(() => t);
    });
  };
  // The samples, once the run is over: [ms].
  const collect = async (find, ms) => {
    for (let k = 0; k < N; k++) {
      if (!said[k]) throw new Error(`the model called wait only ${k} times of ${N}`);
      const t = await said[k];
      const r = await within(find(head(id, k)), 5000, `bo's message ${k} never reached the model`);
      ms.push(r.t - t);
    }
  };
  return { schedule, collect };
}

// "From idle": before each say, IDLE_MS after the end of the turn, and
// ready() (the harness's stop hook waits); the sample runs from bo's say
// to the first model request after that end holding his message's start.
// turnEnd(i): the i-th end of turn (from 0); lastN(): the newest request's
// number; find(needle, afterN); between(i): what comes before the i-th
// say (Copilot's person's prompt).
async function idleLoop(R, id, ms, { turnEnd, lastN, find, ready = async () => {}, between = async () => 0 }) {
  let ends = 1;
  for (let i = 0; i < N; i++) {
    ends += await between(i, ends);
    const end = await within(turnEnd(ends - 1), 60_000, `the turn before say ${i} never ended`);
    await sleep(Math.max(0, end.t + IDLE_MS - Date.now()));
    await ready();
    const before = lastN();
    const t = Date.now();
    await R.say(text(id, i));
    const r = await within(find(head(id, i), before), 30_000, `say ${i}: the wake never reached the model`);
    ms.push(r.t - t);
    ends++;
  }
  await within(turnEnd(ends - 1), 60_000, 'the last woken turn never ended');
}

// ---------------------------------------------------------------------------
// The harnesses: during(http) and idle(http), each a measurement.

const claude = {
  name: 'claude',
  during: (http) => measurement(`claude-w-${http}`, async (R, ms) => {
    const id = `claude-${http ? 'http' : 'stdio'}-w`;
    const s = duringSays(R, id);
    const agent = C.agentScript({ waits: N, waitArgs: { timeout_s: 30 }, beforeWait: async (k) => s.schedule(k) });
    const model = await startModel({ log: path.join(R.D.root, 'model.jsonl'), script: (b, r) => agent.script(b, r) });
    try {
      const { home, cwd } = C.makeHome(R.D.root, 'c', { papo: PAPO, papoHome: R.ana.home, http });
      const res = await C.claudePrint(C.claudeEnv(home, model), cwd, 'You are ana: call wait again and again.', ['--dangerously-skip-permissions'], { timeout: 600_000 });
      if (res.code !== 0) throw new Error(`claude -p exited ${res.code ?? res.signal}: ${res.stderr.slice(-300)}`);
      await s.collect((needle) => C.requestWith(model, needle), ms);
    } finally {
      await model.close();
    }
  }),
  idle: (http) => measurement(`claude-i-${http}`, async (R, ms) => {
    const id = `claude-${http ? 'http' : 'stdio'}-i`;
    const agent = C.agentScript({ onInput: () => sleep(100) });
    const model = await startModel({ log: path.join(R.D.root, 'model.jsonl'), script: (b, r) => agent.script(b, r) });
    let tm;
    try {
      const { home, cwd } = C.makeHome(R.D.root, 'c', { papo: PAPO, papoHome: R.ana.home, http });
      tm = await C.claudeTmux(C.claudeEnv(home, model), cwd, ['--dangerously-skip-permissions', 'You are ana in a papo room. Load papo\'s tools, then wait to be woken.'], { name: 'i', root: R.D.root });
      await idleLoop(R, id, ms, {
        turnEnd: (i) => agent.idle(i),
        lastN: () => model.requests.at(-1).n,
        find: (needle, n) => C.requestWith(model, needle, n),
      });
    } finally {
      await tm?.stop();
      await model.close();
    }
  }),
};

const codex = {
  name: 'codex',
  during: (http) => measurement(`codex-w-${http}`, async (R, ms) => {
    const id = `codex-${http ? 'http' : 'stdio'}-w`;
    const s = duringSays(R, id);
    const agent = X.agentScript({ waits: N, waitArgs: { timeout_s: 30 }, afterCall: (k) => s.schedule(k) });
    const model = await startResponses({ log: path.join(R.D.root, 'model.jsonl'), script: (b, r) => agent.script(b, r) });
    try {
      const { home, cwd } = X.makeHome(R.D.root, 'c', { papo: PAPO, papoHome: R.ana.home, model, http });
      const res = await X.codexExec(X.codexEnv(home), cwd, 'You are ana: call wait again and again.', [], { timeout: 600_000 });
      if (res.code !== 0) throw new Error(`codex exec exited ${res.code ?? res.signal}: ${res.stderr.slice(-300)}`);
      await s.collect((needle) => X.requestWith(model, needle, -1, { types: ['function_call_output'] }), ms);
    } finally {
      await model.close();
    }
  }),
  idle: (http) => measurement(`codex-i-${http}`, async (R, ms) => {
    const id = `codex-${http ? 'http' : 'stdio'}-i`;
    const agent = X.agentScript({ waitArgs: { timeout_s: 1 } });
    const model = await startResponses({ log: path.join(R.D.root, 'model.jsonl'), script: (b, r) => agent.script(b, r) });
    let tm;
    try {
      const { home, cwd } = X.makeHome(R.D.root, 'c', { papo: PAPO, papoHome: R.ana.home, model, http });
      tm = await X.codexTmux(X.codexEnv(home), cwd, ['You are ana: wait to be woken.'], { name: 'i', root: R.D.root });
      await idleLoop(R, id, ms, {
        turnEnd: (i) => agent.idle(i),
        lastN: () => turns(model).at(-1).n,
        find: (needle, n) => X.requestWith(model, needle, n, { types: ['message'] }),
        ready: () => until('papo\'s Stop hook waits', () => /Running hook/.test(tm.screen()), 10_000, 50),
      });
    } finally {
      await tm?.stop();
      await model.close();
    }
  }),
};

// Gemini CLI halts a prompt whose model makes the same call 5 times in a
// row, and from its 30th turn asks the model whether it loops: each wait
// gets arguments of its own, each text a number, and the loop check says
// no.
function geminiVaried(agent) {
  let n = 0;
  return async (body, req) => {
    const schema = jsonSchemaOf(body);
    if (schema) return JSON.stringify(fillSchema(schema, { next_speaker: 'user', unproductive_state_confidence: 0, confidence: 0 }));
    const a = await agent.script(body, req);
    if (typeof a === 'string') return `${a} (${++n})`;
    for (const p of a.parts ?? []) {
      if (p.functionCall?.name === G.WAIT) p.functionCall.args = { timeout_s: 30 + (++n % 50) };
      else if (typeof p.text === 'string') p.text = `${p.text} (${++n})`;
    }
    return a;
  };
}

const gemini = {
  name: 'gemini',
  during: (http) => measurement(`gemini-w-${http}`, async (R, ms) => {
    const id = `gemini-${http ? 'http' : 'stdio'}-w`;
    const s = duringSays(R, id);
    const agent = G.agentScript({ waits: N, inputTools: [], beforeWait: async (k) => s.schedule(k) });
    const script = geminiVaried(agent);
    const model = await startGemini({ log: path.join(R.D.root, 'model.jsonl'), script });
    try {
      const { home, cwd } = G.makeHome(R.D.root, 'g', { papo: PAPO, papoHome: R.ana.home, http });
      const res = await G.geminiPrint(G.geminiEnv(home, model), cwd, 'You are ana: call wait again and again.', [], { timeout: 600_000 });
      if (res.code !== 0) throw new Error(`gemini -p exited ${res.code ?? res.signal}: ${res.stderr.slice(-300)}`);
      await s.collect((needle) => G.requestWith(model, needle), ms);
    } finally {
      await model.close();
    }
  }),
  idle: (http) => measurement(`gemini-i-${http}`, async (R, ms) => {
    const id = `gemini-${http ? 'http' : 'stdio'}-i`;
    const agent = G.agentScript({ onInput: () => sleep(100) });
    const model = await startGemini({ log: path.join(R.D.root, 'model.jsonl'), script: geminiVaried(agent) });
    let tm;
    try {
      const { home, cwd } = G.makeHome(R.D.root, 'g', { papo: PAPO, papoHome: R.ana.home, http });
      tm = await G.geminiTmux(G.geminiEnv(home, model), cwd, ['--yolo'], { name: 'i', root: R.D.root });
      await tm.submit('You are ana in a papo room. Answer, then wait to be woken.');
      await idleLoop(R, id, ms, {
        turnEnd: (i) => agent.idle(i),
        lastN: () => model.requests.at(-1).n,
        find: (needle, n) => G.requestWith(model, needle, n),
        ready: () => until('the AfterAgent hook runs', () => G.hookPids(tm.pid).length === 1, 10_000, 50),
      });
    } finally {
      await tm?.stop();
      await model.close();
    }
  }),
};

// Copilot CLI and Qwen Code (Chat Completions, copilot.mjs's harnesses).
// Every wait gets arguments of its own (Qwen Code halts a turn whose
// model makes the same call 5 times in a row).
function chatHarness(H, print) {
  return {
    name: H.client,
    during: (http) => measurement(`${H.client}-w-${http}`, async (R, ms) => {
      const id = `${H.client}-${http ? 'http' : 'stdio'}-w`;
      const s = duringSays(R, id);
      const agent = chatAgent({ tools: H.tools, main: H.main, waits: N, waitArgs: (k) => ({ timeout_s: 30 + k }), duringWait: (k) => s.schedule(k) });
      const model = await startChatModel({ log: path.join(R.D.root, 'model.jsonl'), script: (b, r) => agent.script(b, r) });
      try {
        const { home, cwd } = H.makeHome(R.D.root, 'p', { papo: PAPO, papoHome: R.ana.home, http });
        const res = await print(home, cwd, model, 'You are ana: call wait again and again.');
        if (res.code !== 0) throw new Error(`${H.client} -p exited ${res.code ?? res.signal}: ${res.stderr.slice(-300)}`);
        await s.collect((needle) => chatRequestWith(model, needle, -1, { roles: ['tool'] }), ms);
      } finally {
        await model.close();
      }
    }),
    idle: (http) => measurement(`${H.client}-i-${http}`, async (R, ms) => {
      const id = `${H.client}-${http ? 'http' : 'stdio'}-i`;
      const agent = chatAgent({ tools: H.tools, main: H.main, onInput: () => sleep(100), waitArgs: (k) => ({ timeout_s: 1 + (k % 4) }) });
      const model = await startChatModel({ log: path.join(R.D.root, 'model.jsonl'), script: (b, r) => agent.script(b, r) });
      let tm;
      try {
        const { home, cwd } = H.makeHome(R.D.root, 'a', { papo: PAPO, papoHome: R.ana.home, http });
        tm = H.interactive(home, cwd, model, { name: 'i', root: R.D.root });
        await until('the UI is ready for a prompt', () => H.ready(tm.screen()), 60_000, 200);
        await tm.submit('You are ana in a papo room: wait to be woken.');
        await idleLoop(R, id, ms, {
          turnEnd: (i) => agent.idle(i),
          lastN: () => model.requests.at(-1).n,
          find: (needle, n) => chatRequestWith(model, needle, n),
          // Copilot heeds H.maxWakes stop-hook prompts in a row, then no
          // more until the person's next prompt: the person types one
          // (its turn is not measured).
          between: async (i, ends) => {
            if (!H.maxWakes || i === 0 || i % H.maxWakes !== 0) return 0;
            await within(agent.idle(ends - 1), 60_000, 'the woken turn never ended');
            await tm.submit(`Anything new? (${i})`);
            return 1;
          },
        });
      } finally {
        await tm?.stop();
        await model.close();
      }
    }),
  };
}
const copilot = chatHarness(copilotHarness, (home, cwd, model, prompt) =>
  printRun(copilotPath(), ['-p', prompt, '--allow-all-tools'], copilotEnv(home, model), cwd, { timeout: 600_000 }));
const qwen = chatHarness(qwenHarness, (home, cwd, model, prompt) =>
  printRun(qwenPath(), ['-p', prompt, '--auth-type', 'openai', '--yolo'], qwenEnv(home, model), cwd, { timeout: 600_000 }));

// opencode: each wait with arguments of its own (its doom-loop guard asks
// after three identical calls).
function opencodeVaried(agent) {
  let n = 0;
  return async (body, req) => {
    const a = await agent.script(body, req);
    for (const c of a?.tool_calls ?? []) if (c.name === O.WAIT) c.arguments = { timeout_s: 30 + (++n % 50) };
    return a;
  };
}

function opencodeHome(R, http, model) {
  const { home, cwd } = O.makeHome(R.D.root, 'oc', model);
  O.setup(PAPO, home, R.ana.home, { http });
  return { home, cwd, env: O.opencodeEnv(home) };
}

const opencode = {
  name: 'opencode',
  during: (http) => measurement(`opencode-w-${http}`, async (R, ms) => {
    const id = `opencode-${http ? 'http' : 'stdio'}-w`;
    const s = duringSays(R, id);
    const agent = O.agentScript({ waits: N, beforeWait: async (k) => s.schedule(k) });
    const model = await startChatModel({ log: path.join(R.D.root, 'model.jsonl'), script: opencodeVaried(agent) });
    try {
      const { cwd, env } = opencodeHome(R, http, model);
      const res = await O.opencodeRun(env, cwd, 'You are ana: call wait again and again.', [], { timeout: 600_000 });
      if (res.code !== 0) throw new Error(`opencode run exited ${res.code ?? res.signal}: ${res.stderr.slice(-300)}`);
      await s.collect((needle) => chatRequestWith(model, needle, -1, { roles: ['tool'] }), ms);
    } finally {
      await model.close();
    }
  }),
  idle: (http) => measurement(`opencode-i-${http}`, async (R, ms) => {
    const id = `opencode-${http ? 'http' : 'stdio'}-i`;
    const agent = O.agentScript({ onInput: () => sleep(100), waitArgs: { timeout_s: 1 } });
    const model = await startChatModel({ log: path.join(R.D.root, 'model.jsonl'), script: opencodeVaried(agent) });
    let tm;
    try {
      const { cwd, env } = opencodeHome(R, http, model);
      tm = O.opencodeTmux(env, cwd, { name: 'i', root: R.D.root, args: ['--prompt', 'You are ana in a papo room. Wait to be woken.'] });
      await idleLoop(R, id, ms, {
        turnEnd: (i) => agent.idle(i),
        lastN: () => model.requests.at(-1).n,
        find: (needle, n) => chatRequestWith(model, needle, n, { roles: ['user'] }),
        ready: () => until('the plugin\'s papo hook waits', () => O.hooksOf(R.ana.home).length === 1, 40_000, 50),
      });
    } finally {
      await tm?.stop();
      await model.close();
    }
  }),
};

// ---------------------------------------------------------------------------

const ALL = { claude, codex, gemini, copilot, qwen, opencode };
const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
for (const n of names) if (!ALL[n]) {
  console.error(`measure_all: no harness ${n} (${Object.keys(ALL).join(' ')})`);
  process.exit(2);
}
const jobs = [];
for (const n of names.length ? names : Object.keys(ALL))
  for (const transport of TRANSPORTS)
    for (const kind of KINDS) jobs.push({ harness: n, transport, kind });

const q = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)] : NaN;
};
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const started = new Date();
const load0 = load();
const loads = [];
const sampler = setInterval(() => loads.push(Number(load().split(' ')[0])), 5000);
const T0 = Date.now();
log(`${jobs.length} measurements, ${N} samples each, ${JOBS} at a time; papo ${PAPO}; load ${load0}`);

const results = [];
let next = 0;
async function worker() {
  while (next < jobs.length) {
    const j = jobs[next++];
    const t = Date.now();
    const r = await ALL[j.harness][j.kind](j.transport === 'http');
    Object.assign(j, r, { s: (Date.now() - t) / 1000 });
    results.push(j);
    log(`${j.harness} ${j.transport} ${j.kind}: ${j.ms.length} samples in ${j.s.toFixed(0)} s${j.ms.length ? `, median ${q(j.ms, 0.5)} ms, p99 ${q(j.ms, 0.99)} ms: ${j.ms.join(' ')}` : ''}${j.error ? `; ERROR: ${j.error}` : ''}`);
  }
}
await Promise.all(Array.from({ length: JOBS }, worker));
clearInterval(sampler);

const pad = (s, n) => String(s).padEnd(n);
const num = (s, n) => String(s).padStart(n);
const lines = [
  `measure_all: bo's papo say -> the model request carrying his words (ms); ${started.toISOString()}; nproc ${os.cpus().length}; load average at start ${load0}, during the run ${loads.length ? `${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)} (1-min, every 5 s)` : 'n/a'}; jobs ${JOBS}; during: say ${DURING_MS} ms into the wait; idle: say ${IDLE_MS} ms after the turn ended`,
  `${pad('harness', 9)} ${pad('transport', 9)} ${pad('kind', 6)} ${num('n', 3)} ${num('median', 7)} ${num('p99', 6)} ${num('min', 6)} ${num('max', 6)}  note`,
];
for (const j of jobs) {
  const xs = j.ms ?? [];
  const f = (v) => (xs.length ? String(v) : '-');
  lines.push(`${pad(j.harness, 9)} ${pad(j.transport, 9)} ${pad(j.kind, 6)} ${num(xs.length, 3)} ${num(f(q(xs, 0.5)), 7)} ${num(f(q(xs, 0.99)), 6)} ${num(f(Math.min(...xs)), 6)} ${num(f(Math.max(...xs)), 6)}  ${j.error ?? ''}`);
}
lines.push(`measure_all: ${((Date.now() - T0) / 1000).toFixed(0)} s; median: the lower middle, p99: nearest rank (of 20: the largest)`);
console.log(lines.join('\n'));
process.exit(results.some((j) => j.error) ? 1 : 0);
