#!/usr/bin/env bash
# run.sh: runs one agent CLI's tests (node --test) inside a network
# namespace of its own with only loopback up, so that nothing the CLI
# does can leave the machine: the model it talks to is a scripted
# endpoint of ours on 127.0.0.1 (model.mjs, model_responses.mjs,
# model_gemini.mjs, model_chat.mjs).  Needs root (unshare --net; CI runs
# as root); without it the test is skipped (exit 77).  --cli NAME runs
# NAME.test.mjs (claude, the default, codex, gemini, copilot, qwen,
# opencode); arguments after it go to node --test (as
# --test-name-pattern=...); --measure runs measure.mjs (Claude Code's
# latencies) instead.
#
#   bash tests/agents/run.sh path/to/papo [--cli NAME] [NODE_TEST_ARGS...]
#   bash tests/agents/run.sh path/to/papo --measure
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
export PAPO=$(realpath "${1:-${PAPO:-$HERE/../../build/papo}}")
shift || true
if ! unshare --net true 2>/dev/null; then
	echo "agents: skipped: cannot make a network namespace (unshare --net needs root): the agent CLIs run only where nothing can leave the machine"
	exit 77
fi
if [ ! -d "$HERE/node_modules/.bin" ]; then
	echo "agents: the agent CLIs are not installed: run npm install --no-save --prefix tests/agents" >&2
	exit 1
fi
export PAPO_AGENTS_NETNS=1
if [ "${1:-}" = --measure ]; then
	exec unshare --net bash -c 'ip link set lo up && exec node "$0"' "$HERE/measure.mjs"
fi
CLI=claude
if [ "${1:-}" = --cli ]; then
	CLI=${2:?--cli needs a name}
	shift 2
fi
TEST=$HERE/$CLI.test.mjs
[ -f "$TEST" ] || { echo "agents: no $TEST" >&2; exit 1; }
exec unshare --net bash -c 'ip link set lo up && exec node --test "$@" "$0"' "$TEST" "$@"
