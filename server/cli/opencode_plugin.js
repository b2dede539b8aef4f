// papo's opencode plugin: `papo setup opencode` writes it, `papo setup opencode --remove` removes it.
//
// It wakes an idle opencode session when a message comes to papo's room:
// opencode has no stop hook, so this plugin runs `papo hook opencode`
// (the wait for a message is papo's) and, when that answers exit 2 with
// a line on stderr, gives the session that line as a new prompt.
//
//  - In the TUI (and `opencode serve`, `opencode mini`, acp): at
//    session.idle it waits (papo hook, "interactive": true); a new
//    prompt (the session busy again) ends the wait.
//  - In `opencode run`, which ends when its session goes idle: at the end
//    of each text the model gives in a step that calls no tool (its
//    answer), it looks once (papo hook, "interactive": false, at most
//    ~2 s) and, when something waits, puts the line in before the turn
//    ends, so the run goes on with it and then ends on its own.
//
// No imports: it needs nothing installed beside it (opencode runs on
// Bun; Bun.spawn is a global).  Sub-agent sessions are left alone.
const PAPO = "@PAPO@";
const PAPO_HOME = "@PAPO_HOME@";

// The CLI's subcommand: the first word of its arguments that is not an
// option (the TUI's worker thread has none).
function subcommand(argv) {
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--log-level") {
      i++;
      continue;
    }
    if (!a.startsWith("-")) return a;
  }
  return undefined;
}

export const PapoPlugin = async ({ client }) => {
  const batch = subcommand(process.argv) === "run";
  const waiting = new Map(); // session -> its papo hook, while it waits
  const subagents = new Set(); // sessions that have a parent

  // papo hook opencode for session: the wake line when the session must
  // be woken, else undefined (also when cancelled).
  async function hook(session, interactive) {
    const env = { ...process.env };
    if (PAPO_HOME !== "") env.PAPO_HOME = PAPO_HOME;
    const event = JSON.stringify({ hook_event_name: "session.idle", session_id: session, interactive });
    let child;
    try {
      child = Bun.spawn([PAPO, "hook", "opencode"], { stdin: new Blob([event]), stdout: "ignore", stderr: "pipe", env });
    } catch {
      return undefined;
    }
    if (interactive) waiting.set(session, child);
    const [err, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
    if (waiting.get(session) === child) waiting.delete(session);
    else if (interactive) return undefined; // cancelled
    const text = err.trim();
    return code === 2 && text !== "" ? text : undefined;
  }

  function cancel(session) {
    const child = waiting.get(session);
    if (!child) return;
    waiting.delete(session);
    child.kill();
  }

  // A new prompt for the session (it starts a turn, or when the session
  // is busy, goes into the turn under way).
  const prompt = (session, text) =>
    client.session.promptAsync({ path: { id: session }, body: { parts: [{ type: "text", text }] } });

  return {
    event: async ({ event }) => {
      const p = event.properties ?? {};
      switch (event.type) {
        case "session.created":
        case "session.updated":
          if (p.info?.parentID) subagents.add(p.info.id);
          return;
        case "session.deleted":
          cancel(p.info?.id);
          return;
        case "session.status":
          if (p.status?.type !== "idle") cancel(p.sessionID);
          return;
        case "session.idle": {
          const s = p.sessionID;
          if (batch || !s || subagents.has(s)) return;
          cancel(s);
          const text = await hook(s, true);
          if (text !== undefined) await prompt(s, text).catch(() => {});
          return;
        }
      }
    },
    // opencode run: the model's answer (a text in a step that calls no
    // tool) is the end of the turn; what came meanwhile goes in now.
    "experimental.text.complete": async (input) => {
      if (!batch || subagents.has(input.sessionID)) return;
      const m = await client.session
        .message({ path: { id: input.sessionID, messageID: input.messageID } })
        .catch(() => undefined);
      if (m?.data?.parts?.some((part) => part.type === "tool")) return;
      const text = await hook(input.sessionID, false);
      if (text === undefined) return;
      const ok = await prompt(input.sessionID, text).then(() => true, () => false);
      // The turn goes on only if the prompt is stored before this step
      // ends: prompt_async may answer first.
      for (let i = 0; ok && i < 40; i++) {
        const list = await client.session.messages({ path: { id: input.sessionID } }).catch(() => undefined);
        const stored = (list?.data ?? []).some((msg) => msg.info?.role === "user" &&
          (msg.parts ?? []).some((part) => part.type === "text" && part.text === text));
        if (stored) return;
        await Bun.sleep(50);
      }
    },
    dispose: async () => {
      for (const s of [...waiting.keys()]) cancel(s);
    },
  };
};
