/* An uncaught C++ exception that reached std::terminate (pybind11's and
 * PyTorch's extensions die so): its type and, for the standard's
 * exceptions that keep their text, its what(), from the exception object
 * libstdc++ allocated.  Facts of libstdc++ (GCC 12's, Debian 12's):
 *
 * - __cxa_throw (libsupc++/eh_throw.cc) raises; when no handler is found
 *   it calls __cxa_begin_catch and std::terminate, whose default handler
 *   (__gnu_cxx::__verbose_terminate_handler) prints "terminate called
 *   after throwing an instance of 'TYPE'" and "  what():  TEXT" for a
 *   std::exception, then abort()s.
 * - The object follows its header (libsupc++/unwind-cxx.h):
 *   struct __cxa_refcounted_exception { _Atomic_word referenceCount;
 *   __cxa_exception exc; }, exc's last member the generic
 *   _Unwind_Exception { uint64 exception_class; cleanup; private_1;
 *   private_2; } __attribute__((aligned)) (libgcc's unwind-generic.h: 32
 *   bytes, 16-aligned on x86-64 and aarch64).  So, from the unwind header
 *   UE: the object at UE + 32, exc.exceptionType (std::type_info *) at
 *   UE - 80, exc.handlerCount (int) at UE - 40, referenceCount (int) at
 *   UE - 96.  exception_class is "GNUCC++\0" as a big-endian number
 *   (0x474e5543432b2b00; "\x01" last for a dependent exception, made by
 *   std::rethrow_exception, whose first word, at UE - 80, points to the
 *   primary object instead).
 * - A std::type_info is { vtable pointer, const char *name }, the name
 *   the mangled type without _Z ('*' first for a type of internal
 *   linkage); a class's type_info is libstdc++'s __class_type_info,
 *   __si_class_type_info (one base: its type_info at +16) or
 *   __vmi_class_type_info, whose vtables libstdc++ exports; its vtable
 *   pointer points 16 bytes into them (past offset-to-top and the
 *   vtable's own type_info).
 * - std::runtime_error and std::logic_error (bits/stdexcept) are
 *   { vtable pointer; __cow_string _M_msg; }: one pointer to the text of
 *   a copy-on-write string (bits/cow_string.h), whose _Rep_base
 *   { size_t length; size_t capacity; int refcount; } (24 bytes) precedes
 *   the text.  The object's vtable holds its type_info at -8 and what()
 *   at +16 (after the two destructors).
 *
 * Nothing is believed unproven: the exception object is looked for on
 * the crashed thread's stack (a word pointing at its object, its unwind
 * header or its header: __cxa_throw's locals and arguments), and taken
 * only when its class, counts and type_info agree and the type_info's
 * vtable is one of libstdc++'s own; the text only when the type derives
 * from runtime_error or logic_error and its vtable's what() is theirs. */
#include "python/walk/walk.h"
#include "python/python_int.h"
#include "symbols/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GXX_PRIMARY 0x474e5543432b2b00ull
#define GXX_DEPENDENT 0x474e5543432b2b01ull
#define UE_TYPE (-80)
#define UE_HANDLERS (-40)
#define UE_REFCOUNT (-96)
#define UE_OBJECT 32
#define SCAN_BYTES (128u * 1024)     /* of the stack above the abort */
#define SCAN_CHUNK 4096
#define MAX_BASES 32
#define MAX_TYPE_NAME 512
#define WHAT_CAP 4096

enum { V_CLASS, V_SI, V_VMI, V_FUNDAMENTAL, V_POINTER, W_RUNTIME, W_LOGIC, T_RUNTIME, T_LOGIC, N_WANT };

struct cxx {
	struct py_ctx *c;
	uint64_t sym[N_WANT];
};

/* libstdc++'s module in the dump, NULL when none. */
static struct dump_module *libstdcxx(struct dump *d)
{
	for (size_t i = 0; i < d->nmodules; i++) {
		const char *path = d->modules[i].path;
		const char *base = path ? strrchr(path, '/') : NULL;
		base = base ? base + 1 : path;
		if (base && strncmp(base, "libstdc++.so", 12) == 0)
			return &d->modules[i];
	}
	return NULL;
}

static bool rd_ptr(struct cxx *x, uint64_t at, uint64_t *v)
{
	return py_rd_ptr(x->c, at, v) == PC_OK;
}

/* Whether the type_info at TI has one of libstdc++'s type_info vtables. */
static bool is_type_info(struct cxx *x, uint64_t ti, uint64_t *vptr)
{
	if (!ti || !rd_ptr(x, ti, vptr))
		return false;
	for (int i = V_CLASS; i <= V_POINTER; i++)
		if (x->sym[i] && *vptr == x->sym[i] + 16)
			return true;
	return false;
}

/* The mangled name of the type_info at TI (without a leading '*'), checked
 * to be one: letters, digits and '_' only; NULL otherwise. */
static char *type_name(struct cxx *x, uint64_t ti)
{
	uint64_t at;
	char buf[MAX_TYPE_NAME];
	if (!rd_ptr(x, ti + 8, &at) || !at)
		return NULL;
	size_t n = 0;
	for (; n < sizeof(buf); n++) {
		if (dump_read(x->c->d, at + n, &buf[n], 1) != PC_OK)
			return NULL;
		if (!buf[n])
			break;
	}
	if (n == sizeof(buf))
		return NULL;
	const char *s = buf[0] == '*' ? buf + 1 : buf;
	if (!*s)
		return NULL;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return NULL;
	return arena_strdup(x->c->a, s);
}

/* MANGLED (a type_info's name) demangled; MANGLED itself when the C++
 * runtime's demangler is not at hand or refuses it. */
static const char *demangle_type(struct cxx *x, const char *mangled)
{
	static const char prefix[] = "typeinfo name for ";
	char in[MAX_TYPE_NAME + 8], out[2048];
	snprintf(in, sizeof(in), "_ZTS%s", mangled);
	const char *d = names_demangle(in, out, sizeof(out));
	if (d == in || strncmp(d, prefix, sizeof(prefix) - 1) != 0)
		return mangled;
	return arena_strdup(x->c->a, d + sizeof(prefix) - 1);
}

/* Whether the class whose type_info is TI is, or derives by single
 * inheritance from, std::runtime_error or std::logic_error. */
static bool derives_from_text_error(struct cxx *x, uint64_t ti)
{
	for (int depth = 0; depth < MAX_BASES && ti; depth++) {
		uint64_t vptr;
		if (!is_type_info(x, ti, &vptr))
			return false;
		if ((x->sym[T_RUNTIME] && ti == x->sym[T_RUNTIME]) || (x->sym[T_LOGIC] && ti == x->sym[T_LOGIC]))
			return true;
		const char *name = type_name(x, ti);
		if (name && (strcmp(name, "St13runtime_error") == 0 || strcmp(name, "St11logic_error") == 0))
			return true;
		if (vptr != x->sym[V_SI] + 16 || !rd_ptr(x, ti + 16, &ti))
			return false;
	}
	return false;
}

/* The text of the runtime_error or logic_error at OBJ of type TI, when its
 * vtable proves what() is theirs; NULL otherwise. */
static char *what_text(struct cxx *x, uint64_t obj, uint64_t ti, bool *cut)
{
	uint64_t ovptr, vti, what, p, len, cap;
	*cut = false;
	if (!derives_from_text_error(x, ti) || !rd_ptr(x, obj, &ovptr) || !rd_ptr(x, ovptr - 8, &vti) || vti != ti ||
	    !rd_ptr(x, ovptr + 16, &what) || !what ||
	    (what != x->sym[W_RUNTIME] && what != x->sym[W_LOGIC]))
		return NULL;
	if (!rd_ptr(x, obj + 8, &p) || !p || !rd_ptr(x, p - 24, &len) || !rd_ptr(x, p - 16, &cap) || len > cap ||
	    cap > (1ull << 40))
		return NULL;
	size_t n = len < WHAT_CAP ? (size_t)len : WHAT_CAP;
	char *buf = arena_alloc(x->c->a, n + 1);
	if (!buf || (n && dump_read(x->c->d, p, buf, n) != PC_OK))
		return NULL;
	char end;
	if (len <= WHAT_CAP) {
		/* what() is c_str(): the string's terminating NUL is there */
		if (dump_read(x->c->d, p + len, &end, 1) != PC_OK || end != '\0')
			return NULL;
	} else {
		/* cut on a character boundary: the first byte left out must
		 * not continue a UTF-8 sequence */
		*cut = true;
		if (dump_read(x->c->d, p + n, &buf[n], 1) != PC_OK)
			buf[n] = '\0';
		while (n > 0 && ((unsigned char)buf[n] & 0xc0) == 0x80)
			n--;
	}
	buf[n] = '\0';
	return buf;   /* (up to its first NUL, as what() is printed) */
}

/* Whether UE is a C++ exception's unwind header libstdc++ made; *OBJ and
 * *TI its object and type_info. */
static bool proven(struct cxx *x, uint64_t ue, uint64_t *obj, uint64_t *ti)
{
	uint64_t cls, vptr;
	int32_t refs, handlers;
	if (!ue || ue % 16 != 0 || !rd_ptr(x, ue, &cls))
		return false;
	if (cls == GXX_DEPENDENT) {
		/* std::rethrow_exception's: the primary's object at its first word */
		uint64_t primary;
		if (!rd_ptr(x, ue + UE_TYPE, &primary) || primary < UE_OBJECT)
			return false;
		ue = primary - UE_OBJECT;
		if (ue % 16 != 0 || !rd_ptr(x, ue, &cls))
			return false;
	}
	if (cls != GXX_PRIMARY || py_rd_i32(x->c, ue + UE_REFCOUNT, &refs) != PC_OK || refs < 1 || refs > (1 << 20) ||
	    py_rd_i32(x->c, ue + UE_HANDLERS, &handlers) != PC_OK || handlers < -64 || handlers > 64 ||
	    !rd_ptr(x, ue + UE_TYPE, ti) || !is_type_info(x, *ti, &vptr))
		return false;
	*obj = ue + UE_OBJECT;
	return true;
}

/* The first exception a word of the stack from SP up points to (at its
 * object, its unwind header, or its header); false when none. */
static bool find_exception(struct cxx *x, uint64_t sp, uint64_t *obj, uint64_t *ti)
{
	static const int64_t as_ue[] = { 0, -UE_OBJECT, -UE_REFCOUNT, -UE_TYPE };
	uint64_t words[SCAN_CHUNK / 8];
	uint64_t tried[8] = { 0 };
	size_t ntried = 0;
	sp &= ~(uint64_t)7;
	for (uint64_t at = sp; at < sp + SCAN_BYTES; at += sizeof(words)) {
		if (dump_read(x->c->d, at, words, sizeof(words)) != PC_OK)
			return false;   /* the stack's end */
		for (size_t i = 0; i < sizeof(words) / 8; i++) {
			uint64_t w = words[i];
			if (!w || w % 16 != 0)
				continue;
			for (size_t k = 0; k < sizeof(as_ue) / sizeof(as_ue[0]); k++) {
				uint64_t ue = w + (uint64_t)as_ue[k];
				bool seen = false;
				for (size_t t = 0; t < ntried && t < 8; t++)
					seen |= tried[t] == ue;
				if (seen)
					continue;
				if (proven(x, ue, obj, ti))
					return true;
				tried[ntried++ % 8] = ue;
			}
		}
	}
	return false;
}

bool py_find_cxx_abort(struct py_ctx *c, struct symbols *s, uint64_t sp)
{
	static const char *const names[N_WANT] = {
		"_ZTVN10__cxxabiv117__class_type_infoE", "_ZTVN10__cxxabiv120__si_class_type_infoE",
		"_ZTVN10__cxxabiv121__vmi_class_type_infoE", "_ZTVN10__cxxabiv123__fundamental_type_infoE",
		"_ZTVN10__cxxabiv119__pointer_type_infoE", "_ZNKSt13runtime_error4whatEv",
		"_ZNKSt11logic_error4whatEv", "_ZTISt13runtime_error", "_ZTISt11logic_error",
	};
	struct dump_module *m = libstdcxx(c->d);
	if (!m || !sp) {
		model_warn(c->r, "the crashed thread ran std::terminate, but %s: its C++ exception is unknown",
			   !m ? "no libstdc++ is loaded (linked in statically?)" : "its stack pointer is unknown");
		return false;
	}
	struct symbol_want want[N_WANT];
	for (int i = 0; i < N_WANT; i++)
		want[i] = (struct symbol_want){ names[i], 0, 0 };
	struct cxx x = { .c = c };
	if (symbols_lookup_dynamic(s, m, want, N_WANT) < 0 || !want[V_CLASS].addr || !want[V_SI].addr) {
		model_warn(c->r, "the crashed thread ran std::terminate, but %s's type_info vtables cannot be read: "
			   "its C++ exception is unknown", m->path);
		return false;
	}
	for (int i = 0; i < N_WANT; i++)
		x.sym[i] = want[i].addr;
	uint64_t obj, ti;
	if (!find_exception(&x, sp, &obj, &ti)) {
		model_warn(c->r, "the crashed thread ran std::terminate, but no C++ exception object is proven on its "
			   "stack");
		return false;
	}
	const char *mangled = type_name(&x, ti);
	struct model_abort *ab = arena_alloc(c->a, sizeof(*ab));
	if (!ab || !mangled)
		return false;
	bool cut;
	ab->source = "c++";
	ab->exception_type = demangle_type(&x, mangled);
	ab->message = what_text(&x, obj, ti, &cut);
	ab->truncated = ab->message && cut;
	c->r->abort = ab;
	return true;
}
