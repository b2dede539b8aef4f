// measure.mjs: how long from bo's `papo say` to the woken Claude Code's
// first model request, for an idle interactive session (tmux) woken by
// papo mcp through the inbox socket (stdio) and by the Stop hook (papo
// hook, asyncRewake; --http): N wakes each (default 20, AGENTS_RUNS),
// the two sessions side by side.  Prints lines starting "agents:" with
// the median and p99 in ms.  Figures only, never pass/fail on time.
//
//   bash tests/agents/run.sh path/to/papo --measure
import path from 'node:path';
import { startModel } from './model.mjs';
import { papoPath, sleep, within } from '../clients/daemons.mjs';
import { agentScript, claudeEnv, claudeTmux, makeHome, offlineOrExit, requestWith, room } from './claude.mjs';

offlineOrExit();
const PAPO = papoPath();
const RUNS = Number(process.env.AGENTS_RUNS ?? 20);
const TAG = Math.floor(Math.random() * 0xffffffff).toString(16).padStart(8, '0');
const q = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
};

async function measure(kind) {
  const http = kind === 'hook';
  const R = await room(`measure-${kind}`, PAPO);
  const agent = agentScript({ onInput: () => sleep(100) });
  const model = await startModel({ log: path.join(R.D.root, 'model.jsonl'), script: (b, r) => agent.script(b, r) });
  const { home, cwd } = makeHome(R.D.root, 'c', { papo: PAPO, papoHome: R.ana.home, http });
  const tm = await claudeTmux(claudeEnv(home, model), cwd,
    ['--dangerously-skip-permissions', 'You are ana in a papo room. Load papo\'s tools, then wait to be woken.'], { name: kind, root: R.D.root });
  const ms = [];
  try {
    await within(agent.idle(0), 60_000, `${kind}: the first turn never ended`);
    for (let i = 0; i < RUNS; i++) {
      await sleep(2000); // idle for papo (1.5 s after the last wait) and for the hook to start
      const ends = agent.ends.length;
      const before = model.requests.at(-1).n;
      const head = `measure ${TAG} ${kind} ${i} `;
      const t0 = Date.now();
      await R.say(`${head}${'x'.repeat(40)}`);
      const woke = await within(requestWith(model, head, before), 20_000, `${kind}: wake ${i} never came`);
      ms.push(woke.t - t0);
      await within(agent.idle(ends), 30_000, `${kind}: the woken turn ${i} never ended`);
    }
  } finally {
    await tm.stop();
    await model.close();
    await R.close();
  }
  console.log(`agents: ${kind === 'hook' ? 'Stop hook (papo hook, asyncRewake, --http)' : 'inbox socket (papo mcp, stdio)'} wake, ${ms.length} runs: bo's papo say to the woken model's first request median ${q(ms, 0.5)} ms, p99 ${q(ms, 0.99)} ms (min ${Math.min(...ms)}, max ${Math.max(...ms)})`);
  return ms;
}

const t0 = Date.now();
await Promise.all([measure('inbox'), measure('hook')]);
console.log(`agents: measured in ${((Date.now() - t0) / 1000).toFixed(0)} s on ${(await import('node:os')).cpus().length} cores`);
process.exit(0);
