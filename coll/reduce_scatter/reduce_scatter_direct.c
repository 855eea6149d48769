/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Reduce-scatter inside a node: each rank reduces its own segments from every peer. */
#include "coll/reduce_scatter/reduce_scatter.h"

static cg_status_t cg_rs_zero_copy(cg_intra_t *g, char *const in[], char *out,
                                   const cg_seg_t *mine, int nseg, cg_dtype_t dtype, cg_op_t op)
{
    const size_t elem   = cg_dtype_size(dtype);
    size_t       packed = 0;
    cg_status_t  status = CG_OK;

    for (int k = 0; k < nseg && status == CG_OK; packed += mine[k].len, k++) {
        cg_reduce_args_t args = {.dtype = dtype, .op = op, .count = mine[k].len,
                                 .nsrc = g->size, .ndst = 1};
        for (int p = 0; p < g->size; p++) {
            args.srcs[p] = in[p] + mine[k].off * elem;
        }
        args.dsts[0] = out + packed * elem;
        if (args.count > 0) {
            status = g->dev->ops->reduce(g->dev, &args, g->stream);
        }
    }
    /* nobody returns while a peer still reads its input */
    return cg_intra_finish(g, cg_intra_barrier(g, status));
}

/* Through the scratch halves, window by window over the concatenation of every rank's
 * segments (rank by rank): each rank packs that window of its input into its half; after
 * the barrier each rank reduces the part of its own segments in the window from every
 * rank's half. Only the segments' elements are copied. In place (MPI's reduce-scatter: the
 * segments tile the input in rank order from its start, the output is its start), an
 * output element is written no earlier than the round that copied the input at its index. */
static cg_status_t cg_rs_copy(cg_intra_t *g, const char *in, char *out, const cg_seg_t *segs,
                              int nseg, cg_dtype_t dtype, cg_op_t op, cg_status_t status)
{
    const size_t    elem   = cg_dtype_size(dtype);
    const size_t    window = g->half_bytes / elem;
    const cg_seg_t *mine   = segs + (size_t)g->rank * nseg;
    size_t          total = 0, mine_at = 0;

    for (int i = 0; i < g->size * nseg; i++) {
        mine_at += (i < g->rank * nseg) ? segs[i].len : 0;
        total += segs[i].len;
    }
    for (size_t first = 0; first < total; first += window) {
        const unsigned h = g->parity++;
        const size_t   n = CG_MIN(window, total - first);
        size_t         pos = mine_at, packed = 0;

        if (status == CG_OK) {
            status = cg_segs_pack(g, segs, g->size * nseg, elem, first, n, (char *)in,
                                  cg_intra_half(g, g->rank, h), 1);
        }
        status = cg_intra_barrier(g, status);
        for (int k = 0; k < nseg && status == CG_OK; pos += mine[k].len, packed += mine[k].len, k++) {
            size_t lo = CG_MAX(first, pos), hi = CG_MIN(first + n, pos + mine[k].len);
            cg_reduce_args_t args = {.dtype = dtype, .op = op, .nsrc = g->size, .ndst = 1};
            if (lo >= hi) {
                continue;
            }
            args.count = hi - lo;
            for (int p = 0; p < g->size; p++) {
                args.srcs[p] = cg_intra_half(g, p, h) + (lo - first) * elem;
            }
            args.dsts[0] = out + (packed + lo - pos) * elem;
            status       = g->dev->ops->reduce(g->dev, &args, g->stream);
        }
    }
    return cg_intra_finish(g, status);
}

cg_status_t cg_reduce_scatter_segments(cg_intra_t *g, const void *in, void *out,
                                       const cg_seg_t *segs, int nseg, int in_place,
                                       cg_dtype_t dtype, cg_op_t op, cg_status_t status)
{
    char  *peer_in[CG_INTRA_MAX], *peer_out[CG_INTRA_MAX];
    size_t extent = 0;
    int    zero_copy = 0;

    for (int i = 0; i < g->size * nseg; i++) {
        extent = CG_MAX(extent, segs[i].off + segs[i].len);
    }
    if (!in_place && g->dev->caps.ipc_user_buffers) {
        status = cg_intra_publish(g, status, in, extent * cg_dtype_size(dtype), NULL, 0, peer_in,
                                  peer_out, &zero_copy);
        if (status != CG_OK) {
            return cg_intra_finish(g, status);
        }
    }
    cg_detail(CG_SUB_COLL, "reduce_scatter: %s", zero_copy ? "zero copy" : "through scratch");
    return zero_copy ? cg_rs_zero_copy(g, peer_in, out, segs + (size_t)g->rank * nseg, nseg, dtype, op)
                     : cg_rs_copy(g, in, out, segs, nseg, dtype, op, status);
}

cg_status_t cg_reduce_scatter_direct(cg_intra_t *g, const void *sbuf, void *rbuf,
                                     const size_t *counts, cg_dtype_t dtype, cg_op_t op)
{
    cg_seg_t segs[CG_INTRA_MAX];
    size_t   off = 0;

    for (int p = 0; p < g->size; off += counts[p], p++) {
        segs[p] = (cg_seg_t){off, counts[p]};
    }
    return cg_reduce_scatter_segments(g, sbuf ? sbuf : rbuf, rbuf, segs, 1, sbuf == NULL, dtype,
                                      op, CG_OK);
}
