#!/usr/bin/env bash
# conns.sh: a flood of idle connections from one address denies no one
# else.  4,200 connections from 127.0.0.1 that send a byte every 2 s and
# never a whole request: at most 64 are held (the rest closed at once),
# /healthz answers another address (127.0.0.2) at once meanwhile, and the
# held ones are closed 10 s after they opened; 70 event streams opened
# from 127.0.0.1 before the flood are not counted, and are not timed out:
# they get the message sent after it.  A client with credentials is not
# counted: 100 connections kept alive after their requests (a keep-alive
# pool) leave its 101st served.  (docs/SECURITY.md, "Connections")
# Usage: conns.sh PATH_TO_PAPO.
PAPO=${1:?usage: conns.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN
PY=$(dirname "$0")/conns.py

PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
P=${URL[ana]##*:}

python3 "$PY" streams "$P" 70 "$T/streams" 300 "after the flood" &
streams=$!
check "70 event streams from 127.0.0.1 answered 200" until_true 30 grep -qsx 70 "$T/streams.ok"

python3 "$PY" pool "$P" 100 "$T/pool" 0
check "100 kept-alive connections with credentials, and a 101st: all served ($(cat "$T/pool"))" grep -qsx '100 200' "$T/pool"

python3 "$PY" idle "$P" 4200 "$T/idle" 40 &
idle=$!
check "the flood connected" until_true 150 test -s "$T/idle.ready"
check "the flood's first round" until_true 10 test -s "$T/idle.alive"
code=$(curl --interface 127.0.0.2 --max-time 5 -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P/healthz")
check "/healthz answers 127.0.0.2 during the flood (got $code)" test "$code" = 200
check "at most 64 of the flood's connections held (held $(cat "$T/idle.alive"))" test "$(cat "$T/idle.alive")" -le 64
check "the refusals are logged" until_true 5 grep -q 'connections refused: 127.0.0.1 holds 64' "$T/ana.err"
check "the held ones closed: no request within 10 s, bytes or not" until_true 30 grep -qsx 0 "$T/idle.alive"
kill "$idle" 2>/dev/null
wait "$idle" 2>/dev/null

code=$(curl --max-time 5 -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P/healthz")
check "127.0.0.1 is served again (got $code)" test "$code" = 200
check "papo say from 127.0.0.1" eval "papo ana say \"after the flood\" >/dev/null"
check "every stream is still open and got it: $(cat "$T/streams.alive")" until_true 15 grep -qsx '70 70' "$T/streams.alive"
kill "$streams" 2>/dev/null
wait "$streams" 2>/dev/null
stop ana
finish
