#!/usr/bin/env bash
# field_lib.sh: what issue 21's field tests (field_*.sh) share, on top of
# lib.sh and lab.sh, which it sources: the issue's topology, senders that
# keep a record of what they sent, and checks that every message arrived
# once and within a bound.  Source it after setting PAPO (and LAB_IMPAIR
# or LAB_CTFLUSH where a test needs them).
#
#   field_lab [NAT...]          lab_up; rui public at 203.0.113.10; ana
#                               behind nata (cone, 203.0.113.21), bo behind
#                               natb (cone, 203.0.113.22); each further NAT
#                               named is a cone NAT too, at 203.0.113.23...
#   field_room                  rui makes the room and serves, ana and bo
#                               join and serve (every daemon with
#                               PAPO_LAN=off PAPO_PORTMAP=off), and all see
#                               each other online.
#   DIRECT                      the jq test of a path that is a connection
#                               of our own across the NATs: direct or
#                               punched.
#   send NAME TEXT              NAME's /api/send of TEXT; "MS TEXT STATE"
#                               (MS when it was asked) goes to $T/sent-NAME.
#   send_bg NAME TEXT           send, as a background job (a send waits for
#                               its delivery: a timed loop must not);
#                               wait_bg waits for every send_bg.
#   sender NAME                 a background job: send "NAME N" every 0.5 s
#                               until $T/stop exists (field_senders NAME...
#                               starts them, field_stop ends them).
#   arrival SECONDS NAME TEXT   waits up to SECONDS for TEXT in NAME's
#                               history; prints the time (ms) it was seen,
#                               or nothing.
#   crossed WHAT FROM_MS BOUND_S WAIT_S A_TEXT B_TEXT
#                               ana's A_TEXT in bo's history and bo's
#                               B_TEXT in ana's, each within BOUND_S of
#                               FROM_MS (waiting up to WAIT_S for each):
#                               two `within` lines headed WHAT.
#   within WHAT FROM_MS TO_MS BOUND_S
#                               prints "WHAT S s" and checks S <= BOUND_S
#                               times FIELD_SLACK (TO_MS empty: it never
#                               happened).
#
# BOUND_S is the goal (issue 21's: 5 s, 10 s, 20 s).  A test may take
# FIELD_SLACK times it (2 unless set) before it fails: the machine may be
# loaded (CI runs two tests at a time, one of them under ASan), and a
# speed goal is met by the benchmark (tests/bench/field.sh: medians of
# these printed times, on a quiet machine), never by a timed test.  Twice
# the goal still fails what came before (30 s, or never).
#   all_once FROM TO SECONDS    a check: within SECONDS every text in
#                               $T/sent-FROM is in TO's history, and each
#                               exactly once.
#   field_count HOST / heard HOST FROM_IP
#                               counters, in HOST's namespace, of the UDP
#                               packets it receives from each lab address
#                               (table ip fieldcnt); heard prints how many
#                               came from FROM_IP.
#   direct_live A B             A's status claims a direct or punched path
#                               to B, and within the last second A received
#                               packets from B's public address and B from
#                               A's: a path that carries something.
#   public_of HOST              the address HOST's packets come from on the
#                               internet (its NAT's WAN, or its own).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lab.sh"
export PAPO_LAN=off PAPO_PORTMAP=off
unset PAPO_TOKEN PAPO_ADVERTISE PAPO_PROTOCOL PAPO_INVITE PAPO_LISTEN PAPO_HTTP PAPO_TURN
FIELD=$(basename "$0" .sh)
FIELD_SLACK=${FIELD_SLACK:-2}
say() { echo "$FIELD: $*"; }
DIRECT='IN("direct", "punched")'

field_lab() {
	local k=23 n
	lab_up
	lab_public rui 203.0.113.10
	lab_nat nata cone 203.0.113.21
	lab_nat natb cone 203.0.113.22
	for n in "$@"; do
		lab_nat "$n" cone "203.0.113.$k"
		k=$((k + 1))
	done
	lab_host ana nata
	lab_host bo natb
}

field_room() {
	room rui ana bo || { finish; exit 1; }
	eventually 30 ana "[$(m rui), $(m bo) | .online] == [true, true]" \
		"ana sees rui and bo online"
	eventually 30 bo "[$(m rui), $(m ana) | .online] == [true, true]" \
		"bo sees rui and ana online"
}

send() {
	local n=$1 text=$2 t out
	t=$(ms)
	out=$(lab_api "$n" /api/send -H 'Content-Type: application/json' \
		-d "$(jq -cn --arg t "$text" '{text: $t}')" 2>&1)
	echo "$t $text $(jq -r '.state // "error"' <<<"$out" 2>/dev/null || echo error)" >>"$T/sent-$n"
}

send_bg() {
	send "$@" &
	echo $! >>"$T/bg.pids"
}
wait_bg() {
	local p
	[ -e "$T/bg.pids" ] || return 0
	for p in $(cat "$T/bg.pids"); do wait "$p" 2>/dev/null; done
	rm -f "$T/bg.pids"
}

sender() {
	local n=$1 k=0
	while [ ! -e "$T/stop" ]; do
		k=$((k + 1))
		send "$n" "$n $k"
		sleep 0.5
	done
}
field_senders() {
	local n
	rm -f "$T/stop"
	for n in "$@"; do
		sender "$n" &
		echo $! >"$T/sender-$n.pid"
	done
}
field_stop() {
	local p
	touch "$T/stop"
	for p in "$T"/sender-*.pid; do
		[ -e "$p" ] || continue
		wait "$(cat "$p")" 2>/dev/null
		rm -f "$p"
	done
}

arrival() {
	if until_true "$1" history_has "$2" "$3"; then ms; fi
}

within() {
	local what=$1 from=$2 to=$3 bound=$4 limit=$(( $4 * FIELD_SLACK ))
	if [ -z "$to" ]; then
		say "$what: never (bound $limit s, goal $bound s)"
		fail "$what: not within $limit s${5:+; $5}"
		return
	fi
	say "$what $(secs "$from" "$to") s"
	[ $(( to - from )) -le $(( bound * 1000 )) ] ||
		say "$what (over its goal of $bound s)"
	if [ $(( to - from )) -le $(( limit * 1000 )) ]; then ok; else
		fail "$what: $(secs "$from" "$to") s, more than $limit s (goal $bound s)${5:+; $5}"
	fi
}

crossed() {
	local what=$1 from=$2 bound=$3 wait=$4 ta tb
	ta=$(arrival $(( wait * FIELD_SLACK )) bo "$5")
	tb=$(arrival $(( wait * FIELD_SLACK )) ana "$6")
	within "$what ana's message at bo:" "$from" "$ta" "$bound" \
		"bo's status: $(status_is bo .; shown bo)"
	within "$what bo's message at ana:" "$from" "$tb" "$bound" \
		"ana's status: $(status_is ana .; shown ana)"
}

# texts_of NAME: NAME's history texts, one a line (newlines in a text
# made into spaces).
texts_of() {
	lab_papo "$1" history --json -n 500 | jq -r '.messages[].text | gsub("\n"; " ")'
}
# missing FROM TO: the texts FROM sent that TO's history lacks.
missing() {
	texts_of "$2" >"$T/texts-$2"
	cut -d' ' -f2- "$T/sent-$1" | sed 's/ [a-z]*$//' | while read -r t; do
		grep -qxF -- "$t" "$T/texts-$2" || echo "$t"
	done
}
nothing_missing() { [ -z "$(missing "$1" "$2")" ]; }
all_once() {
	local from=$1 to=$2 n miss dup
	n=$(wc -l <"$T/sent-$from")
	until_true "$3" nothing_missing "$from" "$to"
	miss=$(missing "$from" "$to" | head -5 | tr '\n' ',')
	dup=$(cut -d' ' -f2- "$T/sent-$from" | sed 's/ [a-z]*$//' | while read -r t; do
		c=$(grep -cxF -- "$t" "$T/texts-$to")
		[ "$c" -le 1 ] || echo "$t ($c times)"
	done | head -5 | tr '\n' ',')
	say "$from to $to: $n sent ($(awk '{print $NF}' "$T/sent-$from" | sort | uniq -c | tr -s ' \n' ' ')), missing: ${miss:-none}, doubled: ${dup:-none}"
	check "every one of the $n messages $from sent is in $to's history within $3 s (missing: $miss)" test -z "$miss"
	check "each of $from's messages is in $to's history once (more than once: $dup)" test -z "$dup"
}

field_count() {
	local h=$1 ns=${LABNS[$1]} ip
	lab_net ip netns exec "$ns" nft add table ip fieldcnt
	lab_net ip netns exec "$ns" nft add chain ip fieldcnt in \
		'{ type filter hook input priority filter; }'
	for ip in 203.0.113.10 203.0.113.21 203.0.113.22 203.0.113.23 203.0.113.24; do
		lab_net ip netns exec "$ns" nft add rule ip fieldcnt in \
			ip saddr "$ip" meta l4proto udp counter comment "\"$ip\""
	done
}
heard() {
	ip netns exec "${LABNS[$1]}" nft -j list chain ip fieldcnt in | jq -r --arg ip "$2" '
		.nftables[] | .rule? // empty | select(.comment == $ip) |
		.expr[] | .counter? // empty | .packets'
}
public_of() {
	local n=$1
	if [ -n "${LABNATOF[$n]:-}" ]; then echo "${LABIP[${LABNATOF[$n]}]}"; else echo "${LABIP[$n]}"; fi
}
direct_live() {
	local a=$1 b=$2 pa pb a0 b0
	status_is "$a" "$(m "$b").path | $DIRECT" || return 1
	pa=$(public_of "$a") pb=$(public_of "$b")
	a0=$(heard "$a" "$pb") b0=$(heard "$b" "$pa")
	sleep 1
	[ "$(heard "$a" "$pb")" -gt "$a0" ] && [ "$(heard "$b" "$pa")" -gt "$b0" ]
}
# honest A B: A's status claims no direct path to B, or one that carries
# something.
honest() {
	status_is "$1" . || return 1
	! status_is "$1" "$(m "$2").path | $DIRECT" || direct_live "$1" "$2"
}
