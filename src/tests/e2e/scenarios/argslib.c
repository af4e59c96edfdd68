/* A small C library for check-args.py, built by the test with gcc -O2 -g:
 * a crash (a store through the address the Python side passes) in a
 * function of many argument types, called from two functions of its own
 * so that outer frames hold arguments in callee-saved registers, on the
 * stack and as entry values.  What gdb prints of each is the truth. */
#include <stddef.h>

struct _object;   /* CPython's PyObject, by its struct's name */

enum argslib_color { ARGSLIB_RED, ARGSLIB_GREEN, ARGSLIB_BLUE };

volatile int argslib_sink;

__attribute__((noinline)) int argslib_crash(int n, unsigned long u, const char *msg, double d, char c,
					    enum argslib_color col, _Bool flag, int *where)
{
	/* the fault first: every argument still in its register */
	*where = n;
	argslib_sink = (int)u + msg[0] + (int)d + c + (int)col + flag;
	return argslib_sink;
}

__attribute__((noinline)) int argslib_middle(int n, const char *msg, int *where)
{
	int r = argslib_crash(n * 3, (unsigned long)n << 40, msg, n / 2.0, (char)('A' + n), ARGSLIB_BLUE, n > 1,
			      where);
	/* (n and msg used after the call: kept in callee-saved registers) */
	argslib_sink = msg[1];
	return r + n;
}

int argslib_entry(int n, const char *msg, long addr)
{
	int r = argslib_middle(n, msg, (int *)addr);
	argslib_sink = r;
	return r + 1;
}

/* A PyObject pointer as an argument: its object's repr is the process's */
__attribute__((noinline)) int argslib_object(struct _object *o, int *where)
{
	*where = 1;
	argslib_sink = o != NULL;
	return argslib_sink;
}
