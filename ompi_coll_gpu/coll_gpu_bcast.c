/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* MPI_Bcast: classify buffers -> plan -> run or fall back. */
#include "ompi_coll_gpu/coll_gpu.h"

static int mca_coll_gpu_bcast_staged(void *buf, size_t count, struct ompi_datatype_t *dtype,
                                     int root, struct ompi_communicator_t *comm,
                                     mca_coll_gpu_module_t *m, int kind,
                                     const cg_mem_attr_t *attr)
{
    mca_coll_gpu_staging_t st;
    mca_coll_gpu_stage_t   b;
    mca_coll_gpu_compact_t plan = {0};
    const int              is_root = (ompi_comm_rank(comm) == root);
    int                    rc;

    if (kind & MCA_COLL_GPU_KIND_DEVICE) { /* a layout mostly of gaps: staged compactly */
        mca_coll_gpu_compact_plan(dtype, count, &plan);
    }
    rc = mca_coll_gpu_staging_begin(&st, m, mca_coll_gpu_stage_bytes(dtype, count, &plan),
                                    mca_coll_gpu_data_bytes(dtype, count), 1);
    if (OMPI_SUCCESS != rc) {
        goto plan;
    }
    /* The root sends its data; the others' is written (a layout with gaps piece by piece). */
    rc = mca_coll_gpu_stage_in(&st, &b, buf, dtype, count, is_root, !is_root, kind, attr, &plan);
    if (OMPI_SUCCESS != rc || OMPI_SUCCESS != (rc = mca_coll_gpu_staging_sync(&st))) {
        goto out;
    }
    rc = MCA_COLL_GPU_UNDER(m, bcast, b.host, (mca_coll_gpu_count_t)count,
                            MCA_COLL_GPU_STAGED_TYPE(&b, dtype), root, comm);
    if (OMPI_SUCCESS == rc && !is_root && OMPI_SUCCESS == (rc = mca_coll_gpu_stage_out(&st, &b))) {
        rc = mca_coll_gpu_staging_sync(&st);
    }
out:
    rc = mca_coll_gpu_staging_end(&st, rc);
plan:
    mca_coll_gpu_compact_free(&plan);
    return rc;
}

int mca_coll_gpu_bcast(void *buf, mca_coll_gpu_count_t count, struct ompi_datatype_t *dtype,
                       int root, struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gpu_module_t *m = (mca_coll_gpu_module_t *)module;
    mca_coll_gpu_route_t   route;
    size_t                 span;
    const void            *data = mca_coll_gpu_data_start(buf, dtype, (size_t)count, &span);
    cg_call_t              call;
    int                    kinds, rc;

    if (m->nested > 0) {
        return MCA_COLL_GPU_NESTED(m, bcast, buf, count, dtype, root, comm);
    }
    const int dense = mca_coll_gpu_dtype_is_dense(dtype, (size_t)count);
    kinds = mca_coll_gpu_layout_query(data, span, dense, NULL, 0, &route.rattr);
    if (OMPI_SUCCESS != (rc = mca_coll_gpu_host_direct(m, kinds, CG_COLL_BCAST))) {
        return MCA_COLL_GPU_ROUTED_UNDER == rc
                   ? MCA_COLL_GPU_UNDER(m, bcast, buf, count, dtype, root, comm)
                   : rc;
    }
    mca_coll_gpu_call_init(&call, CG_COLL_BCAST, NULL, buf, (size_t)count, dtype, NULL, comm);
    call.root  = root;
    call.rattr = &route.rattr;
    rc = mca_coll_gpu_route(m, comm, &call, kinds,
                            dense ? 0 : MCA_COLL_GPU_LAYOUT_NOFAST | MCA_COLL_GPU_LAYOUT_GAPS,
                            &route);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    mca_coll_gpu_log_call(&call, comm, dtype, NULL, kinds, &route);
    switch (route.path) {
    case MCA_COLL_GPU_PATH_FAST:
        rc = mca_coll_gpu_fast_run(m, comm, &route, &call);
        if (rc != MCA_COLL_GPU_FAST_MISSED) {
            return rc;
        }
        /* a local rank was not on the LL call: staged, as every rank on it */
        /* fall through */
    case MCA_COLL_GPU_PATH_STAGED:
        return mca_coll_gpu_bcast_staged(buf, (size_t)count, dtype, root, comm, m, kinds,
                                         &route.rattr);
    case MCA_COLL_GPU_PATH_LOCAL:
        return OMPI_SUCCESS; /* the root is the only rank */
    default:
        return MCA_COLL_GPU_UNDER(m, bcast, buf, count, dtype, root, comm);
    }
}
