/* SHA-256 (FIPS 180-4), for the hashes a Content-Security-Policy names:
 * the HTML reports allow their own inline style and script by hash. */
#ifndef PYCORE_UTIL_SHA256_H
#define PYCORE_UTIL_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* The digest of the N bytes at P. */
void pc_sha256(const void *p, size_t n, uint8_t digest[32]);

/* "sha256-" and the base64 (RFC 4648, padded) of the digest of S, as a
 * CSP hash-source is spelt, into BUF (at least 52 bytes). */
void pc_sha256_csp(const char *s, char *buf, size_t size);

#endif
