#!/usr/bin/env bash
# field_return.sh: issue 21's case 4, a returning introducer, in the lab
# of lab.sh: rui public (203.0.113.10) makes the room; ana behind the cone
# NAT nata, bo behind the cone NAT natb, and the internet router drops
# what nata and natb send each other (lab_block): ana and bo reach each
# other only through rui.  Every daemon with PAPO_LAN=off PAPO_PORTMAP=off.
# rui goes away twice: a clean stop (SIGTERM), down 15 s; then kill -9,
# down at least 5 s (until ana and bo showed each other offline, at most
# 10 s).  ana and bo each send a message while rui is down.
#
# What a user must see, each time:
#  - while rui is down, ana and bo show each other offline within 10 s;
#  - the messages sent while rui was down arrive within 2 s of rui being
#    back (its daemon started again: from when its serve.json appears),
#    each once;
#  - ana and bo show each other online "via rui" within 5 s of rui's
#    start.
# Then ana's daemon sleeps (kill -STOP) while rui stays: bo, which hears
# of ana only through rui, shows it offline within 10 s, and online via
# rui within 5 s of kill -CONT.
#
# Needs root, iproute2 and nftables.  Without them it prints
# "SKIPPED: reason" and exits 77.
# Usage: field_return.sh PATH_TO_PAPO
PAPO=${1:?usage: field_return.sh PATH_TO_PAPO}
. "$(dirname "$0")/field_lib.sh"

field_lab
lab_block nata natb
field_room
eventually 20 ana "$(m bo).path == \"via rui\"" "ana reaches bo via rui"
eventually 20 bo "$(m ana).path == \"via rui\"" "bo reaches ana via rui"
talk ana bo "through rui"

for how in stop crash; do
	D=$(ms)
	case $how in
	stop) stop rui; down=15 ;;
	crash) crash rui; down=5 ;;
	esac
	say "$how: rui down"
	declare -A gone=()
	sent=
	while :; do
		for x in "ana bo" "bo ana"; do
			read -r a b <<<"$x"
			[ -n "${gone[$a]:-}" ] || ! status_is "$a" "$(m "$b").online == false" ||
				gone[$a]=$(ms)
		done
		if [ -z "$sent" ] && [ $(( $(ms) - D )) -ge 1000 ]; then
			send_bg ana "ana while rui is down ($how)"
			send_bg bo "bo while rui is down ($how)"
			sent=1
		fi
		e=$(( $(ms) - D ))
		[ "$e" -ge $(( down * 1000 )) ] &&
			{ [ -n "${gone[ana]:-}" ] && [ -n "${gone[bo]:-}" ] || [ "$e" -ge 10000 ]; } &&
			break
		sleep 0.2
	done
	for x in "ana bo" "bo ana"; do
		read -r a b <<<"$x"
		status_is "$a" . || true
		within "$how: $a shows $b offline while rui is down:" "$D" "${gone[$a]:-}" 10 \
			"$a's status: $(shown "$a")"
	done
	lab_start rui || { finish; exit 1; }
	U=$(ms)
	say "$how: rui back after $(secs "$D" "$U") s"
	crossed "$how: after rui's start, from while it was down," "$U" 2 35 \
		"ana while rui is down ($how)" "bo while rui is down ($how)"
	for x in "ana bo" "bo ana"; do
		read -r a b <<<"$x"
		t=$(until_true 35 status_is "$a" "$(m "$b") | .online and .path == \"via rui\"" && ms)
		[ -n "$t" ] || status_is "$a" . || true
		within "$how: $a shows $b online via rui after rui's start:" "$U" "$t" 5 \
			"$a's status: $(shown "$a")"
	done
	wait_bg
	once bo "ana while rui is down ($how)"
	once ana "bo while rui is down ($how)"
done

# A member reached only through rui falls asleep (kill -STOP) while rui
# stays: bo hears of it only from rui, whose news of ana stops; it
# announces every 3 s, so it shows offline within 10 s (8 s of life shown).
sleep 10     # a few announcement periods: bo has learnt ana's
pid=$(cat "$T/ana.pid")
kill -STOP "$pid"
S=$(ms)
t=$(until_true 40 status_is bo "$(m ana).online == false" && ms)
within "sleep: bo shows ana (through rui only) offline after the STOP:" "$S" "$t" 10 \
	"bo's status: $(status_is bo .; shown bo)"
kill -CONT "$pid"
C=$(ms)
t=$(until_true 15 status_is bo "$(m ana) | .online and .path == \"via rui\"" && ms)
within "sleep: bo shows ana online via rui after the CONT:" "$C" "$t" 5 \
	"bo's status: $(status_is bo .; shown bo)"
stop_all
finish
