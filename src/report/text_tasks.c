/* The asyncio section of the text report (--tasks): a tree like asyncio's
 * pstree per event loop, each task under the tasks that await it. */
#include "report/text_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TREE_DEPTH 64

struct tree {
	FILE *out;
	const struct tx *x;
	const struct model_task *path[MAX_TREE_DEPTH];
	const struct model_task **shown;     /* printed with their subtrees */
	size_t nshown, cap;
};

static bool tree_shown(const struct tree *w, const struct model_task *t)
{
	for (size_t i = 0; i < w->nshown; i++)
		if (w->shown[i] == t)
			return true;
	return false;
}

static void tree_mark(struct tree *w, const struct model_task *t)
{
	if (w->nshown == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		const struct model_task **n = realloc(w->shown, cap * sizeof(*n));
		if (!n)
			return;
		w->shown = n;
		w->cap = cap;
	}
	w->shown[w->nshown++] = t;
}

static void write_task(struct tree *w, const struct model_task *t, int depth)
{
	FILE *out = w->out;
	int ind = 2 + 4 * depth;
	fprintf(out, "%*s%s", ind, "", depth ? "awaits " : "");
	tx_put(out, t->name ? t->name : "(name unknown)");
	fprintf(out, " (0x%llx) %s", (unsigned long long)t->address, t->state ? t->state : "(state unknown)");
	for (int i = 0; i < depth; i++) {
		if (w->path[i] == t) {
			fprintf(out, ": a cycle of awaits back to it\n");
			return;
		}
	}
	if (tree_shown(w, t)) {
		fprintf(out, ", shown above\n");
		return;
	}
	tree_mark(w, t);
	if (t->running)
		fprintf(out, ", running");
	if (t->coroutine) {
		fputs(", coroutine ", out);
		tx_put(out, t->coroutine);
	}
	if (t->result) {
		fputs(", result ", out);
		tx_put(out, t->result);
	}
	if (t->exception_type) {
		fputs(", raised ", out);
		tx_put(out, t->exception_type);
		if (t->exception_message && *t->exception_message) {
			fputs(": ", out);
			tx_put(out, t->exception_message);
		}
	}
	if (t->waiter) {
		fputs(", waiting on ", out);
		tx_put(out, t->waiter_type ? t->waiter_type : "?");
		fprintf(out, " 0x%llx", (unsigned long long)t->waiter);
	}
	fprintf(out, "\n");
	char indent[4 * MAX_TREE_DEPTH + 8];
	snprintf(indent, sizeof(indent), "%*s", ind + 2, "");
	for (size_t j = t->stack.n; j-- > 0;)
		tx_python_frame(w->x, indent, t->stack.items[j]);
	if (t->error) {
		fprintf(out, "%s[incomplete: ", indent);
		tx_put(out, t->error);
		fputs("]\n", out);
	}
	if (depth + 1 >= MAX_TREE_DEPTH) {
		if (t->awaiting.n)
			fprintf(out, "%s(awaits more, nested too deep to show)\n", indent);
		return;
	}
	w->path[depth] = t;
	for (size_t k = 0; k < t->awaiting.n; k++)
		write_task(w, t->awaiting.items[k], depth + 1);
}

void tx_tasks(const struct tx *x)
{
	FILE *out = x->out;
	const struct model_report *r = x->r;
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		if (!mi->asyncio_read) {
			fprintf(out, "\nTasks of interpreter %lld: not read (the warnings say why)\n", (long long)mi->id);
			continue;
		}
		if (mi->loops.n == 0)
			fprintf(out, "\nTasks of interpreter %lld: no asyncio tasks\n", (long long)mi->id);
		for (size_t k = 0; k < mi->loops.n; k++) {
			const struct model_loop *l = mi->loops.items[k];
			fprintf(out, "\nTasks of loop 0x%llx", (unsigned long long)l->address);
			if (r->interps.n > 1)
				fprintf(out, ", interpreter %lld", (long long)mi->id);
			if (l->thread >= 0)
			{
				fprintf(out, ", run by thread %lld", (long long)l->thread);
				if (l->thread_name) {
					fputs(" \"", out);
					tx_put(out, l->thread_name);
					fputs("\"", out);
				}
			}
			else if (l->running == 1)
				fprintf(out, ", running on a thread pycore cannot tell");
			else if (l->running == 0)
				fprintf(out, ", not running");
			else
				fprintf(out, ", running or not: pycore cannot tell");
			fprintf(out, " (%zu tasks; each awaited task under the tasks awaiting it):\n", l->tasks.n);
			struct tree w = { .out = out, .x = x };
			/* the tasks no task awaits first, then what is left (cycles) */
			for (int pass = 0; pass < 2; pass++) {
				for (size_t j = 0; j < l->tasks.n; j++) {
					const struct model_task *t = l->tasks.items[j];
					if ((pass == 0 && t->awaited_by.n) || tree_shown(&w, t))
						continue;
					write_task(&w, t, 0);
				}
			}
			free(w.shown);
		}
	}
}
