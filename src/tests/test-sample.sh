#!/bin/sh
# The sample core of the README (testdata/) against the truth its process
# recorded when scripts/make-sample made it; then the same with the
# interpreter's installation hidden.  TAP, from check-stacks.py --sample.
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
exec "${PYTHON3:-python3}" "$srcdir/src/tests/check-stacks.py" --sample \
	"$srcdir/testdata/sample-py3.13-threads.core.zst" "$srcdir/testdata/sample-py3.13-threads.truth.json"
