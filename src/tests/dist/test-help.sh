#!/bin/sh
# The help and the manual pages, against each other and against the code:
# - each command's --help (and pycore --help) is one screen: at most 60
#   lines of at most 80 columns;
# - the options each --help lists are the options of the command's manual
#   page (the tags of its .TP items), both ways;
# - every option of the command's getopt table (src/cli/options.c's
#   longopts and pycore.c's option string for analyze and batch; group.c's,
#   coredump.c's) is in its --help, or the command refuses it (exit 2, one
#   line naming it), and every option --help lists is in the table;
# - the commands src/pycore.c dispatches are those pycore --help and
#   pycore(1)'s COMMANDS list;
# - the hook's settings (coredump_config.c's keys) are the items of
#   pycore-coredump.conf(5) and the lines of systemd/coredump.conf; the
#   error codes (src/util/error.c's table) are the items of pycore(1)'s
#   ERROR CODES and each is named in pycore-report(5);
# - every manual page renders with groff -man -ww -z without a warning,
#   and man -l renders it; lexgrog reads its whatis entry;
# - pycore help COMMAND shows the page (MANPATH at a copy of man/), and
#   pycore help nosuch, a missing page or a missing man fail in one line
#   with their own exit codes (2, 8, 8);
# - and the checks catch what they are for: a copy of a page with an
#   option's item removed, a --help without an option's line, a page with
#   a bad request.
# TAP (src/tests/lib/tap.sh); run from the build directory (make check).
srcdir=${srcdir:-$(cd "$(dirname "$0")/../../.." && pwd)}
. "$srcdir/src/tests/lib/tap.sh"
PYCORE=${PYCORE:-$(pwd)/pycore}
case $PYCORE in /*) ;; *) PYCORE=$(pwd)/$PYCORE ;; esac
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
man=$srcdir/man

if [ ! -x "$PYCORE" ]; then
	tap_fail "pycore is built" "$PYCORE is missing"
	tap_done
fi

# The options an --help output (standard input) lists, one a line: on each
# line indented 2 to 6 spaces whose text starts with '-', the words of its
# left column (up to two spaces in a row) that are options.
help_options() {
	awk '{
		match($0, /^ */)
		ind = RLENGTH
		rest = substr($0, ind + 1)
		if (ind < 2 || ind > 6 || substr(rest, 1, 1) != "-")
			next
		i = index(rest, "  ")
		if (i)
			rest = substr(rest, 1, i - 1)
		n = split(rest, w, /[ ,]+/)
		for (k = 1; k <= n; k++) {
			t = w[k]
			sub(/=.*/, "", t)
			sub(/\[.*/, "", t)
			if (t ~ /^--?[A-Za-z0-9][A-Za-z0-9-]*$/)
				print t
		}
	}' | sort -u
}

# The options of a manual page FILE: the words of each .TP item's tag (the
# line after .TP) that are options.  With KEYS as $2, its settings instead
# (words KEY=).
man_options() {
	awk -v keys="${2:-}" '
	tag {
		tag = 0
		line = $0
		gsub(/\\-/, "-", line)
		gsub(/\\f[BIRP]/, "", line)
		gsub(/"/, " ", line)
		n = split(line, w, /[ ,|]+/)
		for (k = 1; k <= n; k++) {
			t = w[k]
			if (keys != "") {
				if (t ~ /^[A-Z][A-Za-z]*=/) {
					sub(/=.*/, "", t)
					print t
				}
				continue
			}
			sub(/=.*/, "", t)
			sub(/\[.*/, "", t)
			if (t ~ /^--?[A-Za-z0-9][A-Za-z0-9-]*$/)
				print t
		}
	}
	/^\.TP/ { tag = 1 }' "$1" | sort -u
}

# differ A B NAME_A NAME_B: "only in NAME_A: ...; only in NAME_B: ...; " of
# two sorted lists (files), nothing when they are the same.
differ() {
	a=$(comm -23 "$1" "$2" | paste -s -d ' ' -)
	b=$(comm -13 "$1" "$2" | paste -s -d ' ' -)
	[ -n "$a" ] && printf 'only in %s: %s; ' "$3" "$a"
	[ -n "$b" ] && printf 'only in %s: %s; ' "$4" "$b"
	return 0
}

# The getopt table of a command: "NAME HAS_ARG" lines for its long options
# (HAS_ARG required, optional or no) and "-C HAS_ARG VAL" for its short
# ones, from the source.
# (an option without a letter of its own, whose value is a number such as
# 0x100, gets "-")
long_table() {   # FILE
	grep -o '{ "[a-z0-9-]*", [a-z]*_argument, NULL, \('"'"'.'"'"'\|0x[0-9a-fA-F]*\) }' "$1" |
		sed 's/{ "\([a-z0-9-]*\)", \([a-z]*\)_argument, NULL, '"'"'\(.\)'"'"' }/\1 \2 \3/;
		     s/{ "\([a-z0-9-]*\)", \([a-z]*\)_argument, NULL, 0x[0-9a-fA-F]* }/\1 \2 -/'
}
# the option string's letters: "C no" or "C required"
short_table() {  # OPTSTRING
	printf '%s\n' "$1" | sed 's/^[+:]*//' | awk '{
		s = $0
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (c == ":")
				continue
			print c, (substr(s, i + 1, 1) == ":" ? "required" : "no")
		}
	}'
}
cmd_optstring() {  # COMMAND
	case $1 in
	analyze | batch | heap)
		grep -o 'options_parse(argc, argv, "[^"]*"' "$srcdir/src/pycore.c" | tail -n 1 | sed 's/.*, "//; s/"$//' ;;
	group) grep -o 'getopt_long(argc, argv, "[^"]*"' "$srcdir/src/cli/group/group.c" | sed 's/.*, "//; s/"$//' ;;
	coredump) grep -o 'getopt_long(argc, argv, "[^"]*"' "$srcdir/src/cli/coredump/coredump.c" | sed 's/.*, "//; s/"$//' ;;
	esac
}
cmd_source() {
	case $1 in
	analyze | batch | heap) echo "$srcdir/src/cli/options.c" ;;
	group) echo "$srcdir/src/cli/group/group.c" ;;
	coredump) echo "$srcdir/src/cli/coredump/coredump.c" ;;
	esac
}
# a value the option takes, for trying it
value_for() {
	case $1 in
	--jobs | -j | --timeout | --max-repr | --max-items | --max-depth | --top) echo 1 ;;
	--max-memory) echo 100 ;;
	--max-spool) echo 1G ;;
	--shard) echo 0/1 ;;
	--skip-done) echo "$tmp/none.jsonl" ;;
	--html-dir | --sysroot) echo "$tmp" ;;
	--save) echo "$tmp/saved.core" ;;
	--format | -f) echo json ;;
	--color) echo never ;;
	--layout) echo auto ;;
	*) echo x ;;
	esac
}

# table_check COMMAND HELP_OPTIONS_FILE: each option of the command's table
# missing from the list is refused by the command (exit 2, one line naming
# it or its long name); prints those that are not, and those the list has
# that the table does not.
table_check() {
	cmd=$1 list=$2 src=$(cmd_source "$1")
	long_table "$src" >"$tmp/long"
	short_table "$(cmd_optstring "$cmd")" >"$tmp/short"
	{
		awk '{ print "--" $1 }' "$tmp/long"
		awk '{ print "-" $1 }' "$tmp/short"
	} | sort -u >"$tmp/table"
	extra=$(comm -13 "$tmp/table" "$list" | paste -s -d ' ' -)
	[ -n "$extra" ] && printf 'listed, not in the table: %s; ' "$extra"
	comm -23 "$tmp/table" "$list" | while read -r o; do
		case $o in
		--*) name=$o has=$(awk -v n="${o#--}" '$1 == n { print $2 }' "$tmp/long")
			letter=$(awk -v n="${o#--}" '$1 == n { print $3 }' "$tmp/long") ;;
		*) letter=${o#-} has=$(awk -v c="$letter" '$1 == c { print $2 }' "$tmp/short")
			name=--$(awk -v c="$letter" '$3 == c { print $1 }' "$tmp/long") ;;
		esac
		if [ "$has" = required ]; then
			"$PYCORE" "$cmd" "$o" "$(value_for "$o")" "$tmp/no-such-dump" >/dev/null 2>"$tmp/err" </dev/null
		else
			"$PYCORE" "$cmd" "$o" "$tmp/no-such-dump" >/dev/null 2>"$tmp/err" </dev/null
		fi
		rc=$?
		if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] ||
			! { grep -q -e "$o\\b" "$tmp/err" || grep -q -e "$name\\b" "$tmp/err"; }; then
			printf 'accepted, not listed: %s (exit %d); ' "$o" "$rc"
		fi
	done
}

page_of() {
	case $1 in
	top | help) echo "$man/pycore.1" ;;
	coredump) echo "$man/pycore-coredump.8" ;;
	report | coredump.conf) echo "$man/pycore-$1.5" ;;
	*) echo "$man/pycore-$1.1" ;;
	esac
}

no_libsystemd=
"$PYCORE" coredump --help >/dev/null 2>"$tmp/err"
grep -q "built without libsystemd" "$tmp/err" && no_libsystemd=1

# --help: one screen each, its options those of the page and the table
for cmd in top analyze batch heap group coredump help; do
	label="pycore $cmd --help"
	[ "$cmd" = top ] && label="pycore --help"
	if [ "$cmd" = coredump ] && [ -n "$no_libsystemd" ]; then
		tap_skip "$label" "this pycore was built without libsystemd: no hook, no help of its own"
		continue
	fi
	case $cmd in top) set -- --help ;; *) set -- "$cmd" --help ;; esac
	if ! "$PYCORE" "$@" >"$tmp/help.$cmd" 2>"$tmp/err" || [ -s "$tmp/err" ]; then
		tap_diag <"$tmp/err"
		tap_fail "$label" "exit status not 0, or standard error not empty"
		continue
	fi
	lines=$(wc -l <"$tmp/help.$cmd")
	cols=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$tmp/help.$cmd")
	if [ "$lines" -le 60 ] && [ "$cols" -le 80 ]; then
		tap_ok "$label: one screen, $lines lines of at most $cols columns"
	else
		tap_fail "$label: one screen" "$lines lines (at most 60), $cols columns (at most 80)"
	fi
	help_options <"$tmp/help.$cmd" >"$tmp/opts.$cmd"
	page=$(page_of "$cmd")
	man_options "$page" >"$tmp/man.$cmd"
	d=$(differ "$tmp/opts.$cmd" "$tmp/man.$cmd" "--help" "${page##*/}")
	if [ ! -s "$tmp/opts.$cmd" ]; then
		tap_fail "$label lists the options of ${page##*/}" "no option found in --help"
	elif [ -z "$d" ]; then
		tap_ok "$label lists the options of ${page##*/}, and no other: $(paste -s -d ' ' "$tmp/opts.$cmd")"
	else
		tap_fail "$label lists the options of ${page##*/}" "${d%; }"
	fi
	case $cmd in top | help) continue ;; esac
	d=$(table_check "$cmd" "$tmp/opts.$cmd")
	if [ -z "$d" ]; then
		tap_ok "pycore $cmd: every option of its getopt table is in --help or refused ($(wc -l <"$tmp/table") in the table)"
	else
		tap_fail "pycore $cmd: every option of its getopt table is in --help or refused" "${d%; }"
	fi
done

# the commands main() dispatches: each in pycore --help's list and in
# pycore(1)'s COMMANDS
grep -o 'strcmp(argv\[optind\], "[a-z]*")' "$srcdir/src/pycore.c" | sed 's/.*"\(.*\)")/\1/' | sort -u >"$tmp/commands"
awk '/^Commands:/ { on = 1; next } on && /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }' "$tmp/help.top" | sort -u >"$tmp/help.commands"
awk '/^\.SH/ { on = ($0 ~ /^\.SH COMMANDS/) } on && tag { sub(/^\.B  */, ""); print $1; tag = 0 }
	on && /^\.TP/ { tag = 1 }' "$man/pycore.1" | sort -u >"$tmp/man.commands"
d=$(differ "$tmp/commands" "$tmp/help.commands" src/pycore.c "pycore --help")$(differ "$tmp/commands" "$tmp/man.commands" src/pycore.c "pycore(1) COMMANDS")
if [ ! -s "$tmp/commands" ]; then
	tap_fail "the commands" "none found in src/pycore.c"
elif [ -z "$d" ]; then
	tap_ok "the commands of src/pycore.c are pycore --help's and pycore(1)'s: $(paste -s -d ' ' "$tmp/commands")"
else
	tap_fail "the commands of src/pycore.c are pycore --help's and pycore(1)'s" "${d%; }"
fi

# the hook's settings
grep -o 'strcmp(key, "[A-Za-z]*")' "$srcdir/src/cli/coredump/coredump_config.c" | sed 's/.*"\(.*\)")/\1/' | sort -u >"$tmp/keys"
man_options "$man/pycore-coredump.conf.5" keys >"$tmp/man.keys"
sed -n 's/^#\([A-Z][A-Za-z]*\)=.*/\1/p' "$srcdir/systemd/coredump.conf" | sort -u >"$tmp/conf.keys"
d=$(differ "$tmp/keys" "$tmp/man.keys" coredump_config.c pycore-coredump.conf.5)$(differ "$tmp/keys" "$tmp/conf.keys" coredump_config.c systemd/coredump.conf)
if [ ! -s "$tmp/keys" ]; then
	tap_fail "the hook's settings" "none found in src/cli/coredump/coredump_config.c"
elif [ -z "$d" ]; then
	tap_ok "the hook's $(wc -l <"$tmp/keys") settings are pycore-coredump.conf(5)'s items and systemd/coredump.conf's lines"
else
	tap_fail "the hook's settings are pycore-coredump.conf(5)'s items and systemd/coredump.conf's lines" "$d"
fi

# the error codes
grep -o '\[PC_E[A-Z]*\] = { "[a-z-]*"' "$srcdir/src/util/error.c" | sed 's/.*"\(.*\)"/\1/' | sort -u >"$tmp/codes"
awk '/^\.SH/ { in_codes = ($0 ~ /^\.SH ERROR CODES/) } in_codes && tag { gsub(/\\-/, "-"); sub(/^\.B  */, ""); print; tag = 0 }
	in_codes && /^\.TP/ { tag = 1 }' "$man/pycore.1" | sort -u >"$tmp/man.codes"
missing=
sed 's/\\-/-/g' "$man/pycore-report.5" >"$tmp/report.5"
while read -r code; do
	grep -q -F "\"$code\"" "$tmp/report.5" || missing="$missing $code"
done <"$tmp/codes"
d=$(differ "$tmp/codes" "$tmp/man.codes" error.c "pycore(1) ERROR CODES")
if [ ! -s "$tmp/codes" ]; then
	tap_fail "the error codes" "none found in src/util/error.c"
elif [ -z "$d$missing" ]; then
	tap_ok "the $(wc -l <"$tmp/codes") error codes of src/util/error.c are pycore(1)'s ERROR CODES, each named in pycore-report(5)"
else
	tap_fail "the error codes of src/util/error.c are pycore(1)'s ERROR CODES, each named in pycore-report(5)" \
		"$d${missing:+not in pycore-report.5:$missing}"
fi

# every page renders without a warning
render() {  # PAGE: groff's and man's complaints on standard output
	groff -man -ww -z "$1" 2>&1
	if command -v man >/dev/null; then
		out=$(MANWIDTH=80 LC_ALL=C.UTF-8 man -l "$1" 2>&1 >/dev/null)
		[ -n "$out" ] && printf '%s\n' "$out"
		[ "$(MANWIDTH=80 man -l "$1" 2>/dev/null | wc -l)" -gt 5 ] || echo "man -l: no page"
	fi
	if command -v lexgrog >/dev/null; then
		lexgrog "$1" >/dev/null 2>&1 || echo "lexgrog: no whatis entry"
	fi
}
if ! command -v groff >/dev/null; then
	tap_skip "the manual pages render without a warning" "groff not installed (Debian package groff)"
else
	for page in "$man"/*.[158]; do
		render "$page" >"$tmp/render"
		if [ -s "$tmp/render" ]; then
			tap_diag <"$tmp/render"
			tap_fail "${page##*/} renders without a warning (groff -man -ww -z, man -l, lexgrog)"
		else
			tap_ok "${page##*/} renders without a warning (groff -man -ww -z, man -l, lexgrog)"
		fi
	done
fi

# pycore help COMMAND
mkdir -p "$tmp/man/man1" "$tmp/man/man5" "$tmp/man/man8" "$tmp/nowhere" "$tmp/nobin"
for page in "$man"/*.[158]; do
	cp "$page" "$tmp/man/man${page##*.}/"
done
if ! command -v man >/dev/null; then
	tap_skip "pycore help COMMAND shows the command's manual page" "man not installed (Debian package man-db)"
else
	bad=
	for cmd in "" analyze batch heap group coredump help report coredump.conf; do
		MANPATH=$tmp/man MANPAGER=cat PAGER=cat MANWIDTH=80 "$PYCORE" help $cmd >"$tmp/out" 2>"$tmp/err"
		rc=$?
		title=$(basename "$(page_of "${cmd:-top}")" | sed 's/\.[158]$//' | tr a-z A-Z)
		if [ "$rc" -ne 0 ] || ! head -n 1 "$tmp/out" | grep -q "^$title(" || [ "$(wc -l <"$tmp/out")" -lt 20 ]; then
			tap_diag <"$tmp/err"
			bad="$bad help${cmd:+ $cmd}(exit $rc)"
		fi
	done
	if [ -z "$bad" ]; then
		tap_ok "pycore help [analyze|batch|heap|group|coredump|help|report|coredump.conf] shows the manual page (MANPATH at a copy of man/)"
	else
		tap_fail "pycore help COMMAND shows the command's manual page" "$bad"
	fi
fi
# one line and its own exit code: checked by (name, arguments, environment, exit code, a word of the line)
one_line() {  # NAME EXPECTED_RC WORD COMMAND...
	name=$1 want=$2 word=$3
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" -eq "$want" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -s "$tmp/out" ] &&
		grep -q -e "$word" "$tmp/err"; then
		tap_ok "$name: exit $rc, one line: $(cat "$tmp/err")"
	else
		tap_diag <"$tmp/err"
		tap_fail "$name" "exit $rc (not $want), $(wc -l <"$tmp/err") lines on standard error, $(wc -c <"$tmp/out") bytes on standard output"
	fi
}
one_line "pycore help nosuch" 2 "nosuch" "$PYCORE" help nosuch
one_line "pycore help analyze batch" 2 "one command" "$PYCORE" help analyze batch
if command -v man >/dev/null; then
	one_line "pycore help analyze, the page not in MANPATH" 8 "pycore analyze --help" \
		env MANPATH="$tmp/nowhere" "$PYCORE" help analyze
else
	tap_skip "pycore help analyze, the page not in MANPATH" "man not installed (Debian package man-db)"
fi
one_line "pycore help analyze, no man in PATH" 8 "pycore analyze --help" \
	env PATH="$tmp/nobin" MANPATH="$tmp/man" "$PYCORE" help analyze

# The checks catch what they are for.
# 1. a copy of pycore-analyze.1 without --max-items's item
mkdir "$tmp/broken"
awk '/^\.TP/ { held = $0; next } held != "" { if ($0 ~ /max\\-items/) { held = ""; next } print held; held = "" } { print }' \
	"$man/pycore-analyze.1" >"$tmp/broken/pycore-analyze.1"
man_options "$tmp/broken/pycore-analyze.1" >"$tmp/broken/man"
d=$(differ "$tmp/opts.analyze" "$tmp/broken/man" "--help" "the copy")
if [ "$d" = "only in --help: --max-items; " ]; then
	tap_ok "a copy of pycore-analyze.1 without the item of --max-items is caught: ${d%; }"
else
	tap_fail "a copy of pycore-analyze.1 without the item of --max-items is caught" "the difference found: '$d'"
fi
# 2. analyze's --help without the line of --tasks
grep -v -e '^ *--tasks ' "$tmp/help.analyze" | help_options >"$tmp/broken/help"
d=$(table_check analyze "$tmp/broken/help")
case $d in
*"accepted, not listed: --tasks "*) tap_ok "an --help of analyze without the line of --tasks is caught: ${d%; }" ;;
*) tap_fail "an --help of analyze without the line of --tasks is caught" "the check said '$d'" ;;
esac
# 3. a copy of pycore-group.1 with a request groff does not know
if command -v groff >/dev/null; then
	sed 's/^\.SH OPTIONS$/.XB bad request\n&/' "$man/pycore-group.1" >"$tmp/broken/pycore-group.1"
	if [ -n "$(groff -man -ww -z "$tmp/broken/pycore-group.1" 2>&1)" ]; then
		tap_ok "a copy of pycore-group.1 with an unknown request is caught: $(groff -man -ww -z "$tmp/broken/pycore-group.1" 2>&1 | head -n 1)"
	else
		tap_fail "a copy of pycore-group.1 with an unknown request is caught" "groff -ww said nothing"
	fi
else
	tap_skip "a copy of pycore-group.1 with an unknown request is caught" "groff not installed"
fi
tap_done
