/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Reduce-scatter inside a node: each rank reduces its own block from every peer's input. */
#include "coll/reduce_scatter/reduce_scatter.h"

static cg_status_t cg_reduce_scatter_direct(cg_intra_t *group, const void *sbuf, void *rbuf,
                                     const size_t *counts, cg_dtype_t dtype, cg_op_t op)
{
    cg_seg_t segs[CG_INTRA_MAX];
    size_t   off = 0;

    for (int p = 0; p < group->size; off += counts[p], p++) {
        segs[p] = (cg_seg_t){off, counts[p]};
    }
    return cg_reduce_scatter_segments(group, sbuf ? sbuf : rbuf, rbuf, segs, 1, sbuf == NULL, dtype,
                                      op, CG_OK);
}

cg_status_t cg_reduce_scatter_direct_run(cg_comm_t *comm, const cg_plan_t *plan,
                                         const cg_call_t *call)
{
    (void)plan;
    return cg_reduce_scatter_direct(comm->intra, call->sbuf, call->rbuf, call->counts, call->dtype,
                                    call->op);
}
