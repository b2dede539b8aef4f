#!/usr/bin/env bash
# https.sh: the HTTP side over TLS as its users see it.  A certificate of
# a test CA (PAPO_TLS_CERT/KEY, a full chain as certbot writes it): every
# route answers with curl --cacert and nothing else; plain HTTP to the
# port gets no answer; SIGHUP swaps the certificate (gnutls-cli sees the
# new one, serve.json names it) while an event stream stays open and
# keeps receiving; bad files at SIGHUP keep the old one.  The CLI
# (status, say, history, tail) and `papo mcp` reach the daemon by the
# key serve.json pins, and refuse another key; `papo mcp` goes on when
# the daemon comes back with another key.  --tls self: a key (0600)
# and certificate made once in PAPO_HOME, its fingerprint printed.  A
# handshake that stalls costs no busy loop.  Bad
# certificate and key files stop serve with the file and the reason.
# Usage: https.sh PATH_TO_PAPO.
PAPO=${1:?usage: https.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN PAPO_HTTP PAPO_LISTEN PAPO_INVITE PAPO_TLS PAPO_TLS_CERT \
	PAPO_TLS_KEY PAPO_PUBLIC_URL PAPO_CORS_ORIGINS

# A CA and two server certificates of it for 127.0.0.1, each with a key
# of its own; fullchain-N.pem is the leaf then the CA, as certbot's.
C=$T/certs
mkdir -p "$C"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=papo-test-ca -keyout "$C/ca.key" -out "$C/ca.pem" 2>/dev/null
for n in 1 2; do
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-subj "/CN=papo-test-$n" -keyout "$C/key-$n.pem" -out "$C/req-$n.csr" 2>/dev/null
	openssl x509 -req -in "$C/req-$n.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" \
		-CAcreateserial -days 2 -out "$C/cert-$n.pem" \
		-extfile <(printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n') 2>/dev/null
	cat "$C/cert-$n.pem" "$C/ca.pem" >"$C/fullchain-$n.pem"
done
fpr() { openssl x509 -in "$1" -noout -fingerprint -sha256 | sed 's/.*=//'; }
FP1=$(fpr "$C/cert-1.pem") FP2=$(fpr "$C/cert-2.pem")
check "the test made two certificates" test -n "$FP1" -a "$FP1" != "$FP2"

mkdir -p "$T/live"
cp "$C/fullchain-1.pem" "$T/live/fullchain.pem"
cp "$C/key-1.pem" "$T/live/privkey.pem"
PAPO_TLS_CERT=$T/live/fullchain.pem PAPO_TLS_KEY=$T/live/privkey.pem start ana
u=${URL[ana]}
check "serve.json gives an https URL: $u" test "${u#https://127.0.0.1:}" != "$u"
check "serve.json's mcp URL is https" test "$(jq -r .mcp "$T/ana/serve.json")" = "$u/mcp"
has "$T/ana.out" "^mcp: https://127\.0\.0\.1:[0-9]+/mcp$" "the printed MCP URL says https"
has "$T/ana.out" "^dashboard: https://" "the printed dashboard URL says https"
has "$T/ana.out" "fingerprint $FP1" "the certificate's fingerprint is printed"
check "serve.json has the fingerprint" test "$(jq -r .tls_fingerprint "$T/ana/serve.json")" = "$FP1"

# Every route, trusting only the test CA.
cc() { curl -sS --max-time 10 --cacert "$C/ca.pem" "$@"; }
code() { cc -o /dev/null -w '%{http_code}' "$@"; }
check "/healthz over https" test "$(cc "$u/healthz" | jq -r .ok)" = true
check "/api/status over https" test "$(cc "$u/api/status" | jq -r .me.name)" = ana
check "/api/send over https" test "$(code -H 'Content-Type: application/json' \
	-d '{"text":"over tls"}' "$u/api/send")" = 200
check "/api/history over https" test "$(cc "$u/api/history" | jq -r '.messages[-1].text')" = "over tls"
for f in / /js/main.js /style.css; do
	check "dashboard $f over https" test "$(code "$u$f")" = 200
done
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"https.sh","version":"1"}}}'
cc -D "$T/mcp.h" -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' -d "$init" "$u/mcp" >"$T/mcp.json"
check "/mcp initialize over https" jq -e '.result.serverInfo.name' "$T/mcp.json" >/dev/null
sid=$(grep -i '^mcp-session-id:' "$T/mcp.h" | tr -d '\r' | cut -d' ' -f2)
check "/mcp gives a session over https" test -n "$sid"
check "DELETE /mcp over https" test "$(code -X DELETE -H "MCP-Session-Id: $sid" \
	-H 'MCP-Protocol-Version: 2025-11-25' "$u/mcp")" = 200
check "without the CA curl refuses the certificate" \
	bash -c "! curl -sS --max-time 5 -o /dev/null '$u/healthz' 2>/dev/null"
check "plain HTTP on the port gets no answer" \
	bash -c "! curl -sS --max-time 5 -o /dev/null 'http://${u#https://}/healthz' 2>/dev/null"

# The CLI trusts the key serve.json pins, with no CA.
expect 0 "papo status over https" -- papo ana status
has "$T/out" "^me: ana" "papo status prints the member"
expect 0 "papo say over https" -- papo ana say "said by the cli"
expect 0 "papo history over https" -- papo ana history
has "$T/out" "said by the cli" "papo history shows what papo say sent"
# The front hands what asks an https daemon to papo-full; papo setup
# asks it nothing, and names the papo that ran it, not papo-full.
expect 0 "papo setup --print beside an https daemon" -- env HOME="$T/ana" \
	PAPO_HOME="$T/ana" "$PAPO" setup claude-code --print
has "$T/out" "\"command\": \"$(realpath "$PAPO")\"" "papo setup names papo, not papo-full"
cp "$T/ana/serve.json" "$T/serve.json.good"
jq '.tls_pin = "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="' "$T/serve.json.good" >"$T/ana/serve.json"
expect 1 "papo status refuses another key" -- papo ana status
has "$T/err" "pinned public key" "and says the key is not the pinned one"
cp "$T/serve.json.good" "$T/ana/serve.json"

# papo mcp: initialize and a tools/call through the bridge.
call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"status","arguments":{}}}'
{ printf '%s\n%s\n%s\n' "$init" '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$call"
  until_true 15 grep -q '"id":2' "$T/bridge.out"; } | PAPO_HOME=$T/ana timeout 20 "$PAPO" mcp >"$T/bridge.out" 2>"$T/bridge.err"
check "papo mcp initializes over https: $(head -c 300 "$T/bridge.err")" \
	grep -q '"serverInfo"' "$T/bridge.out"
check "papo mcp calls a tool over https" \
	bash -c "jq -e 'select(.id == 2) | .result.content[0].text | test(\"ana\")' '$T/bridge.out' >/dev/null"

# An event stream and `papo tail` stay open across SIGHUP, which swaps
# the certificate for the next handshakes.
cc -N "$u/api/events" >"$T/events" 2>/dev/null &
ev=$!
PAPO_HOME=$T/ana "$PAPO" tail >"$T/tail" 2>"$T/tail.err" &   # $! is papo itself
tl=$!
check "the event stream opens" until_true 10 grep -q '^retry:' "$T/events"
# papo tail has its stream once it shows a message sent now.
papo ana say "before the swap" >/dev/null
check "papo tail follows the stream" until_true 20 grep -q 'before the swap' "$T/tail"
cp "$C/fullchain-2.pem" "$T/live/fullchain.pem"
cp "$C/key-2.pem" "$T/live/privkey.pem"
kill -HUP "$(cat "$T/ana.pid")"
served() { # served: the fingerprint of the certificate gnutls-cli is shown now
	gnutls-cli --x509cafile="$C/ca.pem" --print-cert --port "${u##*:}" 127.0.0.1 \
		</dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256 | sed 's/.*=//'
}
check "serve.json names the new certificate after SIGHUP" \
	until_true 10 bash -c "test \"\$(jq -r .tls_fingerprint '$T/ana/serve.json')\" = '$FP2'"
fp_now=$(served)
check "gnutls-cli sees the new certificate: $fp_now" test "$fp_now" = "$FP2"
check "the daemon logs the new fingerprint" grep -q "SIGHUP: serving.*$FP2" "$T/ana.err"
check "the event stream is still open" kill -0 "$ev"
check "papo tail is still running" kill -0 "$tl"
expect 0 "papo say after SIGHUP (the new pin)" -- papo ana say "after the swap"
check "the open stream receives after SIGHUP" until_true 10 grep -q 'after the swap' "$T/events"
check "papo tail receives after SIGHUP: $(tail -3 "$T/tail.err")" \
	until_true 10 grep -q 'after the swap' "$T/tail"
check "a new connection trusts the same CA" test "$(code "$u/healthz")" = 200

# A bad pair at SIGHUP keeps the certificate in use.
cp "$C/key-1.pem" "$T/live/privkey.pem"
kill -HUP "$(cat "$T/ana.pid")"
check "a mismatched key at SIGHUP is refused with the reason" \
	until_true 10 grep -q "SIGHUP: kept the certificate in use: the key in $T/live/privkey.pem is not the key of the certificate" "$T/ana.err"
fp_now=$(served)
check "and the certificate in use stays" test "$fp_now" = "$FP2"
check "serve.json still names it" test "$(jq -r .tls_fingerprint "$T/ana/serve.json")" = "$FP2"
kill "$ev" "$tl" 2>/dev/null
wait "$ev" "$tl" 2>/dev/null

# A client that stalls in the handshake (a ClientHello, then nothing)
# costs the daemon next to no CPU: no busy loop while it waits.
hp=$(( 20000 + RANDOM % 20000 ))
socat -u "TCP-LISTEN:$hp,bind=127.0.0.1,reuseaddr" "OPEN:$T/hello.bin,creat" &
sp=$!
until_ok 5 "socat listens on $hp" bash -c "ss -Hltn 'sport = :$hp' | grep -q ."
timeout 2 openssl s_client -connect "127.0.0.1:$hp" </dev/null >/dev/null 2>&1
wait "$sp" 2>/dev/null
check "a ClientHello was captured" test -s "$T/hello.bin"
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { print s }'; }
# Time tested: a handshake stalled for 4 s, measured from 1 s in for 2 s.
{ cat "$T/hello.bin"; sleep 4; } | socat - "TCP:127.0.0.1:${u##*:}" >/dev/null 2>&1 &
st=$!
sleep 1
c0=$(cpu_ns "$(cat "$T/ana.pid")")
sleep 2
c1=$(cpu_ns "$(cat "$T/ana.pid")")
wait "$st" 2>/dev/null
check "a stalled handshake takes under 5 % of a CPU: $(( (c1 - c0) / 20000000 )) %" \
	test $(( (c1 - c0) / 20000000 )) -lt 5

# papo mcp keeps working when the daemon comes back on the same port
# with another certificate (renewed, then restarted): the old pin fails,
# the bridge reads serve.json again and goes on with the new one.
port=${u##*:}
mkfifo "$T/mcp.in"
PAPO_HOME=$T/ana "$PAPO" mcp <"$T/mcp.in" >"$T/bridge2.out" 2>"$T/bridge2.err" &
br=$!
exec 7>"$T/mcp.in"
printf '%s\n%s\n' "$init" '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&7
check "papo mcp initializes" until_true 20 grep -q '"serverInfo"' "$T/bridge2.out"
stop ana
cp "$C/fullchain-1.pem" "$T/live/fullchain.pem"
cp "$C/key-1.pem" "$T/live/privkey.pem"
# (7>&-: the daemon must not hold the bridge's input open.)
PAPO_TLS_CERT=$T/live/fullchain.pem PAPO_TLS_KEY=$T/live/privkey.pem \
	start ana --http "127.0.0.1:$port" 7>&-
check "ana is back on the same port" test "${URL[ana]}" = "$u"
check "with the first certificate again" test "$(jq -r .tls_fingerprint "$T/ana/serve.json")" = "$FP1"
printf '%s\n' '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"status","arguments":{}}}' >&7
check "papo mcp calls a tool after the key changed: $(tail -2 "$T/bridge2.err")" \
	until_true 30 bash -c "jq -e 'select(.id == 7) | .result.content[0].text | test(\"ana\")' '$T/bridge2.out' >/dev/null 2>&1"
exec 7>&-
wait "$br"
check "papo mcp exits 0 at the end of its input" test $? -eq 0
stop ana

# --tls self: made once, 0600, its fingerprint printed; curl trusts it
# as its own CA, as a user may.
start bob --tls self
ub=${URL[bob]}
check "--tls self serves https" test "${ub#https://}" != "$ub"
check "the self-signed key is mode 600" test "$(stat -c %a "$T/bob/tls-key.pem")" = 600
FPB=$(fpr "$T/bob/tls-cert.pem")
has "$T/bob.out" "fingerprint $FPB" "the self-signed certificate's fingerprint is printed"
check "curl --cacert the self-signed certificate" test "$(curl -sS --max-time 5 \
	--cacert "$T/bob/tls-cert.pem" "$ub/healthz" | jq -r .ok)" = true
expect 0 "papo status against the self-signed daemon" -- papo bob status
stop bob
PAPO_TLS=self start bob
check "PAPO_TLS=self keeps the certificate made before" test "$(fpr "$T/bob/tls-cert.pem")" = "$FPB"
stop bob

# Bad files: serve stops at once, naming the file and the reason.
bad() { # bad DESCRIPTION PATTERN [ENV=...]... : serve must refuse
	local what=$1 pat=$2; shift 2
	rm -rf "$T/bad"
	env "$@" PAPO_HOME="$T/bad" timeout 20 "$PAPO" serve --http 127.0.0.1:0 \
		--listen 127.0.0.1:0 --name bad >"$T/out" 2>"$T/err" </dev/null
	local rc=$?
	if [ "$rc" -eq 1 ]; then ok; else fail "$what: exit $rc, wanted 1"; fi
	has "$T/err" "$pat" "$what"
	check "$what: no serve.json" test ! -e "$T/bad/serve.json"
}
echo "not a certificate" >"$C/junk.pem"
bad "a missing certificate file" "cannot read $C/nothere.pem: No such file" \
	PAPO_TLS_CERT="$C/nothere.pem" PAPO_TLS_KEY="$C/key-1.pem"
bad "a file that is not a certificate" "$C/junk.pem is not a PEM certificate" \
	PAPO_TLS_CERT="$C/junk.pem" PAPO_TLS_KEY="$C/key-1.pem"
bad "a certificate as the key" "$C/cert-1.pem is not an unencrypted PEM private key" \
	PAPO_TLS_CERT="$C/cert-1.pem" PAPO_TLS_KEY="$C/cert-1.pem"
bad "another certificate's key" "the key in $C/key-2.pem is not the key of the certificate in $C/cert-1.pem" \
	PAPO_TLS_CERT="$C/cert-1.pem" PAPO_TLS_KEY="$C/key-2.pem"
bad "a certificate without its key" "PAPO_TLS_CERT and PAPO_TLS_KEY go together" \
	PAPO_TLS_CERT="$C/cert-1.pem"
bad "PAPO_TLS with another value" "PAPO_TLS\) must be 'self'" PAPO_TLS=yes
bad "self and files at once" "exclude each other" PAPO_TLS=self \
	PAPO_TLS_CERT="$C/cert-1.pem" PAPO_TLS_KEY="$C/key-1.pem"

stop_all
finish
