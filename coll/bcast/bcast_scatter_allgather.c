/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Bcast as scatter + allgather inside a node: the root hands rank r part r, the ranks
 * share the parts. On GPUs with links of their own each link carries the message about
 * once instead of L - 1 times over the root's. */
#include "coll/bcast/bcast.h"

static cg_status_t cg_bcast_scatter_allgather(cg_intra_t *group, void *buf, size_t bytes, int root)
{
    cg_seg_t    parts[CG_INTRA_MAX];
    size_t      part = CG_ALIGN_UP((bytes + (size_t)group->size - 1) / (size_t)group->size, 256);
    cg_status_t status;

    for (int p = 0; p < group->size; p++) {
        size_t off = CG_MIN(bytes, (size_t)p * part);
        parts[p]   = (cg_seg_t){off, CG_MIN(bytes - off, part)};
    }
    status = cg_scatter_segments(group, buf, parts, root, CG_OK);
    return cg_allgather_segments(group, buf, parts, 1, status);
}

cg_status_t cg_bcast_scatter_allgather_run(cg_comm_t *comm, const cg_plan_t *plan,
                                           const cg_call_t *call)
{
    (void)plan;
    return cg_bcast_scatter_allgather(comm->intra, call->rbuf, call->bytes, call->root);
}
