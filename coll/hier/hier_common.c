/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Building blocks of the hierarchical algorithms: rails, placement, the leaders' node
 * order, the plan's chunks. */
#include "coll/hier/hier.h"

#include <math.h>
#include <stdlib.h>

cg_status_t cg_hier_rail(const cg_comm_t *comm, int local, cg_inter_group_t *g)
{
    g->n     = comm->num_nodes;
    g->me    = comm->my_node;
    g->ranks = malloc((size_t)comm->num_nodes * sizeof(int));
    if (g->ranks == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    for (int n = 0; n < comm->num_nodes; n++) {
        g->ranks[n] = cg_comm_member(comm, n, local);
    }
    return CG_OK;
}

cg_status_t cg_hier_place(cg_comm_t *comm, const void *sbuf, void *dst, size_t bytes)
{
    cg_status_t status;

    if (sbuf == NULL || bytes == 0) {
        return CG_OK;
    }
    status = comm->dev->ops->copy(comm->dev, dst, sbuf, bytes, comm->inter->stream);
    return status == CG_OK ? comm->dev->ops->stream_sync(comm->dev, comm->inter->stream) : status;
}

int cg_hier_plan_chunks(const cg_plan_t *plan, double bytes)
{
    double chunks;

    if (plan->chunk_bytes == 0 || bytes <= (double)plan->chunk_bytes) {
        return 1;
    }
    chunks = ceil(bytes / (double)plan->chunk_bytes);
    return chunks > CG_HIER_MAX_CHUNKS ? CG_HIER_MAX_CHUNKS : (int)chunks;
}

void cg_hier_root(const cg_comm_t *comm, int root, int *rnode, int *rlocal)
{
    *rnode  = comm->node_of[root];
    *rlocal = 0;
    for (int l = 0; l < comm->node_size[*rnode]; l++) {
        *rlocal = (cg_comm_member(comm, *rnode, l) == root) ? l : *rlocal;
    }
}

/* ---- the leaders' node order (hier_leader algorithms) ---------------------------------- */
cg_status_t cg_leader_order(const cg_comm_t *comm, const size_t *sizes, size_t fixed,
                                   cg_leader_order_t *o)
{
    const int P = comm->config.size, N = comm->num_nodes;
    size_t    at = 0;

    o->pos   = malloc((size_t)P * sizeof(size_t));
    o->displ = malloc((size_t)P * sizeof(size_t));
    o->offs  = malloc((size_t)N * sizeof(size_t));
    o->lens  = malloc((size_t)N * sizeof(size_t));
    if (o->pos == NULL || o->displ == NULL || o->offs == NULL || o->lens == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    for (int n = 0; n < N; n++) {
        o->offs[n] = at;
        for (int l = 0; l < comm->node_size[n]; l++) {
            int r     = cg_comm_member(comm, n, l);
            o->pos[r] = at;
            at += sizes ? sizes[r] : fixed;
        }
        o->lens[n] = at - o->offs[n];
    }
    o->total    = at;
    o->identity = 1;
    at          = 0;
    for (int r = 0; r < P; r++) {
        o->displ[r] = at;
        o->identity &= (o->pos[r] == at);
        at += sizes ? sizes[r] : fixed;
    }
    return CG_OK;
}

void cg_leader_order_free(cg_leader_order_t *o)
{
    free(o->pos), free(o->displ), free(o->offs), free(o->lens);
}

/* Copy the blocks of the ranks of node n (every node but n when others; n -1 and others:
 * every rank) between rank order (user) and node order (packed), on the inter stream.
 * sizes and fixed as for cg_leader_order; unit: bytes per unit. */
cg_status_t cg_leader_pack(cg_comm_t *comm, const cg_leader_order_t *o, const size_t *sizes,
                                  size_t fixed, size_t unit, int n, int others, char *user,
                                  char *packed, int to_packed)
{
    cg_status_t status = CG_OK;

    for (int r = 0; r < comm->config.size && status == CG_OK; r++) {
        size_t bytes = (sizes ? sizes[r] : fixed) * unit;
        char  *u = user + o->displ[r] * unit, *p = packed + o->pos[r] * unit;
        if ((comm->node_of[r] == n) == others || bytes == 0) {
            continue;
        }
        status = comm->dev->ops->copy(comm->dev, to_packed ? p : u, to_packed ? u : p, bytes,
                                   comm->inter->stream);
    }
    return status == CG_OK ? comm->dev->ops->stream_sync(comm->dev, comm->inter->stream) : status;
}

