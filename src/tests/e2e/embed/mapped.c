/* An application that embeds libpython and, before the interpreter
 * starts, maps pieces of libpython and of the C library a second time
 * (read-only, the first page and pieces at other file offsets), as a
 * crash reporter or a profiler reading its own files would; then runs
 * the scenario script argv[1] with the rest as its arguments (check-
 * mappings.py: scenarios/mapped_pieces.py, which maps more). */
#define _GNU_SOURCE
#include <Python.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file holding ADDR's code, mapped again in pieces. */
static void map_pieces_of(const void *addr)
{
	Dl_info info;
	struct stat st;
	if (!dladdr(addr, &info) || !info.dli_fname)
		return;
	int fd = open(info.dli_fname, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	const off_t offs[] = { 0, 0x20000, (st.st_size / 3) & ~(off_t)0xfff };
	const size_t lens[] = { 0x1000, 0x6000, 0x2000 };
	for (int i = 0; i < 3; i++)
		if (offs[i] + (off_t)lens[i] <= st.st_size &&
		    mmap(NULL, lens[i], PROT_READ, MAP_PRIVATE, fd, offs[i]) == MAP_FAILED)
			perror("mmap");
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: mapped SCRIPT [ARGS...]\n");
		return 2;
	}
	map_pieces_of((const void *)Py_Initialize);
	map_pieces_of((const void *)printf);
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
