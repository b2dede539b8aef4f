// qwen.test.mjs: papo driven by the REAL Qwen Code CLI (0.24.4, pinned in
// package.json) against a scripted OpenAI Chat Completions endpoint on
// loopback (model_chat.mjs; OPENAI_BASE_URL, --auth-type openai): the
// model is scripted, the harness real.  Each case has two daemons of its
// own, ana and bo, in one room; Qwen Code is ana's agent, added by `papo
// setup qwen [--http]` (mcpServers.papo and the hooks that run `papo hook
// qwen`, in ~/.qwen/settings.json); bo talks with `papo say`.  The cases
// (copilot.mjs, chatSuite), over stdio and over HTTP:
//  - qwen -p: bo speaks before the run and during four waits; each message
//    reaches the model in full exactly once; ana's send is in bo's
//    history; the run ends on its own;
//  - qwen -p: a message said as the turn ends is given (the Stop hook
//    exits 2) before the run ends;
//  - the interactive UI (tmux), idle, woken by each of five says of bo's;
//    a burst of 20 waking it once;
//  - `papo setup qwen --remove` leaves ~/.qwen byte for byte as it was.
// The scripted model reaches papo's tools as Qwen offers them: directly
// when the entry has alwaysLoadTools, else through tool_search/tool_call.
// FINDINGS-qwen.md has what was learned of Qwen Code.
//
// Run: bash tests/agents/run.sh path/to/papo --cli qwen (or ctest agents_qwen;
// or by hand, as root: unshare --net bash -c 'ip link set lo up && node
// --test tests/agents/qwen.test.mjs', PAPO=path/to/papo) after `npm ci --prefix
// tests/agents`.  Figures are printed as lines starting "agents: qwen:".
import { offlineOrExit } from './claude.mjs';
import { chatSuite } from './copilot.mjs';
import { qwenHarness } from './qwen.mjs';

offlineOrExit();
chatSuite(qwenHarness);
