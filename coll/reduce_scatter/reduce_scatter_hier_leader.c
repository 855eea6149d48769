/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Hierarchical reduce-scatter hier_leader, for any layout: the leader (local rank 0)
 * reduces every block over its node, the leaders ring-reduce-scatter the nodes' blocks in
 * node order, each leader hands its node's ranks their blocks. */
#include "coll/hier/hier.h"
#include "coll/reduce_scatter/reduce_scatter.h"

#include <stdlib.h>

static cg_status_t cg_hier_reduce_scatter_leader(cg_comm_t *comm, const void *sbuf, void *rbuf,
                                                 const size_t *counts, cg_dtype_t dtype,
                                                 cg_op_t op)
{
    const int         L = comm->local_size, me = comm->config.rank;
    const size_t      elem = cg_dtype_size(dtype);
    const char       *in = sbuf ? sbuf : rbuf;
    cg_inter_group_t  g = {0};
    cg_leader_order_t o = {0};
    cg_seg_t         *segs = NULL, parts[CG_INTRA_MAX];
    char             *work = NULL;
    cg_status_t       status;

    status = cg_hier_rail(comm, 0, &g);
    if (status == CG_OK) {
        status = cg_leader_order(comm, counts, 1, &o);
    }
    if (status == CG_OK) { /* every rank: the leader reduces into it, the others receive */
        status = cg_comm_work(comm, CG_MAX(o.total * elem, (size_t)256), (void **)&work);
    }
    if (L > 1) {
        /* the leader's segments: every block, in node order (packed into work in that
         * order); the other ranks reduce nothing */
        const int P = comm->config.size;
        if (status == CG_OK && (segs = calloc((size_t)L * P, sizeof(*segs))) == NULL) {
            status = CG_ERR_NO_MEMORY;
        }
        for (int n = 0, k = 0; status == CG_OK && n < comm->num_nodes; n++) {
            for (int l = 0; l < comm->node_size[n]; l++, k++) {
                int r   = cg_comm_member(comm, n, l);
                segs[k] = (cg_seg_t){o.displ[r], counts[r]};
            }
        }
        status = segs != NULL ? cg_reduce_scatter_segments(comm->intra, in, work, segs, P, 0, dtype,
                                                           op, status)
                              : cg_intra_close(comm->intra, status);
    } else if (status == CG_OK) {
        status = cg_leader_pack(comm, &o, counts, 0, elem, -1, 1, (char *)in, work, 1);
    }
    if (status == CG_OK && comm->local_rank == 0) {
        status = cg_inter_reduce_scatter_ring(comm->inter, &g, work, o.offs, o.lens, dtype, op);
    }
    if (L > 1) { /* each rank's block to it, at the same place of its work memory */
        for (int l = 0; l < L; l++) {
            int r    = cg_comm_member(comm, comm->my_node, l);
            parts[l] = (cg_seg_t){o.pos[r] * elem, counts[r] * elem};
        }
        status = cg_scatter_segments(comm->intra, work, parts, 0, status);
        if (status == CG_OK && counts[me] > 0) {
            status = cg_intra_finish(comm->intra, cg_intra_copy_typed(comm->intra, rbuf, work + o.pos[me] * elem,
                                                                   counts[me], dtype));
        }
    } else if (status == CG_OK && counts[me] > 0) {
        status = cg_dev_copy_typed(comm->dev, rbuf, work + o.pos[me] * elem, counts[me], dtype,
                                   comm->inter->stream);
        status = status == CG_OK ? comm->dev->ops->stream_sync(comm->dev, comm->inter->stream) : status;
    }
    free(segs);
    cg_leader_order_free(&o);
    free(g.ranks);
    return status;
}

cg_status_t cg_reduce_scatter_hier_leader_run(cg_comm_t *comm, const cg_plan_t *plan,
                                              const cg_call_t *call)
{
    (void)plan;
    return cg_hier_reduce_scatter_leader(comm, call->sbuf, call->rbuf, call->counts, call->dtype,
                                         call->op);
}
