/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* One-shot allreduce: copy in, barrier, every rank reduces all peers' copies. */
#include "coll/allreduce/allreduce.h"

cg_status_t cg_allreduce_one_shot(cg_intra_t *g, const void *sbuf, void *rbuf, size_t count,
                                  cg_dtype_t dtype, cg_op_t op)
{
    const size_t elem  = cg_dtype_size(dtype);
    const size_t chunk = g->half_bytes / elem;
    const char  *in    = sbuf ? (const char *)sbuf : (const char *)rbuf;
    cg_dev_t    *dev   = g->dev;
    cg_status_t  status = CG_OK;

    /* Peers read this rank's copy after the barrier; the next step fills the other half,
     * and a half is refilled only after the next barrier, when every peer is done with it. */
    for (size_t first = 0; first < count; first += chunk) {
        const size_t     n = CG_MIN(chunk, count - first);
        const unsigned   h = g->parity++;
        cg_reduce_args_t args = {.dtype = dtype, .op = op, .count = n, .nsrc = g->size, .ndst = 1};

        if (status == CG_OK) {
            status = dev->ops->copy(dev, cg_intra_half(g, g->rank, h), in + first * elem, n * elem,
                                    g->stream);
        }
        status = cg_intra_barrier(g, status);
        for (int p = 0; p < g->size; p++) {
            args.srcs[p] = cg_intra_half(g, p, h); /* rank order: same bits on every rank */
        }
        args.dsts[0] = (char *)rbuf + first * elem;
        if (status == CG_OK) {
            status = dev->ops->reduce(dev, &args, g->stream);
        }
    }
    return cg_intra_finish(g, status);
}
