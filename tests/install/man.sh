#!/usr/bin/env bash
# man.sh: the man page (dist/papo.1) against the binary it documents.
# Every command `papo --help` lists has its entry under COMMANDS, and
# that entry names every option of the command's usage (`papo COMMAND
# --help`); every setting `papo serve --help` lists is under ENVIRONMENT
# with its flag.  The page has no mandoc warning or error, and man(1)
# renders it.
#   usage: man.sh PATH_TO_PAPO
set -u
PAPO=${1:?usage: man.sh PATH_TO_PAPO}
MAN=$(dirname "$0")/../../dist/papo.1
T=$(mktemp -d /tmp/papo-man.XXXXXX)
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
ok()   { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

# mandoc: no warning, no error (its style notes about the manual
# database of this machine are not the page's).
mandoc -T lint -W warning "$MAN" >"$T/lint" 2>&1
[ $? -eq 0 ] && [ ! -s "$T/lint" ] && ok || fail "mandoc -T lint: $(cat "$T/lint")"
LC_ALL=C MANWIDTH=80 man -l "$MAN" >"$T/man" 2>"$T/man.err" && ok ||
    fail "man -l: $(cat "$T/man.err")"
grep -q 'papo serve' "$T/man" && ok || fail "man -l renders no 'papo serve'"

# The text as read: mandoc neither hyphenates nor breaks a flag, and a
# wide page keeps each entry's head on one line or few.
mandoc -T ascii -O width=200 "$MAN" | sed 's/.\x08//g' >"$T/page"
section() { # section NAME: the lines of that section
	awk -v s="$1" '/^[A-Z]/ { on = ($0 == s) } on' "$T/page"
}
section COMMANDS >"$T/commands"
section ENVIRONMENT >"$T/env"

# An entry: its head (indented 5: "     papo NAME ...") to the next head.
entry() {
	awk -v c="$1" '
	    /^     [^ ]/ { on = ($1 == "papo" && $2 == c) }
	    on' "$T/commands"
}
"$PAPO" --help >"$T/help" || fail "papo --help exits $?"
cmds=$(sed -n 's/^  papo \([a-z][a-z-]*\).*/\1/p' "$T/help" | sort -u)
[ "$(echo "$cmds" | wc -w)" -ge 18 ] && ok ||
    fail "papo --help lists only: $cmds"
for c in $cmds; do
	entry "$c" >"$T/entry"
	if [ ! -s "$T/entry" ]; then
		fail "papo $c (in papo --help) has no entry under COMMANDS"
		continue
	fi
	ok
	"$PAPO" "$c" --help | sed '/^$/q' >"$T/usage"
	for o in $(grep -oE '(^|[[ |])--?[a-z][a-z-]*' "$T/usage" |
	    sed 's/^[[ |]//' | sort -u); do
		grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" "$T/entry" && ok ||
		    fail "papo $c's $o (in its usage) is not in its man entry"
	done
done

# Settings: "  PAPO_X[, --flag]: ..." lines of papo serve --help.
"$PAPO" serve --help |
    sed -n 's/^  \(PAPO_[A-Z_]*\)\(, \(--[a-z-]*\)\)\{0,1\}:.*/\1 \3/p' \
    >"$T/settings"
[ "$(wc -l <"$T/settings")" -ge 25 ] && ok ||
    fail "papo serve --help lists only: $(cat "$T/settings")"
while read -r var flag; do
	line=$(grep -E "^     $var(,| |$)" "$T/env")
	if [ -z "$line" ]; then
		fail "$var (papo serve --help) is not under ENVIRONMENT"
		continue
	fi
	ok
	[ -z "$flag" ] || echo "$line" | grep -qE -- "$flag( |$)" && ok ||
	    fail "$var's flag $flag is not in its ENVIRONMENT entry: $line"
done <"$T/settings"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
