#!/bin/sh
# Bad input: each case must give its exit code and exactly one line on
# standard error that names the file.  Cores are made here, at test time.
# TAP (src/tests/lib/tap.sh): one line per case; a case that cannot run here
# is a skip naming what is missing.
PYCORE=${PYCORE:-./pycore}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../../.." && pwd)}
. "$srcdir/src/tests/lib/tap.sh"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# expect CODE FILE [ARGS...]: run pycore analyze on FILE; the case is
# named for the file, or $label when set
expect() {
	want=$1 file=$2
	shift 2
	name="exit $want: ${label:-${file#"$tmp"/}}"
	label=
	"$PYCORE" analyze "$@" "$file" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	lines=$(wc -l <"$tmp/err")
	if [ "$rc" -ne "$want" ]; then
		tap_fail "$name" "exit $rc: $(cat "$tmp/err")"
	elif [ "$lines" -ne 1 ] || ! grep -qF "$file" "$tmp/err"; then
		tap_fail "$name" "want one line on stderr naming the file"
		tap_diag <"$tmp/err"
	else
		tap_ok "$name: $(cat "$tmp/err")"
	fi
}

# expect_truncated FILE NAME: a core cut short is never a silent success, nor
# blamed on something else: exit 4 (nothing usable left) or 1 (a partial
# report), one line on stderr naming the file, and the word "truncated" in
# that line or in the report's warnings.
expect_truncated() {
	file=$1
	name="truncated: $2"
	"$PYCORE" analyze --format json "$file" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 4 ] && [ "$rc" -ne 1 ]; then
		tap_fail "$name" "exit $rc, want 4 (or 1 with a partial report): $(cat "$tmp/err")"
	elif [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -qF "$file" "$tmp/err"; then
		tap_fail "$name" "want one line on stderr naming the file"
		tap_diag <"$tmp/err"
	elif ! cat "$tmp/out" "$tmp/err" | grep -q truncated; then
		tap_fail "$name" "exit $rc, but neither stderr nor the report says the core is truncated"
	elif ! tap_schema "$tmp/out"; then
		tap_fail "$name" "the partial report does not match the schema"
	else
		tap_ok "$name: exit $rc: $(cat "$tmp/err")"
	fi
}

# usage CODE ARGS...: a usage error, one line, exit 2
usage() {
	"$PYCORE" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
		tap_fail "usage error: pycore $*" "exit $rc, want 2 with one line: $(cat "$tmp/err")"
	else
		tap_ok "usage error: pycore $*: $(cat "$tmp/err")"
	fi
}

: >"$tmp/empty"
expect 4 "$tmp/empty"
printf 'this is not a core dump\n' >"$tmp/text"
expect 4 "$tmp/text"
expect 4 "$tmp/does-not-exist"
mkdir "$tmp/dir"
expect 4 "$tmp/dir"
expect 4 /bin/true
head -c 3 /bin/true >"$tmp/elf-magic-only"
expect 4 "$tmp/elf-magic-only"

# The compressed formats, each FORMAT:SUFFIX:PACKAGE:OPTIONS of its own CLI.
compressors="zstd:zst:zstd:-q_-1 gzip:gz:gzip:-1 xz:xz:xz-utils:-0_-T1 lz4:lz4:lz4:-q_-1"

# compressed_names FORMAT:... WHOSE: the names of compressed_cases' cases
compressed_names() {
	f=${1%%:*} x=$(echo "$1" | cut -d: -f2)
	echo "truncated: half.$x ($2 core, $f-compressed, cut in half)"
	echo "exit 1: tail.$x ($2 core, $f-compressed, its last 4 bytes cut)"
	echo "exit 4: corrupt.$x ($2 core, $f-compressed, bytes corrupted in the middle)"
}

# compressed_cases CORE FORMAT:... WHOSE: CORE compressed by the format's
# CLI, then cut in half (a truncated core: exit 1 with a partial report
# whose warnings name the cut stream, or exit 4 when what is left is not
# enough, the line saying so), cut by its last 4 bytes (the stream's end:
# the whole core, but a partial report, exit 1, since the stream's end is
# not there to prove it), and corrupted in the middle (exit 4: what the
# decoder gave before the damage is not proven)
compressed_cases() {
	f=${2%%:*} x=$(echo "$2" | cut -d: -f2) pkg=$(echo "$2" | cut -d: -f3)
	opts=$(echo "$2" | cut -d: -f4 | tr _ ' ')
	names=$(compressed_names "$2" "$3")
	if ! command -v "$f" >/dev/null; then
		skip_cases "$names" "$f not installed (Debian package $pkg)"
		return
	fi
	# shellcheck disable=SC2086
	"$f" -c $opts <"$1" >"$tmp/core.$x"
	zsize=$(stat -c %s "$tmp/core.$x")
	head -c $((zsize / 2)) "$tmp/core.$x" >"$tmp/half.$x"
	name=$(echo "$names" | head -n 1)
	"$PYCORE" analyze --format json "$tmp/half.$x" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 1 ] && ! grep -q "truncated $f stream" "$tmp/out"; then
		tap_fail "$name" "exit 1, but the report's warnings do not say 'truncated $f stream'"
	elif [ "$rc" -eq 4 ] && ! grep -q "truncated $f stream" "$tmp/err"; then
		tap_fail "$name" "exit 4, but stderr does not say 'truncated $f stream': $(cat "$tmp/err")"
	else
		expect_truncated "$tmp/half.$x" "${name#truncated: }"
	fi
	name=$(echo "$names" | sed -n 2p)
	head -c $((zsize - 4)) "$tmp/core.$x" >"$tmp/tail.$x"
	"$PYCORE" analyze --format json "$tmp/tail.$x" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 1 ] || ! grep -q "truncated $f stream" "$tmp/out"; then
		tap_fail "$name" "exit $rc, want 1 with a warning 'truncated $f stream': $(cat "$tmp/err")"
	elif ! tap_schema "$tmp/out"; then
		tap_fail "$name" "the partial report does not match the schema"
	else
		tap_ok "$name: $(cat "$tmp/err")"
	fi
	cp "$tmp/core.$x" "$tmp/corrupt.$x"
	printf '\377\377\377\377\377\377\377\377' | dd of="$tmp/corrupt.$x" bs=1 seek=$((zsize / 2)) conv=notrunc 2>/dev/null
	"$PYCORE" analyze "$tmp/corrupt.$x" >"$tmp/out" 2>"$tmp/err"
	if grep -q "corrupt $f stream" "$tmp/err"; then
		label="corrupt.$x ($3 core, $f-compressed, bytes corrupted in the middle)" expect 4 "$tmp/corrupt.$x"
	else
		tap_fail "$(echo "$names" | tail -n 1)" "stderr does not say 'corrupt $f stream': $(cat "$tmp/err")"
	fi
}

# Cases made from real processes, and what each needs.
gcore_cases="exit 3: a core of a process that is not Python (sleep)"
py_cases="--timeout: a time budget too small for any walk
$(for c in $compressors; do compressed_names "$c" "gcore's"; done)
exit 4: truncated-3000
truncated: truncated-half (gcore's, cut in half)"
skip_cases() { # CASES WHY: a skip for each line of CASES
	while IFS= read -r c; do
		tap_skip "$c" "$2"
	done <<EOF
$1
EOF
}

py=$(interp debian3.11 2>/dev/null || interp py3.12 2>/dev/null)
if ! command -v gcore >/dev/null; then
	skip_cases "$gcore_cases
$py_cases" "gcore not installed (Debian package gdb)"
else
	# a core of a process that is not Python
	sleep 100 &
	pid=$!
	gcore -o "$tmp/sleep" "$pid" >/dev/null 2>&1
	kill "$pid"
	if [ -f "$tmp/sleep.$pid" ]; then
		label="a core of a process that is not Python (sleep)" expect 3 "$tmp/sleep.$pid"
	else
		tap_fail "$gcore_cases" "gcore of sleep made no core"
	fi
	# truncated cores of a Python process
	if [ -z "$py" ]; then
		skip_cases "$py_cases" "no python3.12 (pyenv) or /usr/bin/python3.11"
	else
		"$py" -c 'import time; print("READY", flush=True); time.sleep(100)' >"$tmp/py.out" &
		pid=$!
		i=0
		while ! grep -q READY "$tmp/py.out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		gcore -o "$tmp/py" "$pid" >/dev/null 2>&1
		kill "$pid"
		core=$tmp/py.$pid
		# a time budget too small for any walk: exit 1, a report that says so
		"$PYCORE" analyze --timeout 0.000001 --format json "$core" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ "$rc" -ne 1 ] || ! grep -q "time budget" "$tmp/out" || [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
			tap_fail "--timeout: a time budget too small for any walk" "exit $rc: $(cat "$tmp/err")"
		elif ! tap_schema "$tmp/out"; then
			tap_fail "--timeout: a time budget too small for any walk" "the report does not match the schema"
		else
			tap_ok "--timeout: a time budget too small for any walk: exit 1, the report says so"
		fi
		# each compressed format: cut in half, and with corrupted bytes in
		# the middle
		for c in $compressors; do
			compressed_cases "$core" "$c" "gcore's"
		done
		head -c 3000 "$core" >"$tmp/truncated-3000"
		expect 4 "$tmp/truncated-3000"
		# cut in the middle: gcore writes its notes last, so they are lost
		# (4).  The kernel core below keeps its notes through the same cut.
		size=$(stat -c %s "$core")
		head -c $((size / 2)) "$core" >"$tmp/truncated-half"
		expect_truncated "$tmp/truncated-half" "truncated-half (gcore's, cut in half)"
	fi
fi

# A kernel core of a Python process (SIGSEGV), cut in half.  Unlike gcore's,
# a kernel core has its notes first, so they survive the cut while much of
# the memory (libpython's own first pages among it) is gone.
kname="truncated: kernel-core-half (the kernel's core, cut in half)
$(for c in $compressors; do compressed_names "$c" "the kernel's"; done)"
py=$(interp py3.12 2>/dev/null || interp debian3.11 2>/dev/null)
[ -n "$py" ] || { [ -x /usr/bin/python3 ] && py=/usr/bin/python3; }
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
case $pattern in
'' | '|'* | */* | *%*)
	skip_cases "$kname" "core_pattern '$pattern' is not a plain file name in the working directory" ;;
*)
	if [ -z "$py" ]; then
		skip_cases "$kname" "no Python interpreter"
	else
		mkdir "$tmp/kernel"
		# python is not the subshell's last command (dash would exec it): the
		# subshell, whose stderr is discarded, reports the signal, not this shell
		(cd "$tmp/kernel" && ulimit -c unlimited 2>/dev/null &&
			"$py" -c 'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)'; :) >/dev/null 2>&1
		kcore=
		for f in "$tmp/kernel/$pattern" "$tmp/kernel/$pattern".*; do
			[ -f "$f" ] && kcore=$f
		done
		if [ -z "$kcore" ]; then
			skip_cases "$kname" "the kernel wrote no core (ulimit -c, core_pattern '$pattern')"
		else
			size=$(stat -c %s "$kcore")
			head -c $((size / 2)) "$kcore" >"$tmp/kernel-core-half"
			expect_truncated "$tmp/kernel-core-half" "kernel-core-half (the kernel's core, cut in half)"
			for c in $compressors; do
				compressed_cases "$kcore" "$c" "the kernel's"
			done
		fi
	fi ;;
esac

# standard input: a pipe of garbage, an empty pipe; the line names "-"
for what in garbage empty; do
	if [ $what = garbage ]; then
		head -c 100000 /dev/urandom | "$PYCORE" analyze - >"$tmp/out" 2>"$tmp/err"
	else
		"$PYCORE" analyze - </dev/null >"$tmp/out" 2>"$tmp/err"
	fi
	rc=$?
	if [ "$rc" -ne 4 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q '^pycore: -: ' "$tmp/err"; then
		tap_fail "exit 4: $what on standard input (-)" "exit $rc: $(cat "$tmp/err")"
	else
		tap_ok "exit 4: $what on standard input (-): $(cat "$tmp/err")"
	fi
done

usage
usage analyze
usage frobnicate core
usage analyze --no-such-option core
usage analyze --format xml core
usage analyze --max-repr 0 core
usage analyze --timeout soon core
usage analyze --layout guess core
usage analyze --locals=shallow core
usage analyze --samples 3 core
usage analyze --pid --samples 0 1
usage analyze --pid --samples many 1
usage analyze --pid --interval 1 1
usage analyze --pid --samples 2 --interval -1 1
usage analyze --pid --samples 2 --save x.core 1
usage batch --samples 2 core
usage analyze --compare core
usage analyze --compare --pid 1 2
usage analyze --compare --samples 2 a b
usage coredump
usage coredump not-an-instance
usage coredump 1-2-3 4-5-6
usage coredump --config "$tmp/does-not-exist.conf" 1-2-0
printf '[Coredump]\nMaxConcurrent=0\n' >"$tmp/bad.conf"
usage coredump --config "$tmp/bad.conf" 1-2-0
# option errors that must name what is wrong (not a missing dump)
usage_says() { # WORD ARGS...: a usage error whose line holds WORD
	word=$1
	shift
	usage "$@"
	if ! grep -q -e "$word" "$tmp/err"; then
		tap_fail "usage error: pycore $* names $word" "$(cat "$tmp/err")"
	fi
}
usage_says "--pretty" analyze --pretty core
usage_says "--pretty" analyze --format text --pretty core
usage_says "--locals=deep" analyze --locals deep core
usage_says "--sysroot" analyze --sysroot "$tmp/does-not-exist" core
# a --sysroot that is a file but no image (a tar, an OCI layout): exit 9,
# one line naming it, before any dump is read
"$PYCORE" analyze --sysroot "$tmp/text" core >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 9 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -qF -- "$tmp/text" "$tmp/err"; then
	tap_fail "exit 9: --sysroot naming a file that is no image" "exit $rc: $(cat "$tmp/err")"
else
	tap_ok "exit 9: --sysroot naming a file that is no image: $(cat "$tmp/err")"
fi
usage_says "--color" analyze --color=sometimes core
usage_says "collapsed" analyze --format flame core
usage_says "--warm-builds" batch --warm-builds many core
usage_says "--warm-builds" batch --warm-builds 1025 core
usage_says "--warm-memory" batch --warm-memory 0 core
usage_says "--warm-builds" analyze --warm-builds 2 core
usage_says "--pretty" analyze --format collapsed --pretty core

tap_schema_done
tap_done
