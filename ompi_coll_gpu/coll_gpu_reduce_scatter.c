/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* MPI_Reduce_scatter and MPI_Reduce_scatter_block: classify -> plan -> run or fall back. */
#include "ompi_coll_gpu/coll_gpu.h"

#include <stdlib.h>

/* Stage input (total elements) and output (own elements; total when in place), run the
 * layer underneath through run(), copy the output back. */
typedef int (*mca_coll_gpu_rs_run_fn_t)(const void *sbuf, void *rbuf, const void *arg,
                                        struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                        struct ompi_communicator_t *comm,
                                        mca_coll_gpu_module_t *m);

static int mca_coll_gpu_rs_staged(const void *sbuf, void *rbuf, size_t total, size_t own,
                                  struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                  struct ompi_communicator_t *comm, mca_coll_gpu_module_t *m,
                                  mca_coll_gpu_rs_run_fn_t run, const void *arg,
                                  const mca_coll_gpu_route_t *route)
{
    mca_coll_gpu_staging_t st;
    mca_coll_gpu_stage_t   s = {0}, r;
    ptrdiff_t              gap;
    const int              in_place = (sbuf == MPI_IN_PLACE);
    const size_t           rcount   = in_place ? total : own;
    const size_t           sspan    = in_place ? 0 : mca_coll_gpu_span(dtype, total, &gap);
    const size_t           rspan    = mca_coll_gpu_span(dtype, rcount, &gap);
    int                    rc;

    rc = mca_coll_gpu_staging_begin(&st, m, MCA_COLL_GPU_STAGE_BYTES(sspan) + MCA_COLL_GPU_STAGE_BYTES(rspan),
                                    mca_coll_gpu_data_bytes(dtype, (in_place ? 0 : total) + rcount), 1);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (!in_place) {
        rc = mca_coll_gpu_stage_in(&st, &s, (void *)sbuf, dtype, total, 1, 0, route->skind,
                                   &route->sattr, NULL);
        if (OMPI_SUCCESS != rc) {
            goto out;
        }
    }
    rc = mca_coll_gpu_stage_in(&st, &r, rbuf, dtype, rcount, in_place, 1, route->rkind,
                               &route->rattr, NULL);
    if (OMPI_SUCCESS != rc || OMPI_SUCCESS != (rc = mca_coll_gpu_staging_sync(&st))) {
        goto out;
    }
    rc = run(in_place ? MPI_IN_PLACE : s.host, r.host, arg, dtype, op, comm, m);
    if (OMPI_SUCCESS == rc && OMPI_SUCCESS == (rc = mca_coll_gpu_stage_out(&st, &r))) {
        rc = mca_coll_gpu_staging_sync(&st);
    }
out:
    return mca_coll_gpu_staging_end(&st, rc);
}

static int mca_coll_gpu_rs_run(const void *sbuf, void *rbuf, const void *arg,
                               struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                               struct ompi_communicator_t *comm, mca_coll_gpu_module_t *m)
{
    return MCA_COLL_GPU_UNDER(m, reduce_scatter, sbuf, rbuf, (const int *)arg, dtype, op, comm);
}

static int mca_coll_gpu_rsb_run(const void *sbuf, void *rbuf, const void *arg,
                                struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                struct ompi_communicator_t *comm, mca_coll_gpu_module_t *m)
{
    return MCA_COLL_GPU_UNDER(m, reduce_scatter_block, sbuf, rbuf, *(const mca_coll_gpu_count_t *)arg, dtype,
                                         op, comm);
}

/* Route one reduce-scatter call: the descriptor (counts[r] = rcounts[r], or rcount for every
 * rank, in the module's array), the buffers' kinds, the route; MCA_COLL_GPU_ROUTED_UNDER
 * when host buffers go straight underneath (neither filled in). */
static int mca_coll_gpu_rs_route(cg_coll_t coll, const void *sbuf, void *rbuf,
                                 const int *rcounts, size_t rcount,
                                 struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                 struct ompi_communicator_t *comm, mca_coll_gpu_module_t *m,
                                 mca_coll_gpu_route_t *route, cg_call_t *call)
{
    const int size = ompi_comm_size(comm);
    size_t      total = 0, own, span;
    const void *data;
    int         kinds, skind, rkind, dense, rc;

    for (int i = 0; i < size; i++) {
        const size_t count = rcounts ? (size_t)rcounts[i] : rcount;
        if (m->counts != NULL) { /* NULL: no fast path on this communicator (enable) */
            m->counts[i] = count;
        }
        total += count;
    }
    own = rcounts ? (size_t)rcounts[ompi_comm_rank(comm)] : rcount;
    /* MPI_IN_PLACE: no input buffer (0, nothing asked); the output holds the whole input */
    dense = mca_coll_gpu_dtype_is_dense(dtype, total);
    data  = mca_coll_gpu_data_start(sbuf, dtype, total, &span);
    skind = mca_coll_gpu_layout_query(data, span, dense, NULL, 0, &route->sattr);
    data  = mca_coll_gpu_data_start(rbuf, dtype, sbuf == MPI_IN_PLACE ? total : own, &span);
    rkind = mca_coll_gpu_layout_query(data, span, dense, &route->sattr, skind, &route->rattr);
    kinds        = skind | rkind;
    route->skind = skind;
    route->rkind = rkind;
    if (OMPI_SUCCESS != (rc = mca_coll_gpu_host_direct(m, kinds, coll))) {
        return rc; /* ROUTED_UNDER: call and route are not filled in */
    }
    mca_coll_gpu_call_init(call, coll, sbuf, rbuf, total, dtype, op, comm);
    call->counts = m->counts;
    call->sattr  = &route->sattr;
    call->rattr  = &route->rattr;
    /* predefined types only go fast (see mca_coll_gpu_allreduce): gaps matter to a local
     * copy only */
    return mca_coll_gpu_route(m, comm, call, kinds,
                              dense ? 0 : MCA_COLL_GPU_LAYOUT_GAPS,
                              route);
}

int mca_coll_gpu_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                                struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gpu_module_t *m = (mca_coll_gpu_module_t *)module;
    mca_coll_gpu_route_t   route;
    cg_call_t              call;
    int                    rc;

    if (m->nested > 0) {
        return MCA_COLL_GPU_NESTED(m, reduce_scatter, sbuf, rbuf, rcounts, dtype, op, comm);
    }
    rc = mca_coll_gpu_rs_route(CG_COLL_REDUCE_SCATTER, sbuf, rbuf, rcounts, 0, dtype, op, comm,
                               m, &route, &call);
    if (MCA_COLL_GPU_ROUTED_UNDER == rc) {
        return mca_coll_gpu_rs_run(sbuf, rbuf, rcounts, dtype, op, comm, m);
    }
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    mca_coll_gpu_log_call(&call, comm, dtype, op, route.kinds, &route);
    switch (route.path) {
    case MCA_COLL_GPU_PATH_FAST:
        rc = mca_coll_gpu_fast_run(m, comm, &route, &call);
        if (rc != MCA_COLL_GPU_FAST_MISSED) {
            return rc;
        }
        /* a local rank was not on the LL call: staged, as every rank on it */
        /* fall through */
    case MCA_COLL_GPU_PATH_STAGED:
        /* rcounts, not call.counts: the module's array may be missing (enable), which
         * sends every call here */
        return mca_coll_gpu_rs_staged(sbuf, rbuf, call.count, (size_t)rcounts[ompi_comm_rank(comm)],
                                      dtype, op, comm, m, mca_coll_gpu_rs_run, rcounts, &route);
    case MCA_COLL_GPU_PATH_LOCAL:
        return mca_coll_gpu_local_copy(m, &route, rbuf, sbuf,
                                       mca_coll_gpu_data_bytes(dtype, call.count));
    default:
        return mca_coll_gpu_rs_run(sbuf, rbuf, rcounts, dtype, op, comm, m);
    }
}

int mca_coll_gpu_reduce_scatter_block(const void *sbuf, void *rbuf, mca_coll_gpu_count_t rcount,
                                      struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                      struct ompi_communicator_t *comm,
                                      mca_coll_base_module_t *module)
{
    mca_coll_gpu_module_t *m = (mca_coll_gpu_module_t *)module;
    mca_coll_gpu_route_t   route;
    cg_call_t              call;
    int                    rc;

    if (m->nested > 0) {
        return MCA_COLL_GPU_NESTED(m, reduce_scatter_block, sbuf, rbuf, rcount, dtype, op, comm);
    }
    rc = mca_coll_gpu_rs_route(CG_COLL_REDUCE_SCATTER_BLOCK, sbuf, rbuf, NULL, (size_t)rcount,
                               dtype, op, comm, m, &route, &call);
    if (MCA_COLL_GPU_ROUTED_UNDER == rc) {
        return mca_coll_gpu_rsb_run(sbuf, rbuf, &rcount, dtype, op, comm, m);
    }
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    mca_coll_gpu_log_call(&call, comm, dtype, op, route.kinds, &route);
    switch (route.path) {
    case MCA_COLL_GPU_PATH_FAST:
        rc = mca_coll_gpu_fast_run(m, comm, &route, &call);
        if (rc != MCA_COLL_GPU_FAST_MISSED) {
            return rc;
        }
        /* a local rank was not on the LL call: staged, as every rank on it */
        /* fall through */
    case MCA_COLL_GPU_PATH_STAGED:
        return mca_coll_gpu_rs_staged(sbuf, rbuf, call.count, (size_t)rcount, dtype, op, comm, m,
                                      mca_coll_gpu_rsb_run, &rcount, &route);
    case MCA_COLL_GPU_PATH_LOCAL:
        return mca_coll_gpu_local_copy(m, &route, rbuf, sbuf,
                                       mca_coll_gpu_data_bytes(dtype, call.count));
    default:
        return mca_coll_gpu_rsb_run(sbuf, rbuf, &rcount, dtype, op, comm, m);
    }
}
