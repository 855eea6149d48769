/* Allgather inside a node: each rank writes its block into every peer's output (one
 * multi-destination copy reads it once), or through scratch. */
#include "coll/allgather/allgather.h"

static cg_status_t cg_allgather_direct(cg_intra_t *g, const void *sbuf, void *rbuf, size_t bytes)
{
    cg_seg_t    segs[CG_INTRA_MAX];
    cg_status_t status = CG_OK;

    for (int p = 0; p < g->size; p++) {
        segs[p] = (cg_seg_t){(size_t)p * bytes, bytes};
    }
    if (sbuf != NULL) { /* out of place: this rank's block into place first */
        status = g->dev->ops->copy(g->dev, (char *)rbuf + (size_t)g->rank * bytes, sbuf, bytes,
                                   g->stream);
    }
    return cg_allgather_segments(g, rbuf, segs, 1, status);
}

cg_status_t cg_allgather_direct_run(cg_comm_t *c, const cg_plan_t *plan, const cg_call_t *call)
{
    (void)plan;
    return cg_allgather_direct(c->intra, call->sbuf, call->rbuf, call->bytes);
}
