// The C++ half of crashes.py's "cxx_throw": an exception no frame catches
// (ctypes' and libffi's C frames have no handler), so libstdc++ calls
// std::terminate, which prints its type and what() and aborts.
#include <stdexcept>

namespace pycore_test {
static int parse_header(const char *what)
{
	throw std::runtime_error(what);
}
}

extern "C" int cx_parse(const char *what)
{
	return pycore_test::parse_header(what);
}
