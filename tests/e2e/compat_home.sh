#!/usr/bin/env bash
# compat_home.sh: upgrade in place (issue 23).  A home made and used by the
# previous release (tests/compat/PREVIOUS, built by
# tests/compat/build_prev.sh) is taken as is by this tree's papo on its
# first start: the same room, member, owner, admins and key; the whole
# history (ids, authors, replies, texts, order); what its agent had not
# been given yet; the invite the old binary printed still joins a new
# member; and a member still on the old binary goes on talking with it.
# Usage: compat_home.sh PATH_TO_PAPO PREVDIR (where the previous release
# is built; PAPO_OLD=PATH uses that binary instead).
PAPO_NEW=${1:?usage: compat_home.sh PATH_TO_PAPO PREVDIR}
PREVDIR=${2:?usage: compat_home.sh PATH_TO_PAPO PREVDIR}
. "$(dirname "$0")/compat_lib.sh"

ROOM="salle d'été"
epoch_is() { [ "$(api "$1" /api/status | jq -r .epoch)" = "$2" ]; }
admin_is() { api "$1" /api/status | jq -e --arg b "$2" '[.admins[].name] | index($b)' >/dev/null; }

# The previous release: ana makes the room, bo joins by its invite; they
# talk (a reply, a text of two lines, a directed one), ana's agent reads
# bo's first two, ana makes bo an admin, bo changes the room's key, and
# they talk under the new key.
as_old ana bo
expect 0 "the old papo new" -- papo ana new --name ana --about "made by the previous release" --room "$ROOM"
up ana || exit 1
enter bo "$(invite ana)"
up bo || exit 1
check "old ana sees old bo online" until_true 20 online ana bo
check "old bo sees old ana online" until_true 20 online bo ana
says ana "hello bo"; id1=$id
says bo "hi ana" --reply-to "$id1"
printf 'two\nlines\n' | papo ana say - >/dev/null
says bo "just for ana: naïve café ☕" --to ana
check "old bo has ana's messages" until_true 15 has_all bo "hello bo" "just for ana: naïve café ☕"
got=$(agent_wait ana | tr '\n' '|')
check "old ana's agent is given bo's two messages: $got" \
	test "$got" = "hi ana|just for ana: naïve café ☕|"
expect 0 "old ana makes bo an admin" -- papo ana admin bo
check "old bo learns it is an admin" until_true 15 admin_is bo bo
expect 0 "old bo (an admin) changes the room's key" -- papo bo rotate
check "old ana takes epoch 1" until_true 15 epoch_is ana 1
says ana "under the new key"; id5=$id
says bo "bo under the new key" --reply-to "$id5"; id6=$id
ALL=("hello bo" "hi ana" $'two\nlines' "just for ana: naïve café ☕"
	"under the new key" "bo under the new key")
check "old ana has all six" until_true 15 has_all ana "${ALL[@]}"
check "old bo has all six" until_true 15 has_all bo "${ALL[@]}"
# What a user of the old release sees, to compare after the upgrade; the
# invite its CLI prints (after the key change: it carries epoch 1).
shown ana >"$T/before.json"
check "six messages shown before the upgrade" test "$(jq length "$T/before.json")" = 6
papo ana status >"$T/status.old"
invite_old=$(papo ana invite)
check "the old papo invite prints an invite: $invite_old" grep -q '^papo1' <<<"$invite_old"
stop ana
stop bo

# The upgrade: ana's home, untouched, under this tree's papo.
as_new ana
mv "$T/ana.err" "$T/ana.old.err"
up ana || exit 1
expect 0 "the new papo status on the old home" -- papo ana status
cp "$T/out" "$T/status.new"
for l in room me owner admins "key epoch"; do
	was=$(grep -m1 "^$l: " "$T/status.old")
	now=$(grep -m1 "^$l: " "$T/status.new")
	check "status keeps '$was' (new: '$now')" test -n "$was" -a "$was" = "$now"
done
has "$T/status.new" "^room: $ROOM, fingerprint" "the room's name"
has "$T/status.new" "^me: ana \([a-z2-7]{52}\), made by the previous release" "the member's name and about"
has "$T/status.new" "^messages: 6" "the count of messages"
shown ana >"$T/after.json"
check "the whole history, same ids, authors, replies, texts and order: $(diff "$T/before.json" "$T/after.json" | head -c 400)" \
	cmp -s "$T/before.json" "$T/after.json"
expect 0 "the new papo history on the old home" -- papo ana history -n 500
for t in "hello bo" "hi ana" "just for ana: naïve café ☕" "bo under the new key"; do
	check "papo history shows '$t'" grep -qF -- ": $t" "$T/out"
done
has "$T/out" ": two$" "papo history shows the first of two lines"
has "$T/out" "^    lines$" "and the second, indented"
got=$(agent_wait ana | tr '\n' '|')
check "ana's agent is given only what it had not been given: $got" \
	test "$got" = "bo under the new key|"
check "ana still holds epoch 1" epoch_is ana 1

# bo, still on the previous release, and ana, upgraded, go on talking.
up bo || exit 1
check "new ana sees old bo online" until_true 20 online ana bo
check "old bo sees new ana online" until_true 20 online bo ana
follow ana
follow bo
sleep 0.5   # nothing shows a tail's stream open (bo's is the old release's)
says ana "after the upgrade" --reply-to "$id6"; id7=$id
check "old bo gets new ana's message" until_true 15 has_text bo "after the upgrade"
check "with its reply_to" test "$(api bo /api/history | jq -r --arg id "$id7" \
	'.messages[] | select(.id == $id) | .reply_to')" = "$id6"
check "new ana sees old bo's delivery receipt" until_true 15 receipt ana "$id7" bo delivered
says bo "old bo to new ana" --to ana; id8=$id
check "new ana gets old bo's message" until_true 15 has_text ana "old bo to new ana"
check "old bo sees new ana's delivery receipt" until_true 15 receipt bo "$id8" ana delivered
got=$(agent_wait ana | tr '\n' '|')
check "ana's agent is given it: $got" test "$got" = "old bo to new ana|"
check "old bo sees new ana's read receipt" until_true 15 receipt bo "$id8" ana read

# The invite the old binary printed lets a member of this tree's papo in.
as_new cy
expect 0 "new cy joins by the invite the old binary printed" -- enter cy "$invite_old"
up cy || exit 1
check "new ana sees new cy online" until_true 20 online ana cy
check "old bo sees new cy online" until_true 20 online bo cy
check "new cy sees old bo online" until_true 20 online cy bo
check "cy is at epoch 1" until_true 15 epoch_is cy 1
check "cy names ana the owner" until_true 15 bash -c \
	"curl -s '${URL[cy]}/api/status' | jq -e '.owner.name == \"ana\"' >/dev/null"
check "cy gets the history from before the upgrade" until_true 20 has_all cy "${ALL[@]}" \
	"after the upgrade" "old bo to new ana"
says cy "hello from cy"
check "new ana gets cy's message" until_true 15 has_text ana "hello from cy"
check "old bo gets cy's message" until_true 15 has_text bo "hello from cy"
says bo "welcome cy" --to cy
check "new cy gets old bo's message" until_true 15 has_text cy "welcome cy"
shown ana >"$T/ana.json"
shown cy >"$T/cy.json"
check "cy's history is ana's" cmp -s "$T/ana.json" "$T/cy.json"
check "ana's history is ten messages" test "$(jq length "$T/ana.json")" = 10

unfollow
c=$(complaints "$T/ana.err")
check "new ana logged no warning or error on the old home: $c" test -z "$c"
c=$(complaints "$T/cy.err")
check "new cy logged no warning or error: $c" test -z "$c"
stop_all
finish
