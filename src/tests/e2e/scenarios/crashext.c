/* A C extension module that crashes on purpose, for the crash tests:
 * crashext.segv() writes through a NULL pointer, crashext.fpe(0) divides
 * an integer by zero.  Built by the test with the interpreter's headers. */
#include <Python.h>

static volatile int *nowhere;

static PyObject *crash_segv(PyObject *self, PyObject *arg)
{
	(void)self; (void)arg;
	*nowhere = 1;
	Py_RETURN_NONE;
}

static PyObject *crash_fpe(PyObject *self, PyObject *arg)
{
	(void)self;
	volatile long d = PyLong_AsLong(arg);
	volatile long n = 42;
	return PyLong_FromLong(n / d);
}

static PyMethodDef methods[] = {
	{ "segv", crash_segv, METH_NOARGS, NULL },
	{ "fpe", crash_fpe, METH_O, NULL },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "crashext", NULL, -1, methods,
				     NULL, NULL, NULL, NULL };

PyMODINIT_FUNC PyInit_crashext(void)
{
	return PyModule_Create(&module);
}
