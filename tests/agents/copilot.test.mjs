// copilot.test.mjs: papo driven by the REAL GitHub Copilot CLI (1.0.102,
// pinned in package.json) against a scripted OpenAI Chat Completions
// endpoint on loopback (model_chat.mjs; COPILOT_OFFLINE=true, no login):
// the model is scripted, the harness real.  Each case has two daemons of
// its own, ana and bo, in one room; Copilot is ana's agent, added by
// `papo setup copilot [--http]` (its MCP entry in ~/.copilot/mcp-config.json
// and its hooks in ~/.copilot/hooks/papo.json, which run `papo hook
// copilot`); bo talks with `papo say`.  The cases (copilot.mjs, chatSuite),
// over stdio and over HTTP:
//  - copilot -p: bo speaks before the run and during four waits; each
//    message reaches the model in full exactly once; ana's send is in
//    bo's history; the run ends on its own;
//  - copilot -p: a message said as the turn ends is given (the agentStop
//    hook blocks once) before the run ends;
//  - the interactive UI (tmux), idle, woken by each of five says of bo's
//    (the agentStop hook answering {"decision":"block"}); a burst of 20
//    waking it once;
//  - `papo setup copilot --remove` leaves ~/.copilot byte for byte as it was.
// FINDINGS-copilot.md has what was learned of Copilot CLI.
//
// Run: bash tests/agents/run.sh path/to/papo --cli copilot (or ctest agents_copilot;
// or by hand, as root: unshare --net bash -c 'ip link set lo up && node
// --test tests/agents/copilot.test.mjs', PAPO=path/to/papo) after `npm ci --prefix
// tests/agents`.  Figures are printed as lines starting "agents: copilot:".
import { offlineOrExit } from './claude.mjs';
import { chatSuite, copilotHarness } from './copilot.mjs';

offlineOrExit();
chatSuite(copilotHarness);
