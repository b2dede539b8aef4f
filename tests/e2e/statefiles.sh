#!/usr/bin/env bash
# statefiles.sh: numbers in state files read as strictly as the wire
# (docs/SECURITY.md, "State files"): 1e999, -1 and 1.5 where peers.json
# and oauth.json hold times.  peers.json's are left out with one log line
# and its members kept; oauth.json is refused with what to do.  Run under
# the sanitizer build, no undefined behaviour either way (a double out
# of range converted to an integer was one).  Usage: statefiles.sh PAPO.
PAPO=${1:?usage: statefiles.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"

PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
join bo "$(invite ana)"
start bo
check "ana and bo meet" until_true 20 online ana bo
stop bo
stop ana
check "ana's peers.json names bo, and no one else" test "$(jq -c '[.members[].name]' "$T/ana/peers.json")" = '["bo"]'

# peers.json: each bad value in seen and announced.
for v in 1e999 -1 1.5 -1e999; do
	sed -E -i "s/\"(seen|announced)\":[[:space:]]*[-0-9.e]+/\"\\1\":$v/g" "$T/ana/peers.json"
	check "peers.json holds $v" grep -qF "\"seen\":$v" "$T/ana/peers.json"
	: >"$T/ana.err"
	start ana
	check "ana starts with $v in peers.json and still lists bo" \
		test "$(api ana /api/status | jq -r '[.members[].name] | index("bo") != null')" = true
	has "$T/ana.err" 'peers.json: 2 times that are not whole ms since 1970 left out' "the log line for $v"
	stop ana
	cp "$T/ana.err" "$T/ana-$v.err"
	check "no sanitizer report for $v in peers.json" bash -c "! grep -E 'runtime error|Sanitizer' '$T/ana-$v.err'"
	# The daemon wrote peers.json again at its stop: whole numbers.
	check "peers.json rewritten with whole numbers after $v" \
		jq -e '[.members[] | .seen, .announced | select(. >= 0 and . == floor and . < 1e16)] | length == 2' "$T/ana/peers.json" >/dev/null
done

# oauth.json: a client whose "created" is each bad value is refused.
oauth() { # oauth VALUE: ana's oauth.json with one client created at VALUE
	printf '{"clients":[{"id":"c1","name":"test","created":%s,"redirect_uris":["http://127.0.0.1:9/cb"]}],"grants":[]}\n' "$1" >"$T/ana/oauth.json"
	chmod 600 "$T/ana/oauth.json"
}
# OAuth needs a token of its own.
export PAPO_TOKEN=statefiles-token-0123456789abcdef0123456789abcdef
for v in 1e999 -1 1.5 -1e999 1e300; do
	oauth "$v"
	PAPO_OAUTH=on PAPO_HOME=$T/ana timeout 20 "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 \
		>"$T/out" 2>"$T/err" </dev/null
	rc=$?
	check "oauth.json with created $v: papo serve refuses (exit $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
	has "$T/err" 'oauth.json is damaged; move it away' "the refusal for $v"
	check "no sanitizer report for $v in oauth.json" bash -c "! grep -E 'runtime error|Sanitizer' '$T/err'"
done
# The same file with a whole time starts: the refusals were the numbers'.
oauth 1700000000000
PAPO_OAUTH=on start ana
check "oauth.json with a whole time: ana serves" test "$(api ana /healthz | jq .ok)" = true
stop_all
finish
