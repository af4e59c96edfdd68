#!/bin/sh
# make install DESTDIR=TMP from the build directory: every file lands where
# configure said and nothing else does; the systemd-coredump hook's unit and
# drop-in pass `systemd-analyze verify` (the drop-in on systemd-coredump's
# own unit, from the host or from its .deb in apt's cache, unpacked here,
# never installed); systemd-sysusers creates the user from the sysusers.d
# file in a scratch root; the config file has every setting commented out
# at its default; make uninstall removes it all.
# TAP (src/tests/lib/tap.sh); run from the build directory (make check).
srcdir=${srcdir:-$(cd "$(dirname "$0")/../../.." && pwd)}
. "$srcdir/src/tests/lib/tap.sh"
build=$(pwd)
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest
# a nested make, not the one running the tests
unset MAKEFLAGS MFLAGS MAKELEVEL
bindir=$(build_value bindir)
man1dir=$(build_value man1dir)
man5dir=$(build_value man5dir)
man8dir=$(build_value man8dir)
pkgdatadir=$(build_value pkgdatadir)
confdir=$(build_value pycoreconfdir)
unitdir=$(build_value systemdsystemunitdir)
sysusersdir=$(build_value sysusersdir)
if [ -z "$bindir" ] || [ -z "$confdir" ]; then
	tap_fail "the build directory's install directories" "make printed none (run from the build directory)"
	tap_done
fi

if make -s -C "$build" install DESTDIR="$dest" >"$tmp/install.log" 2>&1; then
	tap_ok "make install DESTDIR=..."
else
	tap_diag <"$tmp/install.log"
	tap_fail "make install DESTDIR=..." "failed"
	tap_done
fi

# Where configure said: each expected file, and no other.
unit=$unitdir/pycore-coredump@.service
dropin=$unitdir/systemd-coredump@.service.d/pycore.conf
sysusers=$sysusersdir/pycore.conf
{
	echo "$bindir/pycore"
	for page in pycore pycore-analyze pycore-batch pycore-group pycore-heap; do
		echo "$man1dir/$page.1"
	done
	echo "$man5dir/pycore-report.5"
	echo "$man5dir/pycore-coredump.conf.5"
	echo "$man8dir/pycore-coredump.8"
	echo "$pkgdatadir/pycore-report.schema.json"
	echo "$confdir/coredump.conf"
	[ -n "$unitdir" ] && echo "$unit" && echo "$dropin"
	[ -n "$sysusersdir" ] && echo "$sysusers"
} | sort >"$tmp/expected"
(cd "$dest" && find . -type f -o -type l) | sed 's|^\.||' | sort >"$tmp/installed"
if cmp -s "$tmp/expected" "$tmp/installed"; then
	tap_ok "every file where configure said, and no other: $(wc -l <"$tmp/installed") files"
else
	diff "$tmp/expected" "$tmp/installed" | tap_diag
	tap_fail "every file where configure said, and no other" "see the diff (< expected, > installed)"
fi
if [ -x "$dest$bindir/pycore" ] && "$dest$bindir/pycore" --version >/dev/null 2>&1; then
	tap_ok "the installed program runs"
else
	tap_fail "the installed program runs" "$dest$bindir/pycore --version failed"
fi

# The config: section [Coredump], every setting commented out at its
# default (the interface of pycore coredump), once, and nothing set.
conf=$dest$confdir/coredump.conf
bad=
for kv in ReportDirectory= Executables= Locals=yes Redact=yes MaxConcurrent=2 \
	RateLimitIntervalSec=3600 RateLimitBurst=10 MaxCoreSize=4G User=pycore Debuginfod=no SaveCompact=no; do
	n=$(grep -c -x "#$kv" "$conf")
	[ "$n" -eq 1 ] || bad="$bad #$kv($n times)"
done
set_lines=$(grep -v -e '^#' -e '^$' -e '^\[Coredump\]$' "$conf")
if [ -n "$bad" ] || [ -n "$set_lines" ] || ! grep -q -x '\[Coredump\]' "$conf"; then
	tap_fail "coredump.conf: [Coredump], each setting commented out at its default, once" \
		"${bad:+wrong:$bad }${set_lines:+set: $set_lines}"
else
	tap_ok "coredump.conf: [Coredump], each setting commented out at its default, once"
fi

if [ -z "$unitdir" ]; then
	tap_skip "the unit's ExecStart is configure's bindir" "configured --with-systemdsystemunitdir=no"
	tap_skip "systemd-analyze verify pycore-coredump@.service" "configured --with-systemdsystemunitdir=no"
	tap_skip "systemd-analyze verify systemd-coredump@.service with the drop-in" \
		"configured --with-systemdsystemunitdir=no"
else
	exec_line=$(grep '^ExecStart=' "$dest$unit")
	if [ "$exec_line" = "ExecStart=$bindir/pycore coredump %i" ] && ! grep -q '@[a-z_]*@' "$dest$unit"; then
		tap_ok "the unit's ExecStart is configure's bindir: $exec_line"
	else
		tap_fail "the unit's ExecStart is configure's bindir" "$exec_line"
	fi
	# verify needs ExecStart's program: a copy of the unit pointing at the
	# installed one, next to the drop-in; the man page from DESTDIR.
	v=$tmp/units
	mkdir -p "$v/systemd-coredump@.service.d"
	sed "s|^ExecStart=/|ExecStart=$dest/|" "$dest$unit" >"$v/pycore-coredump@.service"
	cp "$dest$dropin" "$v/systemd-coredump@.service.d/"
	if ! command -v systemd-analyze >/dev/null; then
		tap_skip "systemd-analyze verify pycore-coredump@.service" "systemd-analyze not installed"
	elif (cd "$v" && MANPATH=$dest${man1dir%/man1} systemd-analyze verify "$v/pycore-coredump@.service") \
		>"$tmp/verify.log" 2>&1 && [ ! -s "$tmp/verify.log" ]; then
		tap_ok "systemd-analyze verify pycore-coredump@.service: no warning"
	else
		tap_diag <"$tmp/verify.log"
		tap_fail "systemd-analyze verify pycore-coredump@.service"
	fi

	# systemd-coredump's own unit: the host's, the one scripts/install-deps
	# unpacked (never installed), or from its package in apt's cache.
	real= from=
	unpacked=${PYCORE_SYSTEMD_COREDUMP:-$HOME/.cache/pycore/systemd-coredump/root}
	for d in /lib/systemd/system /usr/lib/systemd/system "$unpacked/lib/systemd/system"; do
		[ -f "$d/systemd-coredump@.service" ] && { real=$d/systemd-coredump@.service from=$d/systemd-coredump@.service; break; }
	done
	deb=$(ls /var/cache/apt/archives/systemd-coredump_*.deb 2>/dev/null | tail -n 1)
	if [ -z "$real" ] && [ -n "$deb" ] && dpkg-deb -x "$deb" "$tmp/sc" 2>/dev/null; then
		real=$(find "$tmp/sc" -name 'systemd-coredump@.service' -type f | head -n 1)
		from="its package ${deb##*/}"
	fi
	if ! command -v systemd-analyze >/dev/null; then
		tap_skip "systemd-analyze verify systemd-coredump@.service with the drop-in" "systemd-analyze not installed"
	elif [ -z "$real" ]; then
		tap_skip "systemd-analyze verify systemd-coredump@.service with the drop-in" \
			"systemd-coredump@.service neither installed nor unpacked by scripts/install-deps"
	else
		cp "$real" "$v/"
		target=$(sed -n 's/^OnSuccess=//p' "$dest$dropin" | sed 's/%i/12-3456-0/')
		(cd "$v" && systemd-analyze verify --man=no "$v/systemd-coredump@.service") >"$tmp/verify.log" 2>&1
		rc=$?
		# the drop-in is read: a key verify does not know in it is reported
		cp "$v/systemd-coredump@.service.d/pycore.conf" "$tmp/dropin"
		echo 'NoSuchKeyForTheTest=1' >>"$v/systemd-coredump@.service.d/pycore.conf"
		(cd "$v" && systemd-analyze verify --man=no "$v/systemd-coredump@.service") >"$tmp/control.log" 2>&1
		cp "$tmp/dropin" "$v/systemd-coredump@.service.d/pycore.conf"
		if [ "$rc" -ne 0 ] || [ -s "$tmp/verify.log" ]; then
			tap_diag <"$tmp/verify.log"
			tap_fail "systemd-analyze verify systemd-coredump@.service with the drop-in"
		elif ! grep -q NoSuchKeyForTheTest "$tmp/control.log"; then
			tap_fail "systemd-analyze verify systemd-coredump@.service with the drop-in" \
				"verify did not read the drop-in (an unknown key in it went unreported)"
		elif [ "$target" != "pycore-coredump@12-3456-0.service" ] ||
			[ ! -f "$dest$unitdir/${target%%@*}@.service" ]; then
			tap_fail "systemd-analyze verify systemd-coredump@.service with the drop-in" \
				"OnSuccess= names $target, not an instance of the installed pycore-coredump@.service"
		else
			tap_ok "systemd-analyze verify systemd-coredump@.service with the drop-in (the unit from $from): no warning; OnSuccess=$target"
		fi
	fi
fi

# The user: systemd-sysusers on the installed file, in a scratch root.
if [ -z "$sysusersdir" ]; then
	tap_skip "systemd-sysusers creates the user pycore" "configured --with-sysusersdir=no"
elif ! command -v systemd-sysusers >/dev/null; then
	tap_skip "systemd-sysusers creates the user pycore" "systemd-sysusers not installed"
else
	mkdir -p "$tmp/root/etc"
	if systemd-sysusers --root="$tmp/root" "$dest$sysusers" >"$tmp/sysusers.log" 2>&1 &&
		entry=$(grep '^pycore:' "$tmp/root/etc/passwd"); then
		uid=$(echo "$entry" | cut -d: -f3)
		shell=$(echo "$entry" | cut -d: -f7)
		if [ "$uid" -lt 1000 ] && [ "${shell##*/}" = nologin ] && grep -q '^pycore:' "$tmp/root/etc/group"; then
			tap_ok "systemd-sysusers creates the user pycore: system uid $uid, group pycore, $shell"
		else
			tap_fail "systemd-sysusers creates the user pycore" "$entry"
		fi
	else
		tap_diag <"$tmp/sysusers.log"
		tap_fail "systemd-sysusers creates the user pycore" "no pycore entry in the scratch root's /etc/passwd"
	fi
fi

if make -s -C "$build" uninstall DESTDIR="$dest" >"$tmp/uninstall.log" 2>&1 &&
	[ -z "$(find "$dest" -type f -o -type l)" ]; then
	tap_ok "make uninstall DESTDIR=... removes every file"
else
	tap_diag <"$tmp/uninstall.log"
	find "$dest" -type f -o -type l | tap_diag
	tap_fail "make uninstall DESTDIR=... removes every file"
fi
tap_done
