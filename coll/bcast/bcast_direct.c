/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Direct broadcast: the root pushes its data into every peer's buffer. */
#include "coll/bcast/bcast.h"

static cg_status_t cg_bcast_copy(cg_intra_t *group, char *buf, size_t bytes, int root)
{
    const size_t window = group->half_bytes;
    cg_status_t  status = CG_OK;

    for (size_t first = 0; first < bytes; first += window) {
        const size_t   n = CG_MIN(window, bytes - first);
        const unsigned h = group->parity++;

        if (status == CG_OK && group->rank == root) {
            status = cg_intra_copy(group, cg_intra_half(group, root, h), buf + first, n, group->stream);
        }
        status = cg_intra_barrier(group, status);
        if (status == CG_OK && group->rank != root) {
            status = cg_intra_copy(group, buf + first, cg_intra_half(group, root, h), n, group->stream);
        }
    }
    return cg_intra_finish(group, status);
}

cg_status_t cg_bcast_direct(cg_intra_t *group, void *buf, size_t bytes, int root)
{
    char       *peer_in[CG_INTRA_MAX], *peer_out[CG_INTRA_MAX];
    cg_status_t status    = CG_OK;
    int         zero_copy = 0;

    if (group->dev->caps.ipc_user_buffers) {
        status = cg_intra_publish(group, CG_OK, NULL, 0, group->rank == root ? NULL : buf, bytes, peer_in,
                                  peer_out, &zero_copy);
        if (status != CG_OK) {
            return cg_intra_finish(group, status);
        }
    }
    cg_detail(CG_SUB_COLL, "bcast direct: %s", zero_copy ? "zero copy" : "through scratch");
    if (!zero_copy) {
        return cg_bcast_copy(group, buf, bytes, root);
    }
    if (group->rank == root) {
        char *dsts[CG_INTRA_MAX];
        int   n = 0;
        for (int p = 0; p < group->size; p++) {
            if (p != root) {
                dsts[n++] = peer_out[p];
            }
        }
        status = cg_intra_copy_multi(group, dsts, n, buf, bytes);
    }
    /* Nobody returns before the root has written every buffer. */
    return cg_intra_close(group, status);
}

cg_status_t cg_bcast_direct_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    (void)plan;
    return cg_bcast_direct(comm->intra, call->rbuf, call->bytes, call->root);
}
