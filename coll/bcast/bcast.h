/* Intra-node broadcast of bytes (dense) from group rank root. */
#ifndef CG_BCAST_H
#define CG_BCAST_H

#include "coll/intra/intra.h"

/* Zero copy when every buffer can be shared: the root reads its buffer once and writes it
 * into every peer's buffer through IPC (one kernel). Otherwise through the root's scratch
 * halves, from which every rank copies. */
cg_status_t cg_bcast_direct(cg_intra_t *g, void *buf, size_t bytes, int root);

#endif
