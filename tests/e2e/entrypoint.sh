#!/usr/bin/env bash
# entrypoint.sh: docker/entrypoint.sh, the Docker image's entrypoint, run
# directly as the container runs it (no Docker here), with the papo under
# test first on PATH, temporary homes and ports of the daemons' choosing:
# joining PAPO_INVITE on first start only, the note when it names another
# room, the refusal of a non-loopback HTTP address without PAPO_TOKEN,
# the token on 0.0.0.0, the health check, arguments passed to papo, and
# a clean stop on SIGTERM to the entrypoint's process (which is papo
# itself, since the script execs it).  Usage: entrypoint.sh PATH_TO_PAPO.
# Prints "N passed, N failed".  Needs curl, jq and ss.
PAPO=${1:?usage: entrypoint.sh PATH_TO_PAPO}
PAPO=$(cd "$(dirname "$PAPO")" && pwd)/$(basename "$PAPO")
. "$(dirname "$0")/lib.sh"
ENTRY=$(cd "$(dirname "$0")/../../docker" && pwd)/entrypoint.sh
unset PAPO_HOME PAPO_NAME PAPO_ABOUT PAPO_INVITE PAPO_HTTP PAPO_LISTEN \
	PAPO_TOKEN PAPO_LOG
PATH=$(dirname "$PAPO"):$PATH
export PATH
[ "$(type -P papo)" = "$PAPO" ] && ok || fail "papo on PATH is $(type -P papo), not $PAPO"

# estart RUN HOME [VAR=VALUE...] [-- ARGS...]: runs the entrypoint in the
# background with PAPO_HOME=$T/HOME, the variables and the arguments, as
# 'docker run' would; output in $T/RUN.out and .err, pid in $T/RUN.pid
# (for lib.sh's stop); waits for serve.json.
estart() {
	local run=$1 h=$2 vars=(); shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	rm -f "$T/$h/serve.json"
	env PAPO_HOME="$T/$h" "${vars[@]}" sh "$ENTRY" "$@" \
		>"$T/$run.out" 2>"$T/$run.err" </dev/null &
	echo $! >"$T/$run.pid"
	if ! until_true 30 test -s "$T/$h/serve.json"; then
		fail "$run did not start: $(tail -3 "$T/$run.err")"
		return 1
	fi
	URL[$run]=$(jq -r .http "$T/$h/serve.json")
}
# entry [VAR=VALUE...] -- ARGS...: the entrypoint in the foreground (a
# daemon that should not have started ends the test at the timeout).
entry() {
	local vars=()
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	env "${vars[@]}" timeout 60 sh "$ENTRY" "$@"
}
# is WANT GOT DESCRIPTION
hasnt() { # hasnt FILE PATTERN DESCRIPTION
	if grep -q -E -- "$2" "$1"; then fail "$3: '$2' in: $(cat "$1")"; else ok; fi
}
code() { # code URL [CURL_ARGS...]: the HTTP status of a GET
	curl -sS --max-time 30 -o "$T/body" -w '%{http_code}' "$@" 2>&1
}
json() { jq -r "$2" "$T/$1" 2>/dev/null; }

# (1) First start with PAPO_INVITE from a running daemon's room: the
# entrypoint (given "papo serve", the image's CMD) joins it as PAPO_NAME
# with PAPO_ABOUT, and the inviter sees the new member.
start ana || { finish; exit 1; }
INVITE=$(invite ana)
api ana /api/status >"$T/ana.status"
ROOM=$(json ana.status .room)
BO=(PAPO_INVITE="$INVITE" PAPO_NAME=bo PAPO_ABOUT="runs in a container"
	PAPO_HTTP=127.0.0.1:0 PAPO_LISTEN=127.0.0.1:0)
estart bo1 bo "${BO[@]}" -- papo serve || { finish; exit 1; }
is "$(cat "$T/bo1.pid")" "$(jq -r .pid "$T/bo/serve.json")" \
	"the entrypoint's process is papo serve (exec)"
has "$T/bo1.err" 'joined the room of PAPO_INVITE as bo' "first start joins PAPO_INVITE"
hasnt "$T/bo1.err" 'PAPO_INVITE is ignored' "no note on first start"
has "$T/bo1.out" "^room: papo-[a-z2-7]{8}, fingerprint [a-z2-7]{8}; 'papo invite' prints its invite\$" \
	"the joiner's log names the room by its fingerprint"
hasnt "$T/bo1.out" 'papo1' "the joiner's log (docker logs) holds no invite"
hasnt "$T/bo1.err" 'papo1' "the joiner's stderr holds no invite"
check "the inviter sees the joiner online" until_true 30 online ana bo
api ana /api/status >"$T/ana.status"
BO_ID=$(api bo1 /api/status | jq -r .me.id)
is "$BO_ID" "$(json ana.status '.members[] | select(.name == "bo") | .id')" \
	"the inviter knows the joiner's id"
is "runs in a container" "$(json ana.status '.members[] | select(.name == "bo") | .about')" \
	"PAPO_ABOUT is the joiner's about"
api bo1 /api/status >"$T/bo.status"
is "$ROOM" "$(json bo.status .room)" "the joiner's status names the inviter's room"
is "$ROOM" "$(jq -r .room "$T/bo/room.json")" "the joiner's room.json holds the inviter's room"
is "$(json ana.status .me.id)" "$(jq -r .inviter "$T/bo/room.json")" \
	"the joiner's room.json names the inviter"
check "the joiner sees the inviter online" until_true 30 online bo1 ana
# The invite in the joiner's serve.json is for the same room.
PAPO_HOME=$T/probe "$PAPO" join "$(invite bo)" --name probe >/dev/null
is "$ROOM" "$(jq -r .room "$T/probe/room.json")" "the joiner's serve.json has an invite to the room"

# (5) SIGTERM to the entrypoint's process stops papo cleanly: exit 0
# (lib.sh's stop checks it), serve.json removed, a bye to the room.
stop bo1
has "$T/bo1.err" 'stopping on SIGTERM' "papo got the SIGTERM"
has "$T/bo1.err" 'info: stopped$' "papo stopped in order"
[ ! -e "$T/bo/serve.json" ] && ok || fail "serve.json left after SIGTERM"
check "the inviter sees the joiner leave" until_true 30 offline ana bo

# (2) A second start with the same home and PAPO_INVITE keeps the room and
# the member: no second join, no note, same room and id, back online.
estart bo2 bo "${BO[@]}" -- papo serve || { finish; exit 1; }
hasnt "$T/bo2.err" 'joined the room' "second start does not join again"
hasnt "$T/bo2.err" 'PAPO_INVITE is ignored' "same invite: no note"
api bo2 /api/status >"$T/bo.status"
is "$ROOM" "$(json bo.status .room)" "second start: same room"
is "$BO_ID" "$(json bo.status .me.id)" "second start: same member id"
check "second start: back online at the inviter" until_true 30 online ana bo
stop bo2

# A start with the invite of another room keeps the first room and says
# in one line that PAPO_INVITE is ignored.
PAPO_HOME=$T/cy PAPO_LISTEN=127.0.0.1:7778 "$PAPO" new --name cy >"$T/cy.out"
OTHER=$(grep -E '^papo1' "$T/cy.out")
estart bo3 bo "${BO[@]}" PAPO_INVITE="$OTHER" || { finish; exit 1; }
grep 'PAPO_INVITE' "$T/bo3.err" >"$T/note"
lines "$T/note" 1 "another room's invite: one line about it"
has "$T/note" "^papo: warn: PAPO_INVITE is ignored: it is for another room, and $T/bo already holds room $ROOM" \
	"the note says the invite is ignored and which room is kept"
hasnt "$T/bo3.err" 'joined the room' "another room's invite is not joined"
api bo3 /api/status >"$T/bo.status"
is "$ROOM" "$(json bo.status .room)" "another room's invite: the room is kept"
is "$BO_ID" "$(json bo.status .me.id)" "another room's invite: the member is kept"
check "another room's invite: still online at the inviter" until_true 30 online ana bo
stop bo3

# The note tells rooms apart by the secret, whoever made the invite and
# however it is spelled.  These runs stop at the token check (0.0.0.0
# without PAPO_TOKEN), which comes after the note.
serve_with() { # serve_with INVITE: the entrypoint's stderr for bo's home, in $T/err
	expect 1 "bo with a refused address" -- entry PAPO_HOME="$T/bo" \
		PAPO_INVITE="$1" PAPO_HTTP=0.0.0.0:0 PAPO_LISTEN=127.0.0.1:0 -- papo serve
}
serve_with "$(PAPO_HOME=$T/bo "$PAPO" invite)"
hasnt "$T/err" 'PAPO_INVITE is ignored' "the member's own invite of its room: no note"
serve_with "  ${INVITE^^}  "
hasnt "$T/err" 'PAPO_INVITE is ignored' "the invite in upper case with spaces: no note"
serve_with "${OTHER^^}"
has "$T/err" 'PAPO_INVITE is ignored: it is for another room' "another room in upper case: note"
serve_with "papo1notaninvite"
has "$T/err" 'PAPO_INVITE is ignored: invite ' "a broken invite: note with the reason"

# (3) HTTP on a non-loopback address without PAPO_TOKEN: one line saying
# to set PAPO_TOKEN, exit 1, and nothing started or written, not even the
# join of PAPO_INVITE.  Without PAPO_HTTP, the container default
# 0.0.0.0:7777 is refused the same way (nothing is bound).
for http in 0.0.0.0:0 "" "[::]:0"; do
	expect 1 "no token on '$http'" -- entry PAPO_HOME="$T/dee" PAPO_HTTP="$http" \
		PAPO_LISTEN=127.0.0.1:0 PAPO_INVITE="$INVITE" PAPO_NAME=dee --
	lines "$T/err" 1 "no token on '$http': one line"
	re=$(printf '%s' "${http:-0.0.0.0:7777}" | sed 's/[].[]/\\&/g')
	has "$T/err" "^papo: refusing to serve HTTP on $re without a token.*PAPO_TOKEN" \
		"no token on '$http': says to set PAPO_TOKEN"
	[ ! -e "$T/dee" ] && ok || fail "no token on '$http': the home was created"
done
expect 1 "an empty PAPO_TOKEN" -- entry PAPO_HOME="$T/dee" PAPO_HTTP=0.0.0.0:0 \
	PAPO_LISTEN=127.0.0.1:0 PAPO_TOKEN= -- serve
has "$T/err" 'PAPO_TOKEN' "an empty PAPO_TOKEN is no token"
[ ! -e "$T/dee" ] && ok || fail "empty token: the home was created"

# (4) With PAPO_TOKEN on 0.0.0.0 (no arguments, as 'docker run IMAGE'):
# bound on every interface; /healthz answers without the token, the API
# only with it.
estart eve eve PAPO_HTTP=0.0.0.0:0 PAPO_LISTEN=127.0.0.1:0 PAPO_TOKEN=s3cret.T0ken.0123456789abcdefghij \
	PAPO_NAME=eve || { finish; exit 1; }
U=${URL[eve]}
PORT=${U##*:}
is "http://127.0.0.1:$PORT" "$U" "serve.json gives the loopback URL of a wildcard bind"
ss -Hltn "sport = :$PORT" >"$T/ss"
has "$T/ss" "(0\.0\.0\.0|\*):$PORT " "HTTP listens on 0.0.0.0"
is 200 "$(code "$U/healthz")" "/healthz without the token"
is 401 "$(code "$U/api/status")" "/api/status without the token"
is 401 "$(code "$U/api/status" -H 'Authorization: Bearer wrong')" "/api/status with a wrong token"
is 200 "$(code "$U/api/status" -H 'Authorization: Bearer s3cret.T0ken.0123456789abcdefghij')" "/api/status with the token"
is eve "$(jq -r .me.name "$T/body")" "the token's answer is eve's status"
# The image's HEALTHCHECK.
expect 0 "healthcheck" -- entry PAPO_HOME="$T/eve" -- healthcheck
has "$T/out" '^HTTP/1\.[01] 200 ' "healthcheck prints the answer"
# Arguments are papo's: "papo CMD" and a bare papo command; anything else
# runs as is.
expect 0 "papo status through the entrypoint" -- entry PAPO_HOME="$T/eve" \
	PAPO_TOKEN=s3cret.T0ken.0123456789abcdefghij -- papo status
has "$T/out" '^me: eve ' "papo status prints eve"
expect 0 "status through the entrypoint" -- entry PAPO_HOME="$T/eve" \
	PAPO_TOKEN=s3cret.T0ken.0123456789abcdefghij -- status --json
is eve "$(jq -r .me.name "$T/out")" "a bare papo command goes to papo"
expect 1 "status without the token" -- entry PAPO_HOME="$T/eve" -- papo status
expect 0 "another command" -- entry -- echo as is
is "as is" "$(cat "$T/out")" "another command runs as is"
# Every command papo lists goes to papo, bare as with "papo" before it
# (admin, rotate, remove and tokens once did not), and --help, --version.
cmds=$("$PAPO" help | sed -n 's/^  papo \([a-z-]*\).*/\1/p' | sort -u)
check "papo help lists commands: $(echo $cmds)" test "$(echo "$cmds" | wc -l)" -ge 15
for c in $cmds; do
	expect 0 "$c --help through the entrypoint" -- entry PAPO_HOME="$T/eve" -- "$c" --help
	has "$T/out" "^usage: papo $c" "a bare '$c' goes to papo"
done
for c in admin rotate remove tokens rooms doctor; do
	echo "$cmds" | grep -qx "$c" && ok || fail "papo help does not list $c"
done
expect 0 "--help through the entrypoint" -- entry -- --help
has "$T/out" '^usage: papo COMMAND' "--help goes to papo, not to papo serve"
expect 0 "papo rooms through the entrypoint" -- entry PAPO_HOME="$T/eve" \
	PAPO_TOKEN=s3cret.T0ken.0123456789abcdefghij -- rooms
has "$T/out" 'as eve' "rooms lists eve's room"
entry PAPO_HOME="$T/eve" PAPO_TOKEN=s3cret.T0ken.0123456789abcdefghij -- doctor \
	>"$T/out" 2>"$T/err"
has "$T/out" '^daemon +running' "doctor through the entrypoint sees the daemon"
stop eve
expect 1 "healthcheck with no daemon" -- entry PAPO_HOME="$T/eve" -- healthcheck
has "$T/err" 'no papo serve is running' "healthcheck says no daemon runs"

# Options given to the container go to papo serve and beat the
# environment: --http on loopback needs no token, --about beats PAPO_ABOUT.
estart fay fay PAPO_HTTP=0.0.0.0:0 PAPO_LISTEN=127.0.0.1:0 PAPO_NAME=fay \
	PAPO_ABOUT="from the environment" -- --http 127.0.0.1:0 --about "from an option" ||
	{ finish; exit 1; }
is 200 "$(code "${URL[fay]}/api/status")" "options: loopback without a token"
is "from an option" "$(jq -r .me.about "$T/body")" "options: --about beats PAPO_ABOUT"
stop fay

stop ana
finish
