#!/usr/bin/env bash
# members.sh: who governs a room, as users see it (docs/PROTOCOL.md, "Owner
# and admins"): the member who made the room is its owner on every
# member's status, a joiner two invites away included; only the owner
# makes admins (others are refused with the reason, by `papo admin` and
# POST /api/admin alike); a grant reaches every member, one that was
# offline when it was made too, is kept across a restart, and shows on
# /api/events; a daemon of protocol version 2 still talks in the room.
# Usage: members.sh PATH_TO_PAPO.
PAPO=${1:?usage: members.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"

owner_is() { api "$1" /api/status | jq -e --arg o "$2" '.owner.name == $o' >/dev/null; }
admin_is() { api "$1" /api/status | jq -e --arg a "$2" '[.admins[].name] | index($a) != null' >/dev/null; }
role_of() { api "$1" /api/status | jq -r --arg m "$2" '.members[] | select(.name == $m) | .role'; }

papo ana new --name ana >/dev/null
start ana
join bo "$(invite ana)"
start bo
# cy's invite is bo's: it learns the owner from bo, its inviter.
join cy "$(invite bo)"
start cy
for m in bo cy; do
	check "ana sees $m online" until_true 20 online ana $m
done
check "cy sees ana online" until_true 20 online cy ana
for m in ana bo cy; do
	check "$m's status names ana the owner" until_true 15 owner_is $m ana
done
check "ana's own role is owner" test "$(api ana /api/status | jq -r .me.role)" = owner
check "bo shows ana's role as owner" test "$(role_of bo ana)" = owner
check "cy's room.json keeps the owner" \
	test "$(jq -r .owner "$T/cy/room.json")" = "$(api ana /api/status | jq -r .me.id)"

# Only the owner makes admins.
expect 1 "papo admin by bo (not the owner) fails" -- papo bo admin cy
has "$T/err" "only the room's owner \(ana\) can make admins" "bo is told who can"
code=$(post bo /api/admin '{"name":"cy"}')
check "POST /api/admin by bo is 403 (got $code)" test "$code" = 403
has "$T/body" '"error":"only the room.s owner \(ana\) can make admins"' "the 403 says why"
code=$(post ana /api/admin '{"name":"cy","x":1}')
check "POST /api/admin with an unknown field is 400 (got $code)" test "$code" = 400
expect 1 "papo admin of nobody fails" -- papo ana admin zed
has "$T/err" "no member called zed" "the owner is told there is no zed"
check "nobody was made an admin" test "$(api cy /api/status | jq '.admins | length')" = 0

# cy is away while ana makes bo an admin; bo's /api/events tells it.
curl -sN "${URL[bo]}/api/events" >"$T/bo.events" 2>/dev/null &
events_pid=$!
stop cy
expect 0 "ana makes bo an admin" -- papo ana admin bo
has "$T/out" "^bo is now an admin of the room" "papo admin says so"
for m in ana bo; do
	check "$m shows bo as an admin" until_true 10 admin_is $m bo
done
check "ana shows bo's role as admin" test "$(role_of ana bo)" = admin
check "bo's /api/events has the room event" \
	until_true 10 grep -q '"kind":"admin","name":"bo"' "$T/bo.events"
has "$T/bo.events" "^event: room" "the event is named room"
kill "$events_pid" 2>/dev/null
start cy
check "cy, away at the time, gets the grant when it is back" until_true 20 admin_is cy bo
expect 0 "making bo an admin again" -- papo ana admin bo
has "$T/out" "^bo was an admin already" "papo admin says it was already"
stop bo
start bo
check "bo keeps the grant across its restart" until_true 10 admin_is bo bo
expect 0 "papo status on cy" -- papo cy status
has "$T/out" "^owner: ana" "papo status names the owner"
has "$T/out" "^admins: bo" "papo status names the admins"

# A daemon of protocol version 2 in the room: it talks as before; the
# owner and the grants, which it cannot follow, are not known to it.
join old2 "$(invite ana)"
PAPO_PROTOCOL=2 start old2
check "ana sees old2 online" until_true 20 online ana old2
papo old2 say "from version 2" >/dev/null 2>&1
check "ana has old2's message" until_true 20 has_text ana "from version 2"
papo ana say "to version 2" >/dev/null 2>&1
check "old2 has ana's message" until_true 20 has_text old2 "to version 2"
check "ana shows old2 with protocol 2" test "$(api ana /api/status | \
	jq -r '.members[] | select(.name == "old2") | .protocol')" = 2
check "old2 knows no owner" test "$(api old2 /api/status | jq -r .owner)" = null

stop_all
finish
