/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Hierarchical bcast hier_tree: one rank per node (the root's local index) forms a binomial
 * tree across the nodes, then every node broadcasts inside. Any layout; small messages. */
#include "coll/bcast/bcast.h"
#include "coll/hier/hier.h"

#include <stdlib.h>

static cg_status_t cg_hier_bcast_tree(cg_comm_t *comm, void *buf, size_t bytes, int rnode,
                                      int rlocal)
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
        status = (status == CG_OK) ? cg_bcast_direct(comm->intra, buf, bytes, rlocal % comm->local_size)
                                   : cg_intra_close(comm->intra, status);
    }
    return status;
}

cg_status_t cg_bcast_hier_tree_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    int rnode, rlocal;

    (void)plan;
    cg_hier_root(comm, call->root, &rnode, &rlocal);
    return cg_hier_bcast_tree(comm, call->rbuf, call->bytes, rnode, rlocal);
}
