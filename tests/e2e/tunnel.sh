#!/usr/bin/env bash
# tunnel.sh: requests as a tunnel (cloudflared, tailscale serve) or a
# proxy on this machine hands them over: over loopback, but with a
# public Host (PAPO_PUBLIC_URL's) or forwarding headers.  Without a token
# they are refused with a reason naming PAPO_TOKEN; with one they need
# it; this machine's own clients are served as before.  Any other Host
# is still refused (DNS rebinding).  CORS as curl sees it: a preflight
# from a listed origin, the headers of its answers, an unlisted origin
# refused.  Bad PAPO_PUBLIC_URL and PAPO_CORS_ORIGINS stop serve.
# Usage: tunnel.sh PATH_TO_PAPO.
PAPO=${1:?usage: tunnel.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN PAPO_HTTP PAPO_LISTEN PAPO_INVITE PAPO_TLS PAPO_TLS_CERT \
	PAPO_TLS_KEY PAPO_PUBLIC_URL PAPO_CORS_ORIGINS

code() { curl -sS --max-time 10 -o "$T/body" -w '%{http_code}' "$@"; }
pub=papo.example.net

# No token: a tunnel's requests are refused, local ones served.
PAPO_PUBLIC_URL=https://$pub start ana
u=${URL[ana]}
has "$T/ana.out" "^public: https://$pub/mcp$" "the public MCP URL is printed"
check "a local request needs no token" test "$(code "$u/api/status")" = 200
check "the public Host without a token: 403" \
	test "$(code -H "Host: $pub" "$u/api/status")" = 403
has "$T/body" "PAPO_TOKEN" "the refusal says to set PAPO_TOKEN"
check "X-Forwarded-For without a token: 403" \
	test "$(code -H 'X-Forwarded-For: 203.0.113.9' "$u/api/status")" = 403
for hdr in 'Forwarded: for=203.0.113.9' 'X-Real-IP: 203.0.113.9' \
	'CF-Connecting-IP: 203.0.113.9' 'X-Forwarded-Host: x' 'X-Forwarded-Proto: https'; do
	check "$hdr without a token: 403" test "$(code -H "$hdr" "$u/mcp" \
		-H 'Content-Type: application/json' -d '{}')" = 403
done
check "an event stream through the tunnel: 403" \
	test "$(code -H "Host: $pub" "$u/api/events")" = 403
check "/healthz stays open through the tunnel" \
	test "$(code -H "Host: $pub" "$u/healthz")" = 200
check "another Host is still refused (DNS rebinding)" \
	test "$(code -H 'Host: evil.example' "$u/api/status")" = 403
has "$T/body" "addressed to it" "with the rebinding reason"
check "the public Host with a port that is not its own: 403" \
	test "$(code -H "Host: $pub:8443" "$u/healthz")" = 403
stop ana

# A token: a tunnel's requests need it, and pass with it.
PAPO_TOKEN=s3cret-0123456789abcdefghijklmnopq PAPO_PUBLIC_URL=https://$pub/ start ana
u=${URL[ana]}
check "the public Host without the token: 401" \
	test "$(code -H "Host: $pub" "$u/api/status")" = 401
check "the public Host with the token: 200" \
	test "$(code -H "Host: $pub" -H 'Authorization: Bearer s3cret-0123456789abcdefghijklmnopq' "$u/api/status")" = 200
check "the public Host with :443 and the token: 200" \
	test "$(code -H "Host: $pub:443" -H 'Authorization: Bearer s3cret-0123456789abcdefghijklmnopq' "$u/api/status")" = 200
check "X-Forwarded-For with the token: 200" \
	test "$(code -H 'X-Forwarded-For: 203.0.113.9' -H 'Authorization: Bearer s3cret-0123456789abcdefghijklmnopq' "$u/api/status")" = 200
check "the public origin's page with the token: 200" \
	test "$(code -H "Host: $pub" -H "Origin: https://$pub" -H 'Authorization: Bearer s3cret-0123456789abcdefghijklmnopq' "$u/api/status")" = 200
check "another origin through the tunnel: 403" \
	test "$(code -H "Host: $pub" -H "Origin: https://evil.example" -H 'Authorization: Bearer s3cret-0123456789abcdefghijklmnopq' "$u/api/status")" = 403
check "a wrong token through the tunnel: 401" \
	test "$(code -H "Host: $pub" -H 'Authorization: Bearer nope' "$u/api/status")" = 401
stop ana

# The dashboard's approval (/api/oauth/decide) is for the person at
# this machine: every forwarding header a tunnel or proxy adds marks a
# request as remote there too, as everywhere else (one list).
tok=tunnel-test-token-0123456789abcdef
PAPO_TOKEN=$tok PAPO_OAUTH=on start ana
u=${URL[ana]}
cid=$(curl -sS --max-time 10 -H 'Content-Type: application/json' \
	-d '{"client_name":"tunnel","redirect_uris":["http://127.0.0.1:1/cb"]}' \
	"$u/register" | jq -r .client_id)
chal=$(printf 'v%.0s' $(seq 43) | tr -d '\n')
req=$(curl -sS --max-time 10 "$u/authorize?response_type=code&client_id=$cid&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcb&code_challenge=$chal&code_challenge_method=S256" |
	sed -n 's/.*name="request" value="\([^"]*\)".*/\1/p')
check "an approval request is pending" test -n "$req"
decide() {
	code -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
		"$@" -d "{\"request\":\"$req\",\"decision\":\"approve\"}" "$u/api/oauth/decide"
}
for hdr in 'Forwarded: for=203.0.113.9' 'X-Forwarded-For: 203.0.113.9' \
	'X-Forwarded-Host: x' 'X-Forwarded-Proto: https' 'X-Forwarded-Port: 443' \
	'X-Forwarded-Server: x' 'X-Real-IP: 203.0.113.9' 'X-Client-IP: 203.0.113.9' \
	'X-Cluster-Client-IP: 203.0.113.9' 'True-Client-IP: 203.0.113.9' \
	'CF-Connecting-IP: 203.0.113.9' 'Fastly-Client-IP: 203.0.113.9' \
	'Via: 1.1 proxy' 'Tailscale-User-Login: eve@example.net'; do
	check "/api/oauth/decide with $hdr: 403" test "$(decide -H "$hdr")" = 403
done
check "/api/oauth/decide from this machine: 200" test "$(decide)" = 200
stop ana

# CORS.
app=http://127.0.0.1:5173
PAPO_CORS_ORIGINS="$app, https://app.example.net" start ana
u=${URL[ana]}
curl -sS --max-time 10 -D "$T/pre.h" -o /dev/null -X OPTIONS -H "Origin: $app" \
	-H 'Access-Control-Request-Method: POST' \
	-H 'Access-Control-Request-Headers: content-type, mcp-session-id' "$u/mcp"
tr -d '\r' <"$T/pre.h" >"$T/pre"
has "$T/pre" "^HTTP/1.1 204" "a listed origin's preflight: 204"
has "$T/pre" "^Access-Control-Allow-Origin: $app$" "the preflight allows the exact origin"
has "$T/pre" "^Vary: Origin$" "the preflight varies by Origin"
has "$T/pre" "^Access-Control-Allow-Methods: GET, POST, DELETE, OPTIONS$" "the preflight's methods"
has "$T/pre" "^Access-Control-Allow-Headers: Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name$" "the preflight's headers"
has "$T/pre" "^Access-Control-Max-Age: [0-9]+$" "the preflight's max age"
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"tunnel.sh","version":"1"}}}'
curl -sS --max-time 10 -D "$T/post.h" -o /dev/null -H "Origin: $app" \
	-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-d "$init" "$u/mcp"
tr -d '\r' <"$T/post.h" >"$T/post"
has "$T/post" "^HTTP/1.1 200" "a listed origin's POST /mcp: 200"
has "$T/post" "^Access-Control-Allow-Origin: $app$" "its answer allows the origin"
has "$T/post" "^Access-Control-Expose-Headers: Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate$" "and exposes the session header"
has "$T/post" "^(Mcp|MCP)-Session-Id: " "and has a session"
check "the other listed origin: 204" test "$(code -X OPTIONS -H 'Origin: https://app.example.net' \
	-H 'Access-Control-Request-Method: GET' "$u/api/events")" = 204
check "an unlisted origin's preflight: 403" test "$(code -X OPTIONS -H 'Origin: http://127.0.0.1:5174' \
	-H 'Access-Control-Request-Method: POST' "$u/mcp")" = 403
check "an unlisted origin's POST: 403" test "$(code -H 'Origin: http://127.0.0.1:5174' \
	-H 'Content-Type: application/json' -d "$init" "$u/mcp")" = 403
check "a preflight on a path that does not exist: 404" test "$(code -X OPTIONS -H "Origin: $app" \
	-H 'Access-Control-Request-Method: GET' "$u/nothere")" = 404
curl -sS --max-time 10 -D "$T/own.h" -o /dev/null "$u/api/status"
check "an answer without Origin has no CORS headers" bash -c "! grep -qi '^access-control' '$T/own.h'"
stop ana

# Bad settings stop serve with the reason.
bad() { # bad DESCRIPTION PATTERN ENV=...: serve must refuse
	local what=$1 pat=$2; shift 2
	rm -rf "$T/bad"
	env "$@" PAPO_HOME="$T/bad" timeout 20 "$PAPO" serve --http 127.0.0.1:0 \
		--listen 127.0.0.1:0 --name bad >"$T/out" 2>"$T/err" </dev/null
	local rc=$?
	if [ "$rc" -eq 1 ]; then ok; else fail "$what: exit $rc, wanted 1"; fi
	has "$T/err" "$pat" "$what"
}
bad "a public URL with a path" "PAPO_PUBLIC_URL 'https://x.example/mcp' is not a URL" PAPO_PUBLIC_URL=https://x.example/mcp
bad "a public URL without a scheme" "PAPO_PUBLIC_URL 'x.example' is not a URL" PAPO_PUBLIC_URL=x.example
bad "a CORS wildcard" "PAPO_CORS_ORIGINS: '\*' is not an origin" PAPO_CORS_ORIGINS='*'
bad "a CORS origin with a path" "PAPO_CORS_ORIGINS: 'https://a.example/x' is not an origin" \
	PAPO_CORS_ORIGINS='https://ok.example https://a.example/x'

stop_all
finish
