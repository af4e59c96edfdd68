#!/bin/sh
# pycore's DWARF reader against the tables, for every pyenv interpreter.
bin=${TEST_DWARF_LAYOUT:-./test-dwarf-layout}
set --
for m in 6 7 8 9 10 11 12 13; do
	lib=
	for l in /root/.pyenv/versions/3.$m.*/lib/libpython3.$m*.so.1.0; do
		[ -f "$l" ] && lib=$l
	done
	if [ -z "$lib" ]; then
		echo "SKIP: python3.$m not installed (/root/.pyenv/versions/3.$m.*/lib)"
		continue
	fi
	set -- "$@" "$m" "$lib"
done
[ $# -gt 0 ] || { echo "SKIP: no interpreter with DWARF found"; exit 77; }
exec "$bin" "$@"
