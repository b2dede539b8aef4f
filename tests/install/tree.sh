#!/usr/bin/env bash
# tree.sh: `cmake --install` into a temporary root (DESTDIR, prefix /usr),
# and what it put there as their users meet it: papo --version (the
# version, the protocols, each library's version as the machine's
# package of that library has it), the bash, zsh and fish completions
# against `papo --help` and each command's usage, the systemd user unit
# (systemd-analyze verify), the man page and the docs.
#   usage: tree.sh BUILD_DIR
set -u
BUILD=$(cd "${1:?usage: tree.sh BUILD_DIR}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/papo-tree.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/common.sh"

R=$T/root
if ! DESTDIR=$R cmake --install "$BUILD" --prefix /usr >"$T/install" 2>&1; then
	fail "cmake --install: $(tail -5 "$T/install")"
	echo "$passed passed, $failed failed"
	exit 1
fi
PAPO=$R/usr/bin/papo
FULL=$R/usr/libexec/papo/papo-full
for f in bin/papo libexec/papo/papo-full share/man/man1/papo.1.gz \
    share/bash-completion/completions/papo share/zsh/vendor-completions/_papo \
    share/fish/vendor_completions.d/papo.fish lib/systemd/user/papo.service \
    share/doc/papo/README.md share/doc/papo/LICENSE share/doc/papo/copyright; do
	[ -s "$R/usr/$f" ] && ok || fail "cmake --install put no /usr/$f"
done
for f in "$SRC"/docs/*.md; do
	cmp -s "$f" "$R/usr/share/doc/papo/docs/$(basename "$f")" && ok ||
	    fail "docs/$(basename "$f") is not in /usr/share/doc/papo/docs"
done
[ -x "$PAPO" ] && ok || fail "/usr/bin/papo is not executable"
[ -x "$FULL" ] && ok || fail "/usr/libexec/papo/papo-full is not executable"
# The front links no library but libc, libcJSON and libsodium (the
# commands it runs itself start in a millisecond); papo-full the rest.
# A sanitized build's front links everything (CMakeLists.txt: the
# instrumentation keeps what the link would drop), so this is checked
# in the normal build's half of the suite only.
if grep -qE '^PAPO_(SANITIZE|FUZZ):BOOL=ON' "$BUILD/CMakeCache.txt"; then
	echo "tree.sh: a sanitized build: its front links everything (the normal build checks it links only libc, libcJSON and libsodium)"
else
	extra=$(ldd "$PAPO" | awk '{ print $1 }' | grep -vE \
	    '^(linux-vdso|/lib64/ld-linux|libc\.so|libcjson\.so|libsodium\.so)')
	[ -z "$extra" ] && ok || fail "/usr/bin/papo links more: $extra"
fi

# papo --version: the project's version, then the protocols, then each
# library at the version Debian's package of it has (read at run time).
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
"$PAPO" --version >"$T/version" 2>"$T/err" && ok ||
    fail "papo --version exits $?: $(cat "$T/err")"
[ "$(head -n 1 "$T/version")" = "papo $version" ] && ok ||
    fail "papo --version begins '$(head -n 1 "$T/version")', not 'papo $version'"
"$PAPO" version >"$T/version2" && cmp -s "$T/version" "$T/version2" && ok ||
    fail "papo version differs from papo --version"
grep -qx 'protocols: papo/5 papo/4 papo/3 papo/2 papo/1 (QUIC ALPN, newest first)' \
    "$T/version" && ok || fail "protocols: $(cat "$T/version")"
grep -qx 'invites: papo1..., versions 1 to 2' "$T/version" && ok ||
    fail "invites: $(cat "$T/version")"
# NAME in papo --version, and the shared object whose package says it.
while read -r name so; do
	got=$(awk -v n="$name" '$1 == n { print $2; exit }' "$T/version")
	path=$(ldd "$FULL" | awk -v so="$so" 'index($1, so) == 1 { print $3 }')
	pkg=$(pkg_of "$path")
	# Debian's version, without epoch or revision: 1:3.7.9-2+deb12u4
	# is 3.7.9.
	want=$(dpkg-query -W -f '${Version}' "$pkg" 2>/dev/null |
	    sed 's/^[0-9]*://; s/-[^-]*$//; s/[+~].*//')
	[ -n "$want" ] && [ "$got" = "$want" ] && ok ||
	    fail "papo --version says $name '$got'; its package $pkg ($path) is '$want'"
done <<'EOF'
libsodium libsodium.so
GnuTLS libgnutls.so
ngtcp2 libngtcp2.so
SQLite libsqlite3.so
libmicrohttpd libmicrohttpd.so
libcurl libcurl-gnutls.so
cJSON libcjson.so
cmark-gfm libcmark-gfm.so
EOF
if ldd "$FULL" | grep -q libminiupnpc; then
	grep -qE '^  miniupnpc +[0-9]' "$T/version" && ok ||
	    fail "linked with libminiupnpc, papo --version gives no version"
fi

# Commands and each command's options, from the binary.
"$PAPO" --help | sed -n 's/^  papo \([a-z][a-z-]*\).*/\1/p' | sort -u \
    >"$T/cmds"
[ "$(wc -l <"$T/cmds")" -ge 18 ] && ok || fail "papo --help: $(cat "$T/cmds")"
options() { # options CMD: the options its usage names
	"$PAPO" "$1" --help | sed '/^$/q' |
	    grep -oE '(^|[[ |])--?[a-z][a-z-]*' | sed 's/^[[ |]//' | sort -u |
	    grep -vx -e --version
}

# bash: the completion function itself, as bash calls it.
bashc() { # bashc WORD...: what completing the last word offers
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
	    _papo; printf "%s\n" "${COMPREPLY[@]}"' _ \
	    "$R/usr/share/bash-completion/completions/papo" "$@"
}
bashc papo '' >"$T/bash"
# fish: `complete -C`, as fish asks when TAB is pressed.
fishc() { # fishc LINE
	fish -c "source $R/usr/share/fish/vendor_completions.d/papo.fish
	    complete -C '$1'" | cut -f 1
}
fishc 'papo ' >"$T/fish"
ZSH=$R/usr/share/zsh/vendor-completions/_papo
# zsh: TAB pressed in an interactive zsh on a pty (zsh_complete.zsh).
zshc() { # zshc LINE
	zsh "$SRC/tests/install/zsh_complete.zsh" "$(dirname "$ZSH")" "$1"
}
zsh -n "$ZSH" && ok || fail "zsh -n _papo"
zshc 'papo ' >"$T/zsh"
for c in $(cat "$T/cmds"); do
	grep -qx -- "$c" "$T/bash" && ok || fail "bash does not complete papo $c"
	grep -qx -- "$c" "$T/fish" && ok || fail "fish does not complete papo $c"
	grep -qx -- "$c" "$T/zsh" && ok || fail "zsh does not complete papo $c"
	bashc papo "$c" - >"$T/bash.o"
	fishc "papo $c -" >"$T/fish.o"
	zshc "papo $c -" >"$T/zsh.o"
	for o in $(options "$c"); do
		grep -qx -- "$o" "$T/bash.o" && ok ||
		    fail "bash does not complete papo $c $o"
		grep -qx -- "$o" "$T/fish.o" && ok ||
		    fail "fish does not complete papo $c $o"
		grep -qx -- "$o" "$T/zsh.o" && ok ||
		    fail "zsh does not complete papo $c $o"
	done
done
bashc papo setup '' >"$T/bash.o"
fishc 'papo setup ' >"$T/fish.o"
zshc 'papo setup ' >"$T/zsh.o"
for client in claude-code codex gemini cursor vscode; do
	for sh in bash fish zsh; do
		grep -qx "$client" "$T/$sh.o" && ok ||
		    fail "$sh does not complete papo setup $client"
	done
done

# The unit: what it runs, and systemd's own check of it (with papo's
# path spelt out, as systemd finds it in /usr/bin once installed).
U=$R/usr/lib/systemd/user/papo.service
for l in 'ExecStart=papo serve' 'Restart=on-failure' \
    'Environment=PAPO_HOME=%h/.papo' 'WantedBy=default.target'; do
	grep -qxF "$l" "$U" && ok || fail "papo.service has no '$l'"
done
sed "s|^ExecStart=papo |ExecStart=$PAPO |" "$U" >"$T/papo.service"
systemd-analyze verify --man=no "$T/papo.service" >"$T/verify" 2>&1 && ok ||
    fail "systemd-analyze verify papo.service: $(cat "$T/verify")"

# The installed man page is the one man.sh checks, and man finds it.
MANPATH=$R/usr/share/man LC_ALL=C MANWIDTH=80 man papo >"$T/man" 2>&1 &&
    grep -q 'papo serve' "$T/man" && ok ||
    fail "man papo (MANPATH=/usr/share/man of the root): $(head -3 "$T/man")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
