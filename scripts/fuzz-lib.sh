# Shared by scripts/fuzz-smoke and scripts/fuzz-campaign (sourced, with
# $top and $work set): the targets, their options, and their seeds.

fuzz_targets="elfcore minidump zstd gzip xz lz4 linetable objects text dump walk asyncio budget jsonl tar heap"

# fuzz_prepare: the sample core, decompressed, in $work/sample.core, and
# seeds for every target in $work/seeds/TARGET/ (scripts/fuzz-seeds for the
# readers; the sample core's head, the compressed sample, a minidump of it
# and the regression inputs for fuzz-dump; no patch for fuzz-walk).
fuzz_prepare() {
	zstd -q -d -c "$top/testdata/sample-py3.13-threads.core.zst" >"$work/sample.core" || return 1
	python3 "$top/scripts/fuzz-seeds" "$work/sample.core" "$work/seeds" || return 1
	mkdir -p "$work/seeds/dump" "$work/seeds/walk"
	cp "$top/testdata/sample-py3.13-threads.core.zst" "$work/seeds/dump/"
	head -c 65536 "$work/sample.core" >"$work/seeds/dump/core-head"
	python3 "$top/scripts/core2minidump" "$work/sample.core" "$work/sample.dmp" &&
		head -c 65536 "$work/sample.dmp" >"$work/seeds/dump/minidump-head"
	for f in "$top"/testdata/fuzz-regressions/*; do
		[ -f "$f" ] && cp "$f" "$work/seeds/dump/"
	done
	printf '\000\000\000\000\000\000\000\000\000\000\000\000' >"$work/seeds/walk/none"
	mkdir -p "$work/seeds/heap"
	printf '\000\000\000\000\000\000\000\000\000\000\000\000' >"$work/seeds/heap/none"
	fuzz_budget_seeds
	# group's records: what the fuzzers found, and a record's skeleton
	mkdir -p "$work/seeds/jsonl"
	cp "$top"/testdata/fuzz-regressions/jsonl/* "$work/seeds/jsonl/" 2>/dev/null
	printf '%s\n' '{"schema":"pycore-report/1","input":{"path":"core"},"process":{"pid":1},"fingerprint":{"hash":"0","frames":["f"]},"interpreters":[{"threads":[{"tid":1,"frames":[{"kind":"python","function":"f","file":"a.py","line":1}]}]}]}' \
		>"$work/seeds/jsonl/record"
	# images' tars: the regression inputs (small tars of every member kind)
	mkdir -p "$work/seeds/tar"
	cp "$top"/testdata/fuzz-regressions/tar/* "$work/seeds/tar/" 2>/dev/null
	mkdir -p "$work/seeds/asyncio"
	printf '\000\000\000\000\000\000\000\000\000\000\000\000' >"$work/seeds/asyncio/none"
	fuzz_asyncio_core
	# what earlier campaigns kept (testdata/fuzz-corpus/TARGET/)
	for t in $fuzz_targets; do
		[ -d "$top/testdata/fuzz-corpus/$t" ] && cp "$top/testdata/fuzz-corpus/$t"/* "$work/seeds/$t/" 2>/dev/null
	done
	return 0
}

# fuzz_asyncio_core: $work/asyncio.core, gcore's core of the asyncio
# scenario (src/tests/e2e/scenarios/aio_tasks.py: a loop, tasks awaiting tasks,
# gathers, futures) run by the first of these interpreters present (asyncio
# is read for 3.8-3.13); none (and fuzz-asyncio skipped) without one or gdb.
fuzz_asyncio_core() {
	command -v gcore >/dev/null || { echo "fuzz-asyncio: no gcore (gdb): skipped"; return 0; }
	for py in /root/.pyenv/versions/3.12.*/bin/python3.12 /usr/bin/python3.11 \
		/root/.pyenv/versions/3.13.*/bin/python3.13 /root/.pyenv/versions/3.11.*/bin/python3.11; do
		[ -x "$py" ] || continue
		"$py" "$top/src/tests/e2e/scenarios/aio_tasks.py" "$work/aio-truth.json" >"$work/aio.out" 2>&1 &
		pid=$!
		i=0
		while ! grep -q READY "$work/aio.out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		sleep 0.5
		gcore -o "$work/aio" "$pid" >/dev/null 2>&1
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		[ -f "$work/aio.$pid" ] && mv "$work/aio.$pid" "$work/asyncio.core" && return 0
	done
	echo "fuzz-asyncio: no interpreter made an asyncio core: skipped"
}

# fuzz_budget_seeds: seeds of fuzz-budget (src/fuzz/fuzz-budget.c): a byte
# picking the front end, then the sample core's head as standard input
# (0), and the head compressed by each format's CLI (1 zstd ... 4 lz4), and
# bombs of each (an ELF magic, then 2 MiB of one byte or of zeros).
fuzz_budget_seeds() {
	d=$work/seeds/budget
	mkdir -p "$d"
	{ printf '\000'; head -c 60000 "$work/sample.core"; } >"$d/stdin-core"
	n=1
	for c in "zstd -q -19" "gzip -9" "xz -9" "lz4 -q -9"; do
		tool=${c%% *}
		if command -v "$tool" >/dev/null; then
			# shellcheck disable=SC2086
			{ printf '%b' "\\$(printf %03o "$n")"; head -c 65536 "$work/sample.core" | $c -c; } >"$d/$tool-core"
			# shellcheck disable=SC2086
			{ printf '%b' "\\$(printf %03o "$n")"; { printf '\177ELF'; head -c 2097152 /dev/zero | tr '\000' A; } |
				$c -c; } >"$d/$tool-bomb"
			# shellcheck disable=SC2086
			{ printf '%b' "\\$(printf %03o "$n")"; { printf '\177ELF'; head -c 2097152 /dev/zero; } | $c -c; } \
				>"$d/$tool-zeros"
		fi
		n=$((n + 1))
	done
}

# fuzz_core TARGET: the core a target reads ($PYCORE_FUZZ_CORE), if any.
fuzz_core() {
	case $1 in
	asyncio) echo "$work/asyncio.core" ;;
	*) echo "$work/sample.core" ;;
	esac
}

# fuzz_options TARGET: libFuzzer options for it (input size, hang limit,
# dictionary); the whole-pipeline targets take seconds on big inputs.
fuzz_options() {
	case $1 in
	elfcore) echo "-max_len=131072 -timeout=10 -dict=$top/src/fuzz/elfcore.dict" ;;
	minidump) echo "-max_len=65536 -timeout=10 -dict=$top/src/fuzz/minidump.dict" ;;
	zstd | gzip | xz | lz4) echo "-max_len=65536 -timeout=10 -dict=$top/src/fuzz/$1.dict" ;;
	linetable) echo "-max_len=4096 -timeout=10" ;;
	objects) echo "-max_len=4096 -timeout=10 -dict=$top/src/fuzz/objects.dict" ;;
	text) echo "-max_len=4096 -timeout=10 -dict=$top/src/fuzz/text.dict" ;;
	dump) echo "-max_len=1200000 -timeout=20 -dict=$top/src/fuzz/dump.dict" ;;
	walk) echo "-max_len=768 -timeout=20 -dict=$top/src/fuzz/dump.dict" ;;
	heap) echo "-max_len=768 -timeout=20" ;;
	asyncio) echo "-max_len=768 -timeout=20" ;;
	budget) echo "-max_len=65536 -timeout=10" ;;
	jsonl) echo "-max_len=4096 -timeout=10" ;;
	tar) echo "-max_len=16384 -timeout=10" ;;
	esac
}
