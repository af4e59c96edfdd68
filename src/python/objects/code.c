/* Code objects: what the report needs of one (name, qualified name, file,
 * first line, line table), read once and cached by address, and the line
 * a position in its bytecode is at. */
#include "python/objects/linetable.h"
#include "python/objects/objects.h"

#include <limits.h>
#include <string.h>

/* Read what the report needs of a code object.  The result stays valid until
 * the next call. */
const struct py_code *py_code_get(struct py_ctx *c, uint64_t addr)
{
	static const struct py_code none = { .error = "the frame has no code object",
					     .error_info = { PC_ECORRUPT, false, 0 } };
	bool found;
	if (!addr)
		return &none;
	struct py_code *pc = addrtab_get(&c->codes, addr, &found);
	if (!pc || found)
		return pc;

	const struct py_layout *L = c->L;
	const char *why = NULL;
	uint64_t type, name, filename, qualname = 0, table;
	int32_t first = 0;
	if (py_rd_ptr(c, addr + L->object_type, &type) != 0) {
		pc->error = arena_printf(c->a, "code object at 0x%llx not captured", (unsigned long long)addr);
		pc->error_info = model_err_at(PC_ENOTCAPTURED, addr);
		return pc;
	}
	if (c->code_type && type != c->code_type) {
		pc->error = arena_printf(c->a, "object at 0x%llx is not a code object",
					 (unsigned long long)addr);
		pc->error_info = model_err_at(PC_ECORRUPT, addr);
		return pc;
	}
	if (py_rd_ptr(c, addr + L->code_name, &name) != 0 ||
	    py_rd_ptr(c, addr + L->code_filename, &filename) != 0 ||
	    (L->code_qualname >= 0 && py_rd_ptr(c, addr + L->code_qualname, &qualname) != 0) ||
	    py_rd_i32(c, addr + L->code_firstlineno, &first) != 0) {
		pc->error = arena_printf(c->a, "code object at 0x%llx not captured", (unsigned long long)addr);
		pc->error_info = model_err_at(PC_ENOTCAPTURED, addr);
		return pc;
	}
	pc->firstlineno = first;
	pc->name = py_str_utf8(c, name, PY_MAX_NAME, &why);
	if (!pc->name) {
		pc->error = arena_printf(c->a, "code object's name: %s", why);
		pc->error_info = c->why_info;
		return pc;
	}
	pc->filename = py_str_utf8(c, filename, PY_MAX_NAME, &why);
	if (!pc->filename) {
		pc->error = arena_printf(c->a, "code object's file name: %s", why);
		pc->error_info = c->why_info;
		return pc;
	}
	if (qualname)
		pc->qualname = py_str_utf8(c, qualname, PY_MAX_NAME, &why);
	if (L->code_firsttraceable >= 0) {
		int32_t ft;
		if (py_rd_i32(c, addr + L->code_firsttraceable, &ft) == 0 && ft >= 0)
			pc->firsttraceable = ft;
	}
	int64_t tab_ofs = L->code_lnotab >= 0 ? L->code_lnotab : L->code_linetable;
	if (py_rd_ptr(c, addr + tab_ofs, &table) == 0)
		pc->table = py_bytes(c, table, PY_MAX_TABLE, &pc->table_len, &why);
	return pc;
}

/* The line a frame is at, from its code object and its position in the
 * bytecode (bytes for <=3.9, code units otherwise); 0 when unknown. */
int py_code_line(const struct py_ctx *c, const struct py_code *pc, int64_t pos)
{
	if (!pc->table)
		return 0;
	int line;
	if (c->L->minor <= 9)
		line = py_line_lnotab(pc->table, pc->table_len, pc->firstlineno, (int)pos);
	else if (c->L->minor == 10)
		line = py_line_linetable310(pc->table, pc->table_len, pc->firstlineno,
					    pos < 0 ? -1 : (int)(pos * 2));
	else
		line = py_line_locations(pc->table, pc->table_len, pc->firstlineno, (int)pos);
	return line > 0 ? line : 0;
}

void py_code_locate(const struct py_ctx *c, const struct py_code *pc, int64_t pos, struct model_frame *f)
{
	f->end_line = f->column = f->end_column = -1;
	struct py_positions p;
	if (c->L->minor < 11 || !pc->table || pos > INT_MAX ||
	    py_positions_locations(pc->table, pc->table_len, pc->firstlineno, (int)pos, &p) != 0) {
		f->line = py_code_line(c, pc, pos);
		return;
	}
	f->line = p.line > 0 ? p.line : 0;
	if (f->line) {
		f->has_position = true;
		f->end_line = p.end_line;
		f->column = p.column;
		f->end_column = p.end_column;
	}
}
