/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Hierarchical allgather and reduce-scatter through one leader per node (local rank 0), for
 * any layout: nodes with different numbers of ranks, a node's ranks anywhere in the
 * communicator.
 *   allgather       the node shares its blocks, the leaders ring-allgather the nodes'
 *                   blocks, each leader broadcasts the whole result inside its node
 *   reduce_scatter  the leader reduces every block over its node, the leaders
 *                   ring-reduce-scatter the nodes' blocks, each leader hands its node's
 *                   ranks their blocks
 * The leaders' ring runs on node order (node n's blocks one after the other, its ranks in
 * local order): rank order itself when every node's ranks are consecutive, otherwise a
 * packed copy in work memory.
 */
#include "coll/allgather/allgather.h"
#include "coll/bcast/bcast.h"
#include "coll/hier/hier.h"
#include "coll/reduce_scatter/reduce_scatter.h"

#include <stdlib.h>

/* Node order of blocks of sizes[r] units (sizes NULL: fixed units each): rank r's block at
 * pos[r], node n's blocks at offs[n] (lens[n] units); displ[r]: rank order. identity: both
 * orders agree. */
typedef struct {
    size_t *pos, *displ, *offs, *lens;
    size_t  total;
    int     identity;
} cg_leader_order_t;

static cg_status_t cg_leader_order(const cg_comm_t *c, const size_t *sizes, size_t fixed,
                                   cg_leader_order_t *o)
{
    const int P = c->config.size, N = c->num_nodes;
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
        for (int l = 0; l < c->node_size[n]; l++) {
            int r     = cg_comm_member(c, n, l);
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

static void cg_leader_order_free(cg_leader_order_t *o)
{
    free(o->pos), free(o->displ), free(o->offs), free(o->lens);
}

/* Copy the blocks of the ranks of node n (every node but n when others; n -1 and others:
 * every rank) between rank order (user) and node order (packed), on the inter stream.
 * sizes and fixed as for cg_leader_order; unit: bytes per unit. */
static cg_status_t cg_leader_pack(cg_comm_t *c, const cg_leader_order_t *o, const size_t *sizes,
                                  size_t fixed, size_t unit, int n, int others, char *user,
                                  char *packed, int to_packed)
{
    cg_status_t status = CG_OK;

    for (int r = 0; r < c->config.size && status == CG_OK; r++) {
        size_t bytes = (sizes ? sizes[r] : fixed) * unit;
        char  *u = user + o->displ[r] * unit, *p = packed + o->pos[r] * unit;
        if ((c->node_of[r] == n) == others || bytes == 0) {
            continue;
        }
        status = c->dev->ops->copy(c->dev, to_packed ? p : u, to_packed ? u : p, bytes,
                                   c->inter->stream);
    }
    return status == CG_OK ? c->dev->ops->stream_sync(c->dev, c->inter->stream) : status;
}

/* The phase after the leaders': run it if this rank is fine, otherwise report the failure
 * to the node (which learns of it at the phase's barrier). */
#define CG_LEADER_NODE_PHASE(_c, _status, _call)                                              \
    ((_status) == CG_OK ? (_call) : cg_intra_finish((_c)->intra, cg_intra_barrier((_c)->intra, (_status))))

cg_status_t cg_hier_allgather_leader(cg_comm_t *c, const void *sbuf, void *rbuf, size_t bytes)
{
    const int         L = c->local_size;
    cg_inter_group_t  g = {0};
    cg_leader_order_t o = {0};
    cg_seg_t          segs[CG_INTRA_MAX];
    void             *work = NULL;
    char             *ring = rbuf;
    cg_status_t       status;

    status = cg_hier_rail(c, 0, &g); /* the leaders */
    if (status == CG_OK) {
        status = cg_leader_order(c, NULL, bytes, &o);
    }
    if (status == CG_OK) {
        status = cg_hier_place(c, sbuf, (char *)rbuf + (size_t)c->config.rank * bytes, bytes);
    }
    if (L > 1) { /* the leader gets the node's blocks */
        for (int l = 0; l < L; l++) {
            segs[l] = (cg_seg_t){(size_t)cg_comm_member(c, c->my_node, l) * bytes, bytes};
        }
        status = cg_allgather_segments(c->intra, rbuf, segs, 1, status);
    }
    if (status == CG_OK && c->local_rank == 0) {
        if (!o.identity) {
            status = cg_comm_work(c, CG_MAX(o.total, (size_t)256), &work);
            ring   = work;
            if (status == CG_OK) {
                status = cg_leader_pack(c, &o, NULL, bytes, 1, c->my_node, 0, rbuf, ring, 1);
            }
        }
        if (status == CG_OK) {
            status = cg_inter_allgather_ring(c->inter, &g, ring, o.offs, o.lens);
        }
        if (status == CG_OK && !o.identity) {
            status = cg_leader_pack(c, &o, NULL, bytes, 1, c->my_node, 1, rbuf, ring, 0);
        }
    }
    if (L > 1) {
        status = CG_LEADER_NODE_PHASE(c, status,
                                      cg_bcast_direct(c->intra, rbuf, (size_t)c->config.size * bytes, 0));
    }
    cg_leader_order_free(&o);
    free(g.ranks);
    return status;
}

cg_status_t cg_hier_reduce_scatter_leader(cg_comm_t *c, const void *sbuf, void *rbuf,
                                          const size_t *counts, cg_dtype_t dtype, cg_op_t op)
{
    const int         L = c->local_size, me = c->config.rank;
    const size_t      elem = cg_dtype_size(dtype);
    const char       *in = sbuf ? sbuf : rbuf;
    cg_inter_group_t  g = {0};
    cg_leader_order_t o = {0};
    cg_seg_t         *segs = NULL, parts[CG_INTRA_MAX];
    char             *work = NULL;
    cg_status_t       status;

    status = cg_hier_rail(c, 0, &g);
    if (status == CG_OK) {
        status = cg_leader_order(c, counts, 1, &o);
    }
    if (status == CG_OK) { /* every rank: the leader reduces into it, the others receive */
        status = cg_comm_work(c, CG_MAX(o.total * elem, (size_t)256), (void **)&work);
    }
    if (L > 1) {
        /* the leader's segments: every block, in node order (packed into work in that
         * order); the other ranks reduce nothing */
        const int P = c->config.size;
        if (status == CG_OK && (segs = calloc((size_t)L * P, sizeof(*segs))) == NULL) {
            status = CG_ERR_NO_MEMORY;
        }
        for (int n = 0, k = 0; status == CG_OK && n < c->num_nodes; n++) {
            for (int l = 0; l < c->node_size[n]; l++, k++) {
                int r   = cg_comm_member(c, n, l);
                segs[k] = (cg_seg_t){o.displ[r], counts[r]};
            }
        }
        status = segs != NULL ? cg_reduce_scatter_segments(c->intra, in, work, segs, P, 0, dtype,
                                                           op, status)
                              : cg_intra_finish(c->intra, cg_intra_barrier(c->intra, status));
    } else if (status == CG_OK) {
        status = cg_leader_pack(c, &o, counts, 0, elem, -1, 1, (char *)in, work, 1);
    }
    if (status == CG_OK && c->local_rank == 0) {
        status = cg_inter_reduce_scatter_ring(c->inter, &g, work, o.offs, o.lens, dtype, op);
    }
    if (L > 1) { /* each rank's block to it, at the same place of its work memory */
        for (int l = 0; l < L; l++) {
            int r    = cg_comm_member(c, c->my_node, l);
            parts[l] = (cg_seg_t){o.pos[r] * elem, counts[r] * elem};
        }
        status = cg_scatter_segments(c->intra, work, parts, 0, status);
        if (status == CG_OK && counts[me] > 0) {
            status = cg_intra_finish(c->intra, cg_intra_copy_typed(c->intra, rbuf, work + o.pos[me] * elem,
                                                                   counts[me], dtype));
        }
    } else if (status == CG_OK && counts[me] > 0) {
        status = cg_dev_copy_typed(c->dev, rbuf, work + o.pos[me] * elem, counts[me], dtype,
                                   c->inter->stream);
        status = status == CG_OK ? c->dev->ops->stream_sync(c->dev, c->inter->stream) : status;
    }
    free(segs);
    cg_leader_order_free(&o);
    free(g.ranks);
    return status;
}
