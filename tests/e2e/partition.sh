#!/usr/bin/env bash
# partition.sh: two members cut off from each other for a while.  Each
# runs in its own network namespace, one and two, joined by a veth pair
# (10.77.0.1/24 and 10.77.0.2/24); one's invite carries 10.77.0.1.  Both
# send and get delivered; then the link goes down for PARTITION_S seconds
# while both keep sending; then it comes back.
#
# The promises under test:
#  - No loss: a message whose send answered (200, `delivered` or
#    `queued`) reaches the other member once the link is back.
#  - Honest answers: a send that starts and answers while the link is
#    down says `queued`, never `delivered`.
#  - At-least-once delivery with dedup by id: every message is in both
#    histories exactly once, however often the outbox sent it again.
#  - Convergence: once the link is back, both hold the same set of
#    messages and both outboxes empty, without anyone's help.
#  - Presence: each sees the other go offline while the cut lasts (the
#    contract says within 45 s; the time is printed, not asserted, and
#    checked only when PARTITION_S is at least 50), and online again
#    once the link is back.
#  - No corrupt log: every line of both log.jsonl is a whole JSON frame;
#    both daemons exit 0 on SIGTERM, with no sanitizer report.
#
# Needs root and iproute2 (ip netns, veth).  Without them it prints
# "SKIPPED: reason" and exits 77, which ctest shows as skipped.
# Usage: partition.sh PATH_TO_PAPO.  Environment: PARTITION_S (seconds
# the link is down, default 60), PARTITION_DEADLINE (seconds to meet
# again and converge, default 180).
PAPO=${1:?usage: partition.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN
PART_S=${PARTITION_S:-60}
DEADLINE=${PARTITION_DEADLINE:-180}

# Names unique to this run; interface names stay within 15 bytes.
NS1=papo-rel-$$-1 NS2=papo-rel-$$-2 V1=pr$$a V2=pr$$b
declare -A NSOF=([one]=$NS1 [two]=$NS2)
net_down() {
	ip link del "$V1" 2>/dev/null
	ip -n "$NS1" link del "$V1" 2>/dev/null
	ip netns del "$NS1" 2>/dev/null
	ip netns del "$NS2" 2>/dev/null
}
# lib.sh's cleanup kills the daemons first: a namespace goes away only
# once nothing runs in it.
trap 'rc=$?; cleanup; net_down; exit $rc' EXIT
trap 'exit 1' INT TERM HUP
skip() { echo "SKIPPED: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "network namespaces need root"
command -v ip >/dev/null || skip "no ip command (iproute2)"
ip netns add "$NS1" 2>"$T/ip.err" || skip "ip netns add failed: $(cat "$T/ip.err")"
ip netns add "$NS2" 2>"$T/ip.err" || skip "ip netns add failed: $(cat "$T/ip.err")"
ip link add "$V1" type veth peer name "$V2" 2>"$T/ip.err" ||
	skip "cannot create a veth pair: $(cat "$T/ip.err")"
net() { # net COMMAND...: runs an ip command; a failure ends the test
	"$@" 2>"$T/ip.err" || { fail "$*: $(cat "$T/ip.err")"; finish; exit 1; }
}
net ip link set "$V1" netns "$NS1"
net ip link set "$V2" netns "$NS2"
net ip -n "$NS1" addr add 10.77.0.1/24 dev "$V1"
net ip -n "$NS2" addr add 10.77.0.2/24 dev "$V2"
for ns in "$NS1" "$NS2"; do net ip -n "$ns" link set lo up; done
net ip -n "$NS1" link set "$V1" up
net ip -n "$NS2" link set "$V2" up

# nstart NAME ADDR: starts NAME's daemon in its namespace, QUIC on ADDR,
# HTTP on that namespace's own loopback.
nstart() {
	local n=$1 addr=$2
	rm -f "$T/$n/serve.json"
	ip netns exec "${NSOF[$n]}" env PAPO_HOME="$T/$n" "$PAPO" serve \
		--http 127.0.0.1:0 --listen "$addr:0" --name "$n" \
		>>"$T/$n.out" 2>>"$T/$n.err" </dev/null &
	echo $! >"$T/$n.pid"
	if ! until_true 20 test -s "$T/$n/serve.json"; then
		fail "$n did not start: $(tail -3 "$T/$n.err")"
		return 1
	fi
	URL[$n]=$(jq -r .http "$T/$n/serve.json")
}
# lib.sh's api, online and texts, with curl in the member's namespace.
api() {
	local n=$1; shift
	ip netns exec "${NSOF[$n]}" curl -sS --max-time 30 "${URL[$n]}$@"
}
# sees_offline A B: A answers that B is offline (a failed request is not
# taken for an answer).
sees_offline() {
	api "$1" /api/status | jq -e --arg b "$2" \
		'.members[] | select(.name == $b) | .online == false' >/dev/null
}
nspapo() { local n=$1; shift; ip netns exec "${NSOF[$n]}" env PAPO_HOME="$T/$n" "$PAPO" "$@"; }

PAPO_HOME=$T/one "$PAPO" new --name one >/dev/null
nstart one 10.77.0.1 || { finish; exit 1; }
quic=$(jq -r .quic "$T/one/serve.json")
check "one listens on 10.77.0.1: $quic" grep -qE '^10\.77\.0\.1:[0-9]+$' <<<"$quic"
inv=$(nspapo one invite)

# The invite's addresses (docs/PROTOCOL.md, "Invite"): after the version,
# the secret and the inviter's id, a count, then family, IP and port.
invite_addrs() {
	local b=${1#papo1} bytes i n fam
	b=${b^^}
	while [ $(( ${#b} % 8 )) -ne 0 ]; do b+='='; done
	read -r -a bytes <<<"$(printf %s "$b" | base32 -d | od -An -tu1 -v | tr -s ' \n' '  ')"
	n=${bytes[65]:-0} i=66
	while [ "$n" -gt 0 ]; do
		fam=${bytes[i]}
		if [ "$fam" -eq 4 ]; then
			echo "${bytes[i+1]}.${bytes[i+2]}.${bytes[i+3]}.${bytes[i+4]}:$(( bytes[i+5] * 256 + bytes[i+6] ))"
			i=$((i + 7))
		else
			echo "ipv6"
			i=$((i + 19))
		fi
		n=$((n - 1))
	done
}
addrs=$(invite_addrs "$inv" | tr '\n' ' ')
check "papo invite carries one's address $quic: $addrs" grep -qw "$quic" <<<"$addrs"

join two "$inv"
nstart two 10.77.0.2 || { finish; exit 1; }
check "one sees two online" until_true 30 online one two
check "two sees one online" until_true 30 online two one
for n in one two; do
	out=$(api "$n" /api/send -H 'Content-Type: application/json' \
		-d "{\"text\":\"$n before the cut\"}")
	check "$n's send is delivered over the link: $out" \
		test "$(jq -r .state <<<"$out")" = delivered
	jq -r '"\(.id) \(.state) before before"' <<<"$out" >>"$T/$n.sent"
done

# sender NAME: sends to NAME every 0.3 s until $T/stop exists.  An
# answered send adds "ID STATE PHASE-AT-START PHASE-AT-ANSWER" to
# $T/NAME.sent, anything else a line to $T/NAME.lost; $T/phase says
# whether the link is up (before, after) or down (cut).
echo before >"$T/phase"
sender() {
	local n=$1 k=0 p0 p1 out code body line
	while [ ! -e "$T/stop" ]; do
		k=$((k + 1))
		p0=$(cat "$T/phase")
		# curl's own complaints go to $T/send-NAME.err, not into the body.
		out=$(api "$n" /api/send -w '\n%{http_code}' \
			-H 'Content-Type: application/json' \
			-d "{\"text\":\"$n $k\"}" 2>>"$T/send-$n.err")
		p1=$(cat "$T/phase")
		code=${out##*$'\n'}
		body=${out%$'\n'*}
		# An answer counts only whole: 200, one of the two states, and
		# a message id; anything else is a line in NAME.lost, shown.
		line=$(jq -er --arg p "$p0 $p1" 'select((.state == "delivered"
		    or .state == "queued") and (.id | test("^[a-z2-7]{10}$")))
		    | "\(.id) \(.state) \($p)"' <<<"$body" 2>/dev/null)
		if [ "$code" = 200 ] && [ -n "$line" ]; then
			echo "$line" >>"$T/$n.sent"
		else
			echo "$n $k: $code $(tr '\n' ' ' <<<"$body") $(tail -1 "$T/send-$n.err" 2>/dev/null)" >>"$T/$n.lost"
		fi
		sleep 0.3   # time tested: a send every 0.3 s or so, through the cut
	done
}
touch "$T/one.lost" "$T/two.lost"
for n in one two; do
	sender "$n" &
	# lib.sh's cleanup kills every $T/*.pid: a failed run ends them.
	echo $! >"$T/send-$n.pid"
done
sleep 2   # time tested: 2 s of sends before the cut

# The cut.  While it lasts, see when each finds the other offline.
net ip -n "$NS1" link set "$V1" down
echo cut >"$T/phase"
cut_at=$(date +%s)
echo "partition.sh: link down for $PART_S s"
declare -A gone=()
while [ $(( $(date +%s) - cut_at )) -lt "$PART_S" ]; do
	[ -n "${gone[one]:-}" ] || ! sees_offline one two || gone[one]=$(( $(date +%s) - cut_at ))
	[ -n "${gone[two]:-}" ] || ! sees_offline two one || gone[two]=$(( $(date +%s) - cut_at ))
	sleep 1   # time tested: a look every second of the cut
done
echo "partition.sh: offline after: one sees two ${gone[one]:-never} s, two sees one ${gone[two]:-never} s"
if [ "$PART_S" -ge 50 ]; then
	check "one saw two offline during the cut" test -n "${gone[one]:-}"
	check "two saw one offline during the cut" test -n "${gone[two]:-}"
fi
net ip -n "$NS1" link set "$V1" up
echo after >"$T/phase"
check "one sees two online again" until_true "$DEADLINE" online one two
check "two sees one online again" until_true "$DEADLINE" online two one
touch "$T/stop"
for n in one two; do
	wait "$(cat "$T/send-$n.pid")"
	rm -f "$T/send-$n.pid"
done

cat "$T"/*.sent | cut -d' ' -f1 | sort >"$T/promised"
for n in one two; do
	started=$(grep -c ' cut [a-z]*$' "$T/$n.sent")
	during=$(grep -c ' cut cut$' "$T/$n.sent")
	lied=$(grep ' cut cut$' "$T/$n.sent" | grep -v ' queued ' | head -3 | tr '\n' ' ')
	echo "partition.sh: $n: $(wc -l <"$T/$n.sent") sends answered, $started started during the cut, $during answered before its end, $(wc -l <"$T/$n.lost") unanswered"
	check "$n kept sending during the cut ($started answered)" test "$started" -ge 1
	check "$n: sends made while cut off answer queued: $lied" test -z "$lied"
	bad=$(head -3 "$T/$n.lost")
	check "$n: every send was answered 200: $bad" test -z "$bad"
done
check "the answered ids are unique" test "$(uniq -d "$T/promised" | wc -l)" -eq 0

# A miss sleeps 1 s: reading two logs every 0.1 s would cost the daemons
# the CPU they converge with.
converged() {
	local s1 s2
	s1=$(api one /api/status | jq -r '"\(.messages) \(.outbox)"')
	s2=$(api two /api/status | jq -r '"\(.messages) \(.outbox)"')
	if [ "$s1" != "$s2" ] || [ "${s1#* }" != 0 ]; then sleep 1; return 1; fi
	log_ids one >"$T/ids-one"
	log_ids two | cmp -s - "$T/ids-one" || { sleep 1; return 1; }
	[ -z "$(comm -23 "$T/promised" "$T/ids-one")" ] || { sleep 1; return 1; }
}
check "one and two converge within $DEADLINE s, outboxes empty" \
	until_true "$DEADLINE" converged
for n in one two; do history_once "$n"; done
for n in one two; do stop "$n"; done

for n in one two; do log_whole "$n"; done
check "two holds the same messages as one" cmp -s "$T/log-one" "$T/log-two"
finish
