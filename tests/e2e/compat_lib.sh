#!/usr/bin/env bash
# compat_lib.sh: what compat_home.sh and compat_wire.sh share: members run
# by this tree's papo (new) and by the previous release's (old, built by
# tests/compat/build_prev.sh from the commit tests/compat/PREVIOUS names),
# on top of lib.sh.  Source it with PAPO_NEW and PREVDIR set; PAPO_OLD,
# when set, is used as the old binary instead of building one (to swap
# the roles: PAPO_OLD=build/papo compat_home.sh OTHER_PAPO PREVDIR).
if [ -z "${PAPO_OLD:-}" ]; then
	PAPO_OLD=$(bash "$(dirname "${BASH_SOURCE[0]}")/../compat/build_prev.sh" "$PREVDIR") || {
		echo "FAIL: the previous release could not be built (above: why)" >&2
		exit 1
	}
fi
PAPO=$PAPO_NEW
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
echo "$(basename "$0"): old: $PAPO_OLD, new: $PAPO_NEW"

# as_old NAME... / as_new NAME...: which binary runs each member, its
# commands and its daemon (a member changes binary between runs of its
# daemon by being named again).
declare -A BIN
as_old() { local n; for n; do BIN[$n]=$PAPO_OLD; done; }
as_new() { local n; for n; do BIN[$n]=$PAPO_NEW; done; }
papo() { local n=$1; shift; PAPO_HOME=$T/$n "${BIN[$n]:?no binary for $n}" "$@"; }
# up NAME [serve args...] and enter NAME INVITE: lib.sh's start and join
# with NAME's binary.
up() { PAPO=${BIN[$1]:?no binary for $1} start "$@"; }
enter() { PAPO=${BIN[$1]:?no binary for $1} join "$@"; }

# says NAME TEXT [say args...]: NAME says TEXT; the message's id is in $id.
says() {
	local n=$1 text=$2 out; shift 2
	out=$(papo "$n" say "$text" "$@" --json 2>&1)
	id=$(jq -r '.id // empty' <<<"$out" 2>/dev/null)
	[ -n "$id" ] || fail "$n could not say '$text': $out"
}
# has_all NAME TEXT...: NAME's history holds every TEXT.
has_all() {
	local n=$1 t h; shift
	h=$(texts "$n")
	for t; do grep -qxF -- "$t" <<<"$h" || return 1; done
}
# shown NAME: NAME's history as a user compares it: id, author, addressee,
# reply and text of each message, oldest first, one JSON array (through
# NAME's own CLI).
shown() {
	papo "$1" history -n 500 --json |
		jq -c '[.messages[] | {id, from, to, reply_to, text}]'
}
# follow NAME: `papo tail --json` of NAME in the background, into
# $T/NAME.tail (messages, receipts, presence, room events, one a line);
# unfollow ends them all.
TAILS=()
follow() {
	# (the binary itself, not the papo function: $! is then its pid)
	PAPO_HOME=$T/$1 "${BIN[$1]}" tail --json >"$T/$1.tail" 2>/dev/null </dev/null &
	TAILS+=($!)
}
unfollow() {
	local p
	for p in "${TAILS[@]}"; do kill "$p" 2>/dev/null; done
	TAILS=()
}
trap 'unfollow; cleanup' EXIT
# receipt NAME ID BY STATE: NAME's tail showed BY's receipt of ID in STATE
# (delivered or read).
receipt() {
	jq -R -c --arg id "$2" --arg by "$3" --arg s "$4" \
		'fromjson? | select(.event == "receipt" and .data.id == $id and .data.by == $by and .data.state == $s)' \
		"$T/$1.tail" | grep -q .
}
# complaints FILE [EXPECTED]: the warnings and errors a daemon logged,
# but those matching the regular expression EXPECTED.
complaints() {
	grep -E '^papo: (warn|error):' "$1" | grep -v -E -- "${2:-^\$}" | head -5
}
