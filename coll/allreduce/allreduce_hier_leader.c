/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Hierarchical allreduce hier_leader: the node reduces inside, the node leaders (local
 * rank 0) allreduce across the nodes, each leader broadcasts inside its node. Any number of
 * ranks per node. */
#include "coll/allreduce/allreduce.h"
#include "coll/bcast/bcast.h"
#include "coll/hier/hier.h"

#include <stdlib.h>

cg_status_t cg_allreduce_hier_leader_run(cg_comm_t *comm, const cg_plan_t *plan,
                                         const cg_call_t *call)
{
    cg_inter_group_t leaders = {0};
    cg_status_t      status;

    /* the node's phase first; a leader that fails after it tells the other nodes and, in
     * the last phase, its own */
    status = cg_allreduce_node(comm, plan, call->sbuf, call->rbuf, call->count, call->dtype, call->op);
    if (status == CG_OK && comm->local_rank == 0) {
        status = cg_hier_rail(comm, 0, &leaders); /* local rank 0 of every node */
    }
    if (status == CG_OK && comm->local_rank == 0) {
        status = call->bytes <= comm->config.one_shot_max
                     ? cg_inter_allreduce_rd(comm->inter, &leaders, call->rbuf, call->count,
                                             call->dtype, call->op)
                     : cg_inter_allreduce_ring(comm->inter, &leaders, call->rbuf, call->count,
                                               call->dtype, call->op);
    }
    if (comm->local_size > 1) {
        status = CG_LEADER_NODE_PHASE(comm, status, cg_bcast_direct(comm->intra, call->rbuf,
                                                                 call->bytes, 0));
    }
    free(leaders.ranks);
    return status;
}
