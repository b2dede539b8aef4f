// codex.test.mjs: papo as the rooms of a REAL Codex CLI 0.171.0
// (tests/agents/node_modules), driven by the scripted Responses endpoint
// of model_responses.mjs, offline (a network namespace with only
// loopback), after `papo setup codex [--http]` only, papo's hooks then
// trusted as a person does in Codex's /hooks.  Over stdio (papo mcp) and
// over HTTP (the daemon's /mcp):
//
//  - codex exec: bo speaks before Codex starts and during a wait: each
//    message reaches the model in full exactly once; the agent's send is
//    in bo's history;
//  - codex exec that ends its turn with a message unread is given it
//    (papo's Stop hook continues the session once) and then ends; one
//    with nothing unread ends on its own within seconds;
//  - the TUI (tmux), idle, is woken by papo's Stop hook when bo speaks;
//    a burst of 20 wakes it once and one wait gives all 20;
//  - `papo setup codex --remove` leaves ~/.codex as it was.
//
// Run (from the repository, as root):
//   unshare --net bash -c 'ip link set lo up && PAPO=build/papo node --test tests/agents/codex.test.mjs'
// Facts behind it: FINDINGS-codex.md.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startResponses, turns, textOf } from './model_responses.mjs';
import { offlineOrExit, room } from './claude.mjs';
import { papoPath, within } from '../clients/daemons.mjs';
import {
  NS, WAKE, agentScript, codexEnv, codexExec, codexTmux, hasTmux, history, itemsWith, makeHome,
  processesOf, requestWith, setupCodex, sleep, timesSeen, until,
} from './codex.mjs';

offlineOrExit();
const PAPO = papoPath();
const TAG = Math.floor(Math.random() * 0xffffffff).toString(16).padStart(8, '0');
const say = (line) => console.log(`codex: ${line}`);
const PAYLOAD = 'abcdefghijklmnopqrstuvwxyz'.repeat(6);
// A message of bo's: longer than the 120 bytes a wake previews, its end
// unique, nothing JSON would escape.
const text = (kind, i = 0) => `agents ${TAG} ${kind} ${i} ${PAYLOAD} end-${kind}-${i}-${TAG}`;
const head = (kind) => `agents ${TAG} ${kind} `;
const needTmux = hasTmux() ? {} : { skip: 'tmux is not installed: the interactive cases need a terminal' };
const latency = { wait: [], idle: [] };

// What the model was sent, in short, for a failure's message.
function conversation(model) {
  const all = turns(model);
  const lines = [];
  for (const it of all.at(-1)?.body?.input ?? []) {
    const t = textOf(it).replace(/\s+/g, ' ');
    lines.push(`  ${it.type}${it.role ? ` ${it.role}` : ''}${it.name ? ` ${it.namespace ?? ''}.${it.name}` : ''}: ${t.slice(0, it.role === 'developer' ? 80 : 300)}`);
  }
  const other = model.requests.filter((r) => r.unknown).map((r) => `${r.method} ${r.path}`);
  return `${all.length} requests; the last one's input:\n${lines.join('\n')}${other.length ? `\nunknown paths: ${other.join(', ')}` : ''}`;
}

// Runs body(ctx) with a room, a model and the agent's script; on failure
// the error says what the model saw and the daemons' last log lines.
async function withCase(name, agentOpts, body) {
  const R = await room(`codex-${name}`, PAPO);
  const agent = agentScript(agentOpts);
  const model = await startResponses({ log: path.join(R.D.root, 'model.jsonl'), script: (b, r) => agent.script(b, r) });
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

// Each text reached the model in full exactly once, in a tool answer.
function onceEach(model, texts, what) {
  for (const t of texts) {
    const all = itemsWith(model, t);
    const n = timesSeen(model, t);
    assert.equal(n, 1, `${what}: "${t.slice(0, 60)}…" reached the model ${n} times, not once: ${JSON.stringify(all.map((x) => `${x.type}${x.role ? ` ${x.role}` : ''} in request ${x.n}`))}`);
    assert.equal(all[0].type, 'function_call_output', `${what}: "${t.slice(0, 60)}…" came as a tool answer`);
  }
}

const exec = (ctx, home, cwd, prompt = 'You are ana in a room: call wait, then stop.') =>
  codexExec(codexEnv(home), cwd, prompt, [], { timeout: 60_000 }).then((res) => {
    ctx.extra.push(() => `--- codex exec exited ${res.code}${res.signal ? ` (killed: ${res.signal})` : ''}; its output:\n${(res.stdout + res.stderr).slice(-2500)}`);
    return res;
  });

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};

const T0 = Date.now();

describe('Codex CLI 0.171.0 as ana\'s agent', { concurrency: 4 }, () => {
  for (const transport of ['stdio', 'http']) {
    const http = transport === 'http';

    it(`codex exec over ${transport}: bo's words said before Codex starts and during a wait reach the model once each; the agent's send reaches bo`, async () => {
      let R;
      const m0 = text(`before-${transport}`);
      const m1 = text(`during-${transport}`);
      const mine = `ana's answer ${TAG} over ${transport}`;
      let said1;
      await withCase(`exec-${transport}`, {
        waits: 2,
        afterCall: (k) => {
          if (k !== 1) return;
          // The second wait is under way (its answer sent; Codex calls papo).
          said1 = sleep(400).then(() => {
            const t = Date.now();
            return R.say(m1).then(() => t);
          });
        },
        sends: [mine],
      }, async (ctx) => {
        R = ctx.R;
        const { model } = ctx;
        await R.say(m0);
        const { home, cwd, setup } = makeHome(R.D.root, 'c', { papo: PAPO, papoHome: R.ana.home, model, http });
        ctx.extra.push(() => `--- papo setup codex${http ? ' --http' : ''}:\n${setup}`);
        const res = await exec(ctx, home, cwd);
        const t1 = await said1;
        const r1 = await within(requestWith(model, m1, -1, { types: ['function_call_output'] }), 1000, 'no request carried bo\'s message said during the wait');
        latency.wait.push(r1.t - t1);
        say(`exec ${transport}: bo's say during a wait to the model's request: ${r1.t - t1} ms`);
        onceEach(model, [m0, m1], `exec over ${transport}`);
        const calls = turns(model).at(-1).body.input.filter((i) => i.type === 'function_call' && i.namespace === NS).map((i) => i.name);
        assert.deepEqual(calls.filter((n) => n === 'wait').length >= 2 && calls.includes('send'), true, `the model called ${NS} wait twice and send: ${calls}`);
        await until('bo has ana\'s send', async () => (await history(R.bo)).some((m) => m.text === mine && m.from === 'ana'), 10_000);
        assert.equal(res.code, 0, `codex exec exits 0 (${res.signal ?? res.code})`);
      });
    });

    it(`codex exec over ${transport} that ends its turn with a message unread is given it, then ends`, async () => {
      let R;
      const m = text(`unread-${transport}`);
      await withCase(`unread-${transport}`, {
        waits: 1,
        waitArgs: { timeout_s: 1 },
        beforeEnd: async (k) => {
          if (k !== 0) return;
          await R.say(m);
          await R.anaHas(m);
        },
      }, async (ctx) => {
        R = ctx.R;
        const { model, agent } = ctx;
        const { home, cwd } = makeHome(R.D.root, 'c', { papo: PAPO, papoHome: R.ana.home, model, http });
        const res = await exec(ctx, home, cwd);
        assert.ok(agent.ends.length >= 2, `the model ended its turn, was woken and ended again (${agent.ends.length} ends)`);
        const woke = await within(requestWith(model, WAKE, agent.ends[0].n, { types: ['message'] }), 100, 'no request after the first end carried papo\'s wake');
        assert.match(textOf(woke.body.input.at(-1)), /bo/, 'the wake says who wrote');
        onceEach(model, [m], `unread at the end over ${transport}`);
        assert.equal(res.code, 0, `codex exec exits 0 (${res.signal ?? res.code})`);
        const after = res.t1 - agent.ends.at(-1).t;
        say(`exec ${transport}: woken once at the end; exited ${after} ms after its last turn`);
        assert.ok(after < 10_000, `codex exec ended within 10 s of its last turn (${after} ms; Codex itself takes 5 s to exit)`);
      });
    });

    it(`codex exec over ${transport} with nothing unread ends on its own`, async () => {
      await withCase(`idle-exec-${transport}`, {}, async (ctx) => {
        const { R, model, agent } = ctx;
        const { home, cwd } = makeHome(R.D.root, 'c', { papo: PAPO, papoHome: R.ana.home, model, http });
        const res = await exec(ctx, home, cwd, 'You are ana: say done.');
        assert.equal(res.code, 0, `codex exec exits 0 (${res.signal ?? res.code})`);
        assert.equal(agent.ends.length, 1, `one turn, not woken (${agent.ends.length} ends)`);
        assert.match(res.stdout + res.stderr, /hook: Stop/, 'papo\'s Stop hook ran (trusted)');
        const after = res.t1 - agent.ends[0].t;
        say(`exec ${transport}: nothing unread, exited ${after} ms after its turn`);
        assert.ok(after < 10_000, `codex exec ended within 10 s of its turn (${after} ms; Codex itself takes 5 s to exit)`);
      });
    });

    // The TUI, idle after its first turn; bo speaks.
    const interactive = (name, agentOpts, body) => withCase(name, agentOpts, async (ctx) => {
      const { R, model } = ctx;
      const { home, cwd } = makeHome(R.D.root, 'c', { papo: PAPO, papoHome: R.ana.home, model, http });
      const tm = await codexTmux(codexEnv(home), cwd, ['You are ana in a room: wait to be woken.'], { name, root: R.D.root });
      ctx.extra.push(() => `--- codex's stderr:\n${tm.stderr()}`);
      ctx.tm = tm;
      try {
        await within(ctx.agent.idle(0), 60_000, 'the session never ended its first turn');
        await until('papo\'s Stop hook waits', () => /Running hook/.test(tm.screen()), 10_000, 100);
        await body(ctx);
      } catch (e) {
        e.message += `\n--- the screen:\n${tm.screen().split('\n').filter((l) => l.trim()).join('\n')}`;
        throw e;
      } finally {
        await tm.stop();
      }
      // The session is gone (its terminal closed): so is papo's Stop hook.
      let left = [];
      try {
        left = await until('papo\'s Stop hook ends with the session', () => {
          const l = processesOf(home, 'hook');
          return l.length === 0 ? [] : null;
        }, 5000, 200).catch(() => processesOf(home, 'hook'));
      } finally {
        for (const p of left) process.kill(p.pid, 'SIGKILL');
      }
      assert.deepEqual(left.map((p) => p.args), [], 'no papo hook outlives the Codex session (its terminal closed: SIGHUP)');
    });

    it(`an idle TUI session over ${transport} is woken by papo's Stop hook when bo speaks`, needTmux, async () => {
      await interactive(`wake-${transport}`, { onInput: () => sleep(200) }, async ({ R, model }) => {
        const m = text(`wake-${transport}`);
        const before = turns(model).at(-1).n;
        const t0 = Date.now();
        await R.say(m);
        const woke = await within(requestWith(model, WAKE, before, { types: ['message'] }), 15_000, 'no model request carried papo\'s wake');
        latency.idle.push(woke.t - t0);
        say(`TUI ${transport}: bo's say to the woken model's request: ${woke.t - t0} ms`);
        assert.match(textOf(woke.body.input.at(-1)), /bo/, 'the wake says who wrote');
        await until('the model has bo\'s whole message', () => timesSeen(model, m, { types: ['function_call_output'] }) >= 1, 15_000);
        await sleep(1500);
        onceEach(model, [m], `woken over ${transport}`);
      });
    });

    it(`a burst of 20 wakes an idle TUI session over ${transport} once; one wait gives all 20`, needTmux, async () => {
      await interactive(`burst-${transport}`, { onInput: () => sleep(1000) }, async ({ R, model }) => {
        const ms = Array.from({ length: 20 }, (_, i) => text(`burst-${transport}`, i));
        const before = turns(model).at(-1).n;
        const sent = await R.burst(ms);
        assert.ok(sent.every((s) => s.id), `bo sent 20: ${JSON.stringify(sent.slice(0, 2))}`);
        await within(requestWith(model, WAKE, before, { types: ['message'] }), 15_000, 'no model request carried papo\'s wake');
        await until('the model has all 20', () => ms.every((m) => timesSeen(model, m, { types: ['function_call_output'] }) >= 1), 20_000);
        await sleep(3000); // a second wake would have come by now
        onceEach(model, ms, `burst over ${transport}`);
        const wakes = itemsWith(model, WAKE, { types: ['message'] }).filter((w) => w.n > before);
        assert.equal(wakes.length, 1, `one wake for the burst, not ${wakes.length}: ${JSON.stringify(wakes.map((w) => w.text.slice(0, 200)))}`);
        const results = itemsWith(model, head(`burst-${transport}`), { types: ['function_call_output'] });
        assert.equal(results.length, 1, `one wait gave all 20 (${results.length} tool answers carried them)`);
      });
    });

    it(`papo setup codex${http ? ' --http' : ''} --remove leaves ~/.codex as it was (with and without a hooks.json of the person's)`, async () => {
      const R = await room(`codex-remove-${transport}`, PAPO);
      try {
        for (const own of [false, true]) {
          const home = path.join(R.D.root, `home-${own ? 'own' : 'bare'}`);
          const dir = path.join(home, '.codex');
          fs.mkdirSync(path.join(home, 'work'), { recursive: true });
          fs.mkdirSync(dir);
          fs.writeFileSync(path.join(dir, 'config.toml'), `# mine\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "other"\n`);
          if (own) fs.writeFileSync(path.join(dir, 'hooks.json'), JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'mine', timeout: 5 }] }] } }, null, 2) + '\n');
          const snap = () => Object.fromEntries(fs.readdirSync(dir).sort().map((f) => [f, fs.readFileSync(path.join(dir, f), 'utf8')]));
          const before = snap();
          const out = setupCodex(PAPO, home, R.ana.home, { http });
          const mid = snap();
          assert.match(mid['config.toml'], /\[mcp_servers\.papo\]/, `setup added papo's server: ${out}`);
          assert.match(mid['hooks.json'] ?? '', /papo'? hook codex/, `setup added papo's hook: ${out}`);
          const rm = setupCodex(PAPO, home, R.ana.home, { http, remove: true });
          assert.deepEqual(snap(), before, `--remove put ~/.codex back as it was (${own ? 'with' : 'without'} a hooks.json of the person's): ${rm}`);
        }
      } finally {
        await R.close();
      }
    });
  }
});

process.on('exit', () => {
  for (const [k, xs] of Object.entries(latency)) if (xs.length) say(`latency ${k === 'wait' ? 'during a wait' : 'from idle'}: median ${median(xs)} ms over ${xs.length} (${xs.join(', ')})`);
  say(`all cases: ${((Date.now() - T0) / 1000).toFixed(1)} s`);
});
