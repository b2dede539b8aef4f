#!/bin/bash
# deb_chroot.sh: the half of deb.sh that runs inside the fresh Debian 12
# root, as root, in a PID namespace of its own (every daemon started here
# ends with it): apt-get install ./papo_*.deb, then what users see.
#   usage: deb_chroot.sh PACKAGE.deb      (in /tmp)
# Prints a FAIL line per failed check, "time: ..." lines, and last
# "chroot: N passed, N failed".
set -u
DEB=/tmp/${1:?usage: deb_chroot.sh PACKAGE.deb}
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Loopback only: no LAN beacons, no asking a router for a port.
export PAPO_LAN=off PAPO_PORTMAP=off
passed=0 failed=0
ok()   { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
now()  { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }
finish() {
	echo "chroot: $passed passed, $failed failed"
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
	exit
}
# as USER COMMAND...: a command of a normal user, in its home, output in
# /tmp/out and /tmp/err; its exit status.
as() {
	local u=$1; shift
	(cd "/home/$u" && runuser -u "$u" -- env HOME="/home/$u" USER="$u" \
	    PAPO_LAN=off PAPO_PORTMAP=off "$@") >/tmp/out 2>/tmp/err
}
until_true() { # until_true SECONDS COMMAND...
	local i n=$(($1 * 10))
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
# serve USER: papo serve in the background on ports of its choosing, its
# output in /tmp/USER.out (not a terminal: as the unit's journal).
serve() {
	(cd "/home/$1" && runuser -u "$1" -- env HOME="/home/$1" \
	    PAPO_LAN=off PAPO_PORTMAP=off papo serve --http 127.0.0.1:0 \
	    --listen 127.0.0.1:0) >"/tmp/$1.out" 2>&1 </dev/null &
	until_true 20 test -s "/home/$1/.papo/serve.json" ||
	    fail "$1's papo serve did not start: $(tail -3 "/tmp/$1.out")"
}

# The package, and every library it needs, from the archive.
npkg() { dpkg-query -W -f '${Status}\n' | grep -c ' installed$'; }
n0=$(npkg)
t0=$(now)
apt-get update -qq >/tmp/apt.out 2>&1 || fail "apt-get update: $(tail -3 /tmp/apt.out)"
t1=$(now)
if (cd /tmp && apt-get install -y -qq "./$(basename "$DEB")") \
    >/tmp/apt.out 2>&1; then
	ok
else
	fail "apt-get install $DEB: $(tail -5 /tmp/apt.out)"
	finish
fi
t2=$(now)
echo "time: apt-get update $(secs "$t0" "$t1") s, apt-get install papo" \
    "$(secs "$t1" "$t2") s ($(($(npkg) - n0)) packages installed," \
    "$n0 there before)"
dpkg-query -W -f '${Status}\n' papo | grep -q 'install ok installed' && ok ||
    fail "dpkg does not say papo is installed"
missing=$(ldd /usr/bin/papo /usr/libexec/papo/papo-full | grep 'not found')
[ -z "$missing" ] && ok || fail "libraries not installed: $missing"

useradd -m -s /bin/bash ana && useradd -m -s /bin/bash bo && ok ||
    fail "useradd"

# papo --version and papo version: the same, the version first.
as ana papo --version && ok || fail "papo --version: $(cat /tmp/err)"
cp /tmp/out /tmp/version
want=$(dpkg-query -W -f '${Version}' papo)
[ "$(head -n 1 /tmp/version)" = "papo $want" ] && ok ||
    fail "papo --version's first line is '$(head -n 1 /tmp/version)', wanted 'papo $want'"
for w in 'papo/5' 'papo/1' 'libsodium ' 'GnuTLS ' 'ngtcp2 ' 'SQLite ' \
    'libmicrohttpd ' 'libcurl ' 'cJSON ' 'cmark-gfm '; do
	grep -qF "$w" /tmp/version && ok || fail "papo --version lacks '$w'"
done
as ana papo version && cmp -s /tmp/out /tmp/version && ok ||
    fail "papo version differs from papo --version"

# papo new, papo serve, a second member joining, say, status, history.
as ana papo new --name ana && ok || fail "papo new: $(cat /tmp/err)"
grep -qE '^papo1[a-z2-7]+$' /tmp/out && ok || fail "papo new printed no invite"
serve ana
as ana papo invite && invite=$(cat /tmp/out) || fail "papo invite"
as bo papo join "$invite" --name bo && ok || fail "papo join: $(cat /tmp/err)"
serve bo
grep -q '^mcp: http://127.0.0.1:[0-9]*/mcp$' /tmp/bo.out && ok ||
    fail "papo serve did not print the MCP URL: $(cat /tmp/bo.out)"
until_true 20 as ana sh -c 'papo status | grep -q "^  bo  *online"' && ok ||
    fail "ana's status never showed bo online: $(as ana papo status; cat /tmp/out)"
as ana papo status
grep -q '^me: ana ' /tmp/out && grep -q '^owner: ana$' /tmp/out && ok ||
    fail "papo status: $(cat /tmp/out)"
as ana papo say "hello from the package" && ok || fail "papo say: $(cat /tmp/err)"
grep -qE '^[a-z2-7]{10} delivered to bo$' /tmp/out && ok ||
    fail "papo say did not deliver to bo: $(cat /tmp/out)"
as bo papo history
grep -qE ' ana: hello from the package$' /tmp/out && ok ||
    fail "bo's history lacks ana's message: $(cat /tmp/out)"

# A first papo serve with no room, its output not a terminal (as the
# unit's, in the journal): the room is made, its invite is not printed.
useradd -m -s /bin/bash cy
serve cy
as cy papo invite
cy_invite=$(cat /tmp/out)
[ -n "$cy_invite" ] && ! grep -qF "$cy_invite" /tmp/cy.out &&
    ! grep -q 'papo1' /tmp/cy.out && ok ||
    fail "papo serve's output holds the invite: $(cat /tmp/cy.out)"
grep -q "^room: .*'papo invite' prints its invite" /tmp/cy.out && ok ||
    fail "papo serve did not say where the invite is: $(cat /tmp/cy.out)"

# The service's unit, where systemd looks for user units.
grep -qx 'ExecStart=papo serve' /usr/lib/systemd/user/papo.service && ok ||
    fail "no papo.service in /usr/lib/systemd/user"

# man papo, with man-db installed as a user would.
t3=$(now)
apt-get install -y -qq man-db >/tmp/apt.out 2>&1 ||
    fail "apt-get install man-db: $(tail -3 /tmp/apt.out)"
t4=$(now)
echo "time: apt-get install man-db $(secs "$t3" "$t4") s"
as ana env MANPAGER=cat MANWIDTH=80 man papo && ok ||
    fail "man papo: $(cat /tmp/err)"
sed 's/.\x08//g' /tmp/out >/tmp/man
for w in '^NAME' 'papo [-–—] rooms where AI agents talk' '^COMMANDS' \
    'papo serve' 'papo doctor' 'PAPO_HOME' 'systemctl --user enable --now papo'; do
	grep -qE -- "$w" /tmp/man && ok || fail "man papo lacks '$w'"
done
for f in README.md LICENSE docs/INSTALL.md; do
	[ -s "/usr/share/doc/papo/$f" ] && ok || fail "no /usr/share/doc/papo/$f"
done
finish
