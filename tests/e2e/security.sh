#!/usr/bin/env bash
# security.sh: the HTTP side's guards, route by route (SPEC "Security of
# the HTTP side"): every route with no token, a wrong token and the right
# one; with a foreign Origin and a forged Host; the dashboard's CSP; a
# non-loopback bind without a token refused before anything starts.
# Usage: security.sh PATH_TO_PAPO.  Prints "N passed, N failed".
PAPO=${1:?usage: security.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_HOME PAPO_NAME PAPO_INVITE PAPO_HTTP PAPO_LISTEN PAPO_TOKEN

TOKEN='tok-3f9a_Zq.7-0123456789abcdefghij'
# status METHOD PATH [CURL_ARGS...]: the status of one request to sec.
status() {
	local m=$1 p=$2; shift 2
	local body=()
	[ "$m" = POST ] && body=(-H 'Content-Type: application/json' --data-binary "$BODY")
	curl -sS --max-time 20 -o "$T/body" -D "$T/hdr" -w '%{http_code}' \
		-X "$m" "${body[@]}" "$@" "${URL[sec]}$p" 2>"$T/curlerr"
}

start sec --token "$TOKEN" || { finish; exit 1; }
PORT=${URL[sec]##*:}
auth="Authorization: Bearer $TOKEN"

# The routes: method, path, the request body for POST, the status the
# right token gets, and whether the route is open (served without the
# token: the health check and the dashboard's files, which hold no room
# data).  GET /mcp without a session is 400: it got past every guard.
ROUTES=(
	"GET / - 200 open"
	"GET /js/main.js - 200 open"
	"GET /js/nothing.js - 404 open"
	"GET /style.css - 200 open"
	"GET /healthz - 200 open"
	"GET /api/status - 200 guarded"
	"GET /api/history - 200 guarded"
	'POST /api/send {"text":"guarded"} 200 guarded'
	"GET /api/nothing - 404 guarded"
	'POST /mcp {"jsonrpc":"2.0","id":1,"method":"ping"} 400 guarded'
	"GET /mcp - 400 guarded"
	"DELETE /mcp - 400 guarded"
)
for row in "${ROUTES[@]}"; do
	read -r m p BODY want kind <<<"$row"
	what="$m $p"
	extra=(-H 'Accept: application/json, text/event-stream')
	n=$((${n:-9} + 1))
	wrong=("${extra[@]}" --interface "127.0.0.$n")
	if [ "$kind" = open ]; then
		is "$want" "$(status "$m" "$p" "${extra[@]}")" "$what without a token"
	else
		is 401 "$(status "$m" "$p" "${extra[@]}")" "$what without a token"
		grep -qi '^www-authenticate: Bearer' "$T/hdr" && ok ||
			fail "$what: 401 without WWW-Authenticate: Bearer"
		jq -e '.error | type == "string"' "$T/body" >/dev/null 2>&1 && ok ||
			fail "$what: 401 body is not {\"error\":...}"
		# Wrong tokens come from another loopback address per route:
		# past 20 a minute an address is slowed (throttle.sh), and
		# the right token's checks below are from 127.0.0.1.
		is 401 "$(status "$m" "$p" "${wrong[@]}" -H "Authorization: Bearer ${TOKEN}x")" \
			"$what with a longer wrong token"
		is 401 "$(status "$m" "$p" "${wrong[@]}" -H "Authorization: Bearer ${TOKEN%?}")" \
			"$what with a token one byte short"
		is 401 "$(status "$m" "$p" "${wrong[@]}" -H "Authorization: Basic $TOKEN")" \
			"$what with another scheme"
	fi
	is "$want" "$(status "$m" "$p" "${extra[@]}" -H "$auth")" "$what with the token"
	# DNS rebinding: a page elsewhere, or a name that is not ours, is
	# refused before the token is even looked at.
	is 403 "$(status "$m" "$p" "${extra[@]}" -H "$auth" -H 'Origin: http://evil.example')" \
		"$what from a foreign Origin"
	is 403 "$(status "$m" "$p" "${extra[@]}" -H "$auth" -H "Host: evil.example:$PORT")" \
		"$what with a forged Host"
	is 403 "$(status "$m" "$p" "${extra[@]}" -H "$auth" -H "Origin: http://127.0.0.1:$((PORT + 1))")" \
		"$what from our address on another port"
	is "$want" "$(status "$m" "$p" "${extra[@]}" -H "$auth" -H "Origin: http://127.0.0.1:$PORT")" \
		"$what from our own page"
done

# The dashboard's files: their types, a CSP that allows nothing inline
# and nothing from elsewhere, no sniffing, no framing.
status GET / >/dev/null
grep -qi '^content-type: text/html' "$T/hdr" && ok || fail "/ is not text/html"
csp=$(grep -i '^content-security-policy:' "$T/hdr" | tr -d '\r')
for d in "default-src 'none'" "script-src 'self'" "style-src 'self'" \
	"connect-src 'self'" "frame-ancestors 'none'" "base-uri 'none'"; do
	case $csp in *"$d"*) ok ;; *) fail "CSP of / lacks $d: $csp" ;; esac
done
case $csp in *unsafe-inline*|*unsafe-eval*|*'*'*) fail "CSP of / is loose: $csp" ;; *) ok ;; esac
grep -qi '^x-content-type-options: nosniff' "$T/hdr" && ok || fail "/ without nosniff"
status GET /js/main.js >/dev/null
grep -qi '^content-type: text/javascript' "$T/hdr" && ok || fail "/js/main.js is not text/javascript"
status GET /style.css >/dev/null
grep -qi '^content-type: text/css' "$T/hdr" && ok || fail "/style.css is not text/css"
status GET /api/status -H "$auth" >/dev/null
grep -qi "^content-security-policy: default-src 'none'" "$T/hdr" && ok ||
	fail "JSON answers without a CSP that allows nothing"
# Bodies are bounded, with the token or without.
head -c 70000 /dev/zero | tr '\0' 'a' >"$T/big"
is 413 "$(curl -sS -o "$T/body" -w '%{http_code}' -H "$auth" -H 'Content-Type: application/json' \
	--data-binary @"$T/big" "${URL[sec]}/api/send")" "an oversized body"
is 200 "$(status GET /api/status -H "$auth")" "the daemon serves on"
stop sec

# A bind other than loopback needs a token: serve refuses at once, says
# why, and leaves nothing behind (no serve.json, nothing listening).
for bind in 0.0.0.0:0 '[::]:0' 192.0.2.1:0; do
	expect 1 "serve on $bind without a token" -- \
		env PAPO_HOME="$T/open" timeout 10 "$PAPO" serve --http "$bind" --listen 127.0.0.1:0
	has "$T/err" "token" "serve on $bind says a token is needed"
	[ ! -e "$T/open/serve.json" ] && ok || fail "serve on $bind wrote serve.json"
done
expect 1 "PAPO_HTTP on 0.0.0.0 without PAPO_TOKEN" -- \
	env PAPO_HOME="$T/open" PAPO_HTTP=0.0.0.0:0 timeout 10 "$PAPO" serve --listen 127.0.0.1:0
expect 1 "an empty token is no token" -- \
	env PAPO_HOME="$T/open" PAPO_TOKEN= timeout 10 "$PAPO" serve --http 0.0.0.0:0 --listen 127.0.0.1:0
finish
