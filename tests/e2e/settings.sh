#!/usr/bin/env bash
# settings.sh: papo serve's settings table (server/cli/settings.c) as a
# person meets it: 'papo serve --help' lists every setting, README.md's
# list of the environment names exactly those, and a bad value of each
# kind stops papo serve before anything starts (no home made, nothing
# bound), with one line naming the setting and what it takes.
# Usage: settings.sh PATH_TO_PAPO.  Prints "N passed, N failed".
set -u
PAPO=${1:?usage: settings.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
README=$(dirname "$0")/../../README.md
unset PAPO_HOME PAPO_TLS PAPO_LOG PAPO_KEEP PAPO_DAMP PAPO_MCP_IDLE \
	PAPO_TURN PAPO_TURN_USER PAPO_TURN_PASS PAPO_TURN_SECRET PAPO_PROTOCOL

not_in() { ! grep -qE -- "$2" "$1"; }

# The help's settings: each one's variable, once.
expect 0 "serve --help" -- "$PAPO" serve --help
sed -n '/^settings/,$p' "$T/out" | grep -oE '^  PAPO_[A-Z_]+' | tr -d ' ' \
	>"$T/help.names"
n=$(wc -l <"$T/help.names")
[ "$n" -ge 25 ] && ok || fail "serve --help lists $n settings, wanted 25 or more"
check "serve --help names each setting once" \
	test -z "$(sort "$T/help.names" | uniq -d)"
for s in PAPO_HTTP PAPO_LISTEN PAPO_TOKEN PAPO_KEEP PAPO_RATE PAPO_OAUTH; do
	check "serve --help lists $s" grep -qx "$s" "$T/help.names"
done
has "$T/out" '^  PAPO_HTTP, --http: ADDR:PORT \(default 127\.0\.0\.1:7777\)$' \
	"a setting's line: variable, flag, what it takes, default"
check "test-only settings stay out of the help" \
	not_in "$T/out" 'PAPO_TEST_NO_RATE|PAPO_PORTMAP_PRIVATE|PAPO_OAUTH_CODE_TTL'

# README.md's list of the environment ("Environment: ..." up to the
# paragraph's end) names exactly the help's settings.
awk '/Environment:/ { on = 1 } on && /^$/ { exit } on' "$README" |
	sed 's/.*Environment://' | grep -oE '`PAPO_[A-Z_]+' | tr -d '`' |
	sort -u >"$T/readme.names"
sort -u "$T/help.names" >"$T/help.sorted"
if cmp -s "$T/help.sorted" "$T/readme.names"; then ok; else
	fail "README.md's environment is not papo serve --help's settings" \
		"(< help, > README): $(diff "$T/help.sorted" "$T/readme.names")"
fi

# refused DESCRIPTION ERROR_REGEX ENV... -- [FLAGS...]: papo serve in a
# new home with ENV (and FLAGS) exits 1 with ERROR_REGEX as its one line
# of stderr, and made nothing.
k=0
refused() {
	local what=$1 want=$2 env=() ; shift 2
	while [ "$1" != -- ]; do env+=("$1"); shift; done; shift
	k=$((k + 1))
	local h=$T/h$k
	expect 1 "$what: refused" -- env "${env[@]}" PAPO_HOME="$h" \
		"$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 "$@"
	has "$T/err" "^papo: $want" "$what: the reason"
	lines "$T/err" 1 "$what: one line"
	check "$what: no home made" test ! -e "$h"
}
refused "a switch" "PAPO_LAN must be on or off, not 'maybe'$" PAPO_LAN=maybe --
refused "another switch" "PAPO_OAUTH must be on or off, not 'yes'$" PAPO_OAUTH=yes --
refused "a test switch" "PAPO_PORTMAP_PRIVATE must be 0 or 1, not 'true'$" \
	PAPO_PORTMAP_PRIVATE=true --
refused "a choice" "--tls \(PAPO_TLS\) must be 'self' or 'off', not 'yes'; for a certificate of your own, set PAPO_TLS_CERT and PAPO_TLS_KEY$" \
	PAPO_TLS=yes --
refused "a choice's flag wins" "--tls \(PAPO_TLS\) must be 'self' or 'off', not 'bogus'" \
	PAPO_TLS=self -- --tls bogus
# PAPO_LOG is every command's, read first, and a usage error (exit 2).
expect 2 "a bad log level: refused" -- env PAPO_LOG=loud PAPO_HOME="$T/log" \
	"$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0
has "$T/err" "^papo: PAPO_LOG must be 'error', 'warn', 'info' or 'debug', not 'loud'$" \
	"a bad log level: the reason"
check "a bad log level: no home made" test ! -e "$T/log"
refused "a number over its range" "PAPO_PROTOCOL must be a whole number from 1 to 3, not '4'$" \
	PAPO_PROTOCOL=4 --
refused "a number with letters" "PAPO_PROTOCOL must be a whole number from 1 to 3, not '2x'$" \
	PAPO_PROTOCOL=2x --
refused "a duration of 0" "PAPO_MCP_IDLE must be a time such as 1800, 90s, 30m or 2h \(at least 1 s, at most 30 days\), not '0'$" \
	PAPO_MCP_IDLE=0 --
refused "a duration over 30 days" "PAPO_MCP_IDLE must be a time .*, not '721h'$" \
	PAPO_MCP_IDLE=721h --
refused "a duration in another unit" "PAPO_OAUTH_CODE_TTL must be a time .*, not '2d'$" \
	PAPO_OAUTH_CODE_TTL=2d --
refused "a rate" "PAPO_RATE 'fast' must start with a count" PAPO_RATE=fast --
refused "a damping" "PAPO_DAMP '12' " PAPO_DAMP=12 --
refused "a retention" "PAPO_KEEP must be a count of messages .*, not 'forever'$" \
	PAPO_KEEP=forever --
refused "TURN credentials without a server" "PAPO_TURN_USER, PAPO_TURN_PASS or PAPO_TURN_SECRET is set without a TURN server" \
	PAPO_TURN_USER=u PAPO_TURN_PASS=p --
refused "a TURN server without credentials" "the TURN server turn:127.0.0.1 needs PAPO_TURN_USER and PAPO_TURN_PASS, or PAPO_TURN_SECRET$" \
	-- --turn turn:127.0.0.1
refused "two ways to HTTPS" "PAPO_TLS=self and PAPO_TLS_CERT/PAPO_TLS_KEY exclude each other" \
	PAPO_TLS=self PAPO_TLS_CERT=/nonexistent --
# An empty variable is as one unset: the error is the next setting's.
refused "an empty variable is unset" "PAPO_LAN must be on or off" \
	PAPO_TLS= PAPO_LAN=maybe --

finish
