#!/bin/sh
# Issue #29's promises on the source tree, kept:
#  - no circle of calls between source files but inside src/python/repr/
#    (whose container reprs recurse into their items): scripts/call-circles
#    on the objects of libpycore.a in the build directory (the current
#    directory under make check; BUILD-DIR by hand);
#  - no .c or .h under src/ over 800 lines, the generated Unicode table
#    (src/util/unicode_printable.h) aside: each offender named.
# TAP (src/tests/lib/tap.sh); a skip names what is missing (nm, the objects).
#
# usage: src/tests/dist/test-circles.sh [BUILD-DIR]
srcdir=${srcdir:-$(cd "$(dirname "$0")/../../.." && pwd)}
. "$srcdir/src/tests/lib/tap.sh"
build=${1:-.}
limit=800

name="no circle between source files but inside src/python/repr/ (scripts/call-circles)"
if ! command -v nm >/dev/null 2>&1; then
	tap_skip "$name" "nm not installed (Debian package binutils)"
elif [ -z "$(find "$build/src" -name 'libpycore_a-*.o' 2>/dev/null | head -n 1)" ]; then
	tap_skip "$name" "no objects of libpycore.a under $build/src (build pycore first)"
else
	out=$("${PYTHON3:-python3}" "$srcdir/scripts/call-circles" "$build" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		allowed=$(printf '%s\n' "$out" | grep -c '^circle (allowed):')
		tap_ok "$name: $allowed allowed circle(s)"
	else
		why=$(printf '%s\n' "$out" | grep '^circle:' | sed 's/^circle: //' | paste -sd ';' - | sed 's/;/; /g')
		tap_fail "$name" "${why:-$(printf '%s\n' "$out" | tail -n 1) (exit $rc)}"
		printf '%s\n' "$out" | tap_diag
	fi
fi

name="no .c or .h under src/ over $limit lines (src/util/unicode_printable.h aside)"
files=$(cd "$srcdir" && find src \( -name '*.c' -o -name '*.h' \) ! -path src/util/unicode_printable.h | sort)
if [ -z "$files" ]; then
	tap_fail "$name" "no .c or .h under $srcdir/src"
else
	over=$(cd "$srcdir" && for f in $files; do
		n=$(wc -l <"$f")
		[ "$n" -gt "$limit" ] && printf '%s (%d lines)\n' "$f" "$n"
	done)
	if [ -z "$over" ]; then
		longest=$(cd "$srcdir" && wc -l $files | grep -v ' total$' | sort -n | tail -n 1 | awk '{print $2 ", " $1}')
		tap_ok "$name: $(printf '%s\n' "$files" | wc -l) files, the longest $longest lines"
	else
		tap_fail "$name" "$(printf '%s\n' "$over" | paste -sd ';' - | sed 's/;/; /g')"
	fi
fi
tap_done
