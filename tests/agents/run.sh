#!/usr/bin/env bash
# run.sh: runs claude.test.mjs (node --test) inside a network namespace
# of its own with only loopback up, so that nothing Claude Code does can
# leave the machine: the model it talks to is model.mjs on 127.0.0.1.
# Needs root (unshare --net; CI runs as root); without it the test is
# skipped (exit 77).  Arguments after the papo binary go to node --test
# (as --test-name-pattern=...); --measure runs measure.mjs instead, and
# --others others.test.mjs (Codex, Gemini CLI).
#
#   bash tests/agents/run.sh path/to/papo [NODE_TEST_ARGS...]
#   bash tests/agents/run.sh path/to/papo --measure
#   bash tests/agents/run.sh path/to/papo --others [NODE_TEST_ARGS...]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
export PAPO=$(realpath "${1:-${PAPO:-$HERE/../../build/papo}}")
shift || true
if ! unshare --net true 2>/dev/null; then
	echo "agents: skipped: cannot make a network namespace (unshare --net needs root): Claude Code runs only where nothing can leave the machine"
	exit 77
fi
if [ ! -x "$HERE/node_modules/@anthropic-ai/claude-code/bin/claude.exe" ]; then
	echo "agents: Claude Code is not installed: run npm ci --prefix tests/agents" >&2
	exit 1
fi
export PAPO_AGENTS_NETNS=1
if [ "${1:-}" = --measure ]; then
	exec unshare --net bash -c 'ip link set lo up && exec node "$0"' "$HERE/measure.mjs"
fi
TEST=$HERE/claude.test.mjs
if [ "${1:-}" = --others ]; then
	TEST=$HERE/others.test.mjs
	shift
fi
exec unshare --net bash -c 'ip link set lo up && exec node --test "$@" "$0"' "$TEST" "$@"
