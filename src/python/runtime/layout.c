/* The per-version tables of versions/, compiled in. */
#include "python/runtime/runtime.h"

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

/* Free-threaded builds (3.13t+), from each release's headers compiled with
 * Py_GIL_DISABLED (scripts/gen-versions --headers --free-threaded). */
static const struct py_layout ft_layouts[] = {
#include "3.13t.h"
#include "3.14t.h"
#include "3.15t.h"
};

const struct py_layout *py_layout_for(unsigned minor, bool free_threaded)
{
	const struct py_layout *t = free_threaded ? ft_layouts : layouts;
	size_t n = free_threaded ? sizeof(ft_layouts) / sizeof(ft_layouts[0])
				 : sizeof(layouts) / sizeof(layouts[0]);
	for (size_t i = 0; i < n; i++)
		if (t[i].minor == minor)
			return &t[i];
	return NULL;
}
