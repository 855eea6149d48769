/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Hierarchical allreduce hier_rd: the node reduces inside (every rank gets the node's sum),
 * then every rail allreduces across the nodes by recursive doubling (small messages) or a
 * ring. Equal ranks per node. */
#include "coll/allreduce/allreduce.h"
#include "coll/hier/hier.h"

#include <stdlib.h>

cg_status_t cg_allreduce_node(cg_comm_t *comm, const cg_plan_t *plan, const void *sbuf, void *rbuf,
                              size_t count, cg_dtype_t dtype, cg_op_t op)
{
    const size_t bytes = count * cg_dtype_size(dtype);

    if (comm->local_size == 1) {
        return cg_hier_place(comm, sbuf, rbuf, bytes);
    }
    if (plan->node_ll) { /* hier_rd, hier_leader: the host waited for the application's work */
        cg_ll_args_t args = {.coll = CG_LL_ALLREDUCE, .src = sbuf ? sbuf : rbuf, .dst = rbuf,
                             .count = count, .dtype = dtype, .op = op, .app_ordered = 1};
        return cg_intra_ll(comm->intra, &args, NULL);
    }
    return bytes <= comm->config.one_shot_max
               ? cg_allreduce_one_shot(comm->intra, sbuf, rbuf, count, dtype, op)
               : cg_allreduce_two_shot(comm->intra, sbuf, rbuf, count, dtype, op);
}

cg_status_t cg_allreduce_hier_rd_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    cg_inter_group_t rail = {0};
    cg_status_t      status;

    /* the node's phase first: a rank that fails after it fails in the inter-node phase,
     * which tells the other nodes (its node's ranks are done with it) */
    status = cg_allreduce_node(comm, plan, call->sbuf, call->rbuf, call->count, call->dtype, call->op);
    if (status == CG_OK) {
        status = cg_hier_rail(comm, comm->local_rank, &rail);
    }
    if (status == CG_OK) { /* recursive doubling at every size, as the model prices it
                            * (the planner takes hier_ring or hier_leader where a ring is
                            * faster) */
        status = cg_inter_allreduce_rd(comm->inter, &rail, call->rbuf, call->count, call->dtype,
                                       call->op);
    }
    free(rail.ranks);
    return status;
}
