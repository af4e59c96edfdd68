#!/bin/sh
# The line-table decoders against the lines each interpreter present reports
# for every instruction of a varied set of code objects.
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${TEST_LINETABLE:-./test-linetable}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
files=
for m in 6 7 8 9 10 11 12 13; do
	py=
	for p in /root/.pyenv/versions/3.$m.*/bin/python3.$m; do
		[ -x "$p" ] && py=$p
	done
	if [ -z "$py" ]; then
		echo "SKIP: python3.$m not installed (/root/.pyenv/versions/3.$m.*/bin/python3.$m)"
		continue
	fi
	"$py" "$srcdir/src/tests/linetable-vectors.py" > "$tmp/3.$m.vec" || { echo "FAIL: $py could not make vectors"; exit 1; }
	files="$files $tmp/3.$m.vec"
done
if [ -x /usr/bin/python3.11 ]; then
	/usr/bin/python3.11 "$srcdir/src/tests/linetable-vectors.py" > "$tmp/debian-3.11.vec" || exit 1
	files="$files $tmp/debian-3.11.vec"
else
	echo "SKIP: /usr/bin/python3.11 not installed"
fi
[ -n "$files" ] || { echo "SKIP: no interpreter to take vectors from"; exit 77; }
# shellcheck disable=SC2086
"$bin" $files
