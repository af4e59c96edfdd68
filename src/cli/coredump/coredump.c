/* pycore coredump: the systemd-coredump hook (coredump.h).
 *
 * Order of work, cheapest first, privileges dropped before any byte of
 * the core is parsed in earnest; each step a function below, in order:
 *   1. find_crash: the newest journal entry of systemd-coredump
 *      (MESSAGE_ID SD_MESSAGE_COREDUMP) whose unit is
 *      systemd-coredump@INSTANCE.service; outside systemd (no unit in the
 *      entries) the newest entry; else the newest core file in
 *      /var/lib/systemd/coredump (coredump_find.c);
 *   2. screen: skip pycore's own crashes, executables not in
 *      Executables=, and what is not Python: by its names (comm, exe),
 *      else by the files the core maps (its NT_FILE note, in the first
 *      MiBs of the stream; coredump_python.c);
 *   3. open_core, as root: open the core (or copy it out of the journal),
 *      MaxCoreSize;
 *   4. create_report_file, as root: the per-executable rate limit, the
 *      report's file, the concurrency slots (coredump_guard.c);
 *   5. drop_and_wait: drop to User=, wait for a slot;
 *   6. analyze, write the journal entry and the file (coredump_write.c). */
#include "cli/coredump/coredump.h"

#include <stdio.h>

#ifndef HAVE_LIBSYSTEMD

int coredump_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "pycore: coredump: this pycore was built without libsystemd "
		"(configure --without-libsystemd): the systemd-coredump hook is not available\n");
	return 2;
}

#else

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/coredump/coredump_int.h"
#include "cli/help.h"
#include "report/report.h"

#define DEFAULT_CONFIG SYSCONFDIR "/pycore/coredump.conf"

/* A step's result: go on to the next step, or end with this exit code. */
#define GO_ON (-1)

/* What the steps of one run share; released by run_free whatever step
 * ended it. */
struct run {
	struct coredump_config cfg;
	struct crash c;
	sd_journal *j;               /* open on the crash's entry; closed before the drop */
	char *journal_name;          /* "journal:CURSOR" for a core in the journal */
	const char *core_name;       /* the core's path, else journal_name */
	int core_fd;
	char *sidecar_name;          /* the report's file */
	FILE *sidecar;
	char *compact_name;          /* SaveCompact=: the compact dump's file */
	int compact_fd;
	int *slots;                  /* cfg.max_concurrent descriptors, or NULL */
	char *cache;                 /* the debug cache, or NULL */
};

static void run_free(struct run *h)
{
	if (h->sidecar)
		fclose(h->sidecar);
	if (h->slots)
		for (unsigned i = 0; i < h->cfg.max_concurrent; i++)
			if (h->slots[i] >= 0)
				close(h->slots[i]);
	free(h->slots);
	if (h->core_fd >= 0)
		close(h->core_fd);
	if (h->compact_fd >= 0)
		close(h->compact_fd);
	free(h->compact_name);
	free(h->sidecar_name);
	free(h->journal_name);
	free(h->cache);
	if (h->j)
		sd_journal_close(h->j);
	crash_free(&h->c);
	coredump_config_free(&h->cfg);
}

static bool valid_instance(const char *s)
{
	/* systemd's per-connection instance: NUMBER-PID-UID */
	int parts = 1;
	if (!*s || strlen(s) > 64)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p == '-' && p != s && p[1] && p[-1] != '-')
			parts++;
		else if (*p < '0' || *p > '9')
			return false;
	}
	return parts == 3;
}

static const char usage[] = "usage: pycore coredump [--config FILE] INSTANCE";

/* --config FILE and INSTANCE from the command line. */
static int parse_arguments(int argc, char **argv, const char **config, const char **instance)
{
	static const struct option opts[] = { { "config", required_argument, NULL, 'c' },
					       { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	int ch;
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:c:h", opts, NULL)) != -1) {
		if (ch == 'c') {
			*config = optarg;
		} else if (ch == 'h') {
			return help_write("coredump") == 0 ? 0 : 1;
		} else {
			fprintf(stderr, "pycore: coredump: bad option '%s' (%s)\n", argv[optind - 1], usage);
			return 2;
		}
	}
	if (optind != argc - 1 || !valid_instance(argv[optind])) {
		fprintf(stderr, "pycore: coredump: %s (%s)\n",
			optind == argc - 1 ? "INSTANCE is systemd-coredump@.service's instance, NUMBER-PID-UID"
			: "one INSTANCE needed", usage);
		return 2;
	}
	*instance = argv[optind];
	return GO_ON;
}

static int load_config(struct run *h, const char *config)
{
	char *err;
	if (coredump_config_load(config ? config : DEFAULT_CONFIG, config != NULL, &h->cfg, &err) != 0) {
		fprintf(stderr, "pycore: coredump: %s\n", err ? err : "out of memory");
		free(err);
		return 2;
	}
	if (!h->cfg.debuginfod)
		unsetenv("DEBUGINFOD_URLS");
	return GO_ON;
}

/* Step 1: the crash, in the journal, else as a file. */
static int find_crash(struct run *h, const char *instance)
{
	if (crash_find_in_journal(instance, &h->j, &h->c) != 0) {
		crash_free(&h->c);
		h->c = (struct crash){ .pid = -1 };
		if (crash_find_file(&h->c) != 0) {
			fprintf(stderr, "pycore: coredump: %s: no crash found, neither in the journal nor in %s\n",
				instance, COREDUMP_DIR);
			return 1;
		}
	}
	if (!h->c.path && asprintf(&h->journal_name, "journal:%s", h->c.cursor ? h->c.cursor : "?") < 0)
		h->journal_name = NULL;
	h->core_name = h->c.path ? h->c.path : h->journal_name ? h->journal_name : "journal";
	return GO_ON;
}

/* Step 2: what is not to be analyzed (not systemd's file, no core
 * stored, pycore itself, not Python or not in Executables=), before the
 * core is opened. */
static int screen(struct run *h)
{
	const struct crash *c = &h->c;
	/* systemd-coredump stores its files in one place, named core.*: an
	 * entry naming another file is not its (anyone may log an entry) */
	if (c->path && (strncmp(c->path, COREDUMP_DIR "/core.", sizeof(COREDUMP_DIR "/core.") - 1) != 0 ||
			strstr(c->path, "/../") || strchr(c->path + sizeof(COREDUMP_DIR), '/'))) {
		char *name = hook_escaped(c->path);
		fprintf(stderr, "pycore: coredump: %s is not a core file of systemd-coredump's: not opened\n",
			name ? name : "?");
		free(name);
		return 1;
	}
	if (!c->path && !c->in_journal) {
		hook_journal_note(c, "", 6, "systemd-coredump stored no core (Storage=none, or over its size limits)");
		return 0;
	}
	if (strcmp(basename_of(c->exe), "pycore") == 0 || (c->comm && strcmp(c->comm, "pycore") == 0)) {
		fprintf(stderr, "pycore: coredump: process %lld is pycore itself: not analyzed\n", (long long)c->pid);
		return 0;
	}
	if (h->cfg.executables ? !hook_wanted(&h->cfg, c) : !hook_is_python(h->j, c)) {
		char *comm = hook_escaped(c->comm);
		fprintf(stderr, "pycore: coredump: process %lld (%s): %s: skipped\n", (long long)c->pid,
			comm ? comm : "?", h->cfg.executables ? "not in Executables=" : "not Python");
		free(comm);
		return 0;
	}
	return GO_ON;
}

/* Step 3, as root: the core opened (or copied out of the journal), its
 * file's attributes read, MaxCoreSize kept. */
static int open_core(struct run *h)
{
	struct crash *c = &h->c;
	if (c->in_journal) {
		bool too_big;
		h->core_fd = crash_journal_core(h->j, h->cfg.max_core_size, &too_big);
		if (h->core_fd < 0) {
			hook_journal_note(c, h->core_name, too_big ? 6 : 3,
					  too_big ? "the core is larger than MaxCoreSize: skipped"
					  : "cannot read the core from the journal");
			return too_big ? 0 : 1;
		}
		return GO_ON;
	}
	h->core_fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (h->core_fd < 0) {
		char *why = NULL;
		if (asprintf(&why, "cannot open the core: %s", strerror(errno)) < 0)
			why = NULL;
		hook_journal_note(c, h->core_name, 3, why ? why : "cannot open the core");
		free(why);
		return 1;
	}
	/* user.* attributes need read permission: read them now */
	dump_coredump_free(c->facts);
	c->facts = dump_coredump_read(h->core_fd);
	if (hook_core_size(h->core_fd) > h->cfg.max_core_size) {
		hook_journal_note(c, h->core_name, 6, "the core is larger than MaxCoreSize: skipped");
		return 0;
	}
	return GO_ON;
}

/* Step 4, as root: the report's file created (a second run finds it
 * there and stops), unless the executable is over its rate limit; the
 * concurrency slots opened. */
static int create_report_file(struct run *h)
{
	h->sidecar_name = hook_sidecar_path(&h->cfg, &h->c);
	struct stat st;
	if (h->sidecar_name && lstat(h->sidecar_name, &st) == 0) {
		fprintf(stderr, "pycore: coredump: %s exists: this crash was analyzed already\n", h->sidecar_name);
		return 0;
	}
	if (hook_rate_limited(&h->cfg, h->c.exe)) {
		hook_journal_note(&h->c, h->core_name, 6,
				  "over the rate limit for this executable (RateLimitBurst=): skipped");
		return 0;
	}
	int sfd = h->sidecar_name ? open(h->sidecar_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640)
				  : -1;
	if (sfd < 0 && errno == EEXIST) {
		fprintf(stderr, "pycore: coredump: %s exists: this crash was analyzed already\n", h->sidecar_name);
		return 0;
	}
	if (sfd < 0 || !(h->sidecar = fdopen(sfd, "w"))) {
		fprintf(stderr, "pycore: coredump: cannot create %s: %s\n",
			h->sidecar_name ? h->sidecar_name : "the report", strerror(errno));
		if (sfd >= 0)
			close(sfd);
		return 1;
	}
	/* SaveCompact=: pycore.NAME.core.zst beside pycore.NAME.json, created
	 * as root as the report is; its lack costs the report nothing */
	size_t n = strlen(h->sidecar_name);
	if (h->cfg.save_compact && n > 5 && asprintf(&h->compact_name, "%.*s.core.zst", (int)(n - 5), h->sidecar_name) >= 0) {
		h->compact_fd = open(h->compact_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640);
		if (h->compact_fd < 0)
			fprintf(stderr, "pycore: coredump: cannot create %s: %s\n", h->compact_name, strerror(errno));
	}
	/* the slots, opened as root, taken as the user */
	char *rundir = hook_state_dir("RUNTIME_DIRECTORY", "/run/pycore");
	h->slots = malloc(h->cfg.max_concurrent * sizeof(*h->slots));
	for (unsigned i = 0; h->slots && i < h->cfg.max_concurrent; i++) {
		char *p = NULL;
		h->slots[i] = rundir && asprintf(&p, "%s/slot.%u", rundir, i) >= 0
			      ? open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
		free(p);
	}
	free(rundir);
	return GO_ON;
}

/* Step 5: root's last act (the debug cache handed over), the drop to
 * User=, and a slot among MaxConcurrent= analyses. */
static int drop_and_wait(struct run *h)
{
	sd_journal_close(h->j);
	h->j = NULL;
	h->cache = hook_debug_cache(h->cfg.user);
	if (hook_drop_privileges(h->cfg.user) != 0) {
		struct pc_error e = { .code = PC_ENOTANALYZED, .message = (char *)"privileges could not be dropped" };
		report_json_error_write(h->sidecar, h->core_name, NULL, &e);
		return 1;
	}
	if (!h->slots || !hook_take_slot(h->slots, h->cfg.max_concurrent)) {
		hook_journal_note(&h->c, h->core_name, 6, "MaxConcurrent= analyses were running for 60 s: skipped");
		struct pc_error e = { .code = PC_EBUSY,
				      .message = (char *)"skipped: MaxConcurrent= analyses were running for 60 s" };
		report_json_error_write(h->sidecar, h->core_name, NULL, &e);
		return 0;
	}
	return GO_ON;
}

int coredump_main(int argc, char **argv)
{
	const char *config = NULL, *instance = NULL;
	int rc = parse_arguments(argc, argv, &config, &instance);
	if (rc != GO_ON)
		return rc;
	char why[256];
	if (!journal_load(why, sizeof why)) {
		fprintf(stderr, "pycore: coredump: %s: the hook needs systemd's journal\n", why);
		return 1;
	}
	struct run h = { .c = { .pid = -1 }, .core_fd = -1, .compact_fd = -1 };
	if ((rc = load_config(&h, config)) == GO_ON && (rc = find_crash(&h, instance)) == GO_ON &&
	    (rc = screen(&h)) == GO_ON && (rc = open_core(&h)) == GO_ON &&
	    (rc = create_report_file(&h)) == GO_ON && (rc = drop_and_wait(&h)) == GO_ON) {
		rc = hook_analyze_and_report(&h.cfg, &h.c, h.core_fd, h.core_name, h.sidecar, h.sidecar_name,
					     h.cache, h.compact_fd, h.compact_name);
		h.sidecar = NULL;  /* closed */
	}
	run_free(&h);
	return rc;
}

#endif
