#!/usr/bin/env bash
# compat_wire.sh: the wire stays compatible (issue 23).  Daemons of this
# tree's papo (new) and of the previous release (old: tests/compat/
# PREVIOUS, built by tests/compat/build_prev.sh) in one room, as users
# see it:
#  - a room made by an old daemon: o1 (old) makes it; n1 (new) joins by
#    o1's invite, o2 (old) by n1's, n2 (new) by o2's; v1 and v2, old
#    daemons speaking protocol versions 1 and 2 (PAPO_PROTOCOL), join by
#    n2's and o1's;
#  - every one sees every other online, with its protocol version;
#  - every one says something and every other gets it, with the author,
#    addressee and reply intact; authors see delivered receipts, and read
#    receipts once an agent was given the message (MCP wait);
#  - o1 (old, the owner) makes n1 (new) an admin; n1 removes o2: the old
#    ones take the new key and show the removal, o2 is put out, v1 and v2
#    are told to upgrade (docs/PROTOCOL.md, "Key epochs"), the rest talk
#    on; o1 changes the key again and the new ones follow;
#  - a room made by a new daemon: n3 makes it, o3 (old) joins, n3 makes
#    o3 an admin, o3 changes the key, and they talk under it.
# Usage: compat_wire.sh PATH_TO_PAPO PREVDIR (where the previous release
# is built; PAPO_OLD=PATH uses that binary instead).
PAPO_NEW=${1:?usage: compat_wire.sh PATH_TO_PAPO PREVDIR}
PREVDIR=${2:?usage: compat_wire.sh PATH_TO_PAPO PREVDIR}
. "$(dirname "$0")/compat_lib.sh"

epoch_is() { [ "$(api "$1" /api/status | jq -r .epoch)" = "$2" ]; }
admin_is() { api "$1" /api/status | jq -e --arg b "$2" '[.admins[].name] | index($b)' >/dev/null; }
# sees NAME OTHER...: NAME's status shows exactly OTHER... online.
sees() {
	local n=$1; shift
	local want; want=$(printf '%s\n' "$@" | sort | jq -R . | jq -sc .)
	api "$n" /api/status | jq -e --argjson w "$want" \
		'[.members[] | select(.online) | .name] | sort == $w' >/dev/null
}
protocol_of() { api "$1" /api/status | jq -r --arg b "$2" '.members[] | select(.name == $b) | .protocol'; }
# fields NAME ID: [from, to, reply_to] of message ID at NAME.
fields() { api "$1" '/api/history?limit=500' | jq -c --arg id "$2" \
	'.messages[] | select(.id == $id) | [.from, .to, .reply_to]'; }
# reads NAME ID "PRIVATE TEXT": how NAME's history shows message ID.
reads() { [ "$(api "$1" '/api/history?limit=500' | jq -r --arg i "$2" \
	'.messages[] | select(.id == $i) | "\(.private) \(.text)"')" = "$3" ]; }
starts() { [[ $1 == "$2"* ]]; }   # starts TEXT PREFIX

# Room X, made by the previous release.
as_old o1 o2 v1 v2
as_new n1 n2
expect 0 "old o1 makes the room" -- papo o1 new --name o1 --room "wire"
up o1 || exit 1
enter n1 "$(invite o1)"; up n1 || exit 1
enter o2 "$(invite n1)"; up o2 || exit 1
enter n2 "$(invite o2)"; up n2 || exit 1
if grep -q PAPO_PROTOCOL "$PAPO_OLD"; then
	enter v1 "$(invite n2)"; PAPO_PROTOCOL=1 up v1 || exit 1
	enter v2 "$(invite o1)"; PAPO_PROTOCOL=2 up v2 || exit 1
	X=(o1 o2 n1 n2 v1 v2)
else
	echo "the previous release has no PAPO_PROTOCOL: no daemons of versions 1 and 2"
	X=(o1 o2 n1 n2)
fi
others() { local m; for m in "${X[@]}"; do [ "$m" = "$1" ] || echo "$m"; done; }
for m in "${X[@]}"; do
	# shellcheck disable=SC2046
	check "$m sees all the others online" until_true 30 sees "$m" $(others "$m")
done
expect 0 "papo status on old o1" -- papo o1 status
for m in $(others o1); do has "$T/out" "^  $m  online" "old o1's papo status lists $m online"; done
expect 0 "papo status on new n1" -- papo n1 status
for m in $(others n1); do has "$T/out" "^  $m  online" "new n1's papo status lists $m online"; done
for m in o1 o2; do
	check "new n1 speaks protocol 3 with old $m" test "$(protocol_of n1 $m)" = 3
done
# Two new ones agree on the newest (5: ALPN papo/5; private messages).
check "new n1 speaks protocol 5 with new n2" test "$(protocol_of n1 n2)" = 5
check "new n2 speaks protocol 5 with new n1" test "$(protocol_of n2 n1)" = 5
check "old o1 speaks protocol 3 with new n1" test "$(protocol_of o1 n1)" = 3
check "new n2 speaks protocol 3 with old o2" test "$(protocol_of n2 o2)" = 3
if [ "${#X[@]}" = 6 ]; then
	check "new n1 speaks protocol 1 with v1" test "$(protocol_of n1 v1)" = 1
	check "new n1 speaks protocol 2 with v2" test "$(protocol_of n1 v2)" = 2
fi

# Every one says something; every other gets it; the author sees it
# delivered to all.
follow o1
follow n1
sleep 0.5   # nothing shows a tail's stream open (o1's is the old release's)
declare -A ID
for m in "${X[@]}"; do
	out=$(papo "$m" say "from $m" --json 2>&1)
	ID[$m]=$(jq -r .id <<<"$out")
	got=$(jq -c '.delivered_to | sort' <<<"$out")
	want=$(others "$m" | sort | jq -R . | jq -sc .)
	check "$m's message is delivered to all the others: $out" test "$got" = "$want"
done
everything() { local m; for m in "${X[@]}"; do has_text "$1" "from $m" || return 1; done; }
for m in "${X[@]}"; do
	check "$m has every one's message" until_true 20 everything "$m"
done
# receipts KIND: old o1 and new n1 each see a KIND receipt of their
# message from every other member.
receipts() {
	local a m
	for a in o1 n1; do
		for m in $(others "$a"); do
			check "$a sees $m's $1 receipt" until_true 15 receipt "$a" "${ID[$a]}" "$m" "$1"
		done
	done
}
receipts delivered
# Read receipts: an agent given the message by wait.
for m in "${X[@]}"; do
	got=$(agent_wait "$m" | sort | tr '\n' '|')
	want=$(others "$m" | sed 's/^/from /' | sort | tr '\n' '|')
	check "$m's agent is given the others' messages: $got" test "$got" = "$want"
done
receipts read

# Addressed messages and replies, old to new and new to old (--public:
# the new one's is the room's, as the old one's is).
says o2 "o2 to n2" --to n2 --reply-to "${ID[n1]}"; d1=$id
says n2 "n2 to o1" --to o1 --public --reply-to "$d1"; d2=$id
for m in "${X[@]}"; do
	check "$m gets both directed messages" until_true 15 has_all "$m" "o2 to n2" "n2 to o1"
	got=$(fields "$m" "$d1")
	check "$m: from, to and reply_to of o2's intact: $got" test "$got" = "[\"o2\",\"n2\",\"${ID[n1]}\"]"
	got=$(fields "$m" "$d2")
	check "$m: from, to and reply_to of n2's intact: $got" test "$got" = "[\"n2\",\"o1\",\"$d1\"]"
done

# A private message to an old member, connected: refused, with why.
check "n1 sees o1 online" until_true 15 online n1 o1
expect 1 "a private message from new n1 to old o1 is refused" -- papo n1 say --to o1 "x"
has "$T/err" "o1 runs a papo too old to read private messages \(protocol 3\)" "the refusal says why"

# A private message from n1 to n2 while n2 is away: the old members
# store it and pass it on without reading it, and show it as what it
# is; n2 gets it from their copies.
stop n2
says n1 "cobalt secret for n2" --to n2; p1=$id
for m in "${X[@]}"; do
	[ "${BIN[$m]}" = "$PAPO_OLD" ] || continue
	check "old $m stores n1's private message" \
		until_true 15 grep -q "\"id\":\"$p1\"" "$T/$m/log.jsonl"
	check "old $m's log holds no word of it" test "$(grep -c cobalt "$T/$m/log.jsonl")" = 0
done
# The previous release shows text as it is: the head line, then the
# sealed line (a release with the dashboard's Markdown shows the head
# alone: test_markdown).
api o1 '/api/history?limit=500' >"$T/body"
got=$(jq -r --arg i "$p1" '.messages[] | select(.id == $i) | .text' "$T/body" | head -1)
check "old o1 shows the head line: $got" \
	starts "$got" '🔒 A private message, sealed to its addressee'
check "old o1 shows no word of it" test "$(grep -c cobalt "$T/body")" = 0
stop n1
up n2
check "n2 sees o1 online" until_true 20 online n2 o1
check "n2 gets the private message from the old members' copies" \
	until_true 20 reads n2 "$p1" "true cobalt secret for n2"
up n1
for m in "${X[@]}"; do
	[ "$m" = n1 ] || check "n1 sees $m online again" until_true 20 online n1 "$m"
done

# The owner (old) makes n1 (new) an admin; n1 removes o2.
expect 0 "old o1 makes new n1 an admin" -- papo o1 admin n1
for m in o1 o2 n1 n2; do
	check "$m knows n1 is an admin" until_true 15 admin_is "$m" n1
done
expect 0 "new n1 (an admin) removes old o2" -- papo n1 remove o2
for m in o1 n1 n2; do
	check "$m is at epoch 1" until_true 15 epoch_is "$m" 1
done
expect 0 "papo status on old o1" -- papo o1 status
has "$T/out" "^key epoch: 1" "old o1 shows the new key"
has "$T/out" "^removed: o2 \(by n1\)" "old o1 shows o2 removed by n1"
expect 0 "papo history on old o1" -- papo o1 history
has "$T/out" "-- n1 removed o2; the room key changed \(epoch 1\)" "old o1's history has the removal"
check "old o2 knows it was removed" until_true 15 bash -c \
	"PAPO_HOME='$T/o2' '$PAPO_OLD' status | grep -q '^this member was removed from the room by n1'"
for m in o1 n1 n2; do
	check "$m shows o2 offline" until_true 15 offline "$m" o2
done
if [ "${#X[@]}" = 6 ]; then
	for v in v1 v2; do
		for m in o1 n1; do
			check "$m no longer talks with $v" until_true 15 offline "$m" $v
		done
		check "the others say $v must upgrade" until_true 30 bash -c \
			"grep -q '$v speaks protocol version ${v#v}, which cannot follow the room.s key changes' '$T'/{o1,o2,n1,n2}.err"
	done
fi
says o1 "after the removal"
says n2 "n2 after the removal"
for m in o1 n1 n2; do
	check "$m talks on under epoch 1" until_true 15 has_all "$m" "after the removal" "n2 after the removal"
done
check "o2 never gets them" bash -c "! grep -q 'after the removal' '$T/o2/log.jsonl'"

# The owner (old) changes the key again; the new ones follow.
expect 0 "old o1 changes the key" -- papo o1 rotate
for m in n1 n2; do
	check "new $m takes epoch 2 from old o1" until_true 15 epoch_is "$m" 2
done
says n1 "n1 under epoch 2"
says o1 "o1 under epoch 2"
for m in o1 n1 n2; do
	check "$m talks on under epoch 2" until_true 15 has_all "$m" "n1 under epoch 2" "o1 under epoch 2"
done
unfollow
stop_all

# Room Y, made by this tree's papo, an old member its admin.
as_new n3
as_old o3
expect 0 "new n3 makes a room" -- papo n3 new --name n3 --room "made by the new one"
up n3 || exit 1
enter o3 "$(invite n3)"; up o3 || exit 1
check "n3 sees o3 online" until_true 20 online n3 o3
check "o3 sees n3 online" until_true 20 online o3 n3
check "old o3 names new n3 the owner" until_true 15 bash -c \
	"curl -s '${URL[o3]}/api/status' | jq -e '.owner.name == \"n3\"' >/dev/null"
expect 0 "new n3 makes old o3 an admin" -- papo n3 admin o3
check "old o3 knows it is an admin" until_true 15 admin_is o3 o3
expect 0 "old o3 (an admin) changes the key" -- papo o3 rotate
check "new n3 takes epoch 1 from old o3" until_true 15 epoch_is n3 1
says n3 "n3 under o3's key"
says o3 "o3 under its key"
for m in n3 o3; do
	check "$m has both" until_true 15 has_all "$m" "n3 under o3's key" "o3 under its key"
done

# (but the ones this test made happen: v1 and v2 told to upgrade)
for m in n1 n2 n3; do
	c=$(complaints "$T/$m.err" "^papo: warn: (room [^ ]+: )?(refused )?v[12]:? (it )?speaks protocol version [12], which cannot follow the room's key changes")
	check "new $m logged no warning or error: $c" test -z "$c"
done
stop_all
finish
