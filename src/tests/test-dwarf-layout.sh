#!/bin/sh
# pycore's DWARF reader against the tables, for every pyenv interpreter
# and for Debian's 3.14 and 3.15 (their separate debug files, beside the
# root scripts/sid-root makes); and for the free-threaded tables, against
# scripts/gen-versions-probe.c compiled with Py_GIL_DISABLED against the
# headers of Debian's 3.13, 3.14 and 3.15 (in the same place), as
# gen-versions --headers --free-threaded does, but linked, so that the
# DWARF needs no relocating.
bin=${TEST_DWARF_LAYOUT:-./test-dwarf-layout}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-dwarf-layout.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM
set --
for m in 6 7 8 9 10 11 12 13; do
	lib=
	for l in /root/.pyenv/versions/3.$m.*/lib/libpython3.$m*.so.1.0; do
		[ -f "$l" ] && lib=$l
	done
	if [ -z "$lib" ]; then
		echo "SKIP: python3.$m not installed (/root/.pyenv/versions/3.$m.*/lib)"
		continue
	fi
	set -- "$@" "$m" "$lib"
done
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
if root=$("$srcdir/scripts/sid-root" 2>/dev/null); then
	for m in 14 15; do
		id=$(LC_ALL=C readelf -n "$root/usr/bin/python3.$m" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
		dbg=$root.debug/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
		if [ -n "$id" ] && [ -f "$dbg" ]; then
			set -- "$@" "$m" "$dbg"
		else
			echo "SKIP: python3.$m: no debug file for build-id ${id:-?} in $root.debug"
		fi
	done
	arch=$(${CC:-cc} -print-multiarch 2>/dev/null)
	for m in 13 14 15; do
		inc=$root.debug/usr/include
		if [ ! -f "$inc/python3.$m/Python.h" ]; then
			echo "SKIP: python3.${m}t: no headers in $inc/python3.$m"
			continue
		fi
		mkdir -p "$tmp/inc$m"
		[ -n "$arch" ] && ln -s "$inc/$arch" "$tmp/inc$m/$arch"
		if ${CC:-cc} -std=gnu11 -g -O0 -fno-eliminate-unused-debug-types -w -fPIC -shared \
			-DPy_GIL_DISABLED=1 -I "$inc/python3.$m" -I "$tmp/inc$m" \
			"$srcdir/scripts/gen-versions-probe.c" -o "$tmp/probe3.${m}t.so" 2>"$tmp/cc.log"; then
			set -- "$@" "${m}t" "$tmp/probe3.${m}t.so"
		else
			cat "$tmp/cc.log"
			echo "FAIL: cannot compile the probe against $inc/python3.$m"
			exit 1
		fi
	done
else
	echo "SKIP: python3.14, python3.15: no Debian unstable root (scripts/sid-root)"
fi
[ $# -gt 0 ] || { echo "SKIP: no interpreter with DWARF found"; exit 77; }
"$bin" "$@"
