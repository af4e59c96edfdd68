#!/bin/sh
# The Debian package: from the distributed tree (make distdir, so debian/
# must be in the tarball), `dpkg-buildpackage -us -uc -b` builds the .deb
# (about 20 s: the package build runs only the quick unit tests); lintian
# reports no error, and no tag at all on the manual pages (info and
# pedantic ones included); the .deb holds the program, the man pages, the unit,
# the drop-in, the sysusers.d file and the config as a conffile; its
# maintainer scripts create the user and reload systemd; apt would install
# it without removing anything.  The .deb is never installed here.
# TAP (src/tests/lib/tap.sh); run from the build directory (make check).
srcdir=${srcdir:-$(cd "$(dirname "$0")/../../.." && pwd)}
. "$srcdir/src/tests/lib/tap.sh"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
unset MAKEFLAGS MFLAGS MAKELEVEL

for tool in dpkg-buildpackage dpkg-checkbuilddeps dpkg-deb dh; do
	if ! command -v "$tool" >/dev/null; then
		tap_skip "the Debian package" "$tool not installed (Debian packages dpkg-dev, debhelper)"
		tap_done
	fi
done
# The package does not depend on this build's configuration: the
# sanitizer build (scripts/run-tests) leaves it to the plain one.
if [ -n "$(build_value SANITIZER_CFLAGS)" ]; then
	tap_skip "the Debian package" "built by the plain build's make check, not again in a sanitizer build"
	tap_done
fi
version=$(build_value PACKAGE_VERSION)
tree=$tmp/pycore-$version
if ! make -s distdir distdir="$tree" >"$tmp/distdir.log" 2>&1 || [ ! -f "$tree/debian/control" ]; then
	tap_diag <"$tmp/distdir.log"
	tap_fail "make distdir: the distributed tree has debian/"
	tap_done
fi
tap_ok "make distdir: the distributed tree has debian/"
if ! (cd "$tree" && dpkg-checkbuilddeps) >"$tmp/deps.log" 2>&1; then
	tap_skip "the Debian package" "$(sed -n 's/.*Unmet build dependencies: //p' "$tmp/deps.log") not installed"
	tap_done
fi
changelog_version=$(cd "$tree" && dpkg-parsechangelog -S Version)
if [ "$changelog_version" = "$version" ]; then
	tap_ok "debian/changelog's version is configure's: $version"
else
	tap_fail "debian/changelog's version is configure's" "$changelog_version, configure.ac $version"
fi

start=$(date +%s)
if (cd "$tree" && DEB_BUILD_OPTIONS="parallel=$(nproc 2>/dev/null || echo 2)" \
	dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1 &&
	deb=$(ls "$tmp"/pycore_"$version"_*.deb 2>/dev/null) && [ -n "$deb" ]; then
	tap_ok "dpkg-buildpackage -us -uc -b: ${deb##*/} in $(($(date +%s) - start)) s"
else
	tail -n 40 "$tmp/build.log" | tap_diag
	tap_fail "dpkg-buildpackage -us -uc -b" "failed"
	tap_done
fi
# the quick unit tests ran in the package build (debian/rules), and passed
if grep -q '^# PASS: *[1-9]' "$tmp/build.log" && grep -q '^# FAIL: *0$' "$tmp/build.log" &&
	grep -q '^# ERROR: *0$' "$tmp/build.log"; then
	tap_ok "the package build ran the quick unit tests: $(sed -n 's/^# PASS: *//p' "$tmp/build.log") passed"
else
	grep '^# [A-Z]*:' "$tmp/build.log" | tap_diag
	tap_fail "the package build ran the quick unit tests"
fi

if ! command -v lintian >/dev/null; then
	tap_skip "lintian: no error" "lintian not installed"
else
	# info and pedantic tags shown too: the manual pages' are among them
	lintian --allow-root --display-info --pedantic "$tmp"/pycore_"$version"_*.changes >"$tmp/lintian.log" 2>&1
	errors=$(grep -c '^E: ' "$tmp/lintian.log")
	if [ "$errors" -eq 0 ] && ! grep -q '^internal error\|^Cannot\|^lintian: ' "$tmp/lintian.log"; then
		tap_ok "lintian: no error ($(grep -c '^W: ' "$tmp/lintian.log") warnings, $(grep -c '^[IP]: ' "$tmp/lintian.log") info or pedantic tags)"
	else
		tap_diag <"$tmp/lintian.log"
		tap_fail "lintian: no error" "$errors errors"
	fi
	# the manual pages: no tag of lintian's checks on them, whatever its
	# severity (groff's warnings, whatis entries, sections, spelling ...)
	man_tags='manpage|manual|man-page|whatis|groff|hyphen-used-as-minus-sign'
	if grep -E "^[EWIPX]: [^ ]+: [a-z0-9-]*($man_tags)[a-z0-9-]*( |$)" "$tmp/lintian.log" >"$tmp/lintian-man.log" ||
		grep -E "^[EWIPX]: [^ ]+: [a-z0-9-]+ .*usr/share/man/" "$tmp/lintian.log" >>"$tmp/lintian-man.log"; then
		tap_diag <"$tmp/lintian-man.log"
		tap_fail "lintian: no tag on the manual pages" "$(sort -u "$tmp/lintian-man.log" | wc -l) tags"
	else
		tap_ok "lintian: no tag on the manual pages (info and pedantic tags included)"
	fi
fi

dpkg-deb -c "$deb" | awk '{ print $NF }' | sed 's|^\./|/|' >"$tmp/contents"
missing=
for f in /usr/bin/pycore /usr/share/man/man1/pycore.1.gz /usr/share/man/man1/pycore-analyze.1.gz \
	/usr/share/man/man1/pycore-batch.1.gz /usr/share/man/man1/pycore-group.1.gz /usr/share/man/man1/pycore-heap.1.gz \
	/usr/share/man/man5/pycore-report.5.gz /usr/share/man/man5/pycore-coredump.conf.5.gz \
	/usr/share/man/man8/pycore-coredump.8.gz \
	/usr/share/pycore/pycore-report.schema.json /etc/pycore/coredump.conf \
	/lib/systemd/system/pycore-coredump@.service \
	/lib/systemd/system/systemd-coredump@.service.d/pycore.conf /usr/lib/sysusers.d/pycore.conf; do
	grep -q -x "$f" "$tmp/contents" || missing="$missing $f"
done
if [ -z "$missing" ]; then
	tap_ok "the .deb holds the program, man pages, schema, unit, drop-in, sysusers.d file and config"
else
	tap_diag <"$tmp/contents"
	tap_fail "the .deb holds the program, man pages, schema, unit, drop-in, sysusers.d file and config" "missing:$missing"
fi
exec_line=$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./lib/systemd/system/pycore-coredump@.service | grep '^ExecStart=')
if [ "$exec_line" = "ExecStart=/usr/bin/pycore coredump %i" ]; then
	tap_ok "the packaged unit runs /usr/bin/pycore coredump %i"
else
	tap_fail "the packaged unit runs /usr/bin/pycore coredump %i" "$exec_line"
fi

mkdir "$tmp/control"
dpkg-deb -e "$deb" "$tmp/control"
if [ "$(cat "$tmp/control/conffiles" 2>/dev/null)" = /etc/pycore/coredump.conf ]; then
	tap_ok "conffiles: /etc/pycore/coredump.conf"
else
	tap_fail "conffiles: /etc/pycore/coredump.conf" "$(cat "$tmp/control/conffiles" 2>/dev/null)"
fi
# postinst: the user (dh_installsysusers), then systemd reads the unit and
# the drop-in; postrm: systemd forgets them on remove
if grep -q '^ *systemd-sysusers .*pycore\.conf' "$tmp/control/postinst" &&
	grep -q '^[^#]*systemctl --system daemon-reload' "$tmp/control/postinst" &&
	sh -n "$tmp/control/postinst"; then
	tap_ok "postinst creates the user pycore and reloads systemd"
else
	tap_diag <"$tmp/control/postinst"
	tap_fail "postinst creates the user pycore and reloads systemd"
fi
if awk '/^remove\)/ { r = 1 } r && /^[^#]*systemctl --system daemon-reload/ { found = 1 } /;;/ { r = 0 }
	END { exit !found }' "$tmp/control/postrm" && sh -n "$tmp/control/postrm"; then
	tap_ok "postrm reloads systemd on remove"
else
	tap_diag <"$tmp/control/postrm"
	tap_fail "postrm reloads systemd on remove"
fi
depends=$(dpkg-deb -f "$deb" Depends) recommends=$(dpkg-deb -f "$deb" Recommends)
case "$depends/$recommends" in
*systemd*/systemd-coredump) tap_ok "Depends: $depends; Recommends: $recommends" ;;
*) tap_fail "Depends name systemd (sysusers), Recommends systemd-coredump" "$depends / $recommends" ;;
esac

# what apt would do with it (a simulation, without apt's lock)
if ! command -v apt-get >/dev/null; then
	tap_skip "apt-get install -s of the .deb" "apt-get not installed"
elif apt-get install -s -o Debug::NoLocking=1 "$deb" >"$tmp/apt.log" 2>&1 &&
	! grep -q '^Remv ' "$tmp/apt.log"; then
	tap_ok "apt-get install -s of the .deb: installs $(grep '^Inst ' "$tmp/apt.log" | awk '{ print $2 }' | paste -s -d ' ' -); removes nothing"
else
	tap_diag <"$tmp/apt.log"
	tap_fail "apt-get install -s of the .deb" "fails or removes a package"
fi
tap_done
