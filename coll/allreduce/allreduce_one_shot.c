/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* One-shot allreduce: copy in, barrier, every rank reduces all peers' copies. */
#include "coll/allreduce/allreduce.h"

/* The steps, from a status so far: a rank that failed before them still walks every
 * barrier its peers walk (reporting the failure there). */
static cg_status_t cg_one_shot_steps(cg_intra_t *group, const void *sbuf, void *rbuf,
                                     size_t count, cg_dtype_t dtype, cg_op_t op,
                                     cg_status_t status)
{
    const size_t elem  = cg_dtype_size(dtype);
    const size_t chunk = group->half_bytes / elem;
    const char  *in    = sbuf ? (const char *)sbuf : (const char *)rbuf;
    cg_dev_t    *dev   = group->dev;

    /* Peers read this rank's copy after the barrier; the next step fills the other half,
     * and a half is refilled only after the next barrier, when every peer is done with it. */
    for (size_t first = 0; first < count; first += chunk) {
        const size_t     n = CG_MIN(chunk, count - first);
        const unsigned   h = group->parity++;
        cg_reduce_args_t args = {.dtype = dtype, .op = op, .count = n, .nsrc = group->size, .ndst = 1};

        if (status == CG_OK) {
            char *mine = cg_intra_half(group, group->rank, h);
            status = cg_intra_copy_multi(group, &mine, 1, in + first * elem, n * elem);
        }
        status = cg_intra_barrier(group, status);
        for (int p = 0; p < group->size; p++) {
            args.srcs[p] = cg_intra_half(group, p, h); /* rank order: same bits on every rank */
        }
        args.dsts[0] = (char *)rbuf + first * elem;
        if (status == CG_OK) {
            status = dev->ops->reduce(dev, &args, group->stream);
        }
    }
    return cg_intra_finish(group, status);
}

cg_status_t cg_allreduce_one_shot(cg_intra_t *group, const void *sbuf, void *rbuf, size_t count,
                                  cg_dtype_t dtype, cg_op_t op)
{
    return cg_one_shot_steps(group, sbuf, rbuf, count, dtype, op, CG_OK);
}

/* Stream-ordered (CG_TRAIT_STREAM_ORDERED): this rank's buffers are first touched by its own
 * copy on its stream, which waits there for the application's work; the peers read the copy
 * only after a barrier that comes after it on the stream. No host wait for the application. */
cg_status_t cg_allreduce_one_shot_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    cg_intra_t *group = comm->intra;

    (void)plan;
    return cg_one_shot_steps(group, call->sbuf, call->rbuf, call->count, call->dtype, call->op,
                             cg_dev_app_wait(group->dev, group->stream));
}
