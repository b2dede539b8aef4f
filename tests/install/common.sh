# tests/install/common.sh: what deb.sh and tree.sh share, sourced by both:
# the counters' ok and fail, and pkg_of.
passed=0 failed=0
ok()   { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
# pkg_of PATH: the Debian package holding a library, whichever spelling
# of its path (/lib or /usr/lib, the soname's link or the file) dpkg has.
pkg_of() {
	local r q
	r=$(readlink -f "$1")
	for q in "$r" "${r#/usr}" "$1" "/usr${1#/usr}"; do
		dpkg -S "$q" 2>/dev/null | sed -n '1s/:.*//p' | grep . && return
	done
}
