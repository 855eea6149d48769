/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Allgather inside a node: each rank writes its block into every peer's output (one
 * multi-destination copy reads it once), or through scratch. */
#include "coll/allgather/allgather.h"

static cg_status_t cg_allgather_direct(cg_intra_t *group, const void *sbuf, void *rbuf, size_t bytes)
{
    cg_seg_t    segs[CG_INTRA_MAX];
    cg_status_t status = CG_OK;

    for (int p = 0; p < group->size; p++) {
        segs[p] = (cg_seg_t){(size_t)p * bytes, bytes};
    }
    if (sbuf != NULL) { /* out of place: this rank's block into place first */
        status = cg_intra_copy(group, (char *)rbuf + (size_t)group->rank * bytes, sbuf, bytes,
                                   group->stream);
    }
    return cg_allgather_segments(group, rbuf, segs, 1, status);
}

cg_status_t cg_allgather_direct_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    (void)plan;
    return cg_allgather_direct(comm->intra, call->sbuf, call->rbuf, call->bytes);
}
