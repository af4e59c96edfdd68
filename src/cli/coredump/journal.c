/* libsystemd's journal functions, looked up in libsystemd.so.0 when
 * pycore coredump runs (journal.h). */
#ifdef HAVE_LIBSYSTEMD

#include <dlfcn.h>
#include <stdio.h>

#include <systemd/sd-journal.h>

/* The real names, before journal.h turns them into calls through journal_api */
static const char *const names[] = {
	"sd_journal_open", "sd_journal_close", "sd_journal_add_match", "sd_journal_process",
	"sd_journal_seek_tail", "sd_journal_seek_cursor", "sd_journal_previous", "sd_journal_next",
	"sd_journal_get_cursor", "sd_journal_get_data", "sd_journal_set_data_threshold",
	"sd_journal_send_with_location",
};

#include "cli/coredump/journal.h"

struct journal_api journal_api;

_Static_assert(sizeof(struct journal_api) == sizeof(names) / sizeof(names[0]) * sizeof(void (*)(void)),
	       "one name for each of journal_api's functions, in its order");

bool journal_load(char *err, size_t len)
{
	static bool loaded;
	if (loaded)
		return true;
	void *lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(err, len, "cannot load libsystemd.so.0 (%s)", dlerror());
		return false;
	}
	union {
		struct journal_api api;
		void (*fn[sizeof(names) / sizeof(names[0])])(void);
	} u;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *sym = dlsym(lib, names[i]);
		if (!sym) {
			snprintf(err, len, "libsystemd.so.0 has no %s", names[i]);
			dlclose(lib);
			return false;
		}
		/* POSIX: a data pointer from dlsym converts to a function pointer */
		*(void **)&u.fn[i] = sym;
	}
	journal_api = u.api;
	loaded = true;
	return true;
}

#endif
