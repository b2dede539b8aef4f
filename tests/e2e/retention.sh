#!/usr/bin/env bash
# retention.sh: PAPO_KEEP as a user sees it, with real daemons and a log
# of 100,000 messages written by gen_log (two members, a and b).
#
#  - Bad values are refused at start with the reason, and the log is left
#    as it was.
#  - Compaction to the last 1,000 survives kill -9 at any moment: once
#    with the kill certain to land mid-rewrite (the test setting
#    PAPO_TEST_COMPACT_PAUSE_MS pauses it with half the new log written),
#    then RET_TRIALS times at random moments from start to past the end.
#    Each time log.jsonl is byte for byte the old log or the compacted
#    one, never anything else, and the daemon starts again and serves the
#    1,000 kept.
#  - History says where it starts: /api/history's retention object, the
#    line `papo history` prints, and the MCP history tool's result.
#  - Sync after compaction: b (no PAPO_KEEP) holds all 100,000 and an
#    outbox with one of its oldest messages; a (PAPO_KEEP=1000) never
#    stores an old one again (that one is acknowledged and refused), new
#    messages still arrive, and over two greeting rounds (60 s) neither
#    asks for a sync again nor writes a line to its log.
#
# Usage: retention.sh PATH_TO_PAPO PATH_TO_GEN_LOG.  RET_TRIALS (default
# 6), RET_SEED (the random seed, printed).
PAPO=${1:?usage: retention.sh PATH_TO_PAPO PATH_TO_GEN_LOG}
GEN_LOG=${2:?usage: retention.sh PATH_TO_PAPO PATH_TO_GEN_LOG}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN PAPO_KEEP PAPO_TEST_COMPACT_PAUSE_MS
TRIALS=${RET_TRIALS:-6}
# A start reads and indexes 100,000 messages and cuts them to 1,000: some
# 19 s under ASan on a loaded machine; a start cut short would leave a
# daemon starting beside the next trial.
START_WAIT=120
SEED=${RET_SEED:-$(( $(date +%s%N) % 32768 ))}
RANDOM=$SEED
echo "retention.sh: seed $SEED, $TRIALS random trials"
N=100000
KEEP=1000

papo a new --name a >/dev/null
start a
join b "$(invite a)"
stop a
"$GEN_LOG" "$T/a" "$T/b" "$N" >"$T/gen" || { fail "gen_log"; finish; exit 1; }
cp "$T/a/log.jsonl" "$T/orig.log"

# launch NAME [ENV=V...]: starts a daemon without waiting for it.
launch() {
	local n=$1; shift
	rm -f "$T/$n/serve.json"
	env "$@" PAPO_HOME="$T/$n" "$PAPO" serve --http 127.0.0.1:0 \
		--listen "127.0.0.1:${QPORT[$n]:-0}" --name "$n" \
		>>"$T/$n.out" 2>>"$T/$n.err" </dev/null &
	echo $! >"$T/$n.pid"
}
msgs_in() { jq -R -r 'fromjson? | select(.t == "msg") | .id' "$1" | wc -l; }

# Bad values: refused with the reason, nothing touched.
for v in 0 0d -5 +5 abc 10x 1.5d 30D 1e3 "1000 " 100000001 36501d; do
	expect 1 "PAPO_KEEP='$v' refused" -- env PAPO_KEEP="$v" PAPO_HOME="$T/a" \
		"$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0
	has "$T/err" "PAPO_KEEP must be a count of messages .* or days .*, not" \
		"PAPO_KEEP='$v': the reason"
	check "PAPO_KEEP='$v': named in the reason" grep -qF -- "not '$v'" "$T/err"
done
check "refused values leave the log as it was" cmp -s "$T/a/log.jsonl" "$T/orig.log"

# The compacted log, for the trials to compare with: one clean start.
t0=$(date +%s%N)
PAPO_KEEP=$KEEP start a
t_start_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
stop a
cp "$T/a/log.jsonl" "$T/new.log"
head -1 "$T/new.log" >"$T/head"
has "$T/head" '^\{"t":"retention","floor":[0-9]+,"dropped":99000\}$' "the first line of the compacted log"
FLOOR=$(jq -r .floor "$T/head")
check "the compacted log holds the last $KEEP messages" test "$(msgs_in "$T/new.log")" -eq $KEEP
check "what it holds is the newest $KEEP of the old one" test -z "$(comm -3 \
	<(jq -R -r 'fromjson? | select(.t == "msg") | .id' "$T/orig.log" | tail -n $KEEP | sort) \
	<(jq -R -r 'fromjson? | select(.t == "msg") | .id' "$T/new.log" | sort) | head -3)"
check "no message older than the floor is left" test "$(jq -R 'fromjson? | select(.t == "msg" and .ts < '"$FLOOR"')' "$T/new.log" | wc -l)" -eq 0
check "every receipt left is of a message kept" test -z "$(comm -13 \
	<(jq -R -r 'fromjson? | select(.t == "msg") | .id' "$T/new.log" | sort) \
	<(jq -R -r 'fromjson? | select(.t == "ack") | .id' "$T/new.log" | sort -u))"
check "receipts of kept messages stay" test "$(jq -R 'fromjson? | select(.t == "ack")' "$T/new.log" | wc -l)" -ge $((KEEP / 2 - 1))
has "$T/a.err" "retention \(PAPO_KEEP=$KEEP\): 99000 messages dropped" "the daemon says what it dropped"
echo "retention.sh: start with compaction of $N to $KEEP: ${t_start_ms} ms to serve.json"

# outcome NAME: the log is the old one or the new one; which, on stdout.
outcome() {
	if cmp -s "$T/a/log.jsonl" "$T/orig.log"; then echo old
	elif cmp -s "$T/a/log.jsonl" "$T/new.log"; then echo new
	else echo torn; fi
}
# serves: the daemon starts again on what was left and serves the kept.
serves() {
	PAPO_KEEP=$KEEP start a || return 1
	check "trial $1: serves $KEEP messages" test "$(api a /api/status | jq .messages)" -eq $KEEP
	check "trial $1: history says 99000 dropped" test "$(api a '/api/history?limit=1' | jq .retention.dropped)" -eq 99000
	stop a
	check "trial $1: the log is the compacted one" cmp -s "$T/a/log.jsonl" "$T/new.log"
}

# Certain to land mid-rewrite: killed while the test setting pauses it.
cp "$T/orig.log" "$T/a/log.jsonl"
launch a PAPO_KEEP=$KEEP PAPO_TEST_COMPACT_PAUSE_MS=30000
check "the rewrite reaches its pause" until_true 60 grep -q 'compaction paused' "$T/a.err"
check "half the new log is on disk" test "$(msgs_in "$T/a/log.jsonl.tmp")" -ge $((KEEP / 2))
crash a
check "killed mid-rewrite: the old log, byte for byte" test "$(outcome)" = old
serves paused

# Random moments, with a short pause so that some land inside the rewrite.
declare -A seen=()
for i in $(seq 1 "$TRIALS"); do
	cp "$T/orig.log" "$T/a/log.jsonl"
	rm -f "$T/a/log.jsonl.tmp"
	delay=$(( RANDOM % (t_start_ms + 600) ))
	launch a PAPO_KEEP=$KEEP PAPO_TEST_COMPACT_PAUSE_MS=300
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"   # time tested: a random moment
	crash a
	o=$(outcome)
	# A new log left beside it: the kill came before its rename.
	[ -e "$T/a/log.jsonl.tmp" ] && o="$o (killed mid-rewrite)"
	seen[$o]=1
	echo "retention.sh: trial $i: killed after $delay ms: the $o log"
	check "trial $i (kill after $delay ms): the old or the new log, not torn" test "${o%% *}" != torn
	serves "$i"
done
echo "retention.sh: outcomes seen: $(printf '%s; ' "${!seen[@]}")"

# History says where it starts: the API, the CLI, the MCP tool.
PAPO_KEEP=$KEEP start a
api a '/api/history?limit=5' >"$T/h"
check "/api/history: retention.keep" jq -e '.retention.keep == "'$KEEP'"' "$T/h"
check "/api/history: retention.starts is the floor" jq -e ".retention.starts == $FLOOR" "$T/h"
check "/api/history: retention.dropped" jq -e '.retention.dropped == 99000' "$T/h"
check "/api/history: nothing before where it starts" test "$(api a "/api/history?before=$FLOOR" | jq '.messages | length')" -eq 0
check "/api/history: it starts with a message" test "$(api a "/api/history?before=$((FLOOR + 1))" | jq '.messages | length')" -ge 1
papo a history -n 2 >"$T/cli" 2>&1
has "$T/cli" '^\(history starts at [0-9-]+ [0-9:]+: 99000 earlier messages dropped by retention, PAPO_KEEP=1000\)$' "papo history says where it starts"
check "papo history: then the messages" test "$(wc -l <"$T/cli")" -eq 3
check "papo status --json: retention" test "$(papo a status --json | jq .retention.dropped)" -eq 99000
M=${URL[a]}/mcp
H=(-H 'Accept: application/json, text/event-stream' -H 'Content-Type: application/json')
curl -sS -D "$T/hdr" -o /dev/null "${H[@]}" --data-binary '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' "$M"
SID=$(grep -i '^mcp-session-id:' "$T/hdr" | cut -d' ' -f2 | tr -d '\r')
curl -sS -o /dev/null "${H[@]}" -H "MCP-Session-Id: $SID" --data-binary '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$M"
curl -sS -o "$T/mcp" "${H[@]}" -H "MCP-Session-Id: $SID" --data-binary '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"history","arguments":{"limit":3}}}' "$M"
check "MCP history: retention in the result" jq -e ".result.structuredContent.retention | .starts == $FLOOR and .dropped == 99000 and .keep == \"$KEEP\"" "$T/mcp"
check "MCP history: and in its text" jq -e '.result.content[0].text | fromjson | .retention.dropped == 99000' "$T/mcp"
stop a

# Sync after compaction.  b holds all 100,000, and one of its own oldest
# messages (one without a receipt in the log: a's have them) waits in its
# outbox, as if never acknowledged.
cp "$T/orig.log" "$T/b/log.jsonl"
jq -R -r 'fromjson? | select(.t == "ack") | .id' "$T/orig.log" | sort -u >"$T/acked"
OLD=$(head -200 "$T/orig.log" | jq -R -r 'fromjson? | select(.t == "msg") | .id' |
	grep -vxFf "$T/acked" | head -1)
check "an old message of b's to put in its outbox" test -n "$OLD"
printf '{"id":"%s"}\n' "$OLD" >"$T/b/outbox.jsonl"
PAPO_KEEP=$KEEP start a
start b
check "a and b meet" until_true 30 online a b
check "b's old message is acknowledged: its outbox empties" until_true 60 \
	bash -c "[ \"\$(curl -sS '${URL[b]}/api/status' | jq .outbox)\" = 0 ]"
check "a refused it, below its floor" test "$(api a /api/status | jq .retention.refused)" -ge 1
check "a did not store it" test "$(grep -c "\"id\":\"$OLD\"" "$T/a/log.jsonl")" -eq 0
papo b say "after the compaction" >/dev/null
check "a new message still reaches a" until_true 30 has_text a "after the compaction"
# A greeting round (30 s) for the syncs the new message starts; then two
# more, in which neither side may ask again.  Time tested: the rounds.
sleep 32
s1a=$(api a /api/status | jq .syncs_asked); s1b=$(api b /api/status | jq .syncs_asked)
l1a=$(wc -l <"$T/a/log.jsonl"); l1b=$(wc -l <"$T/b/log.jsonl")
check "a asked b for a sync at least once ($s1a)" test "$s1a" -ge 1
sleep 62   # time tested: two more rounds
s2a=$(api a /api/status | jq .syncs_asked); s2b=$(api b /api/status | jq .syncs_asked)
echo "retention.sh: syncs asked: a $s1a then $s2a, b $s1b then $s2b"
check "a does not ask again over two rounds ($s1a, $s2a)" test "$s1a" -eq "$s2a"
check "b does not ask again over two rounds ($s1b, $s2b)" test "$s1b" -eq "$s2b"
check "a's log did not grow" test "$(wc -l <"$T/a/log.jsonl")" -eq "$l1a"
check "b's log did not grow" test "$(wc -l <"$T/b/log.jsonl")" -eq "$l1b"
check "a holds the kept and the new one" test "$(api a /api/status | jq .messages)" -eq $((KEEP + 1))
check "a has nothing older than its floor" test "$(jq -R 'fromjson? | select(.t == "msg" and .ts < '"$FLOOR"')' "$T/a/log.jsonl" | wc -l)" -eq 0
check "b keeps all" test "$(api b /api/status | jq .messages)" -eq $((N + 1))
check "b shows no retention" jq -e '.retention == null' <(api b '/api/history?limit=1')
stop_all
finish
