/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Running a planned fast path on a communicator's context. */
#include "coll/allgather/allgather.h"
#include "coll/allreduce/allreduce.h"
#include "coll/bcast/bcast.h"
#include "coll/cg_comm_int.h"
#include "coll/hier/hier.h"
#include "coll/reduce_scatter/reduce_scatter.h"

#include <math.h>
#include <stdlib.h>

void cg_comm_shape(const cg_comm_t *c, cg_shape_t *shape)
{
    shape->size       = c->config.size;
    shape->num_nodes  = c->num_nodes;
    shape->local_size = c->local_size;
    shape->max_local  = c->max_local;
    shape->intra_ok   = !c->failed && (c->local_size == 1 || (c->intra && !c->intra->failed));
    shape->inter_ok   = c->inter != NULL && !c->inter->failed;
    shape->inter_staged = c->model_staged;
    shape->lanes      = CG_MAX(c->num_lanes, 1);
    shape->uniform    = c->uniform;
    /* one node: its own class; several: the slowest, so that every rank plans the same */
    shape->topo_class = c->num_nodes > 1 ? c->model_class : c->topo.cls;
}

const cg_topo_summary_t *cg_comm_topo(const cg_comm_t *c)
{
    return &c->topo;
}

int cg_comm_failed(const cg_comm_t *c)
{
    return c->failed || (c->intra != NULL && c->intra->failed) ||
           (c->inter != NULL && c->inter->failed);
}

cg_status_t cg_comm_work(cg_comm_t *c, size_t bytes, void **work)
{
    if (bytes > c->work_bytes) {
        if (c->work != NULL) {
            c->dev->ops->mem_free(c->dev, c->work);
            c->work       = NULL;
            c->work_bytes = 0;
        }
        if (c->dev->ops->mem_alloc(c->dev, bytes, &c->work) != CG_OK) {
            c->work = NULL;
            return CG_ERR_NO_MEMORY;
        }
        c->work_bytes = bytes;
    }
    *work = c->work;
    return CG_OK;
}

/* Hierarchical algorithms advance the tag sequence on every rank, in or out of a rail. */
static int cg_comm_hier(cg_comm_t *c, cg_alg_t alg)
{
    if (!cg_alg_is_hier(alg) || c->inter == NULL) {
        return 0;
    }
    cg_inter_begin(c->inter);
    return 1;
}

/* Pieces of a message of bytes (nccl-tests size) for the plan's chunk size. */
static int cg_comm_chunks(const cg_plan_t *plan, double bytes)
{
    double chunks;

    if (plan->chunk_bytes == 0 || bytes <= (double)plan->chunk_bytes) {
        return 1;
    }
    chunks = ceil(bytes / (double)plan->chunk_bytes);
    return chunks > CG_HIER_MAX_CHUNKS ? CG_HIER_MAX_CHUNKS : (int)chunks;
}

static cg_status_t cg_comm_done(cg_comm_t *c, cg_status_t status)
{
    if (status != CG_OK) {
        c->failed = 1;
    }
    return status;
}

/* A hierarchical call returns only when what it sent has left this process: eager data
 * can wait in a transport's buffer for the sender's progress, which the next call on
 * this worker may be too late to give (the peer may need it first). When it failed here,
 * the ranks of other nodes may wait for data that will never come: abort them, on every
 * lane (their node's ranks learn of it at their next barrier). */
static cg_status_t cg_comm_hier_done(cg_comm_t *c, cg_status_t status)
{
    const int lanes = CG_MAX(c->num_lanes, 1);

    for (int m = 0; status == CG_OK && m < lanes; m++) {
        status = cg_ucx_flush((m == 0 ? c->inter : c->lane[m])->ucx);
    }
    if (status != CG_OK) {
        int *others = malloc((size_t)c->config.size * sizeof(int)), n = 0;
        for (int r = 0; others != NULL && r < c->config.size; r++) {
            if (c->node_of[r] != c->my_node) {
                others[n++] = r;
            }
        }
        for (int m = 0; others != NULL && m < lanes; m++) {
            cg_inter_abort(m == 0 ? c->inter : c->lane[m], others, n, 2.0 / lanes);
        }
        free(others);
    }
    return cg_comm_done(c, status);
}

cg_status_t cg_comm_allreduce(cg_comm_t *c, const cg_plan_t *plan, const void *sbuf, void *rbuf,
                              size_t count, cg_dtype_t dtype, cg_op_t op)
{
    if (cg_comm_hier(c, plan->alg)) {
        return cg_comm_hier_done(c, cg_hier_allreduce(c, plan->alg, sbuf, rbuf, count, dtype, op,
                                                 cg_comm_chunks(plan, (double)count * cg_dtype_size(dtype))));
    }
    switch (plan->alg) {
    case CG_ALG_ONE_SHOT:
        return cg_comm_done(c, cg_allreduce_one_shot(c->intra, sbuf, rbuf, count, dtype, op));
    case CG_ALG_TWO_SHOT:
        return cg_comm_done(c, cg_allreduce_two_shot(c->intra, sbuf, rbuf, count, dtype, op));
    case CG_ALG_RING:
        return cg_comm_done(c, cg_allreduce_ring(c->intra, sbuf, rbuf, count, dtype, op));
    default:
        return CG_ERR_UNSUPPORTED;
    }
}

cg_status_t cg_comm_reduce_scatter(cg_comm_t *c, const cg_plan_t *plan, const void *sbuf,
                                   void *rbuf, const size_t *counts, cg_dtype_t dtype, cg_op_t op)
{
    if (cg_comm_hier(c, plan->alg)) {
        double total = 0;
        for (int r = 0; r < c->config.size; r++) {
            total += (double)counts[r] * cg_dtype_size(dtype);
        }
        return cg_comm_hier_done(c, plan->alg == CG_ALG_HIER_LEADER
                                        ? cg_hier_reduce_scatter_leader(c, sbuf, rbuf, counts, dtype, op)
                                        : cg_hier_reduce_scatter(c, sbuf, rbuf, counts, dtype, op,
                                                                 cg_comm_chunks(plan, total)));
    }
    if (plan->alg != CG_ALG_DIRECT) {
        return CG_ERR_UNSUPPORTED;
    }
    return cg_comm_done(c, cg_reduce_scatter_direct(c->intra, sbuf, rbuf, counts, dtype, op));
}

cg_status_t cg_comm_allgather(cg_comm_t *c, const cg_plan_t *plan, const void *sbuf, void *rbuf,
                              size_t bytes)
{
    if (cg_comm_hier(c, plan->alg)) {
        return cg_comm_hier_done(c, plan->alg == CG_ALG_HIER_LEADER
                                        ? cg_hier_allgather_leader(c, sbuf, rbuf, bytes)
                                        : cg_hier_allgather(c, sbuf, rbuf, bytes,
                                                            cg_comm_chunks(plan, (double)bytes * c->config.size)));
    }
    if (plan->alg != CG_ALG_DIRECT) {
        return CG_ERR_UNSUPPORTED;
    }
    return cg_comm_done(c, cg_allgather_direct(c->intra, sbuf, rbuf, bytes));
}

cg_status_t cg_comm_bcast(cg_comm_t *c, const cg_plan_t *plan, void *buf, size_t bytes, int root)
{
    if (cg_comm_hier(c, plan->alg)) {
        return cg_comm_hier_done(c, cg_hier_bcast(c, plan->alg, buf, bytes, root,
                                             cg_comm_chunks(plan, (double)bytes)));
    }
    switch (plan->alg) {
    case CG_ALG_DIRECT:
        return cg_comm_done(c, cg_bcast_direct(c->intra, buf, bytes, root));
    case CG_ALG_SCATTER_ALLGATHER:
        return cg_comm_done(c, cg_bcast_scatter_allgather(c->intra, buf, bytes, root));
    default:
        return CG_ERR_UNSUPPORTED;
    }
}
