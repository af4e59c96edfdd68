// A C++ library that crashes on purpose inside a namespaced member
// function, for the demangling test: crash_cxx() reads through nullptr.
namespace pycore_test {
struct Boom {
	static int go(volatile int *p) { return *p; }
};
}

extern "C" int crash_cxx(void)
{
	return pycore_test::Boom::go(nullptr);
}
