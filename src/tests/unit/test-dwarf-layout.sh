#!/bin/sh
# pycore's DWARF reader against the tables, for every pyenv interpreter
# and for Debian's 3.14 and 3.15 (their separate debug files, beside the
# root scripts/sid-root makes); and for the free-threaded tables, against
# scripts/gen-versions-probe.c compiled with Py_GIL_DISABLED against the
# headers of Debian's 3.13, 3.14 and 3.15 (in the same place), as
# gen-versions --headers --free-threaded does, but linked, so that the
# DWARF needs no relocating.
# TAP (src/tests/lib/tap.sh): a line per table checked, a skip naming what is
# missing for each that cannot be.
srcdir=${srcdir:-$(cd "$(dirname "$0")/../../.." && pwd)}
. "$srcdir/src/tests/lib/tap.sh"
bin=${TEST_DWARF_LAYOUT:-./test-dwarf-layout}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-dwarf-layout.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

# check NAME [MINOR FILE]: the checker on one table (with no table, only
# its check that every field of struct py_layout is in versions/fields.txt)
check() {
	name=$1
	shift
	"$bin" "$@" >"$tmp/out" 2>&1
	rc=$?
	tap_diag <"$tmp/out"
	if [ "$rc" -eq 0 ]; then
		tap_ok "$name"
	else
		tap_fail "$name" "exit $rc (see above)"
	fi
}

check "every field of struct py_layout is in versions/fields.txt"
for m in 6 7 8 9 10 11 12 13; do
	lib=
	if py=$(interp "py3.$m" 2>"$tmp/why"); then
		for l in "$(dirname "$(dirname "$py")")"/lib/libpython3.$m*.so.1.0; do
			[ -f "$l" ] && lib=$l
		done
		[ -n "$lib" ] || echo "no $(dirname "$(dirname "$py")")/lib/libpython3.$m*.so.1.0" >"$tmp/why"
	fi
	if [ -z "$lib" ]; then
		tap_skip "versions/3.$m.h against the DWARF reader" "$(cat "$tmp/why")"
		continue
	fi
	check "versions/3.$m.h against the DWARF reader on $lib" "$m" "$lib"
done
if root=$("$srcdir/scripts/sid-root" 2>"$tmp/sid.err"); then
	for m in 14 15; do
		id=$(LC_ALL=C readelf -n "$root/usr/bin/python3.$m" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
		dbg=$root.debug/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
		if [ -n "$id" ] && [ -f "$dbg" ]; then
			check "versions/3.$m.h against the DWARF reader on Debian's python3.$m" "$m" "$dbg"
		else
			tap_skip "versions/3.$m.h against the DWARF reader" "no debug file for build-id ${id:-?} in $root.debug"
		fi
	done
	arch=$(${CC:-cc} -print-multiarch 2>/dev/null)
	for m in 13 14 15; do
		inc=$root.debug/usr/include
		name="versions/3.${m}t.h against the DWARF reader on the headers of Debian's python3.$m with Py_GIL_DISABLED"
		if [ ! -f "$inc/python3.$m/Python.h" ]; then
			tap_skip "$name" "no headers in $inc/python3.$m"
			continue
		fi
		if ! command -v "${CC:-cc}" >/dev/null 2>&1; then
			tap_skip "$name" "no C compiler (${CC:-cc})"
			continue
		fi
		mkdir -p "$tmp/inc$m"
		[ -n "$arch" ] && ln -s "$inc/$arch" "$tmp/inc$m/$arch"
		if ${CC:-cc} -std=gnu11 -g -O0 -fno-eliminate-unused-debug-types -w -fPIC -shared \
			-DPy_GIL_DISABLED=1 -I "$inc/python3.$m" -I "$tmp/inc$m" \
			"$srcdir/scripts/gen-versions-probe.c" -o "$tmp/probe3.${m}t.so" 2>"$tmp/cc.log"; then
			check "$name" "${m}t" "$tmp/probe3.${m}t.so"
		else
			tap_diag <"$tmp/cc.log"
			tap_fail "$name" "cannot compile the probe against $inc/python3.$m"
		fi
	done
else
	why="no Debian unstable root: $(cat "$tmp/sid.err")"
	for t in 3.14 3.15 3.13t 3.14t 3.15t; do
		tap_skip "versions/$t.h against the DWARF reader" "$why"
	done
fi
tap_done
