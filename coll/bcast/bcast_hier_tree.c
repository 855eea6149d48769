/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Hierarchical bcast hier_tree: one rank per node (the root's local index) forms a binomial
 * tree across the nodes, then every node broadcasts inside. Any layout; small messages. */
#include "coll/bcast/bcast.h"
#include "coll/hier/hier.h"

#include <stdlib.h>

/* The node's phase: the node's tree member shares the message with its node, as one LL
 * operation when the plan says so (the host waited for the application's work: the LL call
 * does not wait again), else direct. */
static cg_status_t cg_hier_bcast_node(cg_comm_t *comm, const cg_plan_t *plan, void *buf,
                                      size_t bytes, int root)
{
    if (plan->node_ll) {
        cg_ll_args_t args = {.coll = CG_LL_BCAST, .root = root, .src = buf, .dst = buf,
                             .count = bytes, .dtype = CG_DT_NONE, .op = CG_OP_NONE,
                             .app_ordered = 1};
        return cg_intra_ll(comm->intra, &args, NULL);
    }
    return cg_bcast_direct(comm->intra, buf, bytes, root);
}

static cg_status_t cg_hier_bcast_tree(cg_comm_t *comm, const cg_plan_t *plan, void *buf,
                                      size_t bytes, int rnode, int rlocal)
{
    cg_inter_group_t g = {0};
    cg_status_t      status;

    /* one rank per node: the one with the root's local index (wrapped on smaller nodes) */
    status = cg_hier_rail(comm, rlocal, &g);
    if (status == CG_OK && g.ranks[comm->my_node] == comm->config.rank) {
        status = cg_inter_bcast_binomial(comm->inter, &g, buf, bytes, rnode);
    }
    free(g.ranks);
    if (comm->local_size > 1) {
        /* a rank that failed before tells its node's ranks: in a barrier of direct, or by
         * its report, which ends their LL call's wait for its lines */
        status = (status == CG_OK)   ? cg_hier_bcast_node(comm, plan, buf, bytes, rlocal % comm->local_size)
                 : plan->node_ll ? cg_intra_ll_skip(comm->intra, status)
                                 : cg_intra_close(comm->intra, status);
    }
    return status;
}

cg_status_t cg_bcast_hier_tree_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    int rnode, rlocal;

    cg_hier_root(comm, call->root, &rnode, &rlocal);
    return cg_hier_bcast_tree(comm, plan, call->rbuf, call->bytes, rnode, rlocal);
}
