#!/bin/sh
# PID 1 of pycore's arm64 test machine (scripts/arm64-vm run boots it; the
# test src/tests/e2e/check-arm64.py writes it to the test's disk as /init).
#
# Reads /pycore-test/cases, a line per process: NAME PYTHON SCENARIO HOW
# [ARG...].  PYTHON runs src/tests/e2e/scenarios/SCENARIO (copied to
# /pycore-test/scenarios, with the test's arm64 build of nocfi.S,
# libnocfi.so) with /pycore-test/out/NAME.truth.json and the ARGs, where
# the process writes its own
# truth (threads, frames, locals) and then prints READY.  HOW:
#   crash  the process crashes by itself: the kernel writes its core
#   crash-fh  the same with PYTHONFAULTHANDLER=1: faulthandler's handler
#          runs on its alternate stack and raises the signal again, so the
#          core holds the kernel's signal frame (__kernel_rt_sigreturn)
#   gcore  it blocks: the machine's gdb takes a gcore, then it is killed
#   ABRT   it blocks: kill -ABRT, the kernel writes its core
# (not SIGQUIT: a shell that is not interactive starts its background
# commands with SIGQUIT ignored).  The cores end up in out/NAME.core,
# a line per case in out/results, the machine's facts in out/facts.
# Then, where the test gave it one, the arm64 build of pycore reads each
# core (below: out/NAME.arm64.json and .text).  Then the machine powers off.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
T=/pycore-test
out=$T/out
mkdir -p "$out"
exec >"$out/init.log" 2>&1
echo "$out/core.%p" >/proc/sys/kernel/core_pattern
# shellcheck disable=SC3045  # /bin/sh is dash in the machine: it has ulimit -c
ulimit -c unlimited
{
	echo "uname: $(uname -a)"
	echo "core_pattern: $(cat /proc/sys/kernel/core_pattern)"
	grep -m1 '^Features' /proc/cpuinfo
	echo "hwcap_pac: $(LD_SHOW_AUXV=1 /bin/true | grep -E 'AT_HWCAP2?:')"
} >"$out/facts" 2>&1
now() { date +%s.%N | cut -c1-14; }

while read -r name python scenario how args; do
	case $name in '' | '#'*) continue ;; esac
	start=$(now)
	truth=$out/$name.truth.json
	log=$out/$name.log
	fh=
	[ "$how" = crash-fh ] && fh=1
	# shellcheck disable=SC2086  # ARGs are words
	PYTHONFAULTHANDLER=$fh "/usr/bin/$python" "$T/scenarios/$scenario" "$truth" $args >"$log" 2>&1 &
	pid=$!
	if [ "$how" != crash ] && [ "$how" != crash-fh ]; then
		n=0
		until grep -q READY "$log" 2>/dev/null || ! kill -0 "$pid" 2>/dev/null || [ $n -ge 1200 ]; do
			sleep 0.1
			n=$((n + 1))
		done
		case $how in
		gcore)
			gdb -nx -batch -iex 'set debug-file-directory /nonexistent' -iex 'set auto-load off' \
				-p "$pid" -ex "gcore $out/$name.core" -ex detach >"$out/$name.gdb" 2>&1
			kill -KILL "$pid" ;;
		*) kill "-$how" "$pid" ;;
		esac
	fi
	wait "$pid"
	status=$?
	[ -f "$out/core.$pid" ] && mv "$out/core.$pid" "$out/$name.core"
	echo "$name pid=$pid status=$status start=$start end=$(now)" >>"$out/results"
done <"$T/cases"
# pycore built as an arm64 program (scripts/arm64-cross), when the test
# put it on the disk (arm64/: pycore, its loader, lib/ its libraries;
# arm64/paths: SYSROOT KEPT, the paths of the root and of the kept cores
# on the test's machine; arm64/cases: NAME FORMAT... a line per core to
# read): it reads each such core in a chroot where the
# root's files are at SYSROOT and the cores at KEPT, as there, and none at
# the paths the cores record, as there: its reports are to be that
# machine's pycore's, byte for byte.
if [ -x "$T/arm64/pycore" ] && [ -f "$T/arm64/paths" ]; then
	read -r sysroot kept <"$T/arm64/paths"
	x=/tmp/pycore-arm64
	mkdir -p "$x$sysroot" "$x$kept" "$x/pycore" "$x/proc" "$x/dev"
	if mount --bind / "$x$sysroot" && mount --bind "$out" "$x$kept" &&
		mount --bind "$T/arm64" "$x/pycore" && mount -t proc proc "$x/proc" && mount --bind /dev "$x/dev"; then
		echo "start=$(now)" >"$out/arm64-pycore"
		while read -r name formats; do
			case $name in '' | '#'*) continue ;; esac
			[ -f "$out/$name.core" ] || continue
			for fmt in $formats; do
				chroot "$x" /pycore/ld-linux-aarch64.so.1 --library-path /pycore/lib /pycore/pycore \
					analyze --format "$fmt" --sysroot "$sysroot" --native-all --locals=deep "$kept/$name.core" \
					>"$out/$name.arm64.$fmt" 2>"$out/$name.arm64.$fmt.err"
				echo "$?" >"$out/$name.arm64.$fmt.status"
			done
		done <"$T/arm64/cases"
		echo "end=$(now)" >>"$out/arm64-pycore"
	else
		echo "cannot make the chroot for the arm64 pycore" >"$out/arm64-pycore"
	fi
	umount "$x/dev" "$x/proc" "$x/pycore" "$x$kept" "$x$sysroot" 2>/dev/null
fi
echo finished >"$out/done"
sync
/run/busybox poweroff -f
