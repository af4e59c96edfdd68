/* libsystemd's journal for pycore coredump, loaded when the hook runs:
 * every other command starts without libsystemd and the libraries it
 * brings (libgcrypt, libcap, liblz4...), whose loading and relocation
 * was a sixth of a small analysis's time.
 *
 * After journal_load() returns true, the sd_journal_* names used by the
 * hook (coredump_*.c) call libsystemd.so.0's functions: the macros below
 * make them calls through the pointers it filled, with the header's own
 * prototypes' types (sd_journal_send, a macro of the header, ends in
 * sd_journal_send_with_location). */
#ifndef PYCORE_CLI_JOURNAL_H
#define PYCORE_CLI_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <systemd/sd-journal.h>

struct journal_api {
	__typeof__(sd_journal_open) *open;
	__typeof__(sd_journal_close) *close;
	__typeof__(sd_journal_add_match) *add_match;
	__typeof__(sd_journal_process) *process;
	__typeof__(sd_journal_seek_tail) *seek_tail;
	__typeof__(sd_journal_seek_cursor) *seek_cursor;
	__typeof__(sd_journal_previous) *previous;
	__typeof__(sd_journal_next) *next;
	__typeof__(sd_journal_get_cursor) *get_cursor;
	__typeof__(sd_journal_get_data) *get_data;
	__typeof__(sd_journal_set_data_threshold) *set_data_threshold;
	__typeof__(sd_journal_send_with_location) *send_with_location;
};
extern struct journal_api journal_api;

/* Loads libsystemd.so.0 once; false, with ERR (LEN bytes) saying why, when
 * the library or one of its functions is missing. */
bool journal_load(char *err, size_t len);

#define sd_journal_open (*journal_api.open)
#define sd_journal_close (*journal_api.close)
#define sd_journal_add_match (*journal_api.add_match)
#define sd_journal_process (*journal_api.process)
#define sd_journal_seek_tail (*journal_api.seek_tail)
#define sd_journal_seek_cursor (*journal_api.seek_cursor)
#define sd_journal_previous (*journal_api.previous)
#define sd_journal_next (*journal_api.next)
#define sd_journal_get_cursor (*journal_api.get_cursor)
#define sd_journal_get_data (*journal_api.get_data)
#define sd_journal_set_data_threshold (*journal_api.set_data_threshold)
#define sd_journal_send_with_location (*journal_api.send_with_location)

#endif
