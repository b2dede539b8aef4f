#!/usr/bin/env bash
# deb.sh: the Debian package as a new user meets it.  Builds it from a
# build directory (cpack -G DEB), checks what it holds and that it depends
# on every library the binary links, then installs it with apt-get into a
# fresh Debian 12 root (tests/tools/bookworm-root.sh: debootstrap, cached)
# and, in a chroot there, runs what a user would: papo --version, papo
# new, papo serve, papo join, papo say, papo status, papo history, man
# papo; and a first papo serve with its output going to a file, as the
# systemd unit's goes to the journal, which must not hold the invite.
# Prints the package's size, its Installed-Size and the time each step
# took (docs/PERFORMANCE.md, "Install").
#
#   usage: deb.sh BUILD_DIR       (a release build: RelWithDebInfo)
#
# Needs root (debootstrap, chroot) and the Debian archive; without root,
# skipped (77).  The chroot lives in a mount and PID namespace of its own
# (unshare), so its /proc and every process started there end with it,
# and its directory is removed after.
set -u
BUILD=$(cd "${1:?usage: deb.sh BUILD_DIR}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)

if [ "$(id -u)" -ne 0 ]; then
	echo "deb.sh: needs root (debootstrap, chroot): skipped"
	exit 77
fi

T=$(mktemp -d /tmp/papo-deb.XXXXXX)
cleanup() {
	# Nothing should be mounted here (the namespace took its mounts with
	# it); should something be, it is unmounted before anything is
	# removed, and rm never leaves this file system.
	findmnt -rn -o TARGET | grep -F "$T/" | sort -r |
	    while read -r m; do umount -l "$m"; done
	rm -rf --one-file-system "$T"
}
trap cleanup EXIT

. "$(dirname "$0")/common.sh"
now()  { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
arch=$(dpkg --print-architecture)
deb=$T/pkg/papo_${version}_${arch}.deb

# 1. The package, made as the README says (cpack -G DEB in the build
# directory), into a directory of the test's own.
t0=$(now)
if ! (cd "$BUILD" && cpack -G DEB -B "$T/pkg") >"$T/cpack.out" 2>&1; then
	fail "cpack -G DEB failed: $(tail -5 "$T/cpack.out")"
	echo "$passed passed, $failed failed"
	exit 1
fi
t1=$(now)
[ -f "$deb" ] && ok || fail "no $(basename "$deb") in: $(ls "$T/pkg")"
dpkg-deb -f "$deb" >"$T/control"
for field in "Package: papo" "Version: $version" "Architecture: $arch" \
    "Section: net" "Maintainer: " "Description: "; do
	grep -q "^$field" "$T/control" && ok ||
	    fail "the control file has no '$field': $(cat "$T/control")"
done

# Its Depends come from dpkg-shlibdeps: each library the programs need
# (ELF NEEDED of papo and papo-full, port mapping's too) is named by the
# package holding it.
depends=$(dpkg-deb -f "$deb" Depends)
for so in $(readelf -d "$BUILD/papo" "$BUILD/papo-full" |
    sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u); do
	path=$(ldconfig -p | awk -v so="$so" '$1 == so { print $NF; exit }')
	pkg=$(pkg_of "$path")
	[ -n "$pkg" ] || { fail "no package holds $so ($path)"; continue; }
	echo "$depends" | grep -qE "(^|, )$pkg( |,|$)" && ok ||
	    fail "Depends lacks $pkg (for $so): $depends"
done
for lib in libminiupnpc libnatpmp; do
	if readelf -d "$BUILD/papo-full" | grep -q "$lib"; then
		echo "$depends" | grep -q "$lib" && ok ||
		    fail "the binary links $lib, Depends does not name it"
	fi
done

dpkg-deb -c "$deb" | awk '{ print $NF }' >"$T/contents"
for f in ./usr/bin/papo ./usr/libexec/papo/papo-full \
    ./usr/share/man/man1/papo.1.gz \
    ./usr/share/bash-completion/completions/papo \
    ./usr/share/zsh/vendor-completions/_papo \
    ./usr/share/fish/vendor_completions.d/papo.fish \
    ./usr/lib/systemd/user/papo.service \
    ./usr/share/doc/papo/README.md ./usr/share/doc/papo/LICENSE \
    ./usr/share/doc/papo/copyright ./usr/share/doc/papo/docs/MCP.md; do
	grep -qxF "$f" "$T/contents" && ok || fail "the package lacks $f"
done
size=$(stat -c %s "$deb")
installed=$(dpkg-deb -f "$deb" Installed-Size)

# 2. A fresh Debian 12 root, from the cache (debootstrap the first time).
t2=$(now)
if ! tarball=$(bash "$SRC/tests/tools/bookworm-root.sh" 2>"$T/root.err"); then
	fail "no bookworm root: $(tail -5 "$T/root.err")"
	echo "$passed passed, $failed failed"
	exit 1
fi
t3=$(now)
root=$T/root
mkdir "$root"
tar -C "$root" --numeric-owner -xpf "$tarball"
t4=$(now)
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/"
cp "$SRC/tests/install/deb_chroot.sh" "$root/tmp/"

# 3. Inside: apt-get install ./papo_*.deb, then the user's commands.
unshare --mount --pid --fork --mount-proc="$root/proc" \
    chroot "$root" /bin/bash /tmp/deb_chroot.sh "$(basename "$deb")" \
    >"$T/chroot.out" 2>&1
rc=$?
t5=$(now)
grep -E '^(FAIL|chroot):' "$T/chroot.out" >&2
if [ "$rc" -eq 0 ] && grep -q '^chroot: [1-9][0-9]* passed, 0 failed$' \
    "$T/chroot.out"; then
	ok
else
	fail "inside the chroot (exit $rc): $(tail -n 15 "$T/chroot.out")"
fi

echo "package: $(basename "$deb"), $size bytes; Installed-Size: $installed KiB"
echo "depends: $depends"
echo "cpack: $(secs "$t0" "$t1") s; bookworm root: $(secs "$t2" "$t3") s" \
    "(cached unless debootstrap ran); unpacked: $(secs "$t3" "$t4") s;" \
    "chroot (apt-get install, the commands, man-db): $(secs "$t4" "$t5") s"
grep '^time:' "$T/chroot.out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
