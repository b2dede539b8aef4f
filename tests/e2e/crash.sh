#!/usr/bin/env bash
# crash.sh: members killed with SIGKILL at random moments while messages
# keep coming.  Three members, a, b and c, in one room; loops keep
# POSTing /api/send to a and to b, while c, and in every third round a or
# b themselves, are killed (kill -9, as a power cut would) after a random
# 0.2-2 s and started again.  Every few rounds the killed member's log
# also gets half a line without its newline, as a power cut in the middle
# of a write leaves it, and some rounds kill the member once more within
# 0.3 s of its start.
#
# The promises under test:
#  - Stored before acknowledged: when a member is killed, its log holds
#    every message its own daemon answered a send for, and every message
#    another member's answer counted it in (`delivered_to`).
#  - No loss: a message whose send answered (200, `delivered` or
#    `queued`) is in every member's history once all members are up,
#    whoever was killed and when.  A send whose own daemon was killed
#    before it answered is not promised anything and is not counted.
#  - At-least-once delivery with dedup by id: every message is in every
#    history exactly once (log.jsonl and /api/history), however often
#    it was sent again.
#  - Convergence: once all are up, every member holds the same set of
#    messages and every outbox empties, without anyone's help.
#  - No corrupt log: every line of every log.jsonl is a whole JSON
#    frame; a torn last line is cut off at start with a warning, and no
#    damaged line is ever left in the middle.
#  - Daemons exit 0 on SIGTERM at the end, with no sanitizer report.
#
# Usage: crash.sh PATH_TO_PAPO.  Environment: CRASH_ROUNDS (default 20;
# 200 for the long version), CRASH_SEED (the random seed, printed, to
# replay a run's random sleeps), CRASH_DEADLINE (seconds to converge, 240),
# CRASH_SENDERS (loops sending to each of a and b at once, 3).
PAPO=${1:?usage: crash.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN
ROUNDS=${CRASH_ROUNDS:-20}
SEED=${CRASH_SEED:-$(( $(date +%s%N) % 32768 ))}
DEADLINE=${CRASH_DEADLINE:-240}
SENDERS=${CRASH_SENDERS:-3}
RANDOM=$SEED
echo "crash.sh: $ROUNDS rounds, CRASH_SEED=$SEED"

PAPO_HOME=$T/a "$PAPO" new --name a >/dev/null
start a || { finish; exit 1; }
join b "$(invite a)"
join c "$(invite a)"
start b || { finish; exit 1; }
start c || { finish; exit 1; }
all_see() {
	local m o
	for m in a b c; do
		for o in a b c; do
			[ "$m" = "$o" ] || online "$m" "$o" || return 1
		done
	done
}
check "a, b and c see each other online" until_true 30 all_see

# sender NAME J: POSTs /api/send to NAME until $T/stop exists.  The URL
# is taken from serve.json only while the pid it names is alive, so a
# send never goes to a port a dead daemon left behind.  An answered send
# adds "ID STATE DELIVERED_TO" to $T/NAME.J.sent; anything else a line to
# $T/NAME.J.lost.
sender() {
	local n=$1 j=$2 k=0 pid url out code body
	while [ ! -e "$T/stop" ]; do
		pid=$(jq -r .pid "$T/$n/serve.json" 2>/dev/null)
		if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
			sleep 0.1   # its daemon looked for every 0.1 s while it is down
			continue
		fi
		url=$(jq -r .http "$T/$n/serve.json" 2>/dev/null) || continue
		k=$((k + 1))
		out=$(curl -sS --max-time 30 -w '\n%{http_code}' \
			-H 'Content-Type: application/json' \
			-d "{\"text\":\"$n.$j $k\"}" "$url/api/send" 2>&1)
		code=${out##*$'\n'}
		body=${out%$'\n'*}
		if [ "$code" = 200 ] && jq -e '.state == "delivered" or
		    .state == "queued"' <<<"$body" >/dev/null 2>&1; then
			jq -r '"\(.id) \(.state) \(.delivered_to | join(","))"' \
				<<<"$body" >>"$T/$n.$j.sent"
		else
			echo "$n.$j $k: $code $(tr '\n' ' ' <<<"$body")" >>"$T/$n.$j.lost"
		fi
		sleep 0.05   # time tested: a send every 0.05 s or so, kills among them
	done
}
# Sends wait up to 8 s for a killed member's ack, so each member gets
# several loops: more messages, and sends that overlap.
for n in a b; do
	for j in $(seq 1 "$SENDERS"); do
		touch "$T/$n.$j.sent" "$T/$n.$j.lost"
		sender "$n" "$j" &
		# lib.sh's cleanup kills every $T/*.pid: a failed run ends them.
		echo $! >"$T/send-$n.$j.pid"
	done
done

# rsleep MIN_MS MAX_MS: a random sleep between the two: time tested, the
# kills land at random moments.
rsleep() {
	local ms=$(( $1 + (RANDOM * 32768 + RANDOM) % ($2 - $1 + 1) ))
	sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
}
# tear NAME: appends the first half of NAME's last log line, without its
# newline, as a write cut short by a power cut leaves it.
tear() {
	local last; last=$(tail -n 1 "$T/$1/log.jsonl")
	[ -n "$last" ] || return 0
	printf '%s' "${last:0:$(( ${#last} / 2 ))}" >>"$T/$1/log.jsonl"
}
# early NAME: starts NAME's daemon as start does and kills it again
# within 0.3 s, while it may still be replaying its log.
early() {
	local pid
	PAPO_HOME=$T/$1 "$PAPO" serve --http 127.0.0.1:0 \
		--listen "127.0.0.1:${QPORT[$1]}" --name "$1" \
		>>"$T/$1.out" 2>>"$T/$1.err" </dev/null &
	pid=$!
	rsleep 0 300
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}
# acked_not_stored NAME: the ids of NAME's own answered sends and of the
# messages whose answer says NAME stored them, that are not in its log.
# Run while NAME is dead: each was on disk before it was acknowledged.
acked_not_stored() {
	{
		cat "$T/$1".*.sent 2>/dev/null | cut -d' ' -f1
		cat "$T"/*.sent | awk -v m="$1" \
			'{ n = split($3, to, ","); for (i = 1; i <= n; i++) if (to[i] == m) print $1 }'
	} | sort -u >"$T/acked"
	jq -R -r 'fromjson? | select(.t == "msg") | .id' "$T/$1/log.jsonl" |
		sort -u | comm -23 "$T/acked" -
}
torn=0
for r in $(seq 1 "$ROUNDS"); do
	# c most rounds; every third round one of the senders.
	if [ $((r % 3)) -eq 0 ]; then
		v=$([ $((r % 6)) -eq 0 ] && echo b || echo a)
	else
		v=c
	fi
	rsleep 200 2000
	crash "$v"
	missing=$(acked_not_stored "$v" | head -5 | tr '\n' ' ')
	check "round $r: what $v answered or acked before the kill is in its log: $missing" \
		test -z "$missing"
	if [ $((r % 5)) -eq 0 ]; then
		tear "$v"
		torn=$((torn + 1))
		warned=$(grep -c 'torn last line' "$T/$v.err")
	fi
	# Some rounds kill it again before it has even said where it listens.
	case $((r % 7)) in 3|6) early "$v" ;; esac
	rsleep 0 1000
	start "$v" || { finish; exit 1; }
	if [ $((r % 5)) -eq 0 ]; then
		check "round $r: $v reports the torn line it cut off" \
			test "$(grep -c 'torn last line' "$T/$v.err")" -gt "$warned"
	fi
done
touch "$T/stop"
for p in "$T"/send-*.pid; do
	wait "$(cat "$p")"
	rm -f "$p"
done

cat "$T"/*.sent | cut -d' ' -f1 | sort >"$T/promised"
n_sent=$(wc -l <"$T/promised")
n_queued=$(cat "$T"/*.sent | awk '$2 == "queued"' | wc -l)
n_lost=$(cat "$T"/*.lost | wc -l)
echo "crash.sh: $n_sent sends answered ($n_queued queued), $n_lost unanswered, $torn torn lines"
check "sends were answered during the run ($n_sent)" test "$n_sent" -ge 20
check "the answered ids are unique" test "$(uniq -d "$T/promised" | wc -l)" -eq 0
# An unanswered send is one whose own daemon was killed (no HTTP status);
# a daemon that answers must answer 200.
bad=$(cat "$T"/*.lost | grep -v ': 000 ' | head -3)
check "every send answered 200 or not at all: $bad" test -z "$bad"

# converged: the same counts everywhere, empty outboxes, the same ids in
# every log (log_ids, in lib.sh) and every answered one among them.  A
# miss sleeps 1 s: reading three logs every 0.1 s would cost the daemons
# the CPU they converge with.
converged() {
	local m n0 n
	n0=$(api a /api/status | jq -r '"\(.messages) \(.outbox)"')
	for m in b c; do
		n=$(api "$m" /api/status | jq -r '"\(.messages) \(.outbox)"')
		[ "$n" = "$n0" ] || { sleep 1; return 1; }
	done
	for m in a b; do
		n=$(api "$m" /api/status | jq .outbox)
		[ "$n" = 0 ] || { sleep 1; return 1; }
	done
	log_ids a >"$T/ids-a"
	for m in b c; do
		log_ids "$m" | cmp -s - "$T/ids-a" || { sleep 1; return 1; }
	done
	[ -z "$(comm -23 "$T/promised" "$T/ids-a")" ] || { sleep 1; return 1; }
}
check "a, b and c converge within $DEADLINE s, outboxes empty" \
	until_true "$DEADLINE" converged
for m in a b c; do history_once "$m"; done
for m in a b c; do stop "$m"; done

# The logs after a clean stop: whole lines only, each message once, every
# promised message in each, the same set everywhere.
for m in a b c; do log_whole "$m"; done
check "b holds the same messages as a" cmp -s "$T/log-a" "$T/log-b"
check "c holds the same messages as a" cmp -s "$T/log-a" "$T/log-c"
finish
