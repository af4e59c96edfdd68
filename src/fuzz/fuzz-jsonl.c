/* Fuzz target: pycore group's scanner of JSON Lines records
 * (src/jsonl/jsonl_scan.c) against jansson.  Whatever line the scanner
 * reads, jansson must read too (after surrogates.c's pairing), and its
 * tree pruned as the scanner prunes must equal the scanner's, member
 * order included, both pruned and whole (jsonl_scan_check.h aborts
 * otherwise).  A line the scanner leaves alone is jansson's to judge.
 * Built as fuzz-replay-jsonl too (fuzz-reader.h), which replays the
 * findings kept in testdata/fuzz-regressions/jsonl/. */
#include <stddef.h>
#include <stdint.h>

#include "jsonl/jsonl_scan_check.h"
#include "fuzz-reader.h"

static int fuzz_one(const uint8_t *data, size_t size)
{
	jsonl_scan_check((const char *)data, size);
	return 0;
}
