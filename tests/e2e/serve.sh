#!/usr/bin/env bash
# serve.sh: `papo serve` as curl, scripts and a person at the shell see
# it: start-up output and serve.json, the HTTP API and every error status,
# the lock, the token, a clean stop, and the commands say / status /
# history / invite over the daemon.  Usage: serve.sh PATH_TO_PAPO.
# Prints "N passed, N failed".  Needs curl and jq.
PAPO=${1:?usage: serve.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_HOME PAPO_NAME PAPO_INVITE PAPO_HTTP PAPO_LISTEN PAPO_TOKEN

# req CURL_ARGS...: the status of one request; body in $T/body, headers
# in $T/hdr.
req() {
	curl -sS --max-time 30 -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$@" 2>"$T/curlerr"
}
# is WANT GOT DESCRIPTION
# error_is STATUS DESCRIPTION CURL_ARGS...: the request fails with STATUS
# and a JSON body {"error": "..."}.
error_is() {
	local want=$1 what=$2; shift 2
	is "$want" "$(req "$@")" "$what"
	if jq -e '(.error | type == "string") and (keys == ["error"])' "$T/body" >/dev/null 2>&1
	then ok; else fail "$what: body is not {\"error\":...}: $(head -c 300 "$T/body")"; fi
	grep -qi '^content-type: application/json' "$T/hdr" && ok ||
		fail "$what: not sent as application/json"
}
post() { # post NAME PATH JSON [CURL_ARGS...]
	local n=$1 path=$2 body=$3; shift 3
	req -H 'Content-Type: application/json' --data-binary "$body" "$@" "${URL[$n]}$path"
}

# First start in an empty home: it creates the room, prints the MCP URL,
# the dashboard URL and the room's name and fingerprint, and writes
# serve.json.  Its output is not a terminal (a log): no invite, which
# holds the room's key, is written there nor on stderr.
start ana --about "reviews C" || { finish; exit 1; }
U=${URL[ana]}
PORT=${U##*:}
has "$T/ana.out" "^mcp: http://127\.0\.0\.1:$PORT/mcp\$" "serve prints the MCP URL with the real port"
has "$T/ana.out" "^dashboard: http://127\.0\.0\.1:$PORT/\$" "serve prints the dashboard URL"
has "$T/ana.out" "^room: papo-[a-z2-7]{8}, fingerprint [a-z2-7]{8}; 'papo invite' prints its invite\$" \
	"serve prints the room's name and fingerprint, and where the invite is"
has "$T/ana.out" "^network: QUIC on UDP 127\.0\.0\.1:[0-9]+ only: no other machine reaches this member\$" \
	"serve says what it opened to the network"
lines "$T/ana.out" 4 "serve prints four lines"
check "no invite in serve's output when it is not a terminal" test -z "$(grep -h papo1 "$T/ana.out" "$T/ana.err")"
FPR=$(sed -n 's/^room: .*, fingerprint \([a-z2-7]*\);.*/\1/p' "$T/ana.out")
is "$(cat "$T/ana.pid")" "$(jq -r .pid "$T/ana/serve.json")" "serve.json has the daemon's pid"
is 600 "$(stat -c %a "$T/ana/serve.json")" "serve.json is private"
has "$T/ana/serve.json" '"invite":[[:space:]]*"papo1[a-z2-7]+"' "serve.json has the invite"
# At a terminal, the start that makes the room prints its invite too; a
# later start at a terminal does not.  (script gives papo a pty.)
tty_serve() { # tty_serve HOME OUT LAST: papo serve at a terminal until its banner's LAST line
	rm -f "$1/serve.json"
	PAPO_HOME=$1 PAPO_NAME=tty script -qefc "'$PAPO' serve --http 127.0.0.1:0 --listen 127.0.0.1:0" \
		/dev/null >"$2" 2>&1 </dev/null &
	local pid=$!
	until_true 20 test -s "$1/serve.json" &&
		until_true 20 grep -q "$3" "$2"
	kill -TERM "$(jq -r .pid "$1/serve.json")"
	wait "$pid"
}
tty_serve "$T/tty" "$T/tty1.out" '^invite: '
has "$T/tty1.out" $'^invite: papo1[a-z2-7]+\r?$' "the first start at a terminal prints the invite"
tty_serve "$T/tty" "$T/tty2.out" '^network: '
has "$T/tty2.out" "^room: papo-[a-z2-7]{8}, fingerprint [a-z2-7]{8}" "a later start at a terminal names the room"
check "a later start at a terminal prints no invite" test -z "$(grep -a papo1 "$T/tty2.out")"
TTYFPR=$(sed -n 's/^room: .*, fingerprint \([a-z2-7]*\);.*/\1/p' "$T/tty2.out" | tr -d '\r')
check "two rooms have two fingerprints ($FPR, $TTYFPR)" test -n "$TTYFPR" -a "$FPR" != "$TTYFPR"
is "$U/mcp $U/" "$(jq -r '.mcp + " " + .dashboard' "$T/ana/serve.json")" "serve.json has the URLs"
has "$T/ana/serve.json" '"quic":[[:space:]]*"127\.0\.0\.1:[1-9][0-9]*"' "serve.json has the bound QUIC address"
has "$T/ana/room.json" '"name":[[:space:]]*"ana"' "the new room is ana's"

# The API: health, status, send, history.
is 200 "$(req "$U/healthz")" "healthz"
is true "$(jq -r .ok "$T/body")" "healthz says ok"
is 200 "$(req "$U/api/status")" "status"
has "$T/body" '"room":"papo-[a-z2-7]{8}"' "status names the room"
is ana "$(jq -r .me.name "$T/body")" "status names me"
is "reviews C" "$(jq -r .me.about "$T/body")" "status has my about"
is 200 "$(post ana /api/send '{"text":"first"}')" "send alone"
is queued "$(jq -r .state "$T/body")" "with no other member a send is queued"
has "$T/body" '"id":"[a-z2-7]{10}"' "send gives the message id"
id1=$(jq -r .id "$T/body")
for t in second third; do
	sleep 0.02   # not a wait: history orders by time, then id; a later ms each
	is 200 "$(post ana /api/send "{\"text\":\"$t\",\"to\":null}")" "send $t"
done
is 200 "$(req "$U/api/history")" "history"
is "first second third" "$(jq -r '[.messages[].text] | join(" ")' "$T/body")" "history holds them, oldest first"
is "$id1" "$(jq -r '.messages[0].id' "$T/body")" "history has the id send gave"
ts2=$(jq -r '.messages[1].ts' "$T/body")
ts3=$(jq -r '.messages[2].ts' "$T/body")
req "$U/api/history?limit=2" >/dev/null
is "second third" "$(jq -r '[.messages[].text] | join(" ")' "$T/body")" "limit keeps the last ones"
req "$U/api/history?before=$ts3" >/dev/null
is "first second" "$(jq -r '[.messages[].text] | join(" ")' "$T/body")" "before excludes from that time on"
req "$U/api/history?since=$ts2&limit=500" >/dev/null
is "second third" "$(jq -r '[.messages[].text] | join(" ")' "$T/body")" "since starts at that time"
req "$U/api/history?from=ana&limit=1" >/dev/null
is "third" "$(jq -r '[.messages[].text] | join(" ")' "$T/body")" "from and limit together"

# Every error is JSON with its status.
error_is 400 "malformed JSON" -H 'Content-Type: application/json' -d '{"text":' "$U/api/send"
error_is 400 "empty body" -H 'Content-Type: application/json' -X POST "$U/api/send"
error_is 400 "trailing garbage" -H 'Content-Type: application/json' -d '{"text":"a"} x' "$U/api/send"
error_is 400 "not an object" -H 'Content-Type: application/json' -d '["text"]' "$U/api/send"
error_is 400 "text of the wrong type" -H 'Content-Type: application/json' -d '{"text":5}' "$U/api/send"
error_is 400 "to of the wrong type" -H 'Content-Type: application/json' -d '{"text":"a","to":1}' "$U/api/send"
error_is 400 "missing text" -H 'Content-Type: application/json' -d '{"to":"bo"}' "$U/api/send"
error_is 400 "empty text" -H 'Content-Type: application/json' -d '{"text":""}' "$U/api/send"
error_is 400 "unknown field" -H 'Content-Type: application/json' -d '{"text":"a","colour":"blue"}' "$U/api/send"
has "$T/body" "colour" "the unknown field is named"
error_is 400 "field twice" -H 'Content-Type: application/json' -d '{"text":"a","text":"b"}' "$U/api/send"
error_is 400 "reply_to not an id" -H 'Content-Type: application/json' -d '{"text":"a","reply_to":"abc"}' "$U/api/send"
error_is 404 "unknown addressee" -H 'Content-Type: application/json' -d '{"text":"a","to":"nobody"}' "$U/api/send"
for q in limit=0 limit=501 limit=abc limit=-1 'limit=1%202' before=x since=1.5 colour=blue; do
	error_is 400 "history?$q" "$U/api/history?$q"
done
error_is 404 "unknown path" "$U/api/nothing"
error_is 404 "unknown path at the root" "$U/favicon.ico"
error_is 405 "POST to a GET path" -X POST "$U/api/status"
has "$T/hdr" '^Allow: GET' "405 says what is allowed"
error_is 405 "GET of a POST path" "$U/api/send"
has "$T/hdr" '^Allow: POST' "405 on send says POST"
error_is 405 "DELETE" -X DELETE "$U/healthz"
head -c 70000 /dev/zero | tr '\0' a >"$T/big"
error_is 413 "body over 64 KiB" -H 'Content-Type: application/json' --data-binary @"$T/big" "$U/api/send"
error_is 413 "chunked body over 64 KiB" -H 'Content-Type: application/json' \
	-H 'Transfer-Encoding: chunked' --data-binary @"$T/big" "$U/api/send"
printf '{"text":"%s"}' "$(head -c 50000 /dev/zero | tr '\0' a)" >"$T/long"
error_is 413 "text over 48 KiB" -H 'Content-Type: application/json' --data-binary @"$T/long" "$U/api/send"
error_is 415 "POST without JSON" -H 'Content-Type: text/plain' -d '{"text":"a"}' "$U/api/send"
error_is 415 "POST with no Content-Type" -H 'Content-Type:' -d '{"text":"a"}' "$U/api/send"
error_is 403 "foreign Host" -H 'Host: evil.example:'"$PORT" "$U/api/status"
error_is 403 "our name, wrong port" -H "Host: localhost:1" "$U/api/status"
error_is 403 "foreign Origin" -H 'Origin: http://evil.example' "$U/api/status"
error_is 403 "foreign Origin on send" -H 'Origin: http://evil.example' \
	-H 'Content-Type: application/json' -d '{"text":"a"}' "$U/api/send"
error_is 403 "https Origin" -H "Origin: https://127.0.0.1:$PORT" "$U/api/status"
is 200 "$(req -H "Host: localhost:$PORT" "$U/api/status")" "Host localhost:PORT is ours"
is 200 "$(req -H "Origin: http://localhost:$PORT" "$U/api/status")" "our own Origin passes"
is 200 "$(post ana /api/send '{"text":"after the errors"}' -H "Origin: http://127.0.0.1:$PORT")" "send from our own page"
is 4 "$(api ana '/api/history?limit=500' | jq '.messages | length')" "no refused request stored a message"

# The lock: a second daemon on the same home refuses, naming the first.
expect 1 "second serve on one home" -- env PAPO_HOME="$T/ana" timeout 10 \
	"$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0
is "papo: another papo serve (pid $(cat "$T/ana.pid")) is running on $T/ana" "$(cat "$T/err")" "the refusal names the pid"
is "$(cat "$T/ana.pid")" "$(jq -r .pid "$T/ana/serve.json")" "the refused daemon left serve.json alone"
# A taken port (HTTP, or QUIC's UDP) is a one-line error that says which
# setting chooses another, found before the first start makes a room.
QP=$(jq -r .quic "$T/ana/serve.json" | sed 's/.*://')
expect 1 "HTTP port taken" -- env PAPO_HOME="$T/taken" PAPO_NAME=x timeout 10 \
	"$PAPO" serve --http "127.0.0.1:$PORT" --listen 127.0.0.1:0
lines "$T/err" 1 "a taken HTTP port: one line"
has "$T/err" "^papo: cannot serve HTTP on 127\.0\.0\.1:$PORT: Address already in use.*choose another port with --http ADDR:PORT \(or PAPO_HTTP" "the taken HTTP port is named, and how to choose another"
expect 1 "QUIC port taken" -- env PAPO_HOME="$T/taken" PAPO_NAME=x timeout 10 \
	"$PAPO" serve --http 127.0.0.1:0 --listen "127.0.0.1:$QP"
lines "$T/err" 1 "a taken QUIC port: one line"
has "$T/err" "^papo: cannot listen for QUIC on UDP 127\.0\.0\.1:$QP: Address already in use.*choose another port with --listen ADDR:PORT \(or PAPO_LISTEN" "the taken QUIC port is named, and how to choose another"
expect 1 "QUIC port taken on the wildcard" -- env PAPO_HOME="$T/taken" PAPO_NAME=x timeout 10 \
	"$PAPO" serve --http 127.0.0.1:0 --listen "0.0.0.0:$QP"
has "$T/err" "^papo: cannot listen for QUIC on UDP 0\.0\.0\.0:$QP: Address already in use" "the wildcard's taken port is named"
[ ! -e "$T/taken/serve.json" ] && ok || fail "a failed start left serve.json"
for f in room.json identity log.jsonl; do
	[ ! -e "$T/taken/$f" ] && ok || fail "a start refused for its port made $f"
done
# Anything but loopback needs a token; nothing is created first.
for a in 0.0.0.0:0 '[::]:0'; do
	expect 1 "HTTP on $a without a token" -- env PAPO_HOME="$T/open" timeout 10 \
		"$PAPO" serve --http "$a" --listen 127.0.0.1:0
	lines "$T/err" 1 "refusal is one line"
	has "$T/err" "^papo: refusing to serve HTTP on .*without a token.*--token" "refusal says why"
done
[ ! -e "$T/open" ] && ok || fail "a refused start created the home"
expect 1 "HTTP from PAPO_HTTP without a token" -- env PAPO_HOME="$T/open" PAPO_HTTP=0.0.0.0:0 \
	timeout 10 "$PAPO" serve --listen 127.0.0.1:0
expect 1 "bad HTTP address" -- env PAPO_HOME="$T/open" timeout 10 "$PAPO" serve --http nowhere
has "$T/err" "not ADDR:PORT" "a bad address is explained"
expect 2 "serve takes no argument" -- "$PAPO" serve extra
expect 0 "serve --help" -- "$PAPO" serve --help
has "$T/out" "usage: papo serve" "serve --help shows its usage"

# With a token: 401 and WWW-Authenticate without it, 200 with it,
# /healthz open to all.
start tok --token s3cret-t0ken-0123456789abcdefghij || { finish; exit 1; }
V=${URL[tok]}
error_is 401 "no token" "$V/api/status"
has "$T/hdr" '^WWW-Authenticate: Bearer' "401 says Bearer"
error_is 401 "wrong token" -H 'Authorization: Bearer s3cret-t0ken-0123456789abcdefghij-0123456789abcdefghik' "$V/api/status"
error_is 401 "token cut short" -H 'Authorization: Bearer s3cret' "$V/api/status"
error_is 401 "token too long" -H 'Authorization: Bearer s3cret-t0ken-0123456789abcdefghij2' "$V/api/status"
error_is 401 "not Bearer" -H 'Authorization: Basic czNjcmV0LXQwa2Vu' "$V/api/status"
error_is 401 "no token on an unknown path" "$V/api/nothing"
is 200 "$(req -H 'Authorization: Bearer s3cret-t0ken-0123456789abcdefghij' "$V/api/status")" "right token"
is 200 "$(req -H 'Authorization: bearer s3cret-t0ken-0123456789abcdefghij' "$V/api/history")" "the scheme is case-blind"
is 200 "$(req "$V/healthz")" "healthz needs no token"
expect 1 "CLI without PAPO_TOKEN" -- env PAPO_HOME="$T/tok" "$PAPO" status
has "$T/err" "^papo: papo serve at http://127.0.0.1:[0-9]+ needs its token: set PAPO_TOKEN to the token it was started with\$" "the CLI says a token is needed, and names PAPO_TOKEN"
expect 0 "CLI with PAPO_TOKEN" -- env PAPO_HOME="$T/tok" PAPO_TOKEN=s3cret-t0ken-0123456789abcdefghij "$PAPO" status
has "$T/out" "^me: tok" "status with the token"
expect 1 "a token with a space" -- env PAPO_HOME="$T/tok2" timeout 10 \
	"$PAPO" serve --http 127.0.0.1:0 --token "a b"
stop tok
# On a wildcard address (token required) the names the daemon is reached
# by are not known (container names, mapped ports): any Host passes, the
# token guards, and a browser's Origin must be the page's own host.
start wild --http 0.0.0.0:0 --token s3cret-t0ken-0123456789abcdefghij || { finish; exit 1; }
W=${URL[wild]}
is "http://127.0.0.1:" "${W%:*}:" "serve.json gives a wildcard daemon's loopback URL"
auth='Authorization: Bearer s3cret-t0ken-0123456789abcdefghij'
is 200 "$(req -H "$auth" -H 'Host: papo-ana:8080' "$W/api/status")" "wildcard: any Host with the token"
error_is 401 "wildcard: a Host without the token" -H 'Host: papo-ana:8080' "$W/api/status"
is 200 "$(req -H "$auth" -H 'Host: papo-ana:8080' -H 'Origin: http://papo-ana:8080' "$W/api/status")" \
	"wildcard: the page's own Origin"
error_is 403 "wildcard: a foreign Origin" -H "$auth" -H 'Origin: http://evil.example' "$W/api/status"
stop wild

# PAPO_INVITE joins on first start, as the member PAPO_NAME; bo is then
# a member ana sees.
PAPO_INVITE=$(invite ana) PAPO_NAME=bo start bo || { finish; exit 1; }
room_a=$(jq -r .room "$T/ana/room.json")
is "$room_a" "$(jq -r .room "$T/bo/room.json")" "PAPO_INVITE joined ana's room"
check "ana sees bo online" until_true 15 online ana bo

# The commands over the daemon, as a person reads them.
export PAPO_HOME=$T/ana
expect 0 "say to bo" -- "$PAPO" say "hi bo" --to bo
has "$T/out" '^[a-z2-7]{10} delivered to bo$' "say prints the id and who has it"
lines "$T/out" 1 "say prints one line"
id2=$(cut -d' ' -f1 "$T/out")
expect 0 "say --json" -- "$PAPO" say "as json" --reply-to "$id2" --json
is delivered "$(jq -r .state "$T/out")" "say --json prints the daemon's answer"
expect 1 "say to nobody" -- "$PAPO" say "x" --to nobody
has "$T/err" "^papo: no member is named 'nobody'" "say explains an unknown member"
lines "$T/err" 1 "the error is one line"
expect 1 "say with a bad reply id" -- "$PAPO" say "x" --reply-to nope
has "$T/err" "^papo: reply_to must be a message id" "a bad reply id is explained"
expect 2 "say without text" -- "$PAPO" say
expect 2 "say with two texts" -- "$PAPO" say a b
expect 0 "status" -- "$PAPO" status
has "$T/out" "^room: $room_a, fingerprint $FPR\$" "status names the room, with the fingerprint serve printed"
has "$T/out" '^me: ana \([a-z2-7]{52}\), reviews C$' "status names me"
has "$T/out" '^  bo  online  last seen [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}  path: direct, [0-9.]+ ms$' "status lists bo online, reached directly, with the RTT"
has "$T/out" '^reached at: 127\.0\.0\.1:[0-9]+ \(NAT: [a-z]+\)$' "status says where this member is reached"
expect 0 "status --json" -- "$PAPO" status --json
is bo "$(jq -r '.members[0].name' "$T/out")" "status --json is the API's"
expect 0 "history" -- "$PAPO" history
has "$T/out" '^[0-9-]{10} [0-9:]{8} [a-z2-7]{10} ana: first$' "history shows time, id, author, text"
has "$T/out" "^[0-9-]{10} [0-9:]{8} $id2 ana → bo \(private\): hi bo\$" "history shows the addressee, and that it is private"
has "$T/out" "^[0-9-]{10} [0-9:]{8} [a-z2-7]{10} ana ↳ $id2: as json\$" "history shows the reply"
lines "$T/out" 6 "one line a message"
expect 0 "history -n 2" -- "$PAPO" history -n 2
lines "$T/out" 2 "-n limits the lines"
has "$T/out" 'as json$' "-n keeps the last"
expect 0 "history --json" -- "$PAPO" history -n 1 --json
is "as json" "$(jq -r '.messages[0].text' "$T/out")" "history --json is the API's"
expect 2 "history -n 0" -- "$PAPO" history -n 0
expect 2 "history -n x" -- "$PAPO" history -n x
PAPO_HOME=$T/bo "$PAPO" say "$(printf 'bell\a esc\033[31m nl\nend')" >/dev/null
seven() { [ "$(api ana '/api/history?limit=500' | jq '.messages | length')" = 7 ]; }
check "ana has bo's message" until_true 5 seven
expect 0 "history with control characters" -- "$PAPO" history -n 1
has "$T/out" 'bo: bell\? esc\?\[31m nl$' "control characters never reach the terminal"
has "$T/out" '^    end$' "a newline starts an indented line"
expect 0 "invite" -- "$PAPO" invite
is "$(invite ana)" "$(cat "$T/out")" "invite prints the running daemon's invite"
expect 0 "invite --listen" -- "$PAPO" invite --listen 127.0.0.1:9999
[ "$(cat "$T/out")" != "$(invite ana)" ] && ok || fail "invite --listen ignored --listen"

# A send that waits for an ack (bo is stopped, so none comes) holds up
# no one: the daemon answers others meanwhile, and the send ends queued.
kill -STOP "$(cat "$T/bo.pid")"
"$PAPO" say "while bo sleeps" >"$T/slow.out" 2>"$T/slow.err" &
slow=$!
until_ok 10 "ana keeps the say to bo" has_text ana "while bo sleeps"
is 200 "$(req --max-time 2 "$U/healthz")" "healthz answers while a send waits"
is 200 "$(req --max-time 2 "$U/api/status")" "status answers while a send waits"
kill -0 "$slow" 2>/dev/null && ok || fail "the send did not wait for bo's ack"
wait "$slow"
is 0 $? "a queued send exits 0"
has "$T/slow.out" '^[a-z2-7]{10} queued: waiting for bo$' "say tells who it waits for"

# SIGTERM: a clean stop, exit 0, serve.json removed; a send still
# waiting for its ack is kept in the outbox, and answered so: queued,
# with its id and "stopping" (never an error, which a client would send
# again).  bo, silent for 7 s, is offline by now (a send to nobody online
# is queued at once): awake again, then asleep just before the sends, so
# that they wait for their acks.
kill -CONT "$(cat "$T/bo.pid")"
check "bo online again after kill -CONT" until_true 15 online ana bo
kill -STOP "$(cat "$T/bo.pid")"
curl -sS --max-time 30 -o "$T/stopbody" -w '%{http_code}' -H 'Content-Type: application/json' \
	-d '{"text":"at the stop"}' "$U/api/send" >"$T/stopcode" 2>/dev/null &
pending=$!
"$PAPO" say "said at the stop" >"$T/saystop.out" 2>"$T/saystop.err" &
saying=$!
both_kept() { has_text ana "at the stop" && has_text ana "said at the stop"; }
until_ok 10 "ana keeps the send and the say at the stop" both_kept
pid=$(cat "$T/ana.pid")
kill -TERM "$pid"
wait "$pid"
is 0 $? "SIGTERM stops the daemon with exit 0"
wait "$pending"
is 200 "$(cat "$T/stopcode")" "a send waiting at the stop is answered 200: it is kept"
is "queued true bo" "$(jq -r '[.state, .stopping, .waiting_for[0]] | join(" ")' "$T/stopbody")" \
	"the answer says queued, stopping, waiting for bo"
has "$T/stopbody" '"id":"[a-z2-7]{10}"' "the answer at the stop carries the message id"
wait "$saying"
is 0 $? "papo say cut short by the stop exits 0: the message is kept"
has "$T/saystop.out" '^[a-z2-7]{10} kept, queued: papo serve stopped before bo had it; it goes out when papo serve runs again$' \
	"papo say at the stop says the message was kept, with its id"
kill -CONT "$(cat "$T/bo.pid")"
rm -f "$T/ana.pid"
[ ! -e "$T/ana/serve.json" ] && ok || fail "serve.json left after a clean stop"
has "$T/ana.err" 'stopping on SIGTERM' "the stop is logged"
expect 1 "say with no daemon" -- "$PAPO" say "anyone?"
is "papo: no papo serve is running on $T/ana: start one with 'papo serve'" "$(cat "$T/err")" "say says no daemon runs"
expect 1 "status with no daemon" -- "$PAPO" status
# The two kept at the stop reach bo once ana runs again.
start ana || { finish; exit 1; }
U=${URL[ana]}
check "the send kept at the stop reaches bo after the restart" until_true 30 has_text bo "at the stop"
check "the say kept at the stop reaches bo after the restart" until_true 30 has_text bo "said at the stop"
# A daemon killed while a say waits cannot answer: say tells that the
# message may have been kept, and how to see it.
check "bo online again for the kill" until_true 15 online ana bo
kill -STOP "$(cat "$T/bo.pid")"
"$PAPO" say "said at the kill" >"$T/saykill.out" 2>"$T/saykill.err" &
saying=$!
until_ok 10 "ana keeps the say at the kill" has_text ana "said at the kill"
crash ana
wait "$saying"
is 1 $? "papo say cut short by a killed daemon exits 1"
has "$T/saykill.err" "^papo: .*; the message may have been kept: 'papo history' shows it once papo serve runs again" \
	"papo say cut short by a killed daemon says the message may have been kept, and how to see"
kill -CONT "$(cat "$T/bo.pid")"
start ana || { finish; exit 1; }
check "the say cut short by the kill was kept (fsync'd before the wait)" until_true 30 has_text bo "said at the kill"
stop ana
# A serve.json left by a killed daemon is seen through.
crash bo
[ -e "$T/bo/serve.json" ] && ok || fail "a killed daemon removed serve.json"
expect 1 "say to a killed daemon" -- env PAPO_HOME="$T/bo" "$PAPO" say "anyone?"
has "$T/err" "^papo: no papo serve is running on $T/bo" "a stale serve.json is not trusted"
expect 0 "invite with a stale serve.json" -- env PAPO_HOME="$T/bo" PAPO_LISTEN=127.0.0.1:9 "$PAPO" invite
has "$T/out" '^papo1' "invite falls back to room.json"

# A restart on the same home, by SIGINT this time, with the login name
# for a new room.
mkdir -m 700 "$T/dee"
PAPO_HOME=$T/dee "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 >"$T/dee.out" 2>"$T/dee.err" &
echo $! >"$T/dee.pid"
check "dee starts" until_true 20 test -s "$T/dee/serve.json"
is "$(id -un)" "$(jq -r .name "$T/dee/room.json")" "a new room takes the login name"
kill -INT "$(cat "$T/dee.pid")"
wait "$(cat "$T/dee.pid")"
is 0 $? "SIGINT stops the daemon with exit 0"
rm -f "$T/dee.pid"

# Switches in the environment take on or off, and nothing else.
for var in PAPO_LAN PAPO_PORTMAP; do
	env "$var=maybe" PAPO_HOME="$T/dee" "$PAPO" serve --http 127.0.0.1:0 \
		--listen 127.0.0.1:0 >"$T/out" 2>"$T/err" </dev/null
	is 1 $? "$var=maybe is refused with exit 1"
	has "$T/err" "^papo: $var must be on or off, not 'maybe'\$" "$var=maybe is explained"
done

finish
