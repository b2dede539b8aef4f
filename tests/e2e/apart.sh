#!/usr/bin/env bash
# apart.sh: the room's key changed by two admins who could not hear each
# other (docs/PROTOCOL.md, "Concurrent changes"), as users see it: when
# they meet again every member ends on one key, the member either of them
# removed stays removed (refused, and given no key kept), both changes
# show in history, what each side said meanwhile reaches the other, and
# the room talks again.
#  1. Two changes of one number: ana (the owner) rotates while bo (an
#     admin) is away; bo, alone, removes cy.
#  2. A newer key on one side: ana rotates twice while bo is away; bo,
#     alone, removes cy: ana's second key was given to cy, so whoever
#     sees that changes the key again.
# Usage: apart.sh PATH_TO_PAPO.
PAPO=${1:?usage: apart.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"

epoch_of() { api "$1" /api/status | jq .epoch; }
says() { papo "$1" say "$2" >/dev/null 2>&1; }
id_of() { api "$1" /api/status | jq -r .me.id; }
removed_at() { # removed_at MEMBER NAME: MEMBER's status lists NAME removed
	api "$1" /api/status | jq -e --arg n "$2" '[.removed[].name] | index($n) != null' >/dev/null
}
same_epoch() { [ "$(epoch_of "$1")" = "$(epoch_of "$2")" ]; }
# The newest key MEMBER holds was given to the member of id ID.
given_newest() {
	jq -e --arg id "$2" '.epochs | max_by(.n) | .frame | fromjson |
		[.keys[].id] | index($id) != null' "$T/$1/epochs.json" >/dev/null
}

# scenario A B C ROTATIONS: A owns the room, B is its admin, C a member;
# A changes the key ROTATIONS times while B is away, then B, alone,
# removes C; then A and B meet.
scenario() {
	local a=$1 b=$2 c=$3 rotations=$4 cid i
	papo "$a" new --name "$a" >/dev/null
	start "$a"
	join "$b" "$(invite "$a")"
	start "$b"
	join "$c" "$(invite "$a")"
	start "$c"
	check "$a sees $b online" until_true 20 online "$a" "$b"
	check "$a sees $c online" until_true 20 online "$a" "$c"
	check "$b sees $c online" until_true 20 online "$b" "$c"
	papo "$a" admin "$b" >/dev/null
	check "$b is an admin" until_true 10 bash -c \
		"curl -s '${URL[$b]}/api/status' | jq -e '.me.role == \"admin\"' >/dev/null"
	cid=$(id_of "$c")

	# Apart: b away while a changes the key; then a and c away while b,
	# alone, removes c.
	stop "$b"
	for i in $(seq "$rotations"); do
		expect 0 "$a rotates ($i)" -- papo "$a" rotate
	done
	check "$c takes $a's epoch $rotations" until_true 15 \
		bash -c "[ \"\$(curl -s '${URL[$c]}/api/status' | jq .epoch)\" = $rotations ]"
	says "$a" "$a while apart"
	stop "$a"
	stop "$c"
	start "$b"
	expect 0 "$b, alone, removes $c" -- papo "$b" remove "$c"
	has "$T/out" "^$c was removed from the room; the room's key changed \(epoch 1\)" \
		"$b's change is epoch 1"
	says "$b" "$b while apart"

	# Together again.
	start "$a"
	check "$a and $b meet" until_true 30 online "$a" "$b"
	check "$a learns that $b removed $c" until_true 30 removed_at "$a" "$c"
	check "$a and $b end on one epoch" until_true 30 same_epoch "$a" "$b"
	check "$c was given no key $a holds last" until_true 30 bash -c \
		"! jq -e --arg id '$cid' '.epochs | max_by(.n) | .frame | fromjson | [.keys[].id] | index(\$id) != null' '$T/$a/epochs.json' >/dev/null"
	check "nor one $b holds last" until_true 30 bash -c \
		"! jq -e --arg id '$cid' '.epochs | max_by(.n) | .frame | fromjson | [.keys[].id] | index(\$id) != null' '$T/$b/epochs.json' >/dev/null"
	check "they hold the same newest key" until_true 30 bash -c \
		"[ \"\$(jq -r '.epochs | max_by(.n) | .secret' '$T/$a/epochs.json')\" = \"\$(jq -r '.epochs | max_by(.n) | .secret' '$T/$b/epochs.json')\" ]"
	check "one of them says two changes were made apart" bash -c \
		"grep -q 'two changes of the room.s key were made apart (epoch 1' '$T/$a.err' '$T/$b.err'"
	# What each side said under its own key comes again through sync.
	check "$b gets what $a said while apart" until_true 30 has_text "$b" "$a while apart"
	check "$a gets what $b said while apart" until_true 30 has_text "$a" "$b while apart"
	says "$a" "$a after meeting $b"
	check "$b reads $a's message" until_true 20 has_text "$b" "$a after meeting $b"
	says "$b" "$b after meeting $a"
	check "$a reads $b's message" until_true 20 has_text "$a" "$b after meeting $a"
	expect 0 "papo history on $a" -- papo "$a" history -n 100
	has "$T/out" " -- $a rotated the room key \(epoch 1\)$" "$a's history has its rotation"
	has "$T/out" " -- $b removed $c; the room key changed \(epoch 1\)$" \
		"$a's history has $b's removal"

	# c comes back: refused by both; what it says is stored by no one.
	start "$c"
	check "$a refuses $c" until_true 30 grep -q "refused $c: removed from the room by $b" "$T/$a.err"
	check "$c is told it was removed" until_true 30 \
		grep -q "this member was removed from the room by" "$T/$c.err"
	papo "$c" say "$c let back in?" >/dev/null 2>&1
	says "$a" "$a after $c came back"
	check "$b has $a's last message" until_true 20 has_text "$b" "$a after $c came back"
	sleep 1   # time tested: nothing more comes within 1 s
	check "$a never stored $c's words" bash -c "! grep -q 'let back in' '$T/$a/log.jsonl'"
	check "$b never stored $c's words" bash -c "! grep -q 'let back in' '$T/$b/log.jsonl'"
	check "$c never got $a's message" bash -c "! grep -q '$a after $c came back' '$T/$c/log.jsonl'"
	stop "$c"
	# Kept across a restart: the removal and the key.
	local before
	before=$(epoch_of "$a")
	stop "$a"
	start "$a"
	check "$a still lists $c removed after a restart" removed_at "$a" "$c"
	check "$a keeps its epoch ($before) across a restart" test "$(epoch_of "$a")" = "$before"
	check "$a and $b meet again" until_true 30 online "$a" "$b"
	says "$b" "$b after $a's restart"
	check "$a reads it" until_true 20 has_text "$a" "$b after $a's restart"
	stop "$a"
	stop "$b"
}

scenario ana bo cy 1
scenario dan eve fay 2

stop_all
finish
