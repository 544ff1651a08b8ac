// SPDX-License-Identifier: MIT
/*
 * schema_write.c - the .ae_schema section's content for one object: the
 * header, the sorted events and the predicate pool (docs/FORMAT.md).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "events.h"

int ae_write_schema(const struct ae_ctx *c, const char *path)
{
	struct ae_schema_obj hd = {
		.magic = AE_SCHEMA_MAGIC, .version = AE_SCHEMA_VERSION,
		.objid = c->objid, .ninsn = c->n, .nev = c->nev,
		.npool = c->npool,
		.flags = (c->data ? AE_SCHEMA_F_DATA : 0) | (c->vcache ? AE_SCHEMA_F_VCACHE : 0),
	};
	FILE *f = fopen(path, "wb");
	int ok;

	for (int i = 0; i < c->nev; i++)
		if (ae_event_version(&c->ev[i]) > hd.version)
			hd.version = ae_event_version(&c->ev[i]);

	if (!f)
		return ae_err(c, 0, "cannot create %s: %s", path, strerror(errno));
	hd.size = sizeof(hd) + c->nev * sizeof(struct ae_event) +
		  c->npool * sizeof(uint32_t);
	ok = fwrite(&hd, sizeof(hd), 1, f) == 1 &&
	     fwrite(c->ev, sizeof(struct ae_event), c->nev, f) == (size_t)c->nev &&
	     fwrite(c->pool, sizeof(uint32_t), c->npool, f) == (size_t)c->npool;
	if (fclose(f) || !ok)
		return ae_err(c, 0, "cannot write %s: %s", path, strerror(errno));
	return 0;
}
