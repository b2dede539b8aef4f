#!/usr/bin/env bash
# stale.sh: the holder of an invite printed before `papo rotate`, on the
# same LAN as the room (issue 22, item 16).  Its LAN beacons, sealed with
# the room's first key, make it known to the members, which used to take
# its hello for that of a member behind: it was then listed (online,
# then offline), redialled for ever, and every message waited for its
# ack.  The promises (docs/PROTOCOL.md, "Key epochs"):
#  1. Its daemon stops, saying why (an invite from before the key changed).
#  2. No member ever lists it, dials it, or waits for it: a message sent
#     while it tries is delivered, not queued; it is not in peers.json.
#  3. The same home with a new invite joins.
#
#   n1 (cone NAT) with ana, bo and dan on its LAN (192.168.1.0/24).
#
# Needs root, iproute2 and nftables; else "SKIPPED: reason", exit 77.
# Usage: stale.sh PATH_TO_PAPO
PAPO=${1:?usage: stale.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lab.sh"
unset PAPO_TOKEN PAPO_ADVERTISE PAPO_PROTOCOL PAPO_INVITE PAPO_LISTEN PAPO_HTTP
export PAPO_PORTMAP=off

lab_up
lab_nat n1 cone 203.0.113.21
lab_host ana n1
lab_host bo n1
lab_host dan n1

# only_bo NAME: the members NAME lists are bo alone (no entry for dan,
# named or not).
only_bo() {
	lab_api "$1" /api/status >"$T/status-$1" 2>&1 &&
		jq -e '[.members[].name] == ["bo"]' "$T/status-$1" >/dev/null
}
only_ana() {
	lab_api bo /api/status >"$T/status-bo" 2>&1 &&
		jq -e '[.members[].name] == ["ana"]' "$T/status-bo" >/dev/null
}

lab_papo ana new --name ana >/dev/null
lab_start ana || finish
old=$(jq -r .invite "$T/ana/serve.json")
lab_papo bo join "$old" --name bo >/dev/null
lab_start bo || finish
check "ana sees bo online" until_true 20 status_is ana \
	'.members[] | select(.name == "bo") | .online'
expect 0 "ana rotates the key" -- lab_papo ana rotate
check "bo takes epoch 1" until_true 15 status_is bo '.epoch == 1'

# dan joins with the invite printed before the change.
lab_papo dan join "$old" --name dan >/dev/null
lab_in dan env PAPO_HOME="$T/dan" "$PAPO" serve --http 127.0.0.1:0 \
	--listen "0.0.0.0:$LAB_PORT" --name dan >"$T/dan.out" 2>"$T/dan.err" \
	</dev/null &
dan=$!
echo "$dan" >"$T/dan.pid"
# While it tries: nobody lists it, and a message is delivered to bo, not
# queued for dan.
listed=0
for _ in $(seq 1 40); do
	only_bo ana || listed=$((listed + 1))
	only_ana || listed=$((listed + 1))
	sleep 0.2   # time tested: 40 looks over 8 s
done
check "neither ana nor bo listed dan in 8 s (seen $listed times: $(jq -c '[.members[] | [.name, .online]]' "$T/status-ana" 2>/dev/null))" \
	test "$listed" = 0
expect 0 "ana's say while dan tries" -- lab_papo ana say "while dan tries"
has "$T/out" "delivered" "it is delivered, not left waiting for dan"
check "dan's daemon stopped by itself" until_true 30 bash -c \
	"! kill -0 $dan 2>/dev/null"
wait "$dan" 2>/dev/null
rc=$?
rm -f "$T/dan.pid"
check "dan's daemon exited with an error (rc $rc)" test "$rc" -ne 0
check "dan says its invite is from before the key changed" grep -q \
	"papo: this invite is from before the room's key changed (epoch 1 by ana): ask for a new invite" \
	"$T/dan.err"
check "ana logged its refusal of dan" grep -q \
	"refused dan, a new member: this invite is from before the room's key changed" "$T/ana.err"
check "dan is not in ana's peers.json" bash -c \
	"! jq -e '.members[] | select(.name == \"dan\" or .name == \"\")' '$T/ana/peers.json' >/dev/null"
refusals=$(grep -c "refused dan" "$T/ana.err")
sleep 3   # time tested: no dial within 3 s
check "nobody dials dan once it stopped (refusals stay at $refusals)" \
	test "$(grep -c "refused dan" "$T/ana.err")" = "$refusals"
check "ana still lists only bo" only_bo ana
expect 0 "ana's next say" -- lab_papo ana say "after dan left"
has "$T/out" "delivered" "delivered"

# With an invite printed now, the same home joins.
new=$(lab_papo ana invite)
expect 0 "dan joins with a new invite (--force)" -- lab_papo dan join "$new" --name dan --force
lab_start dan || finish
check "ana sees dan online" until_true 20 status_is ana \
	'.members[] | select(.name == "dan") | .online'
lab_papo ana say "welcome dan" >/dev/null
check "dan has ana's welcome" until_true 15 bash -c \
	"ip netns exec '${LABNS[dan]}' curl -s '${URL[dan]}/api/history?limit=50' | jq -e '.messages[] | select(.text == \"welcome dan\")' >/dev/null"

stop_all
finish
