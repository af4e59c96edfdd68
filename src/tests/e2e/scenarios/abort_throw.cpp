// Uncaught C++ exceptions thrown through ctypes (check-abort.py): no
// handler above a C frame, so __cxa_throw calls std::terminate, whose
// handler prints the type and what() to stderr and abort()s.
#include <exception>
#include <stdexcept>

namespace queue {
struct empty_error : std::runtime_error {
	using std::runtime_error::runtime_error;
};
// what() of its own: its text is no string libstdc++ keeps
struct custom_error : std::exception {
	const char *what() const noexcept override { return "custom what"; }
};
}

extern "C" void throw_runtime(void)
{
	throw std::runtime_error("queue is empty: 0 items");
}

extern "C" void throw_derived(void)
{
	throw queue::empty_error("nothing to pop from queue 'jobs'");
}

extern "C" void throw_invalid(void)
{
	throw std::invalid_argument("n_items must be positive, got -3");
}

extern "C" void throw_custom(void)
{
	throw queue::custom_error();
}

extern "C" void throw_int(void)
{
	throw 42;
}
