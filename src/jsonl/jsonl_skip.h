/* The values jsonl_scan skips (jsonl_skip.c): inside the scanner only. */
#ifndef PYCORE_JSONL_SKIP_H
#define PYCORE_JSONL_SKIP_H

/* The value at P (before END) checked as jsonl_scan checks what it keeps,
 * inside DEPTH containers: the byte after it, or NULL where jsonl_scan
 * would leave the line to jansson. */
const unsigned char *jsonl_skip_value(const unsigned char *p, const unsigned char *end, int depth);

#endif
