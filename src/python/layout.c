/* The per-version tables of versions/, compiled in. */
#include "python/python_int.h"

#include <stddef.h>

static const struct py_layout layouts[] = {
#include "3.6.h"
#include "3.7.h"
#include "3.8.h"
#include "3.9.h"
#include "3.10.h"
#include "3.11.h"
#include "3.12.h"
#include "3.13.h"
#include "3.14.h"
#include "3.15.h"
};

const struct py_layout *py_layout_for(unsigned minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}
