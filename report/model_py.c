// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Python code objects of a capture (PY_CODE, FORMAT.md §4.24), as the
 * model holds them: the three parts of each in the string pool, looked up
 * by id when a frame names it. Hostile input: the reader checked the
 * lengths against the record; the first of two definitions stands.
 */
#include <errno.h>
#include <stdlib.h>
#include "report/model_int.h"
#include "util/array.h"

int model_py_record(struct model *m, const struct cap_record *r)
{
	const struct cap_py_code *c = &r->py_code;
	struct model_py p = {
		.lt_len = c->linetable_len, .firstlineno = c->firstlineno,
		.version = c->version, .flags = c->flags,
	};
	const char *t = r->tail;
	uint64_t *val;
	int err;

	if (!c->id)
		return 0;
	err = idmap__upsert(&m->pycode_ids, c->id, 0, m->nr_pycodes, &val);
	if (err <= 0)
		return err;
	err = model_pool_add(m, t, c->qualname_len, &p.qual_off) ?:
	      model_pool_add(m, t + c->qualname_len, c->filename_len, &p.file_off) ?:
	      model_pool_add(m, t + c->qualname_len + c->filename_len, c->linetable_len,
			     &p.lt_off);
	return err ? err : ARRAY_PUSH(m->pycodes, m->nr_pycodes, m->pycodes_cap, p);
}

int model__pycode(const struct model *m, uint32_t id, struct model_pycode *out)
{
	const uint64_t *i = idmap__find(&m->pycode_ids, id, 0);
	const struct model_py *p;

	if (!i || *i >= m->nr_pycodes)
		return -ENOENT;
	p = &m->pycodes[*i];
	out->qualname = m->pool + p->qual_off;
	out->filename = m->pool + p->file_off;
	out->linetable = (const uint8_t *)m->pool + p->lt_off;
	out->linetable_len = p->lt_len;
	out->firstlineno = p->firstlineno;
	out->version = p->version;
	out->flags = p->flags;
	return 0;
}

uint64_t model_py_bytes(const struct model *m)
{
	return m->pycodes_cap * sizeof(*m->pycodes) + idmap__bytes(&m->pycode_ids);
}
