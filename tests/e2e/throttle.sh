#!/usr/bin/env bash
# throttle.sh: wrong credentials (docs/SECURITY.md, "Wrong credentials").
# A PAPO_TOKEN shorter than 32 characters stops serve at once, saying how
# to make one.  A guessing loop gets 401 nineteen times, then 429 with
# Retry-After; meanwhile the right token is served from another address
# (127.0.0.2), to a local agent at an address whose tunnel traffic is
# slowed, and to the guessing address itself once it waits its turn.
# The approval page counts wrong tokens per address across pages.
# Usage: throttle.sh PATH_TO_PAPO.
PAPO=${1:?usage: throttle.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN PAPO_HTTP PAPO_LISTEN PAPO_INVITE PAPO_TLS PAPO_TLS_CERT \
	PAPO_TLS_KEY PAPO_PUBLIC_URL PAPO_CORS_ORIGINS PAPO_OAUTH

# code [curl args...]: the HTTP status; the body in $T/body, the headers
# in $T/head.
code() {
	curl -sS --max-time 10 -o "$T/body" -D "$T/head.raw" -w '%{http_code}' "$@"
	tr -d '\r' <"$T/head.raw" >"$T/head"
}

# Short tokens: refused before anything starts, with what to do.
for tok in x s3cret 0123456789abcdef0123456789abcde; do
	expect 1 "a token of ${#tok} characters is refused" -- env \
		PAPO_HOME="$T/short" PAPO_TOKEN="$tok" timeout 10 "$PAPO" serve \
		--http 127.0.0.1:0 --listen 127.0.0.1:0 --name short
	has "$T/err" "is ${#tok} characters; it must be at least 32 random ones.*openssl rand -hex 32" \
		"the refusal of ${#tok} characters says how to make one"
done
expect 1 "--token too" -- env PAPO_HOME="$T/short" timeout 10 "$PAPO" serve \
	--http 127.0.0.1:0 --listen 127.0.0.1:0 --name short --token abc
has "$T/err" "is 3 characters" "--token's refusal"
check "nothing was made in the home" test ! -e "$T/short/room.json"

tok=0123456789abcdef0123456789abcdef   # 32: the shortest accepted
PAPO_TOKEN=$tok PAPO_OAUTH=on start ana || { finish; exit 1; }
u=${URL[ana]}
right=(-H "Authorization: Bearer $tok")

# A guessing loop from 127.0.0.1.
n=0
for i in $(seq 19); do
	[ "$(code -H "Authorization: Bearer guess-$i" "$u/api/status")" = 401 ] && n=$((n + 1))
done
check "19 wrong tokens: 401 each ($n)" test "$n" = 19
n=0
for i in $(seq 20 40); do
	[ "$(code -H "Authorization: Bearer guess-$i" "$u/api/status")" = 429 ] && n=$((n + 1))
done
check "from the 20th on: 429 each ($n of 21)" test "$n" = 21
has "$T/head" "^Retry-After: 1$" "429 says when to come back"
has "$T/body" "too many wrong credentials from this client" "429 says why"
check "a request without a token still gets 401 (not a guess)" \
	test "$(code "$u/api/status")" = 401

# Others are not slowed by it.
check "the right token from 127.0.0.2: 200" \
	test "$(code --interface 127.0.0.2 "${right[@]}" "$u/api/status")" = 200
check "a wrong one from 127.0.0.2: 401 (its own count)" \
	test "$(code --interface 127.0.0.2 -H 'Authorization: Bearer nope' "$u/api/status")" = 401
# The guessing address itself: its right token passes at its turn, once
# a second (waiting longer is fine).
sleep 1.2   # time tested: the address's next turn
check "the right token from the slowed address, after Retry-After: 200" \
	test "$(code "${right[@]}" "$u/api/status")" = 200

# A tunnel connects from loopback too: guesses through it (forwarding
# headers) slow the tunnel's clients, not this machine's own agents at
# the same address.
fwd=(--interface 127.0.0.3 -H 'X-Forwarded-For: 203.0.113.9')
for i in $(seq 20); do
	code "${fwd[@]}" -H "Authorization: Bearer guess-$i" "$u/api/status" >/dev/null
done
check "guesses through the tunnel: 429" \
	test "$(code "${fwd[@]}" -H 'Authorization: Bearer guess-x' "$u/api/status")" = 429
check "a local agent at the same address with the right token: 200" \
	test "$(code --interface 127.0.0.3 "${right[@]}" "$u/api/status")" = 200

# The approval page: five wrong tokens void one page, and the count goes
# on across pages per address (127.0.0.4): four pages of four wrong ones
# are 403, the next wrong one is 429, on a new page too.
cid=$(curl -sS --max-time 10 -H 'Content-Type: application/json' \
	-d '{"client_name":"guesser","redirect_uris":["http://127.0.0.1:1/cb"]}' \
	"$u/register" | jq -r .client_id)
chal=0123456789abcdef0123456789abcdef0123456789a
page() { # a new approval page from 127.0.0.4: its request id
	curl -sS --max-time 10 --interface 127.0.0.4 \
		"$u/authorize?response_type=code&client_id=$cid&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcb&code_challenge=$chal&code_challenge_method=S256" |
		sed -n 's/.*name="request" value="\([^"]*\)".*/\1/p'
}
answer() { # answer REQUEST TOKEN: the page's form posted from 127.0.0.4
	code --interface 127.0.0.4 --data-urlencode "request=$1" \
		--data-urlencode "token=$2" --data-urlencode decision=approve "$u/authorize"
}
n=0
for p in 1 2 3 4; do
	req=$(page)
	for i in 1 2 3 4; do
		[ "$(answer "$req" "wrong-$p-$i")" = 403 ] && n=$((n + 1))
	done
done
check "16 wrong tokens on four pages: 403 each ($n)" test "$n" = 16
req=$(page)
n=0
for i in 1 2 3; do
	[ "$(answer "$req" "wrong-5-$i")" = 403 ] && n=$((n + 1))
done
check "three more on a fifth page: 403 ($n)" test "$n" = 3
check "the 20th wrong token from the address: 429" test "$(answer "$req" wrong-5-4)" = 429
has "$T/body" "Too many wrong tokens came from your address" "the page says why"
has "$T/head" "^Retry-After: 1$" "and when to come back"
req=$(page)
check "a new page does not buy new tries: 429" test "$(answer "$req" wrong-6-1)" = 429
sleep 1.2   # time tested: the address's next turn
check "the right token at the address's turn: approved (302)" \
	test "$(answer "$req" "$tok")" = 302
stop ana

stop_all
finish
