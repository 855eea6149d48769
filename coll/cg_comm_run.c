/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Running a planned fast path on a communicator's context: one indirect call through the
 * plan's registry row, with what every hierarchical run needs around it. */
#include "coll/cg_comm_int.h"
#include "coll/hier/hier.h"

#include <stdlib.h>
#include <string.h>

void cg_comm_shape(const cg_comm_t *comm, cg_shape_t *shape)
{
    memset(shape, 0, sizeof(*shape)); /* padding too: shapes are compared whole */
    shape->size       = comm->config.size;
    shape->num_nodes  = comm->num_nodes;
    shape->local_size = comm->local_size;
    shape->max_local  = comm->max_local;
    shape->intra_ok   = !comm->failed && (comm->local_size == 1 || (comm->intra && !comm->intra->failed));
    shape->inter_ok   = comm->inter != NULL && !comm->inter->failed;
    shape->inter_staged = comm->model_staged;
    shape->lanes      = CG_MAX(comm->num_lanes, 1);
    shape->uniform    = comm->uniform;
    shape->ll_capacity = comm->intra != NULL ? cg_intra_ll_capacity(comm->intra) : 0;
    shape->copy_us     = comm->copy_us;
    shape->under_us    = comm->under_us;
    shape->rules_differ = comm->rules_differ;
    shape->time_sliced  = comm->time_sliced;
    /* one node: its own class; several: the slowest, so that every rank plans the same */
    shape->topo_class = comm->num_nodes > 1 ? comm->model_class : comm->topo.cls;
}

int cg_comm_ll_launch_only(const cg_comm_t *comm)
{
    return comm->intra != NULL && cg_intra_ll_launch_only(comm->dev);
}

int cg_comm_failed(const cg_comm_t *comm)
{
    return comm->failed || (comm->intra != NULL && comm->intra->failed) ||
           (comm->inter != NULL && comm->inter->failed);
}

void cg_comm_ll_tick(cg_comm_t *comm)
{
    if (comm->intra != NULL) {
        cg_intra_ll_tick(comm->intra);
    }
}

int cg_comm_agrees_in_band(const cg_comm_t *comm, const cg_plan_t *plan, cg_coll_t coll)
{
    const cg_alg_info_t *info = cg_alg_info(coll, plan->alg);

    return info != NULL && info->scope == CG_SCOPE_INTRA && comm->intra != NULL;
}

static cg_status_t cg_comm_done(cg_comm_t *comm, cg_status_t status)
{
    if (status != CG_OK && status != CG_ERR_PEER_NOT_FAST) { /* that one: staged, no harm */
        comm->failed = 1;
    }
    return status;
}

/* A hierarchical call returns only when what it sent has left this process: eager data
 * can wait in a transport's buffer for the sender's progress, which the next call on
 * this worker may be too late to give (the peer may need it first). When it failed here,
 * the ranks of other nodes may wait for data that will never come: abort them, on every
 * lane (their node's ranks learn of it at their next barrier). */
static cg_status_t cg_comm_hier_done(cg_comm_t *comm, cg_status_t status)
{
    const int lanes = CG_MAX(comm->num_lanes, 1);

    for (int m = 0; status == CG_OK && m < lanes; m++) { /* the lanes this call used */
        status = cg_inter_flush(m == 0 ? comm->inter : comm->lane[m]);
    }
    if (status != CG_OK) {
        int *others = malloc((size_t)comm->config.size * sizeof(int)), n = 0;
        for (int r = 0; others != NULL && r < comm->config.size; r++) {
            if (comm->node_of[r] != comm->my_node) {
                others[n++] = r;
            }
        }
        for (int m = 0; others != NULL && m < lanes; m++) {
            cg_inter_abort(m == 0 ? comm->inter : comm->lane[m], others, n, 2.0 / lanes);
        }
        free(others);
    }
    return cg_comm_done(comm, status);
}

/* Allreduce of a padded pair type (MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT) across
 * nodes: the hierarchical phases move whole elements as bytes, padding included (rings, the
 * leaders' results shared inside the node, received blocks), and MPI must leave the bytes
 * outside the receive datatype's type map untouched. The algorithm runs into context memory
 * and only the fields reach the user's buffer. */
static cg_status_t cg_comm_run_padded(cg_comm_t *comm, const cg_alg_info_t *info,
                                      const cg_plan_t *plan, const cg_call_t *call)
{
    const size_t bytes  = call->count * cg_dtype_size(call->dtype);
    cg_call_t    shadow = *call;
    void        *result;
    cg_status_t  status = cg_comm_result(comm, CG_MAX(bytes, (size_t)1), &result);

    if (status != CG_OK) { /* the node's other ranks learn of it at their first barrier */
        return comm->local_size > 1 ? cg_intra_close(comm->intra, status)
                                    : status;
    }
    shadow.sbuf = call->sbuf != NULL ? call->sbuf : call->rbuf;
    shadow.rbuf = result;
    status      = info->run(comm, plan, &shadow);
    if (status == CG_OK && call->count > 0) {
        status = cg_dev_copy_typed(comm->dev, call->rbuf, result, call->count, call->dtype,
                                   comm->inter->stream);
        status = status == CG_OK ? comm->dev->ops->stream_sync(comm->dev, comm->inter->stream) : status;
    }
    return status;
}

static cg_status_t cg_comm_run_alg(cg_comm_t *comm, const cg_alg_info_t *info,
                                   const cg_plan_t *plan, const cg_call_t *call)
{
    if (info->scope != CG_SCOPE_HIER) {
        return cg_comm_done(comm, info->run(comm, plan, call));
    }
    if (comm->inter == NULL) {
        return CG_ERR_UNSUPPORTED;
    }
    /* every rank advances the tag sequence, in or out of a rail; every lane knows the call
     * (what its aborts name: counted once per call, chunks advance the sequence too) */
    cg_inter_begin(comm->inter);
    comm->hier_calls++;
    for (int m = 0; m < CG_MAX(comm->num_lanes, 1); m++) {
        cg_inter_set_call(m == 0 ? comm->inter : comm->lane[m], comm->hier_calls);
    }
    if (info->traits & CG_TRAIT_PIPELINED) {
        cg_hier_pipe_agree(comm, plan, call);
    }
    if (call->coll == CG_COLL_ALLREDUCE && cg_dtype_has_padding(call->dtype)) {
        return cg_comm_hier_done(comm, cg_comm_run_padded(comm, info, plan, call));
    }
    return cg_comm_hier_done(comm, info->run(comm, plan, call));
}

cg_status_t cg_comm_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    const cg_alg_info_t *info   = cg_alg_info(call->coll, plan->alg);
    const int            inband = call->watch != NULL && plan->alg != CG_ALG_LL;
    cg_status_t          status;

    if (info == NULL || info->run == NULL) {
        return CG_ERR_UNSUPPORTED;
    }
    if (inband && !cg_comm_agrees_in_band(comm, plan, call->coll)) {
        return CG_ERR_INVALID_PARAM; /* the caller's error: nobody would watch the board */
    }
    if (comm->intra != NULL) { /* the entry point's answers, for the publish */
        cg_intra_asked(comm->intra, call->sbuf, call->sattr, call->rbuf, call->rattr);
    }
    if (inband) { /* LL agrees in its lines (cg_intra_ll), the others in a first barrier */
        cg_intra_inband_begin(comm->intra, call->watch);
    }
    status = cg_comm_run_alg(comm, info, plan, call);
    if (inband) {
        status = cg_intra_inband_end(comm->intra, status);
    }
    if (comm->intra != NULL) {
        cg_intra_asked(comm->intra, NULL, NULL, NULL, NULL);
    }
    return status;
}
