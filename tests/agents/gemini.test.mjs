// gemini.test.mjs: papo driven by the REAL Gemini CLI (0.61.0, pinned in
// package.json), against a scripted Gemini API on loopback
// (model_gemini.mjs): the model is scripted, the harness is real.  Each
// case has two daemons of its own, ana and bo, in one room; Gemini CLI is
// ana's agent, added by `papo setup gemini [--http]` only (its MCP entry
// and its hooks), in a folder the test trusts as the user would after
// reading setup's note (~/.gemini/trustedFolders.json); bo talks with
// `papo say`.  What the model was sent is recorded, and each of bo's
// messages must reach it in full exactly once (counted over distinct
// parts of the conversation, which Gemini CLI resends whole every turn).
//
//  - `gemini -p`, the model calling wait twice: bo speaking before Gemini
//    CLI starts and between the two waits; the agent's send in bo's
//    history; over stdio and over HTTP;
//  - `gemini -p` ending its turn with a message unread is given it (the
//    AfterAgent hook) before it ends; with nothing unread it ends on its
//    own within a few seconds;
//  - an idle interactive session (tmux) starts a turn carrying bo's words
//    when bo speaks (AfterAgent hook), three times; a burst of 20 wakes it
//    once; papo's "new messages" line comes once in each woken turn;
//  - Esc while the AfterAgent hook waits: the hook gives up (the
//    transcript says "Request cancelled."), and after the person's next
//    prompt a message of bo's wakes the session once;
//  - in a folder Gemini CLI does not trust, `gemini -p` refuses to run
//    (exit 55, what it prints), and --skip-trust runs it with papo's tools;
//  - `papo setup gemini --remove` leaves settings.json as it was.
// The latencies (bo's say to the model's request) are printed as
// "agents: gemini ..." lines, with medians at the end.
//
// Run (as root, offline): unshare --net bash -c 'ip link set lo up &&
// PAPO=/work/main/build/papo node --test tests/agents/gemini.test.mjs'
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModel, toolNames } from './model_gemini.mjs';
import { papoPath, sleep, until, within } from '../clients/daemons.mjs';
import { offlineOrExit, room, hasTmux } from './claude.mjs';
import {
  WAIT, SEND, agentScript, callsIn, conversation, geminiEnv, geminiPrint, geminiTmux, makeHome, requestWith,
  setupGemini, timesSeen, userPartsWith, hookPids,
} from './gemini.mjs';

const PAPO = papoPath();
const TAG = Math.floor(Math.random() * 0xffffffff).toString(16).padStart(8, '0');
const say = (line) => console.log(`agents: gemini ${line}`);
const PAYLOAD = 'abcdefghijklmnopqrstuvwxyz'.repeat(6);
// A message of bo's: longer than the 120 bytes a wake previews, its end
// unique, nothing JSON would escape.
const text = (kind, i = 0) => `agents ${TAG} ${kind} ${i} ${PAYLOAD} end-${kind}-${i}-${TAG}`;
const head = (kind) => `agents ${TAG} ${kind} `;
const needTmux = hasTmux() ? {} : { skip: 'tmux is not installed: the interactive cases need a terminal' };
const times = { wait: [], idle: [] };
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};

offlineOrExit();

async function withCase(name, opts, body) {
  const R = await room(`g-${name}`, PAPO);
  const agent = agentScript(opts.agent ?? {});
  const model = await startModel({ log: path.join(R.D.root, 'model.jsonl'), script: (b, r) => agent.script(b, r) });
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

// Each text reached the model in full exactly once, in a function
// response of papo's wait.
function onceEach(model, texts, what) {
  for (const t of texts) {
    const all = userPartsWith(model.requests, t);
    const n = timesSeen(model.requests, t);
    assert.equal(n, 1, `${what}: "${t.slice(0, 60)}…" reached the model ${n} times, not once: ${JSON.stringify(all.map((x) => `${x.kind} at ${x.m}.${x.b}`))}`);
    assert.equal(all[0].kind, 'functionResponse', `${what}: it came in a function response`);
    assert.equal(all[0].name, WAIT, `${what}: it came from ${WAIT}`);
  }
}

// papo's "N new messages" line reached the model at most once per place
// it was due: no two user parts of one turn carry it.
function contextOnce(model, what) {
  const lines = userPartsWith(model.requests, 'papo: ').filter((p) => p.kind === 'text');
  const byTurn = new Map();
  for (const l of lines) byTurn.set(l.m, (byTurn.get(l.m) ?? 0) + l.text.split('papo: ').length - 1);
  for (const [m, n] of byTurn)
    assert.equal(n, 1, `${what}: papo's line came ${n} times in user turn ${m}: ${JSON.stringify(lines.filter((l) => l.m === m).map((l) => l.text.slice(0, 120)))}`);
}

const T0 = Date.now();

describe('Gemini CLI 0.61.0 as ana\'s agent', { concurrency: 6 }, () => {
  for (const transport of ['stdio', 'http']) {
    const http = transport === 'http';

    it(`gemini -p over ${transport}: bo speaks before it starts and during a wait; each reaches the model once; its send reaches bo`, async () => {
      const said = [];
      let R, M;
      const sent = text(`send-${transport}`);
      await withCase(`p-${transport}`, {
        agent: {
          waits: 2,
          sendText: sent,
          inputTools: [],
          beforeWait: async (k) => {
            if (k !== 1) return;
            // bo speaks while the second wait waits.
            const m = text(`during-${transport}`);
            said.push(m);
            setTimeout(() => {
              const t0 = Date.now();
              R.say(m).then(() => {});
              requestWith(M, m).then((r) => {
                times.wait.push(r.t - t0);
                say(`${transport}: bo's say during a wait to the model's request: ${r.t - t0} ms`);
              });
            }, 1000);
          },
        },
      }, async (ctx) => {
        R = ctx.R;
        M = ctx.model;
        const { model, agent } = ctx;
        const m0 = text(`before-${transport}`);
        said.push(m0);
        await R.say(m0);
        const { home, cwd, setup } = makeHome(R.D.root, 'g', { papo: PAPO, papoHome: R.ana.home, http });
        ctx.extra.push(() => `--- papo setup: ${setup}`);
        // After the two waits the model sends once, then ends.
        const origScript = agent.script;
        let sentOnce = false;
        agent.script = async (b, r) => {
          const calls = (b.contents ?? []).flatMap((c) => (c.role === 'model' ? c.parts ?? [] : [])).filter((p) => p.functionCall);
          if (!sentOnce && calls.filter((p) => p.functionCall.name === WAIT).length >= 2 && b.tools?.length) {
            sentOnce = true;
            return { parts: [{ functionCall: { name: SEND, args: { text: sent } } }] };
          }
          return origScript(b, r);
        };
        const res = await geminiPrint(geminiEnv(home, model), cwd, 'You are ana in a papo room: call wait twice, send, then stop.', [], { timeout: 60_000 });
        ctx.extra.push(() => `--- gemini -p exited ${res.code} ${res.signal ?? ''}; stderr: ${res.stderr.slice(-1500)}`);
        say(`-p ${transport}: ${res.ms} ms, ${model.requests.length} model requests`);
        assert.ok(callsIn(model, WAIT).length >= 2, `the model called wait twice (${callsIn(model, WAIT).length})`);
        onceEach(model, said, `-p ${transport}`);
        contextOnce(model, `-p ${transport}`);
        await until('bo has ana\'s send', async () => {
          const h = await (await fetch(`${R.bo.info.http}/api/history?limit=100`)).json();
          return (h.messages ?? []).some((x) => x.text === sent && x.from === 'ana');
        }, 20_000, 200);
        assert.equal(res.code, 0, `gemini -p exits 0 (${res.signal ? `killed by ${res.signal}` : res.code})`);
      });
    });

    it(`gemini -p over ${transport} ending its turn with a message unread is given it before it ends; with nothing unread it ends on its own`, async () => {
      let R;
      const m = text(`unread-${transport}`);
      await withCase(`end-${transport}`, {
        agent: {
          // The model's first answer ends the turn: bo spoke meanwhile.
          onInput: async () => {},
          inputTools: [WAIT],
        },
      }, async (ctx) => {
        R = ctx.R;
        const { model, agent } = ctx;
        const { home, cwd } = makeHome(R.D.root, 'g', { papo: PAPO, papoHome: R.ana.home, http });
        const orig = agent.script;
        let first = true;
        agent.script = async (b, r) => {
          if (first && b.tools?.length && !(b.generationConfig?.responseMimeType === 'application/json')) {
            first = false;
            await R.say(m); // bo speaks while the model answers; the answer ends the turn
            return 'done for now';
          }
          return orig(b, r);
        };
        const res = await geminiPrint(geminiEnv(home, model), cwd, 'You are ana in a papo room. Answer, then stop.', [], { timeout: 60_000 });
        ctx.extra.push(() => `--- gemini -p exited ${res.code} ${res.signal ?? ''} after ${res.ms} ms; stderr: ${res.stderr.slice(-1500)}`);
        say(`-p ${transport} with a message unread at the end: ${res.ms} ms`);
        assert.equal(res.code, 0, `gemini -p exits 0 (${res.signal ? `killed by ${res.signal} after 60 s` : res.code})`);
        onceEach(model, [m], `-p ${transport}, unread at the end`);

        // Nothing unread: it ends by itself, a few seconds after the
        // model's last answer (the AfterAgent hook looks once).
        const quiet = await geminiPrint(geminiEnv(home, model), cwd, 'Say hello and stop.', [], { timeout: 60_000 });
        const after = Date.now() - model.requests.at(-1).answered;
        ctx.extra.push(() => `--- quiet gemini -p exited ${quiet.code} after ${quiet.ms} ms; stderr: ${quiet.stderr.slice(-800)}`);
        say(`-p ${transport} with nothing unread: ended in ${quiet.ms} ms, ${after} ms after the model's last answer`);
        assert.equal(quiet.code, 0, `the quiet gemini -p exits 0 (${quiet.signal ? `killed by ${quiet.signal} after 60 s` : quiet.code})`);
        assert.ok(after < 8_000, `the quiet gemini -p ended on its own within 8 s of its last answer (${after} ms)`);
      });
    });

    const interactive = (name, agentOpts, body) => withCase(name, { agent: agentOpts }, async (ctx) => {
      const { R, model } = ctx;
      const { home, cwd } = makeHome(R.D.root, 'g', { papo: PAPO, papoHome: R.ana.home, http });
      const tm = await geminiTmux(geminiEnv(home, model), cwd, ['--yolo'], { name, root: R.D.root });
      ctx.extra.push(() => `--- the screen:\n${tm.screen()}\n--- gemini's stderr:\n${tm.stderr()}`);
      ctx.tm = tm;
      try {
        await tm.submit('You are ana in a papo room. Answer, then wait to be woken.');
        await within(ctx.agent.idle(0), 60_000, 'the session never ended its first turn');
        await until('the AfterAgent hook running', () => /Executing Hook/.test(tm.screen()), 10_000, 100);
        // Idle: papo wakes an agent that has had no wait for 1.5 s (and
        // the session's MCP connection counts as one).
        await sleep(2000);
        await body(ctx);
      } finally {
        await tm.stop();
      }
    });

    it(`an idle interactive session over ${transport} is woken by the AfterAgent hook when bo speaks (3 times)`, needTmux, async () => {
      await interactive(`wake-${transport}`, { onInput: () => sleep(300) }, async ({ R, model, agent }) => {
        for (let i = 0; i < 3; i++) {
          if (i > 0) {
            await within(agent.idle(i), 20_000, `the session never ended its turn after wake ${i}`);
            await sleep(2000); // idle again (no wait for 1.5 s)
          }
          const m = text(`wake-${transport}`, i);
          const before = model.requests.at(-1).n;
          const t0 = Date.now();
          await R.say(m);
          const woke = await within(requestWith(model, head(`wake-${transport}`), before), 15_000, `wake ${i}: no model request carried bo's words`);
          times.idle.push(woke.t - t0);
          say(`${transport}: bo's say to the woken model's request: ${woke.t - t0} ms`);
          await until(`wake ${i}: the model has bo's whole message`, () => timesSeen(model.requests, m, { kinds: ['functionResponse'] }) >= 1, 15_000);
          await sleep(1000);
          onceEach(model, [m], `wake ${i} over ${transport}`);
        }
        contextOnce(model, `woken over ${transport}`);
      });
    });

    it(`a burst of 20 wakes an idle interactive session over ${transport} once`, needTmux, async () => {
      await interactive(`burst-${transport}`, { onInput: () => sleep(1000) }, async ({ R, model }) => {
        const ms = Array.from({ length: 20 }, (_, i) => text(`burst-${transport}`, i));
        const before = model.requests.at(-1).n;
        const t0 = Date.now();
        const sent = await R.burst(ms);
        assert.ok(sent.every((s) => s.id), `bo sent 20: ${JSON.stringify(sent.slice(0, 2))}`);
        const woke = await within(requestWith(model, head(`burst-${transport}`), before), 15_000, 'no model request carried bo\'s words');
        say(`${transport}: a burst of 20, the first send to the woken model's request: ${woke.t - t0} ms`);
        await until('the model has all 20', () => ms.every((x) => timesSeen(model.requests, x, { kinds: ['functionResponse'] }) >= 1), 20_000);
        await sleep(3000); // a second wake would have come by now
        onceEach(model, ms, `burst over ${transport}`);
        // Woken once: one user turn after the idle one carries papo's line.
        const wakes = userPartsWith(model.requests, 'papo: ').filter((p) => p.kind === 'text' && p.n > before);
        const turns = [...new Set(wakes.map((w) => w.m))];
        assert.equal(turns.length, 1, `one wake for the burst, not ${turns.length}: ${JSON.stringify(wakes.map((w) => `${w.m}.${w.b}: ${w.text.slice(0, 200)}`))}`);
        contextOnce(model, `burst over ${transport}`);
      });
    });

    it(`over ${transport}, the person pressing Esc while the AfterAgent hook waits takes the session back: the hook gives up, and after their next prompt bo's words wake the session once`, needTmux, async () => {
      await interactive(`esc-${transport}`, { onInput: () => sleep(300) }, async ({ R, model, agent, tm }) => {
        assert.equal(hookPids(tm.pid).length, 1, 'one papo hook waits');
        tm.keys('Escape');
        await until('Gemini CLI says the request was cancelled', () => /Request cancelled/.test(tm.screen()), 10_000, 100);
        const t0 = Date.now();
        await until('the papo hook gave up', () => hookPids(tm.pid).length === 0, 10_000, 100);
        say(`${transport}: the hook gave up ${Date.now() - t0} ms after Esc`);
        await tm.submit('Back to you: answer, then wait to be woken.');
        await within(agent.idle(1), 30_000, 'the session never ended the person\'s turn');
        await until('the AfterAgent hook running again', () => hookPids(tm.pid).length === 1, 10_000, 100);
        await sleep(2000);
        const m = text(`esc-${transport}`);
        const before = model.requests.at(-1).n;
        await R.say(m);
        await within(requestWith(model, head(`esc-${transport}`), before), 15_000, 'no model request carried bo\'s words');
        await until('the model has bo\'s whole message', () => timesSeen(model.requests, m, { kinds: ['functionResponse'] }) >= 1, 15_000);
        await sleep(1000);
        onceEach(model, [m], `woken after Esc over ${transport}`);
      });
    });

    it(`in a folder it does not trust, gemini -p over ${transport} refuses to run (papo setup says to trust it); --skip-trust gives papo's tools to the model`, async () => {
      await withCase(`untrusted-${transport}`, {}, async ({ R, model, extra }) => {
        const { home, cwd, setup } = makeHome(R.D.root, 'g', { papo: PAPO, papoHome: R.ana.home, http, trust: false });
        assert.match(setup, /trust/, `papo setup tells the user to trust the folder: ${setup}`);
        const res = await geminiPrint(geminiEnv(home, model), cwd, 'hi', [], { timeout: 60_000 });
        extra.push(() => `--- gemini -p exited ${res.code}; stderr: ${res.stderr.slice(-1500)}`);
        assert.equal(res.code, 55, `gemini -p exits 55 in an untrusted folder (${res.code})`);
        assert.match(res.stderr, /Gemini CLI is not running in a trusted directory/, 'it says why');
        assert.equal(model.requests.length, 0, 'nothing reached the model');
        const ok = await geminiPrint(geminiEnv(home, model), cwd, 'hi', ['--skip-trust'], { timeout: 60_000 });
        extra.push(() => `--- gemini -p --skip-trust exited ${ok.code}; stderr: ${ok.stderr.slice(-1500)}`);
        assert.equal(ok.code, 0, `gemini -p --skip-trust exits 0 (${ok.signal ?? ok.code})`);
        const main = model.requests.filter((r) => r.body?.tools?.length);
        assert.ok(main.length && toolNames(main[0].body).includes(WAIT), `papo's wait reached the model as ${WAIT}: ${JSON.stringify(main.map((r) => toolNames(r.body)))}`);
      });
    });

    it(`papo setup gemini${http ? ' --http' : ''} --remove leaves settings.json as it was`, async () => {
      const R = await room(`g-remove-${transport}`, PAPO);
      try {
        const { home, settings, before, setup } = makeHome(R.D.root, 'g', { papo: PAPO, papoHome: R.ana.home, http, trust: false });
        const j = JSON.parse(fs.readFileSync(settings, 'utf8'));
        assert.ok(j.mcpServers?.papo, `setup added papo's server: ${setup}`);
        assert.ok(j.hooks?.AfterAgent?.length, `setup added the AfterAgent hook: ${setup}`);
        const out = setupGemini(PAPO, home, R.ana.home, { http, remove: true });
        assert.equal(fs.readFileSync(settings).toString(), before.toString(), `settings.json is as before setup; --remove said: ${out}`);
      } finally {
        await R.close();
      }
    });
  }
});

process.on('exit', () => {
  say(`latency medians: during a wait ${median(times.wait)} ms (${times.wait.length}), from idle ${median(times.idle)} ms (${times.idle.length})`);
  say(`all cases: ${((Date.now() - T0) / 1000).toFixed(1)} s`);
});
