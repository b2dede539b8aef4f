#!/usr/bin/env bash
# rooms.sh: one daemon, many rooms (docs/ARCHITECTURE.md, "Rooms"), as
# users see them: a room made and one joined beside the first, while the
# daemon runs and while it is stopped; one UDP port for all; a message
# goes to its room only, its members only; the routes without a room
# act on the default (the first room, kept when a second comes), the
# others name theirs (--room, /api/rooms/ROOM/..., ?room=); /api/events
# follows the default room, or the one named, or every one ("*"); clear
# errors for a room that names none, a room joined twice, an unknown
# room to leave; leaving says bye and keeps the files aside, and the
# others go on; the rooms come back after a restart; a room's invite;
# a home whose first room was left, and one with no default, start.
# Usage: rooms.sh PATH_TO_PAPO.
PAPO=${1:?usage: rooms.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"

# ana makes "alpha"; bo joins it.
papo ana new --name ana --room alpha >/dev/null
start ana
join bo "$(invite ana)"
start bo
check "bo sees ana in alpha" until_true 20 online bo ana

# While ana's daemon runs, it makes a second room, "beta", at once.
expect 0 "papo new --room beta beside alpha" -- papo ana new --name ana2 --room beta
has "$T/out" "new room beta created" "new says the room was added"
BETA=$(grep '^papo1' "$T/out" | head -1)
check "the beta invite is printed" test -n "$BETA"
check "ana lists two rooms" test "$(rooms_json ana | jq '.rooms | length')" = 2
check "alpha stays the default" test "$(rooms_json ana | jq -r '.rooms[] | select(.default) | .name')" = alpha
check "beta's folder is home/rooms/ID" test -s "$T/ana/rooms/$(room_id ana beta)/room.json"
check "alpha's files stay where they were" test -s "$T/ana/room.json"

# cy joins beta only; dan joins beta while its daemon is stopped after
# being in its own room.
join cy "$BETA"
start cy
check "cy sees ana (ana2) in beta" until_true 20 online cy ana2
papo dan new --name dan --room delta >/dev/null
expect 0 "dan joins beta while stopped" -- papo dan join "$BETA" --name dan
has "$T/out" "starts with 'papo serve'" "join says when it starts"
start dan
check "dan is in two rooms" test "$(rooms_json dan | jq '.rooms | length')" = 2
check "dan's first room (delta) is the default" test "$(rooms_json dan | jq -r '.rooms[] | select(.default) | .name')" = delta
check "dan sees ana2 in beta" until_true 20 online_in dan beta ana2

# One UDP port for every room.
check "ana's rooms share one QUIC address" test \
	"$(api ana /api/rooms/alpha/status | jq -r .quic)" = "$(api ana /api/rooms/beta/status | jq -r .quic)"

# A message goes to its room, and to its members only.
expect 0 "ana says in beta" -- papo ana say "hello beta" --room beta
expect 0 "ana says in alpha (the default)" -- papo ana say "hello alpha"
check "cy has the beta message" until_true 20 has_text cy "hello beta"
check "dan has it in beta" until_true 20 has_in dan beta "hello beta"
check "bo has the alpha message" until_true 20 has_text bo "hello alpha"
sleep 1   # time tested: nothing more comes within 1 s
check "bo never got the beta message" bash -c "! curl -s '${URL[bo]}/api/history' | grep -q 'hello beta'"
check "cy never got the alpha message" bash -c "! curl -s '${URL[cy]}/api/history' | grep -q 'hello alpha'"
check "ana's alpha history lacks beta's message" bash -c "! curl -s '${URL[ana]}/api/history' | grep -q 'hello beta'"
check "ana's beta history has it" has_in ana beta "hello beta"
check "the same by ?room=" bash -c "curl -s '${URL[ana]}/api/history?room=beta' | grep -q 'hello beta'"
# The answer and the event say which room.
code=$(post cy /api/send '{"text":"from cy"}')
check "cy's send (its only room) is 200 (got $code)" test "$code" = 200
check "ana has cy's words in beta" until_true 20 has_in ana beta "from cy"

# Errors: a room that names none, two rooms and no default, joined twice,
# leaving an unknown room.
expect 1 "say in no such room" -- papo ana say x --room nosuch
has "$T/err" "no room named 'nosuch'; the rooms are alpha .*, beta" "the error lists the rooms"
code=$(post ana /api/rooms/nosuch/send '{"text":"x"}')
check "POST /api/rooms/nosuch/send is 404 (got $code)" test "$code" = 404
expect 1 "dan joins beta twice" -- papo dan join "$BETA" --name again
has "$T/err" "already in room beta" "joining twice says so"
check "dan still has two rooms" test "$(rooms_json dan | jq '.rooms | length')" = 2
expect 1 "leave an unknown room" -- papo ana leave nosuch
has "$T/err" "no room named 'nosuch'" "leaving an unknown room says so"
code=$(post ana /api/rooms '{"invite":"papo1nonsense","name":"x"}')
check "a bad invite is 400 (got $code)" test "$code" = 400
code=$(post ana /api/rooms '{"name":"x","bogus":1}')
check "an unknown field is 400 (got $code)" test "$code" = 400
# dan has two rooms: set its default, then the routes without a room use it.
expect 0 "dan sets beta as its default" -- papo dan rooms default beta
check "dan's default is beta" test "$(rooms_json dan | jq -r '.rooms[] | select(.default) | .name')" = beta
expect 0 "dan says in the default (beta)" -- papo dan say "dan in beta"
check "cy has dan's words" until_true 20 has_text cy "dan in beta"

# /api/events: the default room's, or the one named, or every room's.
curl -sN --max-time 8 "${URL[ana]}/api/events" >"$T/ev_default" 2>/dev/null &
p1=$!
curl -sN --max-time 8 "${URL[ana]}/api/rooms/beta/events" >"$T/ev_beta" 2>/dev/null &
p2=$!
curl -sN --max-time 8 "${URL[ana]}/api/events?room=*" >"$T/ev_all" 2>/dev/null &
p3=$!
streams_open() { grep -q '^retry:' "$T/ev_default" && grep -q '^retry:' "$T/ev_beta" && grep -q '^retry:' "$T/ev_all"; }
until_ok 5 "the three event streams are open" streams_open
papo bo say "bo in alpha" >/dev/null
papo cy say "cy in beta" >/dev/null
wait $p1 $p2 $p3
check "the default stream has alpha's message" grep -q 'bo in alpha' "$T/ev_default"
check "and not beta's" bash -c "! grep -q 'cy in beta' '$T/ev_default'"
check "the beta stream has beta's" grep -q 'cy in beta' "$T/ev_beta"
check "and not alpha's" bash -c "! grep -q 'bo in alpha' '$T/ev_beta'"
check "the every-room stream has both" bash -c "grep -q 'cy in beta' '$T/ev_all' && grep -q 'bo in alpha' '$T/ev_all'"
check "events carry their room's id" grep -q "\"room_id\":\"$(room_id ana beta)\"" "$T/ev_beta"

# The rooms come back after a restart, the default too.
stop ana
start ana
check "ana has two rooms again" test "$(rooms_json ana | jq '.rooms | length')" = 2
check "alpha is still the default" test "$(rooms_json ana | jq -r '.rooms[] | select(.default) | .name')" = alpha
check "ana's beta history survived" has_in ana beta "cy in beta"
check "cy sees ana2 back in beta" until_true 30 online cy ana2

# Leaving beta: a bye to its members, files kept aside; alpha goes on.
beta_id=$(room_id ana beta)
expect 0 "ana leaves beta" -- papo ana leave beta
has "$T/out" "left room beta; its files are kept in $T/ana/old-" "leave says where the files are"
check "ana is in alpha only" test "$(rooms_json ana | jq -r '[.rooms[].name] | join(",")')" = alpha
check "beta's folder is gone from rooms/" test ! -e "$T/ana/rooms/$beta_id"
check "its log is kept aside" bash -c "grep -q 'cy in beta' '$T'/ana/old-*/log.jsonl"
check "cy sees ana2 leave" until_true 20 offline cy ana2
expect 0 "alpha still works" -- papo ana say "alpha goes on"
check "bo has it" until_true 20 has_text bo "alpha goes on"
# dan leaves delta with --delete.
delta_id=$(room_id dan delta)
expect 0 "dan leaves delta, deleting it" -- papo dan leave delta --delete
has "$T/out" "its files are deleted" "leave --delete says so"
check "delta's files are gone" test ! -e "$T/dan/room.json"
expect 0 "dan still says in beta" -- papo dan say "dan stays"
check "cy has it" until_true 20 has_text cy "dan stays"

# A room's invite (papo invite --room), with and without the daemon; a
# home whose first room was left keeps its other rooms at the next start
# (no new room made for it), and with none the default it starts anyway:
# papo invite then asks for --room.
papo fay new --name fay --room f1 >/dev/null
papo fay new --name fay --room f2 >/dev/null
papo fay new --name fay --room f3 >/dev/null
expect 0 "papo invite --room f2, no daemon" -- papo fay invite --room f2
F2=$(head -1 "$T/out")
expect 1 "papo invite --room that names none" -- papo fay invite --room nosuch
has "$T/err" "no room named 'nosuch'; the rooms are" "invite --room says which rooms there are"
join gus "$F2"
check "f2's invite is f2's (the joiner's room is f2)" test "$(jq -r .room "$T/gus/room.json")" = f2
start fay
expect 0 "papo invite --room f3 through the daemon" -- papo fay invite --room f3
join hal "$(head -1 "$T/out")"
check "f3's invite is f3's" test "$(jq -r .room "$T/hal/room.json")" = f3
inv=$(api fay /api/rooms/f2/invite | jq -r .invite)
check "GET /api/rooms/f2/invite answers its invite" test "${inv:0:5}" = papo1
expect 0 "fay leaves f1, her first room" -- papo fay leave f1
stop fay
start fay
check "fay starts again in f2 and f3, and nothing else" test \
	"$(rooms_json fay | jq -r '[.rooms[].name] | sort | join(",")')" = f2,f3
check "no room was made in the home" test ! -e "$T/fay/room.json"
expect 1 "papo invite with no default room" -- papo fay invite
has "$T/err" "none is the default: name one" "invite asks for a room"
expect 0 "papo invite --room f3 still works" -- papo fay invite --room f3
stop fay

# 65 rooms: the 65th is refused with a clear error, nothing changed.
papo eve new --name eve >/dev/null
for i in $(seq 2 64); do papo eve new --name eve --room "r$i" >/dev/null || fail "room $i of 64"; done
expect 1 "a 65th room is refused" -- papo eve new --name eve --room r65
has "$T/err" "holds 64 rooms, the most" "the 65th says why"
start eve
check "eve's daemon runs 64 rooms" test "$(rooms_json eve | jq '.rooms | length')" = 64
code=$(post eve /api/rooms '{"room":"r65","name":"eve"}')
check "a 65th through the API is 409 (got $code)" test "$code" = 409

stop_all
finish
