/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* MPI_Allreduce: classify buffers -> plan -> run or fall back. */
#include "ompi_coll_gpu/coll_gpu.h"

static int mca_coll_gpu_allreduce_staged(const void *sbuf, void *rbuf, size_t count,
                                         struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                         struct ompi_communicator_t *comm,
                                         mca_coll_gpu_module_t *m, int skind, int rkind,
                                         const mca_coll_gpu_route_t *route)
{
    mca_coll_gpu_staging_t st;
    mca_coll_gpu_stage_t   s = {0}, r;
    ptrdiff_t              gap;
    const int              in_place = (sbuf == MPI_IN_PLACE);
    const size_t           span     = mca_coll_gpu_span(dtype, count, &gap);
    int                    rc;

    rc = mca_coll_gpu_staging_begin(&st, m, 2 * MCA_COLL_GPU_STAGE_BYTES(span),
                                    2 * mca_coll_gpu_data_bytes(dtype, count), 1);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (!in_place) {
        rc = mca_coll_gpu_stage_in(&st, &s, (void *)sbuf, dtype, count, 1, 0, skind,
                                   &route->sattr, NULL);
        if (OMPI_SUCCESS != rc) {
            goto out;
        }
    }
    rc = mca_coll_gpu_stage_in(&st, &r, rbuf, dtype, count, in_place, 1, rkind, &route->rattr,
                               NULL);
    if (OMPI_SUCCESS != rc || OMPI_SUCCESS != (rc = mca_coll_gpu_staging_sync(&st))) {
        goto out;
    }
    rc = MCA_COLL_GPU_UNDER(m, allreduce, in_place ? MPI_IN_PLACE : s.host, r.host, (mca_coll_gpu_count_t)count,
                            dtype, op, comm);
    if (OMPI_SUCCESS == rc && OMPI_SUCCESS == (rc = mca_coll_gpu_stage_out(&st, &r))) {
        rc = mca_coll_gpu_staging_sync(&st);
    }
out:
    return mca_coll_gpu_staging_end(&st, rc);
}

int mca_coll_gpu_allreduce(const void *sbuf, void *rbuf, mca_coll_gpu_count_t count,
                           struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gpu_module_t *m = (mca_coll_gpu_module_t *)module;
    mca_coll_gpu_route_t   route;
    size_t                 span;
    const void            *sdata = mca_coll_gpu_data_start(sbuf, dtype, (size_t)count, &span);
    const void            *rdata = mca_coll_gpu_data_start(rbuf, dtype, (size_t)count, &span);
    cg_call_t              call;
    int                    kinds, skind, rkind, rc, dense;

    if (m->nested > 0) {
        return MCA_COLL_GPU_NESTED(m, allreduce, sbuf, rbuf, count, dtype, op, comm);
    }
    dense = mca_coll_gpu_dtype_is_dense(dtype, (size_t)count);
    skind = mca_coll_gpu_layout_query(sdata, span, dense, NULL, 0, &route.sattr);
    rkind = mca_coll_gpu_layout_query(rdata, span, dense, &route.sattr, skind, &route.rattr);
    kinds = skind | rkind;
    if (OMPI_SUCCESS != (rc = mca_coll_gpu_host_direct(m, kinds, CG_COLL_ALLREDUCE))) {
        return MCA_COLL_GPU_ROUTED_UNDER == rc
                   ? MCA_COLL_GPU_UNDER(m, allreduce, sbuf, rbuf, count, dtype, op, comm)
                   : rc;
    }
    mca_coll_gpu_call_init(&call, CG_COLL_ALLREDUCE, sbuf, rbuf, (size_t)count, dtype, op, comm);
    call.sattr = &route.sattr;
    call.rattr = &route.rattr;
    /* Predefined types (the only ones a fast path reduces) have a fixed layout, padding
     * included, that the device reductions respect: gaps only matter to a local copy. */
    rc = mca_coll_gpu_route(m, comm, &call, kinds, dense ? 0 : MCA_COLL_GPU_LAYOUT_GAPS, &route);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    mca_coll_gpu_log_call(&call, comm, dtype, op, kinds, &route);
    switch (route.path) {
    case MCA_COLL_GPU_PATH_FAST:
        rc = mca_coll_gpu_fast_run(m, comm, &route, &call);
        if (rc != MCA_COLL_GPU_FAST_MISSED) {
            return rc;
        }
        /* a local rank was not on the LL call: staged, as every rank on it */
        /* fall through */
    case MCA_COLL_GPU_PATH_STAGED:
        return mca_coll_gpu_allreduce_staged(sbuf, rbuf, (size_t)count, dtype, op, comm, m,
                                             skind, rkind, &route);
    case MCA_COLL_GPU_PATH_LOCAL:
        return mca_coll_gpu_local_copy(m, &route, rbuf, sbuf, mca_coll_gpu_data_bytes(dtype, call.count));
    default:
        return MCA_COLL_GPU_UNDER(m, allreduce, sbuf, rbuf, count, dtype, op, comm);
    }
}
