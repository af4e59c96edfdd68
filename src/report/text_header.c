/* The head of the text report: the input, the summary line (and any
 * deadlock), the process, its owner and systemd-coredump's facts, the
 * interpreter, the signal and the fingerprint. */
#include "report/text_int.h"

#include <stdlib.h>
#include <string.h>

/* "systemd-coredump: comm python3, exe /usr/bin/python3.11, uid 1000,
 * gid 1000, signal 11, at 2026-11-23T17:49:26Z on web-3": what it knows */
static void write_coredump(FILE *out, const struct model_coredump *c)
{
	fputs("systemd-coredump:", out);
	const char *sep = " ";
	if (c->comm) {
		fprintf(out, "%scomm ", sep);
		tx_put(out, c->comm);
		sep = ", ";
	}
	if (c->exe) {
		fprintf(out, "%sexe ", sep);
		tx_put(out, c->exe);
		sep = ", ";
	}
	const char *names[] = { "uid", "gid", "signal" };
	const int64_t values[] = { c->uid, c->gid, c->signal };
	for (size_t i = 0; i < 3; i++) {
		if (values[i] >= 0) {
			fprintf(out, "%s%s %lld", sep, names[i], (long long)values[i]);
			sep = ", ";
		}
	}
	char when[32];
	if (report_iso8601(c->timestamp, when, sizeof(when))) {
		fprintf(out, "%sat %s", sep, when);
		sep = ", ";
	}
	if (c->hostname) {
		fputs(" on ", out);
		tx_put(out, c->hostname);
	}
	fputs("\n", out);
}

/* The letters of /proc/PID/stat's state (proc(5)). */
static const char *state_name(char c)
{
	switch (c) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk sleep";
	case 'T': return "stopped";
	case 't': return "tracing stop";
	case 'Z': return "zombie";
	case 'X': return "dead";
	case 'I': return "idle";
	case 'W': return "paging";
	default: return NULL;
	}
}

/* "Parent 1, uid 1000, gid 1000, state S (sleeping)": what the dump
 * says of them; nothing when it says nothing. */
static void write_owner(FILE *out, const struct model_report *r)
{
	const char *sep = "";
	if (r->ppid >= 0) {
		fprintf(out, "Parent pid %lld", (long long)r->ppid);
		sep = ", ";
	}
	if (r->uid >= 0) {
		fprintf(out, "%s%s %lld", sep, *sep ? "uid" : "Uid", (long long)r->uid);
		sep = ", ";
	}
	if (r->gid >= 0) {
		fprintf(out, "%s%s %lld", sep, *sep ? "gid" : "Gid", (long long)r->gid);
		sep = ", ";
	}
	if (r->state) {
		const char *name = state_name(r->state);
		fprintf(out, "%s%s %c", sep, *sep ? "state" : "State", r->state);
		if (name)
			fprintf(out, " (%s)", name);
		sep = ", ";
	}
	if (*sep)
		fputs("\n", out);
}

/* "Deadlock: thread 1 "a" waits for thread 2 "b", which waits for thread 1 "a"" */
static void write_deadlock(FILE *out, const struct report_summary *s)
{
	for (size_t i = 0; i < s->ndeadlock;) {
		size_t start = i;
		fputs("Deadlock: ", out);
		tx_thread_ref(out, s->deadlock[i]->tid, s->deadlock[i]->name);
		for (;;) {
			const struct model_thread *t = s->deadlock[i];
			bool more = i + 1 < s->ndeadlock && s->deadlock[i + 1]->tid == t->waiting_on->owner;
			const struct model_thread *next = more ? s->deadlock[i + 1] : s->deadlock[start];
			fputs(i == start ? " waits for " : ", which waits for ", out);
			tx_thread_ref(out, next->tid, next->name);
			i++;
			if (!more)
				break;
		}
		fputs("\n", out);
	}
}

void tx_header(const struct tx *x)
{
	FILE *out = x->out;
	const struct model_report *r = x->r;
	tx_put(out, r->input_path);
	if (r->input_kind && strcmp(r->input_kind, "process") == 0) {
		/* a live process: how long it was stopped */
		if (r->stopped_ms >= 0)
			fprintf(out, ": live process, its threads stopped for %.1f ms\n", r->stopped_ms);
		else
			fprintf(out, ": live process, read running (--no-stop)\n");
	} else {
		fprintf(out, ": %s", r->input_format && strcmp(r->input_format, "elf-core") == 0 ? "ELF core"
			: r->input_format ? r->input_format : "dump");
		if (r->input_compression)
			fprintf(out, " (%s-compressed)", r->input_compression);
		fprintf(out, ", %llu bytes\n", (unsigned long long)r->input_size);
	}

	struct report_summary s;
	report_summary(r, &s);
	tx_color(x, C_BOLD);
	fputs("Summary: ", out);
	tx_put(out, s.text ? s.text : "(out of memory)");
	tx_color(x, C_RESET);
	fputs("\n", out);
	if (r->fault_kind && r->fault_kind->text) {
		/* the line holds file names from the dump */
		fputs("Fault kind: ", out);
		tx_put(out, r->fault_kind->text);
		fputs("\n", out);
	}
	write_deadlock(out, &s);
	report_summary_free(&s);

	fprintf(out, "Process ");
	if (r->pid >= 0)
		fprintf(out, "%lld", (long long)r->pid);
	else
		fprintf(out, "(pid unknown)");
	if (r->argv) {
		fprintf(out, ":");
		for (const char **a = r->argv; *a; a++) {
			fputs(" ", out);
			tx_put(out, *a);
		}
	} else if (r->executable) {
		fputs(": ", out);
		tx_put(out, r->executable);
	}
	fprintf(out, "\n");
	if (r->coredump)
		write_coredump(out, r->coredump);
	write_owner(out, r);
	if (r->has_python) {
		fprintf(out, "Python %s", r->version ? r->version : "(version unknown)");
		if (r->free_threaded) {
			/* the GIL of each interpreter: disabled, unless an extension
			 * that needs it turned it on */
			size_t on = 0, off = 0;
			for (size_t i = 0; i < r->interps.n; i++) {
				const struct model_interp *mi = r->interps.items[i];
				on += mi->gil_enabled == 1;
				off += mi->gil_enabled == 0;
			}
			fprintf(out, " free-threaded%s", on && !off ? ", GIL enabled" : off && !on ? ", GIL disabled"
				: on && off ? ", GIL enabled in some interpreters" : "");
		}
		if (r->binary_path) {
			fputs(" (", out);
			tx_put(out, r->binary_path);
			fputs(")", out);
		}
		fprintf(out, "\n");
	}
	if (r->has_signal) {
		char line[256];
		report_signal_line(r, line, sizeof(line));
		fprintf(out, "Signal: %s", line);
		if (r->crashed_tid >= 0)
			fprintf(out, ", received by thread %lld", (long long)r->crashed_tid);
		fprintf(out, "\n");
	} else {
		fprintf(out, "Signal: none (a snapshot, not a crash)\n");
	}
	if (r->fault) {
		/* the handler's own frames are text from the dump */
		const struct model_fault *f = r->fault;
		char line[320];
		report_caught_text(r, line, sizeof(line));
		fprintf(out, "%s: %s in thread %lld, pc 0x%llx, sp 0x%llx; ",
			f->origin && strcmp(f->origin, "fault") != 0 ? "Caught" : "Fault", line, (long long)f->tid,
			(unsigned long long)f->pc, (unsigned long long)f->sp);
		report_reraise_line(r, line, sizeof(line));
		tx_put(out, line);
		fprintf(out, "\n");
	}
	if (r->abort && (r->abort->message || r->abort->exception_type)) {
		/* the whole message, as the process kept it: text from the dump */
		const struct model_abort *ab = r->abort;
		fputs("Abort: ", out);
		if (ab->exception_type) {
			fputs("uncaught C++ exception ", out);
			tx_put(out, ab->exception_type);
			fputs(ab->message ? ": " : "", out);
		}
		if (ab->message)
			tx_put(out, ab->message);
		fprintf(out, "%s (%s)\n", ab->truncated ? "... (cut at 4096 bytes)" : "",
			ab->source && strcmp(ab->source, "glibc") == 0 ? "glibc's __abort_msg"
			: ab->source && strcmp(ab->source, "c++") == 0 ? "the exception object libstdc++ holds"
			: ab->source && strcmp(ab->source, "cpython") == 0 ? "CPython's fatal error, from its frames' arguments"
			: ab->source ? ab->source : "?");
	}
	if (r->fingerprint) {
		const struct model_fingerprint *fp = r->fingerprint;
		fprintf(out, "Fingerprint: %s (", fp->hash);
		tx_put(out, fp->kind);
		for (size_t i = 0; i < fp->nframes; i++) {
			fputs(i ? " < " : ": ", out);
			tx_put(out, fp->frames[i]);
		}
		if (fp->message) {
			fputs("; abort: \"", out);
			tx_put(out, fp->message);
			fputs("\"", out);
		}
		fprintf(out, ")\n");
	}
}
