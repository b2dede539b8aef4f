// qwen.mjs: what qwen.test.mjs shares to run the REAL Qwen Code CLI
// (@qwen-code/qwen-code 0.24.4, pinned in package.json) against the
// scripted Chat Completions model of model_chat.mjs and papo daemons of
// their own: a temporary HOME with papo added by `papo setup qwen [--http]`
// (by hand, as it would, when this papo has none), Qwen Code's
// environment (OPENAI_BASE_URL, --auth-type openai: no login), `qwen -p`,
// the interactive UI in tmux; the cases are copilot.mjs's chatSuite.
// FINDINGS-qwen.md says what was learned.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { toolNames, textOf, last } from './model_chat.mjs';
import { cliTmux, papoSetup, printRun, setupKnows } from './copilot.mjs';
import { cleanEnv } from '../clients/daemons.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// Qwen Code names MCP tools mcp__SERVER__TOOL; unless the server entry
// says alwaysLoadTools, they are deferred behind tool_search / tool_call.
export const TOOLS = { wait: 'mcp__papo__wait', send: 'mcp__papo__send', search: 'tool_search', call: 'tool_call' };

export function qwenPath() {
  const p = path.join(HERE, 'node_modules', '.bin', 'qwen');
  if (!fs.existsSync(p)) throw new Error(`no Qwen Code under ${p}: run npm install --no-save --prefix tests/agents`);
  return p;
}

// A HOME for one Qwen Code, papo added by `papo setup qwen`; when this
// papo has no setup for it, by hand as setup writes it (mcpServers and
// hooks in ~/.qwen/settings.json).  { home, cwd, setup }.
export function makeHome(root, name, { papo, papoHome, http = false }) {
  const home = path.join(root, `home-${name}`);
  const cwd = path.join(home, 'work');
  fs.mkdirSync(cwd, { recursive: true });
  if (setupKnows(papo, 'qwen')) return { home, cwd, setup: papoSetup(papo, 'qwen', home, papoHome, { http }) };
  const serve = JSON.parse(fs.readFileSync(path.join(papoHome, 'serve.json'), 'utf8'));
  const cmd = `PAPO_HOME='${papoHome}' ${papo} hook qwen`;
  fs.mkdirSync(path.join(home, '.qwen'), { recursive: true });
  fs.writeFileSync(path.join(home, '.qwen', 'settings.json'), JSON.stringify({
    mcpServers: { papo: http ? { httpUrl: serve.mcp } : { command: papo, args: ['mcp'], env: { PAPO_HOME: papoHome } } },
    hooks: {
      SessionStart: [{ hooks: [{ type: 'command', command: cmd }] }],
      UserPromptSubmit: [{ hooks: [{ type: 'command', command: cmd }] }],
      Stop: [{ hooks: [{ type: 'command', command: cmd, timeout: 86400000 }] }],
    },
  }, null, 2));
  return { home, cwd, setup: null };
}

// Qwen Code's environment: the model at model.v1 (an OpenAI-compatible
// provider, API key auth).
export function qwenEnv(home, model, extra = {}) {
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
    OPENAI_BASE_URL: model.v1,
    OPENAI_API_KEY: 'test',
    OPENAI_MODEL: 'scripted',
    QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
    PAPO_LAN: 'off',
    PAPO_PORTMAP: 'off',
    PAPO_RATE: cleanEnv.PAPO_RATE,
  };
  // Qwen Code's debug log (~/.qwen/debug/…), when asked for.
  if (process.env.QWEN_DEBUG_LOG_FILE) env.QWEN_DEBUG_LOG_FILE = process.env.QWEN_DEBUG_LOG_FILE;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

// Qwen Code's main conversation: the requests that offer papo's wait or
// the deferred-tool bridge, but not its side requests (the prompt
// suggestion after an interactive turn carries the conversation and the
// tools too; memory extraction offers six file tools).
export const qwenMain = (body) => {
  const names = toolNames(body);
  if (!names.includes(TOOLS.wait) && !names.includes(TOOLS.search)) return false;
  const l = last(body);
  return !(l?.role === 'user' && /Reply with ONLY the suggestion/.test(textOf(l.content)));
};

export const qwenHarness = {
  name: 'Qwen Code 0.24.4',
  client: 'qwen',
  tools: TOOLS,
  main: qwenMain,
  configDir: (home) => path.join(home, '.qwen'),
  makeHome,
  // A person's own configuration before papo (for the --remove case): an
  // MCP server added by `qwen mcp add` (Qwen Code's own writing).
  personal(home) {
    const cwd = path.join(home, 'work');
    fs.mkdirSync(cwd, { recursive: true });
    const r = spawnSync(qwenPath(), ['mcp', 'add', '--scope', 'user', 'other', 'other-mcp', 'arg1'], { env: { PATH: process.env.PATH, HOME: home }, cwd, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`qwen mcp add: ${r.stdout}${r.stderr}`);
  },
  print: (home, cwd, model, prompt) => printRun(qwenPath(), ['-p', prompt, '--auth-type', 'openai', '--yolo'], qwenEnv(home, model), cwd),
  interactive: (home, cwd, model, { name, root }) => cliTmux(qwenPath(), ['--auth-type', 'openai', '--yolo'], qwenEnv(home, model), cwd, { name, root }),
  ready: (s) => /Type your message/.test(s) && !/Initializing/.test(s),
  exitInfo: (res) => `qwen -p exited ${res.code}${res.signal ? ` (${res.signal})` : ''}; stdout: ${res.stdout.slice(-800)}; stderr: ${res.stderr.slice(-800)}`,
};
