/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Hierarchical allgather hier_leader, for any layout (nodes with different numbers of
 * ranks, a node's ranks anywhere in the communicator): the node shares its blocks, the
 * leaders (local rank 0) ring-allgather the nodes' blocks in node order (rank order itself
 * when every node's ranks are consecutive, otherwise packed in work memory), each leader
 * broadcasts the whole result inside its node. */
#include "coll/allgather/allgather.h"
#include "coll/bcast/bcast.h"
#include "coll/hier/hier.h"

#include <stdlib.h>

static cg_status_t cg_hier_allgather_leader(cg_comm_t *comm, const void *sbuf, void *rbuf,
                                            size_t bytes)
{
    const int         L = comm->local_size;
    cg_inter_group_t  g = {0};
    cg_leader_order_t o = {0};
    cg_seg_t          segs[CG_INTRA_MAX];
    void             *work = NULL;
    char             *ring = rbuf;
    cg_status_t       status;

    status = cg_hier_rail(comm, 0, &g); /* the leaders */
    if (status == CG_OK) {
        status = cg_leader_order(comm, NULL, bytes, &o);
    }
    if (status == CG_OK) {
        status = cg_hier_place(comm, sbuf, (char *)rbuf + (size_t)comm->config.rank * bytes, bytes);
    }
    if (L > 1) { /* the leader gets the node's blocks */
        for (int l = 0; l < L; l++) {
            segs[l] = (cg_seg_t){(size_t)cg_comm_member(comm, comm->my_node, l) * bytes, bytes};
        }
        status = cg_allgather_segments(comm->intra, rbuf, segs, 1, status);
    }
    if (status == CG_OK && comm->local_rank == 0) {
        if (!o.identity) {
            status = cg_comm_work(comm, CG_MAX(o.total, (size_t)256), &work);
            ring   = work;
            if (status == CG_OK) {
                status = cg_leader_pack(comm, &o, NULL, bytes, 1, comm->my_node, 0, rbuf, ring, 1);
            }
        }
        if (status == CG_OK) {
            status = cg_inter_allgather_ring(comm->inter, &g, ring, o.offs, o.lens);
        }
        if (status == CG_OK && !o.identity) {
            status = cg_leader_pack(comm, &o, NULL, bytes, 1, comm->my_node, 1, rbuf, ring, 0);
        }
    }
    if (L > 1) {
        status = CG_LEADER_NODE_PHASE(comm, status,
                                      cg_bcast_direct(comm->intra, rbuf, (size_t)comm->config.size * bytes, 0));
    }
    cg_leader_order_free(&o);
    free(g.ranks);
    return status;
}

cg_status_t cg_allgather_hier_leader_run(cg_comm_t *comm, const cg_plan_t *plan,
                                         const cg_call_t *call)
{
    (void)plan;
    return cg_hier_allgather_leader(comm, call->sbuf, call->rbuf, call->bytes);
}
