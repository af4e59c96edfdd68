/* A static executable that holds glibc and aborts in an assert()
 * (check-abort.py: __abort_msg found in the executable's own symbols). */
#include <assert.h>

static int queue_pop(int n_items)
{
	assert(n_items > 0);
	return n_items - 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	return queue_pop(argc - 1);
}
