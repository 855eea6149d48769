/* Direct allgather: every rank's block lands in every rank's output. */
#include "coll/allgather/allgather.h"

static cg_status_t cg_ag_zero_copy(cg_intra_t *g, const char *src, char *const out[],
                                   size_t bytes)
{
    char       *dsts[CG_INTRA_MAX];
    int         n = 0;
    cg_status_t status;

    for (int p = 0; p < g->size; p++) {
        char *dst = out[p] + (size_t)g->rank * bytes;
        if (dst != src) { /* in place, this rank's own block is already there */
            dsts[n++] = dst;
        }
    }
    status = cg_intra_copy_multi(g, dsts, n, src, bytes);
    return cg_intra_finish(g, cg_intra_barrier(g, status));
}

static cg_status_t cg_ag_copy(cg_intra_t *g, const char *src, char *rbuf, size_t bytes)
{
    const size_t window = g->half_bytes;
    cg_dev_t    *dev    = g->dev;
    cg_status_t  status = CG_OK;

    for (size_t first = 0; first < bytes; first += window) {
        const size_t   n = CG_MIN(window, bytes - first);
        const unsigned h = g->parity++;

        if (status == CG_OK) {
            status = dev->ops->copy(dev, cg_intra_half(g, g->rank, h), src + first, n, g->stream);
        }
        status = cg_intra_barrier(g, status);
        for (int p = 0; p < g->size && status == CG_OK; p++) {
            status = dev->ops->copy(dev, rbuf + (size_t)p * bytes + first, cg_intra_half(g, p, h),
                                    n, g->stream);
        }
    }
    return cg_intra_finish(g, status);
}

cg_status_t cg_allgather_direct(cg_intra_t *g, const void *sbuf, void *rbuf, size_t bytes)
{
    const char *src = sbuf ? (const char *)sbuf : (const char *)rbuf + (size_t)g->rank * bytes;
    char       *peer_in[CG_INTRA_MAX], *peer_out[CG_INTRA_MAX];
    cg_status_t status    = CG_OK;
    int         zero_copy = 0;

    if (g->dev->caps.ipc_user_buffers) {
        status = cg_intra_publish(g, NULL, 0, rbuf, bytes * (size_t)g->size, peer_in, peer_out,
                                  &zero_copy);
        if (status != CG_OK) {
            return cg_intra_finish(g, status);
        }
    }
    cg_detail(CG_SUB_COLL, "allgather direct: %s", zero_copy ? "zero copy" : "through scratch");
    return zero_copy ? cg_ag_zero_copy(g, src, peer_out, bytes) : cg_ag_copy(g, src, rbuf, bytes);
}
