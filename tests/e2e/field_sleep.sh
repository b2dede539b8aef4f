#!/usr/bin/env bash
# field_sleep.sh: issue 21's case 3, a sleeping laptop, in the lab of
# lab.sh: rui public (203.0.113.10), ana behind the cone NAT nata, bo
# behind the cone NAT natb, every daemon with PAPO_LAN=off
# PAPO_PORTMAP=off.  ana's daemon is stopped (kill -STOP: its lid closed)
# for at least 15 s, while rui and bo keep sending; then it goes on (kill
# -CONT).
#
# What a user must see:
#  - bo and rui show ana offline within 10 s of the STOP (the time is
#    printed, measured up to 40 s);
#  - after the CONT, ana shows rui and bo online, and bo and rui show ana
#    online, within 5 s;
#  - every message rui and bo sent while ana slept is in ana's history
#    within 5 s of the CONT, once; and ana's own messages go out again.
#
# Needs root, iproute2 and nftables.  Without them it prints
# "SKIPPED: reason" and exits 77.
# Usage: field_sleep.sh PATH_TO_PAPO
PAPO=${1:?usage: field_sleep.sh PATH_TO_PAPO}
. "$(dirname "$0")/field_lib.sh"

field_lab
field_room
eventually 30 rui "$(m ana).online" "rui sees ana online"
# A laptop's lid closes once it has been in the room a while: ana and bo
# have punched their path (a punch may take its second attempt, 5 s on).
eventually 30 bo "$(m ana).path | $DIRECT" "bo has a direct path to ana"
eventually 10 ana "$(m bo).path | $DIRECT" "ana has a direct path to bo"
pid=$(cat "$T/ana.pid")
kill -STOP "$pid"
S=$(ms)
say "ana's daemon stopped (kill -STOP $pid)"
declare -A gone=()
k=0
while [ $(( $(ms) - S )) -lt 40000 ]; do
	for n in bo rui; do
		[ -n "${gone[$n]:-}" ] || ! status_is "$n" "$(m ana).online == false" ||
			gone[$n]=$(ms)
	done
	if [ $(( ($(ms) - S) / 3000 )) -ge "$k" ]; then
		k=$((k + 1))
		send_bg bo "bo while ana sleeps $k"
		send_bg rui "rui while ana sleeps $k"
	fi
	[ -n "${gone[bo]:-}" ] && [ -n "${gone[rui]:-}" ] &&
		[ $(( $(ms) - S )) -ge 15000 ] && break
	sleep 0.2
done
for n in bo rui; do
	status_is "$n" . || true
	within "$n shows ana offline after the STOP:" "$S" "${gone[$n]:-}" 10 \
		"$n's status: $(shown "$n")"
done

kill -CONT "$pid"
C=$(ms)
say "ana's daemon continued after $(secs "$S" "$C") s"
for x in "ana rui" "ana bo" "bo ana" "rui ana"; do
	read -r a b <<<"$x"
	t=$(until_true 15 status_is "$a" "$(m "$b").online" && ms)
	within "$a shows $b online after the CONT:" "$C" "$t" 5 "$a's status: $(shown "$a")"
done
wait_bg
for n in bo rui; do
	last=$(tail -1 "$T/sent-$n" | cut -d' ' -f2- | sed 's/ [a-z]*$//')
	t=$(arrival 15 ana "$last")
	within "ana has $n's last message of the night ('$last'):" "$C" "$t" 5
	all_once "$n" ana 10
done
t0=$(ms); send ana "ana awake"
t=$(arrival 10 bo "ana awake")
within "ana's first message after the CONT, at bo:" "$t0" "$t" 5 "bo's status: $(status_is bo .; shown bo)"
once bo "ana awake"
stop_all
finish
