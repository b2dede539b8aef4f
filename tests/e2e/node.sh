#!/usr/bin/env bash
# node.sh: members reaching each other over QUIC, as users see it through
# `papo serve`, `papo say` and the HTTP API.  Usage: node.sh PATH_TO_PAPO.
PAPO=${1:?usage: node.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"

# A room of ana and bo: the invite joins, a message is delivered (bo's
# ack reaches ana), and it is in bo's history.
PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
join bo "$(invite ana)"
start bo
check "ana sees bo online" until_true 15 online ana bo
check "bo sees ana online" until_true 15 online bo ana
out=$(papo ana say "hello bo" --json)
check "send to bo is delivered: $out" test "$(jq -r .state <<<"$out")" = delivered
check "delivered to bo" test "$(jq -r '.delivered_to[0]' <<<"$out")" = bo
id1=$(jq -r .id <<<"$out")
check "bo has the message" until_true 5 has_text bo "hello bo"
check "bo sees who wrote it" test "$(api bo /api/history | jq -r --arg id "$id1" \
	'.messages[] | select(.id == $id) | .from')" = ana
text=$(papo ana say "human form" 2>&1)
check "say prints the id and the state: $text" grep -qE '^[a-z2-7]{10} delivered to bo' <<<"$text"

# cy joins through bo's invite only, and still reaches ana (peer exchange).
join cy "$(invite bo)"
start cy
cy_id=$(api cy /api/status | jq -r .me.id)
check "cy sees ana, whom it was never told about" until_true 20 online cy ana
check "ana sees cy" until_true 20 online ana cy
out=$(papo ana say "to everyone" --json)
check "delivered to bo and cy: $out" test "$(jq '.delivered_to | length' <<<"$out")" = 2
check "cy has ana's message" until_true 5 has_text cy "to everyone"
check "cy got what was said before it came (sync)" until_true 5 has_text cy "hello bo"

# Addressed (--public: the room reads it) and reply: to and reply_to
# arrive intact on every member.  Private messages: private.sh.
out=$(papo bo say "just for cy" --to cy --public --reply-to "$id1" --json)
check "directed send delivered to cy: $out" test "$(jq -r .state <<<"$out")" = delivered
id2=$(jq -r .id <<<"$out")
for m in ana bo cy; do
	check "$m has the directed message" until_true 5 has_text $m "just for cy"
	got=$(api $m /api/history | jq -c --arg id "$id2" \
		'.messages[] | select(.id == $id) | [.from, .to, .reply_to]')
	check "$m: from, to and reply_to intact: $got" test "$got" = "[\"bo\",\"cy\",\"$id1\"]"
done
out=$(papo ana say "x" --to nobody 2>&1)
check "an unknown addressee is refused with the members: $out" grep -q 'bo' <<<"$out"

# The log line bo stored is ana's own, signature included, byte for byte.
sig_a=$(grep -F "{\"t\":\"msg\",\"id\":\"$id1\"" "$T/ana/log.jsonl" | jq -r .sig)
sig_c=$(grep -F "{\"t\":\"msg\",\"id\":\"$id1\"" "$T/cy/log.jsonl" | jq -r .sig)
check "cy stored ana's signature" test -n "$sig_a" -a "$sig_a" = "$sig_c"

# cy stops; ana sends 20; cy comes back and has all 20, once each, in order.
stop cy
check "bye makes cy offline at once" until_true 2 offline ana cy
for i in $(seq 1 20); do papo ana say "while away $i" --json >/dev/null; done
start cy
check "cy back online" until_true 20 online ana cy
away_count() { [ "$(texts cy | grep -c '^while away')" -eq 20 ]; }
check "cy has all 20" until_true 15 away_count
got=$(texts cy | grep '^while away' | tr '\n' ',')
want=$(for i in $(seq 1 20); do printf 'while away %s,' $i; done)
check "in order, once each" test "$got" = "$want"
outbox_empty() { [ "$(api "$1" /api/status | jq .outbox)" = 0 ]; }
check "ana's outbox empties" until_true 10 outbox_empty ana

# kill -9 of ana right after a send that was still queued: once ana is
# back, the message is delivered, once.
stop bo
stop cy
out=$(papo ana say "kept through a crash" --json)
check "queued with nobody online: $out" test "$(jq -r .state <<<"$out")" = queued
crash ana
start bo
start ana
check "bo gets the queued message" until_true 20 has_text bo "kept through a crash"
check "once" test "$(texts bo | grep -cxF 'kept through a crash')" = 1
check "ana's outbox empties after the crash" until_true 20 outbox_empty ana

# A member coming back on another port is found again.
QPORT[bo]=0
stop bo
start bo
check "bo on a new port is online again" until_true 20 online ana bo
out=$(papo ana say "after the move" --json)
check "and reachable: $out" test "$(jq -r .state <<<"$out")" = delivered

# kill -9: offline within 45 s (no bye).
crash bo
check "a killed member is offline within 45 s" until_true 45 offline ana bo

# Someone with another room's secret cannot read or inject, and is cut
# off; a peer whose key is not the pinned one is refused.
PAPO_HOME=$T/eve "$PAPO" new --name eve >/dev/null
ana_id=$(api ana /api/status | jq -r .me.id)
jq --arg id "$ana_id" --arg a "127.0.0.1:${QPORT[ana]}" \
	'.inviter = $id | .bootstrap = [$a]' "$T/eve/room.json" >"$T/eve.json" &&
	cp "$T/eve.json" "$T/eve/room.json"
start eve
papo eve say "let me in" --json >/dev/null 2>&1
until_ok 15 "ana drops eve's frames" grep -q "dropped a frame" "$T/ana.err"
sleep 1   # time tested: eve's message, sent after its first frame, gets nowhere
check "ana does not list eve" bash -c "! curl -s '${URL[ana]}/api/status' | grep -q eve"
check "ana never stored eve's words" bash -c "! grep -q 'let me in' '$T/ana/log.jsonl'"
check "eve sees nobody online" test "$(api eve /api/status | jq '[.members[] | select(.online)] | length')" = 0
stop eve

join mal "$(invite ana)"
# (cy's id as cy itself said it: ana's peers.json may list cy once per
# address it was seen at, or not yet.)
jq --arg id "$cy_id" '.inviter = $id' "$T/mal/room.json" >"$T/mal.json" && cp "$T/mal.json" "$T/mal/room.json"
start mal
until_ok 15 "a peer presenting another key than the pinned one is refused" \
	grep -q "refused a peer presenting key" "$T/mal.err"
check "mal is not connected to ana" bash -c "! curl -s '${URL[ana]}/api/status' | jq -e '.members[] | select(.name == \"mal\")' >/dev/null"
stop mal
stop ana

# IPv6: a room over [::1], the second member on a dual-stack socket.
if grep -q '^00000000000000000000000000000001 ' /proc/net/if_inet6 2>/dev/null; then
	PAPO_HOME=$T/six "$PAPO" new --name six >/dev/null
	QPORT[six]=0
	PAPO_HOME=$T/six "$PAPO" serve --http 127.0.0.1:0 --listen '[::1]:0' \
		>>"$T/six.out" 2>>"$T/six.err" </dev/null &
	echo $! >"$T/six.pid"
	check "six started on [::1]" until_true 20 test -s "$T/six/serve.json"
	URL[six]=$(jq -r .http "$T/six/serve.json")
	check "its invite carries [::1]" grep -q '^\[::1\]:' <<<"$(jq -r .quic "$T/six/serve.json")"
	join sev "$(invite six)"
	PAPO_HOME=$T/sev "$PAPO" serve --http 127.0.0.1:0 --listen '[::]:0' \
		>>"$T/sev.out" 2>>"$T/sev.err" </dev/null &
	echo $! >"$T/sev.pid"
	check "sev started dual-stack" until_true 20 test -s "$T/sev/serve.json"
	URL[sev]=$(jq -r .http "$T/sev/serve.json")
	check "they meet over IPv6" until_true 15 online six sev
	out=$(papo six say "over IPv6" --json)
	check "delivered over IPv6: $out" test "$(jq -r .state <<<"$out")" = delivered
	stop sev
	stop six
else
	echo "skipped: IPv6 test (this machine has no ::1 loopback address)"
fi

finish
