/* Direct reduce-scatter: rank r reduces block r from every peer. */
#include "coll/reduce_scatter/reduce_scatter.h"

static size_t cg_rs_offset(const size_t *counts, int r)
{
    size_t off = 0;
    for (int i = 0; i < r; i++) {
        off += counts[i];
    }
    return off;
}

static cg_status_t cg_rs_zero_copy(cg_intra_t *g, char *const in[], void *rbuf,
                                   const size_t *counts, cg_dtype_t dtype, cg_op_t op)
{
    const size_t     elem = cg_dtype_size(dtype);
    const size_t     off  = cg_rs_offset(counts, g->rank);
    cg_reduce_args_t args = {.dtype = dtype, .op = op, .count = counts[g->rank],
                             .nsrc = g->size, .ndst = 1};
    cg_status_t      status = CG_OK;

    for (int p = 0; p < g->size; p++) {
        args.srcs[p] = in[p] + off * elem;
    }
    args.dsts[0] = rbuf;
    if (args.count > 0) {
        status = g->dev->ops->reduce(g->dev, &args, g->stream);
    }
    return cg_intra_finish(g, cg_intra_barrier(g, status));
}

/* Step j copies window j of every block into this rank's scratch half; after the barrier
 * rank r reduces window j of block r from every peer. In place, the output overwrites
 * only input that earlier steps (or this one, before) have already copied. */
static cg_status_t cg_rs_copy(cg_intra_t *g, const char *in, char *rbuf, const size_t *counts,
                              cg_dtype_t dtype, cg_op_t op)
{
    const size_t elem   = cg_dtype_size(dtype);
    const size_t window = g->half_bytes / ((size_t)g->size * elem);
    size_t       longest = 0;
    cg_dev_t    *dev    = g->dev;
    cg_status_t  status = CG_OK;

    for (int b = 0; b < g->size; b++) {
        longest = CG_MAX(longest, counts[b]);
    }
    for (size_t first = 0; first < longest; first += window) {
        const unsigned   h    = g->parity++;
        char            *half = cg_intra_half(g, g->rank, h);
        size_t           off  = 0;
        cg_reduce_args_t args = {.dtype = dtype, .op = op, .nsrc = g->size, .ndst = 1};

        for (int b = 0; b < g->size && status == CG_OK; off += counts[b], b++) {
            size_t n = counts[b] > first ? CG_MIN(window, counts[b] - first) : 0;
            status = dev->ops->copy(dev, half + (size_t)b * window * elem,
                                    in + (off + first) * elem, n * elem, g->stream);
        }
        status     = cg_intra_barrier(g, status);
        args.count = counts[g->rank] > first ? CG_MIN(window, counts[g->rank] - first) : 0;
        for (int p = 0; p < g->size; p++) {
            args.srcs[p] = cg_intra_half(g, p, h) + (size_t)g->rank * window * elem;
        }
        args.dsts[0] = rbuf + first * elem;
        if (status == CG_OK && args.count > 0) {
            status = dev->ops->reduce(dev, &args, g->stream);
        }
    }
    return cg_intra_finish(g, status);
}

cg_status_t cg_reduce_scatter_direct(cg_intra_t *g, const void *sbuf, void *rbuf,
                                     const size_t *counts, cg_dtype_t dtype, cg_op_t op)
{
    const size_t total = cg_rs_offset(counts, g->size);
    char        *peer_in[CG_INTRA_MAX], *peer_out[CG_INTRA_MAX];
    cg_status_t  status    = CG_OK;
    int          zero_copy = 0;

    /* In place, the result would overwrite input that peers still read: copy variant. */
    if (sbuf != NULL && g->dev->caps.ipc_user_buffers) {
        status = cg_intra_publish(g, sbuf, total * cg_dtype_size(dtype), NULL, 0, peer_in,
                                  peer_out, &zero_copy);
        if (status != CG_OK) {
            return cg_intra_finish(g, status);
        }
    }
    cg_detail(CG_SUB_COLL, "reduce_scatter direct: %s", zero_copy ? "zero copy" : "through scratch");
    return zero_copy ? cg_rs_zero_copy(g, peer_in, rbuf, counts, dtype, op)
                     : cg_rs_copy(g, sbuf ? sbuf : rbuf, rbuf, counts, dtype, op);
}
