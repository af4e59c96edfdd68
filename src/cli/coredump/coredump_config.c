/* The parser of /etc/pycore/coredump.conf (coredump_config.h). */
#include "cli/coredump/coredump_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" }, *const no[] = { "no", "false", "off", "0" };
	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(v, yes[i]) == 0 || strcasecmp(v, no[i]) == 0) {
			*out = strcasecmp(v, yes[i]) == 0;
			return 0;
		}
	}
	return -1;
}

/* A whole number, with a K/M/G/T suffix (powers of 1024) when SIZE. */
static int parse_number(const char *v, bool size, uint64_t max, uint64_t *out)
{
	if (!isdigit((unsigned char)*v))
		return -1;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno)
		return -1;
	unsigned shift = 0;
	if (size && *end) {
		const char *units = "KMGT", *u = strchr(units, toupper((unsigned char)*end));
		if (!u || end[1])
			return -1;
		shift = 10 * (unsigned)(u - units + 1);
		end++;
	}
	if (*end || n > (max >> shift))
		return -1;
	*out = (uint64_t)n << shift;
	return 0;
}

static char **split_words(const char *v)
{
	size_t n = 0;
	char **l = calloc(strlen(v) / 2 + 2, sizeof(*l));
	char *copy = strdup(v), *save = NULL;
	if (!l || !copy) {
		free(l);
		free(copy);
		return NULL;
	}
	for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		l[n++] = strdup(t);
	free(copy);
	if (n == 0) {
		free(l);
		return NULL;
	}
	return l;
}

static void free_words(char **l)
{
	for (char **p = l; p && *p; p++)
		free(*p);
	free(l);
}

/* KEY=VALUE into C: 0, 1 for an unknown key, -1 for a bad value. */
static int set(struct coredump_config *c, const char *key, const char *v)
{
	uint64_t n;
	if (strcmp(key, "ReportDirectory") == 0) {
		if (*v && *v != '/')
			return -1;
		free(c->report_dir);
		c->report_dir = *v ? strdup(v) : NULL;
		return 0;
	}
	if (strcmp(key, "Executables") == 0) {
		free_words(c->executables);
		c->executables = split_words(v);
		return 0;
	}
	if (strcmp(key, "User") == 0) {
		if (!*v)
			return -1;
		free(c->user);
		c->user = strdup(v);
		return 0;
	}
	if (strcmp(key, "Locals") == 0)
		return parse_bool(v, &c->locals);
	if (strcmp(key, "Redact") == 0)
		return parse_bool(v, &c->redact);
	if (strcmp(key, "Debuginfod") == 0)
		return parse_bool(v, &c->debuginfod);
	if (strcmp(key, "SaveCompact") == 0)
		return parse_bool(v, &c->save_compact);
	if (strcmp(key, "MaxCoreSize") == 0)
		return parse_number(v, true, UINT64_MAX, &c->max_core_size);
	if (strcmp(key, "MaxSpool") == 0)
		return parse_number(v, true, UINT64_MAX, &c->max_spool);
	if (strcmp(key, "TimeoutSec") == 0)
		return parse_number(v, false, 1000000, &c->timeout);
	if (strcmp(key, "RateLimitIntervalSec") == 0)
		return parse_number(v, false, UINT32_MAX, &c->ratelimit_interval);
	if (strcmp(key, "MaxConcurrent") == 0 || strcmp(key, "RateLimitBurst") == 0) {
		bool slots = key[0] == 'M';
		if (parse_number(v, false, 1u << 16, &n) != 0 || (slots && n == 0))
			return -1;
		*(slots ? &c->max_concurrent : &c->ratelimit_burst) = (unsigned)n;
		return 0;
	}
	return 1;
}

int coredump_config_load(const char *path, bool must_exist, struct coredump_config *c, char **err)
{
	*c = (struct coredump_config){ .locals = true, .redact = true, .max_concurrent = 2,
				       .ratelimit_interval = 3600, .ratelimit_burst = 10,
				       .max_core_size = (uint64_t)4 << 30, .max_spool = (uint64_t)4 << 30,
				       .timeout = 60, .user = strdup("pycore") };
	*err = NULL;
	FILE *f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		if (asprintf(err, "%s: cannot read: %s", path, strerror(errno)) < 0)
			*err = NULL;
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	bool in_section = false;
	int rc = 0;
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		char *s = trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			in_section = strcmp(s, "[Coredump]") == 0;
			if (!in_section)
				fprintf(stderr, "pycore: %s:%u: section %s ignored: the settings are under [Coredump]\n",
					path, lineno, s);
			continue;
		}
		char *eq = strchr(s, '=');
		if (!eq || !in_section) {
			if (asprintf(err, "%s:%u: %s", path, lineno, !eq ? "not KEY=VALUE"
				     : "a setting outside the [Coredump] section") < 0)
				*err = NULL;
			rc = -1;
			break;
		}
		*eq = '\0';
		char *key = trim(s), *value = trim(eq + 1);
		int r = set(c, key, value);
		if (r > 0) {
			fprintf(stderr, "pycore: %s:%u: unknown setting %s ignored\n", path, lineno, key);
		} else if (r < 0) {
			if (asprintf(err, "%s:%u: bad value for %s: '%s'", path, lineno, key, value) < 0)
				*err = NULL;
			rc = -1;
			break;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

void coredump_config_free(struct coredump_config *c)
{
	free(c->report_dir);
	free_words(c->executables);
	free(c->user);
	memset(c, 0, sizeof(*c));
}
