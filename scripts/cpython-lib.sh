# Shared by scripts/musl-python and scripts/standalone-python (sourced):
# CPython's sources, from $PYCORE_CPYTHON_GIT or Debian's, and how a
# build says it failed.

# fail MESSAGE: says "$prog: MESSAGE" and exits 1; once the build's
# attempt has begun (attempt=1), MESSAGE also goes to $failed (the
# prefix's .failed file: the tests' skips say it) until the next attempt.
fail() {
	echo "$prog: $*" >&2
	[ -n "${attempt:-}" ] && echo "$*" >"$failed"
	exit 1
}

# cpython_tag VERSION: sets $git and $tag to the first git directory of
# $PYCORE_CPYTHON_GIT (blank-separated) holding a release tag vVERSION.N,
# and its newest such tag; returns 1 when there is none.
cpython_tag() {
	tag=
	for g in ${PYCORE_CPYTHON_GIT:-}; do
		[ -d "$g" ] || continue
		t=$(git -C "$g" tag -l "v$1.*" 2>/dev/null | grep -E "^v$1\.[0-9]+\$" | sort -V | tail -1)
		if [ -n "$t" ]; then
			git=$g tag=$t
			return 0
		fi
	done
	return 1
}

# cpython_extract WORK DIR: $tag of $git unpacked in DIR/cpython (the
# archive in WORK).  A snapshot may lack a blob nobody builds from (such
# as Misc/svnmap.txt): those paths are left out, each one said.
cpython_extract() {
	excl= n=0
	until git -C "$git" archive -o "$1/cpython.tar" --prefix=cpython/ "$tag" -- . $excl 2>"$1/archive.err"; do
		miss=$(sed -n "s/^error: invalid object [0-9]* [0-9a-f]* for '\(.*\)'\$/\1/p" "$1/archive.err" | head -1)
		n=$((n + 1))
		[ -n "$miss" ] && [ $n -lt 50 ] || { cat "$1/archive.err"; return 1; }
		echo "left out (not in the snapshot): $miss"
		excl="$excl :(exclude)$miss"
	done
	tar -x -C "$2" -f "$1/cpython.tar" && rm -f "$1/cpython.tar"
}

# cpython_sources VERSION WORK DIR: CPython VERSION's sources unpacked in
# DIR/cpython, $tag their release (vVERSION.N) and $from where they came
# from: a git directory of $PYCORE_CPYTHON_GIT holding a vVERSION.N tag,
# else Debian's source package pythonVERSION -- its upstream tarball only,
# as CPython released it, none of Debian's patches -- of this machine's
# release or else of unstable, fetched through a private deb-src list in
# WORK (the machine's apt configuration is not touched; a mirror that is a
# dated snapshot serves a Release file past its Valid-Until date, which
# apt would refuse: its signature is checked, its age not).  Returns 1, the
# reason said, when neither has it.
cpython_sources() {
	if cpython_tag "$1"; then
		from=$git
		cpython_extract "$2" "$3"
		return
	fi
	mirror=$("$(dirname "$0")/sid-root" --mirror)
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	[ -n "$mirror" ] || { echo "no CPython $1 sources: no git directory in PYCORE_CPYTHON_GIT holds a v$1.N tag, and no Debian mirror is known"; return 1; }
	d=$2/deb
	mkdir -p "$d/lists/partial" "$d/archives/partial" "$d/src" || return 1
	for suite in $codename sid; do
		echo "deb-src $mirror $suite main" >"$d/sources.list"
		rm -rf "$d/lists" && mkdir -p "$d/lists/partial"
		apt="-o Dir::Etc::SourceList=$d/sources.list -o Dir::Etc::SourceParts=/dev/null
			-o Dir::State::Lists=$d/lists -o Dir::Cache=$d -o APT::Sandbox::User=root
			-o Acquire::Check-Valid-Until=false"
		apt-get $apt -qq update || continue
		# a mirror may lack the newest version's files: the next one then
		for v in $(apt-cache $apt showsrc "python$1" 2>/dev/null | sed -n 's/^Version: //p' | sort -Vr); do
			(cd "$d/src" && apt-get $apt -qq --download-only source "python$1=$v") >/dev/null 2>&1 && break
		done
		orig=$(ls "$d"/src/python"$1"_*.orig.tar.* 2>/dev/null | head -1)
		[ -n "$orig" ] || continue
		mkdir -p "$3/cpython" && tar -x -C "$3/cpython" --strip-components=1 -f "$orig" || return 1
		tag=v$(basename "$orig" | sed 's/^python[0-9.]*_\([0-9.]*\)\.orig\..*/\1/')
		from="Debian's python$1 source package ($suite), its upstream tarball"
		return 0
	done
	echo "no CPython $1 sources: no git directory in PYCORE_CPYTHON_GIT holds a v$1.N tag, nor has Debian ($codename, sid) a python$1 source package"
	return 1
}
