#!/usr/bin/env bash
# slow.sh: clients that do not read their event stream cost the daemon
# little, and are let go with the reason.  With 1.6 MB of events kept,
# 300 /api/events streams open from clients that read nothing; then
# 300 more messages of 16 KB flow.  The daemon's RSS grows by less than
# 80 MB (each stream is fed from the ring as its client reads, not given
# the whole replay at once), every slow stream ends with a comment that
# it fell behind, and a client that reads gets every event once, in
# order.  The same for 100 MCP sessions of bo, in the room, whose GET
# streams get those messages pushed and read nothing: bo's RSS grows by
# less than 80 MB, each stream ends saying it fell behind.  An agent of
# its own whose one session takes pushes and does not read is given,
# by its wait, every message its stream did not carry.
# (docs/SECURITY.md, "Slow readers")
# Usage: slow.sh PATH_TO_PAPO.
PAPO=${1:?usage: slow.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN
PY=$(dirname "$0")/conns.py

PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
join bo "$(invite ana)"
start bo
check "bo online" until_true 20 online ana bo
P=${URL[ana]##*:}
PB=${URL[bo]##*:}
rss() { awk '/^VmRSS:/ { print int($2 / 1024) }' "/proc/$(cat "$T/$1.pid")/status"; }
# send FROM TO: messages "mFROM ..." to "mTO ..." of 16 KB, on one
# kept-alive connection.
send() {
	python3 - "$P" "$1" "$2" <<'PY'
import http.client, json, sys
port, a, b = map(int, sys.argv[1:4])
pad = "x" * 16000
c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
for i in range(a, b + 1):
    c.request("POST", "/api/send", json.dumps({"text": "m%d %s" % (i, pad)}),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    if r.status != 200:
        sys.exit("message %d: %d" % (i, r.status))
PY
}
check "100 messages of 16 KB sent" send 1 100

curl -sN --max-time 600 "${URL[ana]}/api/events" >"$T/reader" &
reader=$!
check "the reader has the first 100" until_true 30 bash -c "[ \$(grep -c '^event: message' '$T/reader') -ge 100 ]"
before=$(rss ana)
python3 "$PY" slow "$P" 300 "$T/slow" "$T/go" &
slow=$!
check "300 streams that do not read" until_true 60 test -s "$T/slow.ready"
python3 "$PY" mcpslow "$PB" 100 "$T/mslow" "$T/go" &
mslow=$!
check "100 MCP GET streams on bo that do not read" until_true 120 test -s "$T/mslow.ready"
# And an agent of its own (slowpoke) whose one session takes pushes and
# does not read its stream either: what the stream does not carry once
# it is let go must wait for that agent, the message at whose write it
# was let go included (it once counted as given, and was lost).
python3 "$PY" mcpgiven "$PB" 1 "$T/given" "$T/go" &
given=$!
check "an MCP session taking pushes on bo that does not read" until_true 60 test -s "$T/given.ready"
bo_before=$(rss bo)
check "300 more messages of 16 KB sent" send 101 400
bo_has_all() { api bo '/api/history?limit=1' | jq -e '.messages[0].text | startswith("m400 ")' >/dev/null; }
check "bo has them all" until_true 60 bo_has_all
sleep 2   # time tested: RSS after 2 s more of the slow streams
after=$(rss ana)
bo_after=$(rss bo)
echo "slow.sh: RSS of ana ${before} MB before the slow streams, ${after} MB after; of bo ${bo_before} MB, ${bo_after} MB" >&2
# Under AddressSanitizer (the suite's second run) RSS says little: its
# quarantine keeps freed memory.
if grep -q AddressSanitizer "$PAPO"; then
	echo "slow.sh: a sanitizer build: RSS not checked" >&2
else
	check "RSS grew by less than 80 MB (${before} -> ${after} MB)" test $((after - before)) -lt 80
	check "bo's RSS grew by less than 80 MB (${bo_before} -> ${bo_after} MB)" test $((bo_after - bo_before)) -lt 80
fi
check "the reader has all 400" until_true 60 bash -c "[ \$(grep -c '^event: message' '$T/reader') -ge 400 ]"
awk '/^event: / { ev = $2 } /^data: / && ev == "message" { print }' "$T/reader" |
	cut -c7- | jq -r '.text' | cut -d' ' -f1 >"$T/order"
check "each once, in order" diff <(seq 1 400 | sed 's/^/m/') "$T/order"
check "the log says a client fell behind" grep -q 'fell .* behind' "$T/ana.err"
touch "$T/go"
check "the slow streams were read to their end" until_true 120 test -s "$T/slow.result"
check "all 300 ended, each saying it fell behind: $(cat "$T/slow.result")" grep -qsx '300 300' "$T/slow.result"
check "the MCP streams were read to their end" until_true 120 test -s "$T/mslow.result"
check "all 100 ended, each saying it fell behind: $(cat "$T/mslow.result")" grep -qsx '100 100' "$T/mslow.result"
check "slowpoke's stream was read to its end, then its wait" until_true 120 test -s "$T/given.result"
check "slowpoke's stream ended saying it fell behind" grep -qsx 1 "$T/given.said"
cut -d' ' -f2 "$T/given.result" | sort -u >"$T/given.got"
missing=$(seq 101 400 | sed 's/^/m/' | sort | comm -23 - "$T/given.got" | head -5 | tr '\n' ' ')
check "slowpoke got m101 to m400, by its stream or its wait ($(grep -c '^stream' "$T/given.result") pushed, $(grep -c '^wait' "$T/given.result") waited for): none missing: $missing" test -z "$missing"
check "slowpoke got none twice: $(cut -d' ' -f2 "$T/given.result" | sort | uniq -d | head -3 | tr '\n' ' ')" \
	test -z "$(cut -d' ' -f2 "$T/given.result" | sort | uniq -d)"
kill "$reader" 2>/dev/null
wait "$reader" "$slow" "$mslow" "$given" 2>/dev/null
stop bo
stop ana
finish
