// measure_codex.mjs: bo's `papo say` → the model request that carries it,
// with the real Codex CLI 0.171.0 after `papo setup codex [--http]`, over
// stdio and HTTP: during a wait (codex exec, 20 waits, bo speaks in each)
// and from idle (the TUI in tmux, woken 20 times by papo's Stop hook).
// Prints median and p99 per transport and path.  "Idle" is 2 s after the
// woken turn (IDLE_MS): papo's daemon wakes an agent that made no call
// in the last 1.5 s, so 1 s gives ~490 ms (the wake held until then).
// Offline only:
//   unshare --net bash -c 'ip link set lo up && PAPO=build/papo node tests/agents/measure_codex.mjs'
import path from 'node:path';
import { startResponses, turns } from './model_responses.mjs';
import { offlineOrExit, room } from './claude.mjs';
import { papoPath, within } from '../clients/daemons.mjs';
import { WAKE, agentScript, codexEnv, codexExec, codexTmux, makeHome, processesOf, requestWith, sleep, until } from './codex.mjs';

offlineOrExit();
const PAPO = papoPath();
const N = Number(process.env.RUNS ?? 20);
const TAG = Math.floor(Math.random() * 0xffffffff).toString(16);
const text = (kind, i) => `measure ${TAG} ${kind} ${i} end-${kind}-${i}`;
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const show = (what, xs) => console.log(`codex ${what}: median ${pct(xs, 50)} ms, p99 ${pct(xs, 99)} ms, min ${Math.min(...xs)}, max ${Math.max(...xs)} (n=${xs.length})`);

async function duringWait(http) {
  const R = await room(`mcodex-w-${http ? 'http' : 'stdio'}`, PAPO);
  const said = [];
  const agent = agentScript({
    waits: N,
    afterCall: (k) => {
      said[k] = sleep(300).then(() => {
        const t = Date.now();
        return R.say(text('w', k)).then(() => t);
      });
    },
  });
  const model = await startResponses({ log: path.join(R.D.root, 'model.jsonl'), script: (b, r) => agent.script(b, r) });
  try {
    const { home, cwd } = makeHome(R.D.root, 'c', { papo: PAPO, papoHome: R.ana.home, model, http });
    const res = await codexExec(codexEnv(home), cwd, 'You are ana: call wait again and again.', [], { timeout: 300_000 });
    if (res.code !== 0) throw new Error(`codex exec exited ${res.code}: ${res.stderr.slice(-1000)}`);
    const ms = [];
    for (let k = 0; k < N; k++) {
      const t = await said[k];
      const r = await within(requestWith(model, text('w', k), -1, { types: ['function_call_output'] }), 1000, `message ${k} never reached the model`);
      ms.push(r.t - t);
    }
    return ms;
  } finally {
    await model.close();
    await R.close();
  }
}

async function fromIdle(http) {
  const R = await room(`mcodex-i-${http ? 'http' : 'stdio'}`, PAPO);
  const agent = agentScript({ waitArgs: { timeout_s: 1 } });
  const model = await startResponses({ log: path.join(R.D.root, 'model.jsonl'), script: (b, r) => agent.script(b, r) });
  let tm;
  let home;
  try {
    const made = makeHome(R.D.root, 'c', { papo: PAPO, papoHome: R.ana.home, model, http });
    home = made.home;
    tm = await codexTmux(codexEnv(home), made.cwd, ['You are ana: wait to be woken.'], { name: 'm', root: R.D.root });
    await within(agent.idle(0), 60_000, 'the first turn never ended');
    const ms = [];
    for (let k = 0; k < N; k++) {
      await sleep(Number(process.env.IDLE_MS ?? 2000)); // idle: papo's Stop hook waits
      await until('the Stop hook waits', () => /Running hook/.test(tm.screen()), 10_000, 50);
      const before = turns(model).at(-1).n;
      const ends = agent.ends.length;
      const t = Date.now();
      await R.say(text('i', k));
      const r = await within(requestWith(model, WAKE, before, { types: ['message'] }), 15_000, `wake ${k} never came`);
      ms.push(r.t - t);
      await within(agent.idle(ends), 30_000, `the woken turn ${k} never ended`);
    }
    return ms;
  } finally {
    await tm?.stop();
    if (home) for (const p of processesOf(home, 'hook')) process.kill(p.pid, 'SIGKILL');
    await model.close();
    await R.close();
  }
}

for (const http of process.env.ONLY_IDLE ? [false] : [false, true]) {
  const t = http ? 'HTTP' : 'stdio';
  if (!process.env.ONLY_IDLE) show(`${t}, during a wait (codex exec)`, await duringWait(http));
  show(`${t}, from idle (TUI, Stop hook)`, await fromIdle(http));
}
process.exit(0);
