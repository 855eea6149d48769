/* Intra-node broadcast of bytes (dense) from group rank root. */
#ifndef CG_BCAST_H
#define CG_BCAST_H

#include "coll/intra/intra.h"

/* Every rank copies the root's buffer: zero copy (pull from the root's buffer through IPC)
 * when the root's buffer can be shared, otherwise through the root's scratch halves. */
cg_status_t cg_bcast_direct(cg_intra_t *g, void *buf, size_t bytes, int root);

#endif
