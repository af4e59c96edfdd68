#!/bin/sh
# The int and float formatters against repr() of the newest interpreter
# present (int_max_str_digits exists from 3.11 on) and of Debian's python3.
# TAP (src/tests/lib/tap.sh): one line per interpreter.
srcdir=${srcdir:-$(cd "$(dirname "$0")/../../.." && pwd)}
. "$srcdir/src/tests/lib/tap.sh"
bin=${TEST_REPR:-./test-repr}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
newest=$(interp --list | awk '$1 ~ /^py3\./ { print $2 }' | sort -V | tail -n 1)
[ -n "$newest" ] || tap_skip "reprs of the newest pyenv interpreter" "no pyenv python3.X installed"
for py in $newest /usr/bin/python3; do
	if [ ! -x "$py" ]; then
		tap_skip "reprs of $py" "not installed"
		continue
	fi
	if ! "$py" "$srcdir/src/tests/unit/repr-vectors.py" >"$tmp/v" 2>"$tmp/err"; then
		tap_fail "reprs of $py" "it could not make vectors"
		tap_diag <"$tmp/err"
		continue
	fi
	"$bin" "$tmp/v" >"$tmp/out" 2>&1
	rc=$?
	tap_diag <"$tmp/out"
	if [ "$rc" -eq 0 ]; then
		tap_ok "reprs of $py: the int and float formatters agree"
	else
		tap_fail "reprs of $py" "exit $rc (see above)"
	fi
done
tap_done
