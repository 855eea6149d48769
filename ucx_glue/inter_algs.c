/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Collectives over a group of ranks on different nodes, built on cg_inter_sendrecv:
 * ring reduce-scatter / allgather / allreduce (bandwidth), recursive doubling allreduce
 * (latency, any group size), binomial broadcast. Received blocks land in device scratch and
 * are reduced on the device; every block is reduced in one order everywhere, so every
 * member ends with the same bits.
 */
#include "ucx_glue/cg_ucx.h"

#include <stdlib.h>

/* Reduce count elements: dst = a op b (a first: the same order on every member), queued on
 * the transport's stream. Staged, nothing waits for it: a later send copies its chunks to
 * host memory on the same stream, after the reduction, and waits for those copies anyway;
 * the next receive's copies into the same blocks come after it on the stream too; the
 * collective waits once at its end (cg_inter_settle). Direct, UCX reads and writes device
 * memory outside the stream: the reduction must be done before the next exchange. */
static cg_status_t cg_inter_reduce(cg_inter_t *inter, void *dst, const void *a, const void *b,
                                   size_t count, cg_dtype_t dtype, cg_op_t op)
{
    cg_reduce_args_t args = {.dtype = dtype, .op = op, .count = count, .nsrc = 2, .ndst = 1};
    cg_status_t      status;

    if (count == 0) {
        return CG_OK;
    }
    args.srcs[0] = a;
    args.srcs[1] = b;
    args.dsts[0] = dst;
    status = inter->dev->ops->reduce(inter->dev, &args, inter->stream);
    if (status != CG_OK || inter->staged) {
        inter->unsettled |= status == CG_OK;
        return status;
    }
    return inter->dev->ops->stream_sync(inter->dev, inter->stream);
}

/* The end of a collective that reduced: its results in device memory for the caller (who
 * goes on with other streams). One host wait per call, not per step. */
static cg_status_t cg_inter_settle(cg_inter_t *inter, cg_status_t status)
{
    cg_status_t drained;

    if (!inter->unsettled) {
        return status;
    }
    inter->unsettled = 0;
    drained          = inter->dev->ops->stream_sync(inter->dev, inter->stream);
    return status != CG_OK ? status : drained; /* drained either way; an earlier error wins */
}

cg_status_t cg_inter_reduce_scatter_ring(cg_inter_t *inter, const cg_inter_group_t *g, void *buf,
                                         const size_t *offs, const size_t *counts,
                                         cg_dtype_t dtype, cg_op_t op)
{
    const int    n = g->n, me = g->me;
    const int    next = g->ranks[(me + 1) % n], prev = g->ranks[(me - 1 + n) % n];
    const size_t elem = cg_dtype_size(dtype);
    char        *b = buf;
    size_t       largest = 0;
    void        *tmp;
    cg_status_t  status;

    if (n < 2) {
        return CG_OK;
    }
    for (int i = 0; i < n; i++) {
        largest = CG_MAX(largest, counts[i]);
    }
    status = cg_inter_tmp(inter, CG_MAX(largest * elem, (size_t)1), &tmp);
    /* step s: send block me-s-1, receive block me-s-2; at the last step block me arrives */
    for (int s = 0; s < n - 1 && status == CG_OK; s++) {
        const int sb = (me - s - 1 + 2 * n) % n, rb = (me - s - 2 + 2 * n) % n;
        status = cg_inter_sendrecv(inter, next, b + offs[sb] * elem, counts[sb] * elem, prev, tmp,
                                   counts[rb] * elem, (unsigned)s);
        if (status == CG_OK) {
            status = cg_inter_reduce(inter, b + offs[rb] * elem, tmp, b + offs[rb] * elem, counts[rb],
                                     dtype, op);
        }
    }
    return cg_inter_settle(inter, status);
}

cg_status_t cg_inter_allgather_ring(cg_inter_t *inter, const cg_inter_group_t *g, void *buf,
                                    const size_t *offs, const size_t *bytes)
{
    const int   n = g->n, me = g->me;
    const int   next = g->ranks[(me + 1) % n], prev = g->ranks[(me - 1 + n) % n];
    char       *b = buf;
    cg_status_t status = CG_OK;

    /* step s: forward block me-s, receive block me-s-1 straight into place */
    for (int s = 0; s < n - 1 && status == CG_OK; s++) {
        const int sb = (me - s + n) % n, rb = (me - s - 1 + n) % n;
        status = cg_inter_sendrecv(inter, next, b + offs[sb], bytes[sb], prev, b + offs[rb], bytes[rb],
                                   (unsigned)(n + s));
    }
    return status;
}

cg_status_t cg_inter_allreduce_ring(cg_inter_t *inter, const cg_inter_group_t *g, void *buf,
                                    size_t count, cg_dtype_t dtype, cg_op_t op)
{
    const int    n    = g->n;
    const size_t elem = cg_dtype_size(dtype);
    const size_t blk  = (count + (size_t)n - 1) / (size_t)n;
    size_t      *offs, *counts, *bytes;
    cg_status_t  status;

    if (n < 2) {
        return CG_OK;
    }
    offs = malloc(2 * (size_t)n * sizeof(size_t));
    if (offs == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    counts = offs + n;
    /* block i is where member i ends with the sum, owned by one member: the same bits
     * everywhere after the allgather */
    for (int i = 0; i < n; i++) {
        offs[i]   = CG_MIN(count, (size_t)i * blk);
        counts[i] = CG_MIN(count - offs[i], blk);
    }
    status = cg_inter_reduce_scatter_ring(inter, g, buf, offs, counts, dtype, op);
    bytes  = counts;
    for (int i = 0; i < n; i++) {
        offs[i] *= elem;
        bytes[i] = counts[i] * elem;
    }
    if (status == CG_OK) {
        status = cg_inter_allgather_ring(inter, g, buf, offs, bytes);
    }
    free(offs);
    return status;
}

/* Recursive doubling for any n: with p the largest power of two <= n, the first 2(n-p)
 * members fold in pairs (odd ones keep the pair's sum), p members double, and the odd ones
 * hand the result back. The lower member's data always comes first in a reduction. */
cg_status_t cg_inter_allreduce_rd(cg_inter_t *inter, const cg_inter_group_t *g, void *buf,
                                  size_t count, cg_dtype_t dtype, cg_op_t op)
{
    const int    n = g->n, me = g->me;
    const size_t bytes = count * cg_dtype_size(dtype);
    int          p = 1, rem, vme;
    void        *tmp;
    cg_status_t  status;

    while (p * 2 <= n) {
        p *= 2;
    }
    rem    = n - p;
    status = cg_inter_tmp(inter, CG_MAX(bytes, (size_t)1), &tmp);
    if (status != CG_OK) {
        return status;
    }
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            status = cg_inter_sendrecv(inter, g->ranks[me + 1], buf, bytes, -1, NULL, 0, 0);
            vme    = -1;
        } else {
            status = cg_inter_sendrecv(inter, -1, NULL, 0, g->ranks[me - 1], tmp, bytes, 0);
            if (status == CG_OK) {
                status = cg_inter_reduce(inter, buf, tmp, buf, count, dtype, op);
            }
            vme = me / 2;
        }
    } else {
        vme = me - rem;
    }
    for (int mask = 1, step = 1; vme >= 0 && mask < p && status == CG_OK; mask <<= 1, step++) {
        const int vpeer = vme ^ mask;
        const int peer  = g->ranks[vpeer < rem ? vpeer * 2 + 1 : vpeer + rem];
        status = cg_inter_sendrecv(inter, peer, buf, bytes, peer, tmp, bytes, (unsigned)step);
        if (status == CG_OK) {
            status = vme < vpeer ? cg_inter_reduce(inter, buf, buf, tmp, count, dtype, op)
                                 : cg_inter_reduce(inter, buf, tmp, buf, count, dtype, op);
        }
    }
    if (status == CG_OK && me < 2 * rem) {
        status = (me % 2) ? cg_inter_sendrecv(inter, g->ranks[me - 1], buf, bytes, -1, NULL, 0, 63)
                          : cg_inter_sendrecv(inter, -1, NULL, 0, g->ranks[me + 1], buf, bytes, 63);
    }
    return cg_inter_settle(inter, status);
}

cg_status_t cg_inter_bcast_binomial(cg_inter_t *inter, const cg_inter_group_t *g, void *buf,
                                    size_t bytes, int root)
{
    const int   n   = g->n;
    const int   rel = (g->me - root + n) % n;
    int         mask = 1;
    cg_status_t status = CG_OK;

    /* receive from the parent: the member that differs in the lowest set bit */
    while (mask < n) {
        if (rel & mask) {
            status = cg_inter_sendrecv(inter, -1, NULL, 0, g->ranks[(rel - mask + root) % n], buf,
                                       bytes, 200);
            break;
        }
        mask <<= 1;
    }
    /* then to the children, farthest first */
    for (mask >>= 1; mask > 0 && status == CG_OK; mask >>= 1) {
        if (rel + mask < n) {
            status = cg_inter_sendrecv(inter, g->ranks[(rel + mask + root) % n], buf, bytes, -1, NULL,
                                       0, 200);
        }
    }
    return status;
}
