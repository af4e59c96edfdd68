# TAP for the shell tests (sourced; automake's tap-driver.sh reads it):
# one result line per case, so that test-suite.log counts each case, and
# each skip by name.
#   tap_ok NAME            ok N - NAME
#   tap_fail NAME [WHY]    not ok N - NAME: WHY
#   tap_skip NAME WHY      ok N - NAME # SKIP WHY
#   tap_diag < FILE        FILE's lines as TAP comments (other programs'
#                          output must not start a line with "ok")
#   tap_done               the plan, 1..N; exits 1 when a case failed
tap_n=0
tap_failed=0
# '#' starts a directive: keep it out of names; one line each
tap_clean() {
	printf '%s' "$*" | tr '#\n' '% '
}
tap_ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $(tap_clean "$1")"
}
tap_fail() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $(tap_clean "$1")${2:+: $(tap_clean "$2")}"
}
tap_skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $(tap_clean "$1") # SKIP $(tap_clean "$2")"
}
tap_diag() {
	sed 's/^/# /'
}
tap_done() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ] || exit 1
	exit 0
}

# tap_schema FILE...: every JSON report in the files (pycore's standard
# output) matches src/report/pycore-report.schema.json: 0, or 1 with the
# error as a comment.  Without a validator (python3-jsonschema) 0, and
# tap_schema_done says why.
tap_schema_n=0
tap_schema_why=
tap_schema() {
	tap_schema_out=$("${PYTHON3:-python3}" "$srcdir/src/tests/lib/pycoretest/schema.py" "$@" 2>&1)
	case $? in
	0) tap_schema_n=$((tap_schema_n + $#)) ;;
	77) tap_schema_why=${tap_schema_out#SKIP: } ;;
	*) printf '%s\n' "$tap_schema_out" | tap_diag; return 1 ;;
	esac
	return 0
}
# tap_schema_done: one result line for the script's reports
tap_schema_done() {
	if [ -n "$tap_schema_why" ]; then
		tap_skip "every JSON report matches the schema" "$tap_schema_why"
	elif [ "$tap_schema_n" -eq 0 ]; then
		tap_skip "every JSON report matches the schema" "no JSON report was made"
	else
		tap_ok "every JSON report matches the schema: $tap_schema_n outputs"
	fi
}

# build_value VAR: VAR as the Makefile of the build directory (the current
# directory, under make check) expands it, e.g. bindir.  The tests that run
# make there unset MAKEFLAGS first: theirs is a make of its own.
build_value() {
	printf 'pycore-value:\n\t@echo $(%s)\n' "$1" |
		make -s --no-print-directory -f Makefile -f - pycore-value
}

# interp NAME: the path of the interpreter NAME (py3.12, debian3.11,
# debian3.11-dbg, sid3.14) found on this machine by
# src/tests/lib/pycoretest/interpreters.py; status 1 (why on standard error)
# when it is not here.  interp --list: "NAME PATH" of each one found.
interp() {
	PYTHONPATH="$srcdir/src/tests/lib${PYTHONPATH:+:$PYTHONPATH}" \
		"${PYTHON3:-python3}" -m pycoretest "$@"
}
