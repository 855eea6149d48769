/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* MPI_Bcast: classify buffers -> plan -> run or fall back. */
#include "ompi_coll_gpu/coll_gpu.h"

static int mca_coll_gpu_bcast_staged(void *buf, int count, struct ompi_datatype_t *dtype,
                                     int root, struct ompi_communicator_t *comm,
                                     mca_coll_gpu_module_t *m)
{
    mca_coll_gpu_staging_t st;
    mca_coll_gpu_stage_t   b;
    ptrdiff_t              gap;
    const int              is_root = (ompi_comm_rank(comm) == root);
    const size_t           span    = mca_coll_gpu_span(dtype, (size_t)count, &gap);
    int                    rc;

    rc = mca_coll_gpu_staging_begin(&st, m, CG_ALIGN_UP(span, 64));
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    /* The root sends its data; the others read theirs first only to keep gaps intact. */
    rc = mca_coll_gpu_stage_in(&st, &b, buf, dtype, (size_t)count,
                               is_root || !mca_coll_gpu_dtype_is_dense(dtype, (size_t)count));
    if (OMPI_SUCCESS != rc || OMPI_SUCCESS != (rc = mca_coll_gpu_staging_sync(&st))) {
        goto out;
    }
    rc = m->under.bcast(b.host, count, dtype, root, comm, m->under.bcast_module);
    if (OMPI_SUCCESS == rc && !is_root && OMPI_SUCCESS == (rc = mca_coll_gpu_stage_out(&st, &b))) {
        rc = mca_coll_gpu_staging_sync(&st);
    }
out:
    mca_coll_gpu_staging_end(&st);
    return rc;
}

int mca_coll_gpu_bcast(void *buf, mca_coll_gpu_count_t count, struct ompi_datatype_t *dtype,
                       int root, struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gpu_module_t *m = (mca_coll_gpu_module_t *)module;
    mca_coll_gpu_route_t   route;
    ptrdiff_t              gap;
    size_t                 span  = mca_coll_gpu_span(dtype, (size_t)count, &gap);
    size_t                 dsize = 0;
    cg_call_t              call;
    int                    kinds, rc;

    kinds = mca_coll_gpu_buffer_kind(buf, span);
    ompi_datatype_type_size(dtype, &dsize);
    call = (cg_call_t){
        .coll      = CG_COLL_BCAST,
        .count     = (size_t)count,
        .bytes     = (size_t)count * dsize,
        .dtype     = CG_DT_NONE,
        .op        = CG_OP_NONE,
        .comm_size = ompi_comm_size(comm),
    };
    rc = mca_coll_gpu_route(m, comm, &call, kinds,
                            !mca_coll_gpu_dtype_is_dense(dtype, (size_t)count), &route);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    mca_coll_gpu_log_call(CG_COLL_BCAST, comm, (size_t)count, dtype, NULL, kinds,
                          mca_coll_gpu_route_alg(&route), route.plan.reason);
    switch (route.path) {
    case MCA_COLL_GPU_PATH_FAST:
        return mca_coll_gpu_fast_done(comm, CG_COLL_BCAST,
                                      cg_comm_bcast(m->core, &route.plan, buf, call.bytes, root));
    case MCA_COLL_GPU_PATH_STAGED:
        return mca_coll_gpu_bcast_staged(buf, count, dtype, root, comm, m);
    default:
        return m->under.bcast(buf, count, dtype, root, comm, m->under.bcast_module);
    }
}
