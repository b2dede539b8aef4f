// opencode.test.mjs: papo driven by the REAL opencode CLI (opencode-ai
// 1.18.33, pinned in package.json), against a scripted Chat Completions
// endpoint on loopback (model_chat.mjs; opencode reaches it through its
// bundled @ai-sdk/openai-compatible): the model is scripted, the harness
// is real.  Each case has two daemons of its own, ana and bo, in one room;
// opencode is ana's agent, added by `papo setup opencode` (stdio through
// `papo mcp`, or --http at ana's /mcp; and papo's plugin,
// server/cli/opencode_plugin.js, which wakes an idle session); bo talks
// with `papo say`.  Every case runs in a HOME of its own.
//
//  - `opencode mcp list` shows papo connected, over stdio and over HTTP;
//  - `opencode run`, the model calling wait twice: bo speaking before the
//    first wait and during the second reaches the model in full, exactly
//    once; the agent's send is in bo's history;
//  - `opencode run` whose turn ends with a message of bo's unread is given
//    it (the plugin's look at the model's answer) and then ends on its
//    own; with nothing unread it ends on its own;
//  - an idle TUI (tmux) starts a turn carrying bo's words (the plugin's
//    session.idle wait); a person's prompt ends that wait; a burst of 20
//    wakes it once; nothing of papo's is left running after it quits;
//  - `papo setup opencode --remove` leaves the config dir as it was.
// Medians of bo's `papo say` -> the model request carrying it are printed
// ("agents: opencode ...": during a wait, and from idle).
//
// Run (as root: a network namespace with only loopback):
//   PAPO=build/papo unshare --net bash -c 'ip link set lo up && node --test tests/agents/opencode.test.mjs'
// after `npm install --no-save --prefix tests/agents`.  FINDINGS-opencode.md says what
// opencode does and why the test HOME looks as it does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startChatModel, isMain, chats, messagesWith, timesSeen, requestWith, textOf, toolNames, toolCalls } from './model_chat.mjs';
import { papoPath, sleep, until, within } from '../clients/daemons.mjs';
import { offlineOrExit, room, hasTmux } from './claude.mjs';
import {
  WAIT, SEND, agentScript, configDir, hooksOf, makeHome, mcpList, opencodeEnv, opencodeRun, opencodeTmux, setup, snapshot,
} from './opencode.mjs';

const PAPO = papoPath();
const TAG = Math.floor(Math.random() * 0xffffffff).toString(16).padStart(8, '0');
const say = (line) => console.log(`agents: opencode ${line}`);
const PAYLOAD = 'abcdefghijklmnopqrstuvwxyz'.repeat(6);
// A message of bo's: longer than the 120 bytes a wake previews, its end
// unique, nothing JSON would escape.
const text = (kind, i = 0) => `agents ${TAG} ${kind} ${i} ${PAYLOAD} end-${kind}-${i}-${TAG}`;
const head = (kind) => `agents ${TAG} ${kind} `;
const needTmux = hasTmux() ? {} : { skip: 'tmux is not installed (apt-get install tmux): the interactive cases need a terminal' };
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};
const timings = { wait: [], idle: [] };

offlineOrExit();

// What the model was sent, in short, for a failure's message.
function conversation(model) {
  const main = chats(model.requests).filter((r) => isMain(r.body));
  const lines = [];
  for (const r of main.slice(-1))
    r.body.messages.forEach((m, i) => {
      if (m.role === 'system') return;
      const tc = (m.tool_calls ?? []).map((c) => ` ${c.function?.name}(${c.function?.arguments})`).join('');
      lines.push(`  [${i}] ${m.role}${tc}: ${textOf(m.content).replace(/\s+/g, ' ').slice(0, 300)}`);
    });
  const other = model.requests.filter((r) => r.unknown).map((r) => `${r.method} ${r.path}`);
  return `${main.length} main requests; the last:\n${lines.join('\n')}${other.length ? `\nunknown paths: ${other.join(', ')}` : ''}`;
}

// Runs body(ctx) with a room, a model, the agent's script and an opencode
// HOME set up by `papo setup opencode [--http]`; on failure the error
// says what the model saw and the daemons' last log lines.
async function withCase(name, { agent: agentOpts = {}, transport = 'stdio', beforeSetup } = {}, body) {
  const R = await room(`oc-${name}`);
  const agent = agentScript(agentOpts);
  const model = await startChatModel({ log: path.join(R.D.root, 'model.jsonl'), script: (b, r) => agent.script(b, r) });
  const ctx = { R, agent, model, extra: [], transport };
  try {
    if (beforeSetup) await beforeSetup(ctx);
    const { home, cwd } = makeHome(R.D.root, 'oc', model);
    ctx.before = snapshot(home);
    ctx.setup = setup(PAPO, home, R.ana.home, { http: transport === 'http' });
    Object.assign(ctx, { home, cwd, env: opencodeEnv(home) });
    ctx.extra.push(() => `--- papo setup opencode:\n${ctx.setup}`);
    await body(ctx);
  } catch (e) {
    const log = path.join(R.D.root, 'home-oc', '.local', 'share', 'opencode', 'log');
    const logs = fs.existsSync(log) ? fs.readdirSync(log).map((f) => fs.readFileSync(path.join(log, f), 'utf8').split('\n').slice(-25).join('\n')).join('\n') : '';
    e.message += `\n--- what reached the model: ${conversation(model)}\n${ctx.extra.map((f) => f()).join('\n')}\n--- opencode's log:\n${logs}\n${R.tails()}`;
    throw e;
  } finally {
    await model.close();
    await R.close();
  }
}

// Each text reached the model in full exactly once, in a tool result
// (wait's), and nowhere else either.
function onceEach(model, texts, what) {
  for (const t of texts) {
    const all = messagesWith(model.requests, t);
    const n = timesSeen(model.requests, t);
    assert.equal(n, 1, `${what}: "${t.slice(0, 60)}…" reached the model ${n} times, not once: ${JSON.stringify(all.map((x) => `${x.role} at ${x.m}`))}`);
    assert.equal(all[0].role, 'tool', `${what}: "${t.slice(0, 60)}…" came in a tool result`);
  }
}

// The wait calls of the conversation's last main request.
const waitsIn = (model) => toolCalls(chats(model.requests).filter((r) => isMain(r.body)).at(-1)?.body).filter((c) => c.name === WAIT).length;

// bo's history holds t.
const boHas = (R, t) => until(`bo stores "${t.slice(0, 40)}…"`, async () => {
  const h = await (await fetch(`${R.bo.info.http}/api/history?limit=100`)).json();
  return (h.messages ?? []).some((m) => m.text === t);
}, 30_000, 200);

// The user messages after the first (the prompt) that hold needle: the
// plugin's wake lines, and a person's prompts.
function wakes(model, needle) {
  const first = chats(model.requests).find((r) => isMain(r.body))?.body.messages.findIndex((m) => m.role === 'user') ?? -1;
  return messagesWith(model.requests, needle, { roles: ['user'] }).filter((x) => x.m > first);
}

// Idle as papo counts it: the turn over and no MCP activity of the
// agent's for 1.5 s (mcp_wake.c, MCP_IDLE_NS; a message sooner is
// answered when that time is up), so that "from idle" is measured so.
const idle = (agent) => sleep(Math.max(0, agent.ends.at(-1).t + 1600 - Date.now()));

const T0 = Date.now();

describe('opencode 1.18.33 as ana\'s agent', { concurrency: 6 }, () => {
  for (const transport of ['stdio', 'http']) {
    it(`papo setup opencode${transport === 'http' ? ' --http' : ''}: opencode mcp list shows papo connected; papo's tools reach the model as papo_*`, async () => {
      await withCase(`list-${transport}`, { transport }, async ({ R, home, cwd, env, model }) => {
        const j = JSON.parse(fs.readFileSync(path.join(configDir(home), 'opencode.json'), 'utf8'));
        if (transport === 'http') assert.deepEqual([j.mcp?.papo?.type, j.mcp?.papo?.url], ['remote', R.ana.info.mcp], 'papo\'s entry names ana\'s /mcp');
        else assert.deepEqual([j.mcp?.papo?.type, j.mcp?.papo?.command], ['local', [PAPO, 'mcp']], 'papo\'s entry runs papo mcp');
        const plugin = fs.readFileSync(path.join(configDir(home), 'plugin', 'papo.js'), 'utf8');
        assert.ok(plugin.includes(`const PAPO = ${JSON.stringify(PAPO)};`) && plugin.includes(`const PAPO_HOME = ${JSON.stringify(R.ana.home)};`), 'the plugin names this papo and its home');
        const r = mcpList(env, cwd);
        assert.match(r.out, /✓ papo .*connected/, `opencode mcp list: ${r.out}`);
        const res = await opencodeRun(env, cwd, 'Say hello.');
        assert.equal(res.code, 0, `opencode run exits 0: ${res.stderr.slice(-800)}`);
        const names = toolNames(chats(model.requests).find((x) => isMain(x.body))?.body);
        for (const t of ['papo_wait', 'papo_send', 'papo_status', 'papo_history']) assert.ok(names.includes(t), `${t} offered to the model: ${names.join(' ')}`);
      });
    });
  }

  // opencode run, the model calling wait twice (5 s each), then send.
  for (const transport of ['stdio', 'http']) {
    it(`opencode run over ${transport}: bo speaks before the first wait and during five more; each reaches the model once; the agent's send is in bo's history`, async () => {
      const during = 5;
      const said = [text(`before-${transport}`), ...Array.from({ length: during }, (_, i) => text(`during-${transport}`, i))];
      const sent = text(`send-${transport}`);
      const t = [];
      let R;
      await withCase(`run-${transport}`, {
        transport,
        beforeSetup: (ctx) => ctx.R.say(said[0]),
        agent: {
          waits: during + 1,
          sendText: sent,
          beforeWait: async (k) => {
            if (k === 0) return;
            // said a second into the wait the model now calls
            setTimeout(() => {
              t[k] = Date.now();
              R.say(said[k]).catch(() => {});
            }, 1000);
          },
        },
      }, async (ctx) => {
        R = ctx.R;
        const { model, env, cwd } = ctx;
        const res = await opencodeRun(env, cwd, 'You are ana in a chat room: call wait six times, send, then stop.');
        ctx.extra.push(() => `--- opencode run exited ${res.code}; stdout: ${res.stdout.slice(-800)}\nstderr: ${res.stderr.slice(-1500)}`);
        say(`run ${transport}: ${res.ms} ms, ${model.requests.length} model requests`);
        assert.equal(res.code, 0, `opencode run exits 0 (${res.signal ?? res.code})`);
        assert.equal(waitsIn(model), during + 1, `the model called wait ${during + 1} times`);
        onceEach(model, said, `run ${transport}`);
        const ms = said.slice(1).map((m, i) => messagesWith(model.requests, m)[0].t - t[i + 1]);
        timings.wait.push(...ms);
        say(`run ${transport}: bo's say during a wait to the model's request: ${ms.join(', ')} ms (median ${median(ms)})`);
        await boHas(R, sent);
        assert.equal(wakes(model, '').length, 0, 'no wake line: nothing was unread when the turn ended');
      });
    });
  }

  // opencode run whose turn ends with a message unread, and one with none.
  for (const transport of ['stdio', 'http']) {
    it(`opencode run over ${transport} that ends its turn with a message unread is given it and then ends on its own`, async () => {
      const m = text(`unread-${transport}`);
      let R;
      await withCase(`unread-${transport}`, {
        transport,
        agent: {
          waits: 1,
          waitArgs: { timeout_s: 1 },
          // bo speaks after the agent's last wait, before its answer
          beforeEnd: async (k) => {
            if (k !== 0) return;
            await R.say(m);
            await R.anaHas(m);
          },
        },
      }, async (ctx) => {
        R = ctx.R;
        const { model, env, cwd, agent } = ctx;
        const res = await opencodeRun(env, cwd, 'You are ana in a chat room: call wait, then stop.', [], { timeout: 120_000 });
        ctx.extra.push(() => `--- opencode run exited ${res.code} after ${res.ms} ms; stdout: ${res.stdout.slice(-800)}\nstderr: ${res.stderr.slice(-1500)}`);
        say(`run ${transport} with a message unread at its end: ${res.ms} ms`);
        assert.equal(res.code, 0, `opencode run exits 0 on its own (${res.signal ?? res.code})`);
        const w = wakes(model, head(`unread-${transport}`));
        assert.equal(w.length, 1, `one wake line carried into the run: ${JSON.stringify(w.map((x) => x.text.slice(0, 200)))}`);
        onceEach(model, [m], `run ${transport}, unread at the end`);
        assert.equal(agent.ends.length, 2, `the turn ended twice: before the wake and after it (${agent.ends.length})`);
        assert.equal(hooksOf(R.ana.home).length, 0, 'no papo hook left running');
      });
    });
  }
  it('opencode run with nothing unread ends on its own', async () => {
    await withCase('quiet', { agent: { waits: 1, waitArgs: { timeout_s: 1 } } }, async (ctx) => {
      const { model, env, cwd, agent, R } = ctx;
      const res = await opencodeRun(env, cwd, 'You are ana in a chat room: call wait, then stop.', [], { timeout: 120_000 });
      ctx.extra.push(() => `--- opencode run exited ${res.code} after ${res.ms} ms; stderr: ${res.stderr.slice(-1500)}`);
      say(`run with nothing unread: ${res.ms} ms`);
      assert.equal(res.code, 0, `opencode run exits 0 on its own (${res.signal ?? res.code})`);
      assert.equal(agent.ends.length, 1, 'one turn');
      assert.equal(wakes(model, '').length, 0, 'no user message but the prompt: no wake line');
      assert.equal(hooksOf(R.ana.home).length, 0, 'no papo hook left running');
    });
  });

  // The TUI, idle, then bo speaks.
  const tui = (name, { transport, agent }, body) =>
    withCase(name, { transport, agent }, async (ctx) => {
      const { R, env, cwd } = ctx;
      const tm = opencodeTmux(env, cwd, { name, root: R.D.root, args: ['--prompt', 'You are ana in a papo room. Wait to be woken.'] });
      ctx.tm = tm;
      ctx.extra.push(() => `--- the screen:\n${tm.screen()}\n--- opencode's stderr:\n${tm.stderr()}`);
      try {
        await within(ctx.agent.idle(0), 120_000, 'the session never ended its first turn');
        // idle: the plugin's papo hook waits
        await until('the plugin\'s papo hook waits', () => hooksOf(R.ana.home).length === 1, 40_000, 50);
        await body(ctx);
      } finally {
        await tm.stop();
      }
      await until('nothing of papo\'s hook left once opencode quit', () => hooksOf(R.ana.home).length === 0, 10_000, 100);
    });

  for (const transport of ['stdio', 'http']) {
    it(`an idle TUI over ${transport} starts a turn carrying bo's words; a person's prompt ends the plugin's wait`, needTmux, async () => {
      const rounds = 5;
      await tui(`wake-${transport}`, { transport, agent: { onInput: () => sleep(200) } }, async ({ R, model, agent, tm }) => {
        const ms = [];
        for (let i = 0; i < rounds; i++) {
          await idle(agent);
          const m = text(`wake-${transport}`, i);
          const before = model.requests.at(-1).n;
          const ended = agent.ends.length;
          const t0 = Date.now();
          await R.say(m);
          const woke = await within(requestWith(model, `${head(`wake-${transport}`)}${i} `, before, { roles: ['user'] }), 40_000, `round ${i}: no model request carried bo's words`);
          ms.push(woke.t - t0);
          await within(agent.idle(ended), 40_000, `round ${i}: the woken turn never ended`);
          assert.equal(timesSeen(model.requests, m, { roles: ['tool'] }), 1, `round ${i}: wait gave bo's whole message once`);
          await until('the plugin\'s papo hook waits again', () => hooksOf(R.ana.home).length === 1, 40_000, 50);
        }
        timings.idle.push(...ms);
        say(`TUI ${transport}: bo's say to the woken model's request: ${ms.join(', ')} ms (median ${median(ms)})`);
        onceEach(model, Array.from({ length: rounds }, (_, i) => text(`wake-${transport}`, i)), `TUI ${transport}`);
        // A person types: the plugin's waiting hook is ended (and a new
        // one waits once that turn is over).
        const waiting = hooksOf(R.ana.home);
        const ended = agent.ends.length;
        await tm.submit('Anything new?');
        await until('the waiting hook ended at the person\'s prompt', () => !hooksOf(R.ana.home).includes(waiting[0]), 10_000, 50);
        await within(agent.idle(ended), 40_000, 'the person\'s turn never ended');
        await until('a new hook waits', () => hooksOf(R.ana.home).length === 1, 40_000, 50);
        const m = text(`after-prompt-${transport}`);
        const before = model.requests.at(-1).n;
        await R.say(m);
        await within(requestWith(model, head(`after-prompt-${transport}`), before, { roles: ['user'] }), 40_000, 'not woken after the person\'s turn');
        await until('the model has it', () => timesSeen(model.requests, m) >= 1, 15_000);
        assert.equal(wakes(model, head(`after-prompt-${transport}`)).length, 1, 'woken once after the person\'s turn');
      });
    });
    it(`a burst of 20 wakes an idle TUI over ${transport} once`, needTmux, async () => {
      await tui(`burst-${transport}`, { transport, agent: { onInput: () => sleep(1000) } }, async ({ R, model, agent }) => {
        const ms = Array.from({ length: 20 }, (_, i) => text(`burst-${transport}`, i));
        await idle(agent);
        const before = model.requests.at(-1).n;
        const t0 = Date.now();
        const sent = await R.burst(ms);
        assert.ok(sent.every((s) => s.id), `bo sent 20: ${JSON.stringify(sent.slice(0, 2))}`);
        const woke = await within(requestWith(model, head(`burst-${transport}`), before, { roles: ['user'] }), 40_000, 'no model request carried bo\'s words');
        say(`TUI ${transport}: a burst of 20, the first send to the woken model's request: ${woke.t - t0} ms`);
        await until('the model has all 20', () => ms.every((m) => timesSeen(model.requests, m, { roles: ['tool'] }) >= 1), 20_000);
        await within(agent.idle(1), 40_000, 'the woken turn never ended');
        // the hook waits again: a second wake would come now
        await until('the plugin\'s papo hook waits again', () => hooksOf(R.ana.home).length === 1, 40_000, 50);
        // idle as papo counts it, and a little more: a second wake would
        // have come by now
        await idle(agent);
        await sleep(500);
        onceEach(model, ms, `burst over ${transport}`);
        const w = wakes(model, head(`burst-${transport}`));
        assert.equal(w.length, 1, `one wake for the burst, not ${w.length}`);
        assert.equal(agent.ends.length, 2, `two turns: the first and the woken one (${agent.ends.length})`);
      });
    });
  }

  for (const transport of ['stdio', 'http']) {
    it(`papo setup opencode${transport === 'http' ? ' --http' : ''} --remove leaves the config dir as it was before`, async () => {
      await withCase(`remove-${transport}`, { transport }, async ({ R, home, before }) => {
        const plugin = path.join(configDir(home), 'plugin', 'papo.js');
        assert.ok(fs.existsSync(plugin), 'setup wrote the plugin');
        assert.notDeepEqual(snapshot(home), before, 'setup changed the config');
        const out = setup(PAPO, home, R.ana.home, { http: transport === 'http', remove: true });
        assert.ok(!fs.existsSync(plugin), `the plugin removed: ${out}`);
        assert.ok(!fs.existsSync(path.dirname(plugin)), `the plugin folder papo made removed: ${out}`);
        assert.deepEqual(snapshot(home), before, `the config dir byte for byte as before setup: ${out}`);
      });
    });
  }
});

process.on('exit', () => {
  say(`medians: bo's say -> the model request carrying it: during a wait ${median(timings.wait)} ms (${timings.wait.length} runs), from idle (TUI) ${median(timings.idle)} ms (${timings.idle.length} runs)`);
  say(`all cases: ${((Date.now() - T0) / 1000).toFixed(1)} s`);
});
