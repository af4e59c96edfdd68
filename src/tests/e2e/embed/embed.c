/* A C program that embeds libpython and runs a scenario script in it, as
 * an application with an embedded interpreter would: argv[1] is the
 * script, the rest its arguments. */
#include <Python.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: embed SCRIPT [ARGS...]\n");
		return 2;
	}
	Py_Initialize();
	PyObject *args = PyList_New(0);
	for (int i = 1; i < argc; i++) {
		PyObject *s = PyUnicode_DecodeFSDefault(argv[i]);
		PyList_Append(args, s);
		Py_DECREF(s);
	}
	PySys_SetObject("argv", args);
	Py_DECREF(args);
	FILE *f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	int rc = PyRun_SimpleFileExFlags(f, argv[1], 1, NULL);
	Py_Finalize();
	return rc ? 1 : 0;
}
