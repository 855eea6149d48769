/* Intra-node allgather of bytes per rank (dense). sbuf NULL: in place (rank r's data is
 * already at rbuf + r * bytes). */
#ifndef CG_ALLGATHER_H
#define CG_ALLGATHER_H

#include "coll/intra/intra.h"

/* Direct peer copies: zero copy (each rank writes its block into every peer's output)
 * when every output can be shared, otherwise through the scratch halves. */
cg_status_t cg_allgather_direct(cg_intra_t *g, const void *sbuf, void *rbuf, size_t bytes);

#endif
