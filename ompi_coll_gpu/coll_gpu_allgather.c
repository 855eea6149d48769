/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* MPI_Allgather: classify buffers -> plan -> run or fall back. */
#include "ompi_coll_gpu/coll_gpu.h"

static int mca_coll_gpu_allgather_staged(const void *sbuf, size_t scount,
                                         struct ompi_datatype_t *sdtype, void *rbuf,
                                         size_t rcount, struct ompi_datatype_t *rdtype,
                                         struct ompi_communicator_t *comm,
                                         mca_coll_gpu_module_t *m, int skind, int rkind,
                                         const mca_coll_gpu_route_t *route)
{
    mca_coll_gpu_staging_t st;
    mca_coll_gpu_stage_t   s = {0}, r;
    mca_coll_gpu_compact_t splan = {0}, rplan = {0};
    const int              in_place = (sbuf == MPI_IN_PLACE);
    const size_t           rtotal   = rcount * (size_t)ompi_comm_size(comm);
    int                    rc;

    /* a layout mostly of gaps (a type over allocations far apart) staged compactly */
    if (!in_place && (skind & MCA_COLL_GPU_KIND_DEVICE)) {
        mca_coll_gpu_compact_plan(sdtype, scount, &splan);
    }
    if (rkind & MCA_COLL_GPU_KIND_DEVICE) {
        mca_coll_gpu_compact_plan(rdtype, rtotal, &rplan);
    }
    rc = mca_coll_gpu_staging_begin(&st, m,
                                    (in_place ? 0 : mca_coll_gpu_stage_bytes(sdtype, scount,
                                                                             &splan)) +
                                        mca_coll_gpu_stage_bytes(rdtype, rtotal, &rplan),
                                    (in_place ? 0 : mca_coll_gpu_data_bytes(sdtype, scount)) +
                                        mca_coll_gpu_data_bytes(rdtype, rtotal), 1);
    if (OMPI_SUCCESS != rc) {
        goto plans;
    }
    if (!in_place) {
        rc = mca_coll_gpu_stage_in(&st, &s, (void *)sbuf, sdtype, scount, 1, 0, skind,
                                   &route->sattr, &splan);
        if (OMPI_SUCCESS != rc) {
            goto out;
        }
    }
    rc = mca_coll_gpu_stage_in(&st, &r, rbuf, rdtype, rtotal, in_place, 1, rkind, &route->rattr,
                               &rplan);
    if (OMPI_SUCCESS != rc || OMPI_SUCCESS != (rc = mca_coll_gpu_staging_sync(&st))) {
        goto out;
    }
    rc = MCA_COLL_GPU_UNDER(m, allgather, in_place ? MPI_IN_PLACE : s.host,
                            (mca_coll_gpu_count_t)scount, MCA_COLL_GPU_STAGED_TYPE(&s, sdtype),
                            r.host, (mca_coll_gpu_count_t)rcount,
                            MCA_COLL_GPU_STAGED_TYPE(&r, rdtype), comm);
    if (OMPI_SUCCESS == rc && OMPI_SUCCESS == (rc = mca_coll_gpu_stage_out(&st, &r))) {
        rc = mca_coll_gpu_staging_sync(&st);
    }
out:
    rc = mca_coll_gpu_staging_end(&st, rc);
plans:
    mca_coll_gpu_compact_free(&splan);
    mca_coll_gpu_compact_free(&rplan);
    return rc;
}

int mca_coll_gpu_allgather(const void *sbuf, mca_coll_gpu_count_t scount,
                           struct ompi_datatype_t *sdtype, void *rbuf,
                           mca_coll_gpu_count_t rcount, struct ompi_datatype_t *rdtype,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gpu_module_t *m = (mca_coll_gpu_module_t *)module;
    mca_coll_gpu_route_t   route;
    size_t                 span;
    const size_t           rtotal = (size_t)rcount * (size_t)ompi_comm_size(comm);
    const void            *data;
    cg_call_t              call;
    int                    kinds, skind = 0, rkind, rc, nofast;

    if (m->nested > 0) {
        return MCA_COLL_GPU_NESTED(m, allgather, sbuf, scount, sdtype, rbuf, rcount, rdtype, comm);
    }
    data   = mca_coll_gpu_data_start(rbuf, rdtype, rtotal, &span);
    nofast = !mca_coll_gpu_dtype_is_dense(rdtype, rtotal);
    rkind  = mca_coll_gpu_layout_query(data, span, !nofast, NULL, 0, &route.rattr);
    memset(&route.sattr, 0, sizeof(route.sattr));
    kinds  = rkind;
    if (sbuf != MPI_IN_PLACE) {
        const int sdense = mca_coll_gpu_dtype_is_dense(sdtype, (size_t)scount);
        data  = mca_coll_gpu_data_start(sbuf, sdtype, (size_t)scount, &span);
        skind = mca_coll_gpu_layout_query(data, span, sdense, &route.rattr, rkind, &route.sattr);
        kinds |= skind;
        nofast |= !sdense;
    }
    if (OMPI_SUCCESS != (rc = mca_coll_gpu_host_direct(m, kinds, CG_COLL_ALLGATHER))) {
        return MCA_COLL_GPU_ROUTED_UNDER == rc
                   ? MCA_COLL_GPU_UNDER(m, allgather, sbuf, scount, sdtype, rbuf, rcount, rdtype, comm)
                   : rc;
    }
    mca_coll_gpu_call_init(&call, CG_COLL_ALLGATHER, sbuf, rbuf, (size_t)rcount, rdtype, NULL,
                           comm);
    call.sattr = &route.sattr;
    call.rattr = &route.rattr;
    rc = mca_coll_gpu_route(m, comm, &call, kinds,
                            nofast ? MCA_COLL_GPU_LAYOUT_NOFAST | MCA_COLL_GPU_LAYOUT_GAPS : 0,
                            &route);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    mca_coll_gpu_log_call(&call, comm, rdtype, NULL, kinds, &route);
    switch (route.path) {
    case MCA_COLL_GPU_PATH_FAST:
        rc = mca_coll_gpu_fast_run(m, comm, &route, &call);
        if (rc != MCA_COLL_GPU_FAST_MISSED) {
            return rc;
        }
        /* a local rank was not on the LL call: staged, as every rank on it */
        /* fall through */
    case MCA_COLL_GPU_PATH_STAGED:
        return mca_coll_gpu_allgather_staged(sbuf, (size_t)scount, sdtype, rbuf, (size_t)rcount,
                                             rdtype, comm, m, skind, rkind, &route);
    case MCA_COLL_GPU_PATH_LOCAL: /* dense layouts of the same type signature */
        return mca_coll_gpu_local_copy(m, &route, rbuf, sbuf, call.bytes);
    default:
        return MCA_COLL_GPU_UNDER(m, allgather, sbuf, scount, sdtype, rbuf, rcount, rdtype, comm);
    }
}
