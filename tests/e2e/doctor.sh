#!/usr/bin/env bash
# doctor.sh: papo doctor as a user runs it for a bug report, on real
# daemons in temporary homes: a running daemon with a member (its ports
# held by it, how it is reached, each member's clock), no secret in what
# it prints (the invite, the room's key, the identity, the token, the
# relay's secret), a key file others can read, the daemon stopped (its
# ports free, the rooms from the files), a port another program holds
# (named, with its pid), and no home at all.  Usage: doctor.sh
# PATH_TO_PAPO.  Prints "N passed, N failed".  About 15 s.
set -u
PAPO=${1:?usage: doctor.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_HOME PAPO_NAME PAPO_ABOUT PAPO_INVITE PAPO_HTTP PAPO_LISTEN \
	PAPO_TOKEN PAPO_TURN PAPO_TURN_SECRET

# doctor HOME [VAR=VALUE...]: papo doctor on $T/HOME, its output in
# $T/out and $T/err, its exit status in $rc.
doctor() {
	local h=$1; shift
	env PAPO_HOME="$T/$h" "$@" "$PAPO" doctor >"$T/out" 2>"$T/err"
	rc=$?
}
hasnt() { # hasnt FILE STRING DESCRIPTION: the exact string is not in it
	if grep -qF -- "$2" "$1"; then fail "$3: found in: $(cat "$1")"; else ok; fi
}
# A port nothing holds now, of the kernel's choosing.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# (1) A running daemon with a member: everything a report needs, and
# nothing wrong.
PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null 2>&1
start ana || exit 1
join bo "$(invite ana)"
start bo || exit 1
check "ana sees bo online" until_true 20 online ana bo
# Each member's clock against ours comes with its next announcement
# (every 10 s at most).
clock_known() {
	api ana /api/status | jq -e '.members[] | select(.name == "bo") |
		.clock_offset_ms | numbers' >/dev/null
}
check "status gives bo's clock_offset_ms" until_true 25 clock_known
off=$(api ana /api/status | jq '.members[] | select(.name == "bo") | .clock_offset_ms')
check "bo's clock is within 2 s of ours on one machine ($off ms)" \
	test "${off#-}" -lt 2000
TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
TURNSECRET=turn-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
doctor ana PAPO_TOKEN="$TOKEN" PAPO_TURN_SECRET="$TURNSECRET" PAPO_LOG=info \
	PAPO_PUBLIC_URL="https://ana:pw-$TURNSECRET@papo.example/"
check "doctor exits 0 with nothing wrong (exit $rc: $(cat "$T/err"))" test "$rc" -eq 0
has "$T/out" '^version +papo [0-9]+\.[0-9]+\.[0-9]+' "the version"
has "$T/out" '^system +Linux ' "the system"
has "$T/out" '^platform +(epoll loop; HTTP in epoll mode, at most 4096 connections; UDP with DF \(path MTU probed\)|poll loop; HTTP in select mode, at most 768 connections; UDP with no DF \(a router that fragments hides a path.s MTU\))$' "the platform layer, its HTTP connection limit and whether it sends with DF (docs/ARCHITECTURE.md)"
has "$T/out" '^protocols: papo/[0-9]' "the protocols (papo version's lines)"
has "$T/out" '^  libsodium +[0-9]' "the libraries (papo version's lines)"
has "$T/out" "^home +$T/ana \\(PAPO_HOME\\), mode 0700" "the home and its mode"
has "$T/out" '^  identity +0600 +32 bytes' "the identity's mode"
has "$T/out" '^  room.json +0600' "room.json's mode"
pid=$(cat "$T/ana.pid")
has "$T/out" "^daemon +running, pid $pid, at ${URL[ana]}" "the daemon and its pid"
hport=${URL[ana]##*:}
has "$T/out" "^  HTTP 127.0.0.1:$hport/tcp: held by this daemon \\(pid $pid\\)" "the HTTP port, held by the daemon"
has "$T/out" "^  QUIC 127.0.0.1:${QPORT[ana]}/udp: held by this daemon \\(pid $pid\\)" "the QUIC port, held by the daemon"
has "$T/out" "^reached at +127.0.0.1:${QPORT[ana]}" "the addresses it is reached at"
has "$T/out" 'loopback only' "loopback only is said"
has "$T/out" '^NAT +(unknown|open|cone|symmetric)' "the NAT kind"
has "$T/out" '^port mapping +off \(listening on loopback only\)' "port mapping's state and why"
has "$T/out" '^relay +off' "the relay's state"
has "$T/out" '^rooms +1$' "the rooms"
has "$T/out" '^  papo-[a-z2-7]+ \([a-z2-7]{8}\) as ana, 1 member, 1 online, the default' "the room's line"
has "$T/out" '^    bo  online  path: direct, [0-9.]+ ms  clock: [+-][0-9]+ ms$' "bo's path and clock"
has "$T/out" '^settings +PAPO_|^ +PAPO_' "the settings"
has "$T/out" 'PAPO_TOKEN=\(set, not shown\)' "the token is said to be set"
has "$T/out" 'PAPO_TURN_SECRET=\(set, not shown\)' "the relay's secret is said to be set"
has "$T/out" 'PAPO_LOG=info' "a plain setting is shown"
has "$T/out" 'PAPO_PUBLIC_URL=https://ana:\*\*\*\*@papo.example/' "a URL's password is masked"
check "... and never printed" bash -c "! grep -qF 'pw-$TURNSECRET' $T/out"
has "$T/out" '^nothing looks wrong$' "nothing looks wrong"
# No secret: the invite, the room's key, the identity's seed, the token,
# the relay's secret.
hasnt "$T/out" "$(invite ana)" "no invite"
hasnt "$T/out" "$(jq -r .invite "$T/ana/serve.json" | cut -c 1-40)" "not the start of the invite either"
hasnt "$T/out" "$(jq -r .secret "$T/ana/room.json")" "no room key"
hasnt "$T/out" "$(od -An -tx1 "$T/ana/identity" | tr -d ' \n')" "no identity (hex)"
hasnt "$T/out" "$(base64 -w0 "$T/ana/identity")" "no identity (base64)"
hasnt "$T/out" "$TOKEN" "no token"
hasnt "$T/out" "$TURNSECRET" "no relay secret"
check "papo doctor --help exits 0" "$PAPO" doctor --help >/dev/null
expect 2 "doctor takes no argument" -- "$PAPO" doctor extra

# (2) Key files others can read: each named, with the chmod that fixes it.
chmod 0644 "$T/ana/identity"
chmod 0640 "$T/ana/room.json"
chmod 0755 "$T/ana"
doctor ana
check "doctor exits 1 when something looks wrong (exit $rc)" test "$rc" -eq 1
has "$T/err" '^papo: doctor found 3 things wrong' "one line on stderr says how many"
has "$T/out" "^what looks wrong \\(3\\):" "the list of what looks wrong"
has "$T/out" "$T/ana/identity holds this member's private key and others can read it \\(mode 0644\\): chmod 600 $T/ana/identity" "the identity readable by others, and the fix"
has "$T/out" "$T/ana/room.json holds the room's key and others can read it \\(mode 0640\\): chmod 600 $T/ana/room.json" "room.json readable by others, and the fix"
has "$T/out" "$T/ana is a folder of papo's and others can read it \\(mode 0755\\): chmod 700 $T/ana" "the home readable by others, and the fix"
has "$T/out" '^  identity +0644' "the listing shows the bad mode"
chmod 0600 "$T/ana/identity" "$T/ana/room.json"
chmod 0700 "$T/ana"
doctor ana
check "after the chmods, nothing looks wrong (exit $rc: $(grep -A5 'looks wrong' "$T/out"))" test "$rc" -eq 0

# (3) Stopped: it says so, checks the ports papo serve would take (free
# now) and names the rooms from the files.
stop ana
stop bo
HP=$(free_port)
QP=$(free_port)
doctor ana PAPO_HTTP=127.0.0.1:$HP PAPO_LISTEN=127.0.0.1:$QP
check "stopped: exit 0 (exit $rc: $(cat "$T/err"))" test "$rc" -eq 0
has "$T/out" '^daemon +not running: no papo serve is running on' "it says the daemon is not running"
has "$T/out" "^  HTTP 127.0.0.1:$HP/tcp: free$" "the HTTP port is free"
has "$T/out" "^  QUIC 127.0.0.1:$QP/udp: free$" "the QUIC port is free"
has "$T/out" '^  papo-[a-z2-7]+ \(fingerprint [a-z2-7]{8}\), the home.s first room' "the room from its files"
has "$T/out" '^  identity +0600' "the files are still listed"
has "$T/out" '^nothing looks wrong$' "nothing looks wrong"
hasnt "$T/out" "$(jq -r .secret "$T/ana/room.json")" "no room key (stopped)"

# (4) A port another program holds: named with its pid, and what to do.
python3 -c '
import socket, sys, time
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", int(sys.argv[1])))
t = socket.socket()
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("127.0.0.1", int(sys.argv[2])))
t.listen()
print("ready", flush=True)
time.sleep(60)' "$QP" "$HP" >"$T/holder.out" &
holder=$!
echo $holder >"$T/holder.pid"
check "the other program holds the ports" until_true 10 grep -q ready "$T/holder.out"
comm=$(cat "/proc/$holder/comm")
doctor ana PAPO_HTTP=127.0.0.1:$HP PAPO_LISTEN=127.0.0.1:$QP
check "a port taken: exit 1 (exit $rc)" test "$rc" -eq 1
has "$T/out" "^  QUIC 127.0.0.1:$QP/udp: taken by pid $holder \\($comm\\)" "the QUIC port's holder, by pid and name"
has "$T/out" "^  HTTP 127.0.0.1:$HP/tcp: taken by pid $holder \\($comm\\)" "the HTTP port's holder, by pid and name"
has "$T/out" "QUIC port $QP is taken by pid $holder \\($comm\\): papo serve cannot start on 127.0.0.1:$QP; stop that program, or set PAPO_LISTEN \\(--listen\\) to another port" "what to do about the QUIC port"
has "$T/out" "HTTP port $HP is taken by pid $holder \\($comm\\).*set PAPO_HTTP \\(--http\\)" "what to do about the HTTP port"
# papo serve indeed cannot start there: the doctor said the truth.
PAPO_HOME=$T/ana timeout 20 "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:$QP >/dev/null 2>"$T/serve.err"
rc=$?
check "papo serve refuses the taken QUIC port (exit $rc: $(cat "$T/serve.err"))" test "$rc" -eq 1
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
rm -f "$T/holder.pid"

# (5) A bad setting, and no home at all.
doctor ana PAPO_HTTP=0.0.0.0:$HP
check "a bad setting: exit 1" test "$rc" -eq 1
has "$T/out" 'papo serve would refuse to start: .*PAPO_TOKEN' "the setting papo serve would refuse, and why"
doctor nohome PAPO_HTTP=127.0.0.1:0 PAPO_LISTEN=127.0.0.1:0
check "no home: exit 1" test "$rc" -eq 1
has "$T/out" "$T/nohome is no papo home yet: 'papo new --name NAME' makes a room there" "no home, and what to do"
has "$T/out" '^  HTTP 127.0.0.1:0/tcp: port 0, any free port' "port 0 is not checked"

finish
