/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Ring allreduce inside a node, along the ring order of the node summary (NVLink pairs
 * next to each other): reduce-scatter in n-1 steps, then allgather in n-1 steps, each step
 * moving one block from a rank to the next through the next rank's scratch. Every block is
 * reduced by one rank only, so every rank ends with the same bits. Rounds of n blocks fit
 * the scratch halves: inbox in the first quarter, the running partial sum in the second.
 */
#include "coll/allreduce/allreduce.h"

typedef struct {
    size_t first; /* first element of the round */
    size_t block; /* elements per block in this round */
    size_t count; /* elements in the round */
} cg_ring_round_t;

static size_t cg_ring_len(const cg_ring_round_t *r, int b)
{
    size_t start = (size_t)b * r->block;
    return start < r->count ? CG_MIN(r->block, r->count - start) : 0;
}

static size_t cg_ring_off(const cg_ring_round_t *r, int b, size_t elem)
{
    return (r->first + (size_t)b * r->block) * elem;
}

static cg_status_t cg_allreduce_ring(cg_intra_t *group, const void *sbuf, void *rbuf, size_t count,
                              cg_dtype_t dtype, cg_op_t op)
{
    const int    n    = group->size, pos = group->ring_pos;
    const int    next = group->ring[(pos + 1) % n];
    const size_t elem = cg_dtype_size(dtype);
    const size_t acc_off = group->half_bytes / 2;
    const char  *in  = sbuf ? (const char *)sbuf : (const char *)rbuf;
    char        *out = rbuf;
    cg_dev_t    *dev = group->dev;
    cg_status_t  status = CG_OK;
    const size_t max_block = acc_off / elem;

    for (size_t first = 0; first < count; first += max_block * (size_t)n) {
        cg_ring_round_t r = {first, 0, CG_MIN(max_block * (size_t)n, count - first)};
        r.block = (r.count + (size_t)n - 1) / (size_t)n;

        for (int s = 0; s < n - 1; s++) { /* reduce-scatter */
            const unsigned h      = group->parity++;
            const int      send_b = (pos - s - 1 + 2 * n) % n, recv_b = (pos - s - 2 + 2 * n) % n;
            const char    *src    = s == 0 ? in + cg_ring_off(&r, send_b, elem)
                                           : cg_intra_half(group, group->rank, h - 1) + acc_off;
            cg_reduce_args_t args = {.dtype = dtype, .op = op, .count = cg_ring_len(&r, recv_b),
                                     .nsrc = 2, .ndst = 1};
            if (status == CG_OK) {
                status = cg_intra_copy(group, cg_intra_half(group, next, h), src,
                                        cg_ring_len(&r, send_b) * elem, group->stream);
            }
            status       = cg_intra_barrier(group, status);
            args.srcs[0] = cg_intra_half(group, group->rank, h);
            args.srcs[1] = in + cg_ring_off(&r, recv_b, elem);
            args.dsts[0] = (s == n - 2) ? out + cg_ring_off(&r, recv_b, elem)
                                        : cg_intra_half(group, group->rank, h) + acc_off;
            if (status == CG_OK && args.count > 0) {
                status = dev->ops->reduce(dev, &args, group->stream);
            }
        }
        for (int s = 0; s < n - 1; s++) { /* allgather */
            const unsigned h      = group->parity++;
            const int      send_b = (pos - s + n) % n, recv_b = (pos - s - 1 + n) % n;
            if (status == CG_OK) {
                status = cg_intra_copy(group, cg_intra_half(group, next, h),
                                        out + cg_ring_off(&r, send_b, elem),
                                        cg_ring_len(&r, send_b) * elem, group->stream);
            }
            status = cg_intra_barrier(group, status);
            if (status == CG_OK) {
                status = cg_intra_copy_typed(group, out + cg_ring_off(&r, recv_b, elem),
                                             cg_intra_half(group, group->rank, h), cg_ring_len(&r, recv_b),
                                             dtype);
            }
        }
    }
    return cg_intra_finish(group, status);
}

cg_status_t cg_allreduce_ring_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    (void)plan;
    return cg_allreduce_ring(comm->intra, call->sbuf, call->rbuf, call->count, call->dtype,
                             call->op);
}
