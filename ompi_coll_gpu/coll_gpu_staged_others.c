/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The blocking collectives without a fast path: MPI_Reduce, MPI_Scan, MPI_Exscan,
 * MPI_Gather(v), MPI_Scatter(v), MPI_Allgatherv, MPI_Alltoall(v,w). Host buffers go to
 * the layer underneath untouched; device buffers are staged (coll_gpu_staged_calls.h).
 */
#include "ompi_coll_gpu/coll_gpu_staged_calls.h"

int mca_coll_gpu_staged_run(mca_coll_gpu_module_t *m, const mca_coll_gpu_args_t *a)
{
    mca_coll_gpu_region_t  send, recv;
    mca_coll_gpu_args_t    staged;
    mca_coll_gpu_staging_t st;
    mca_coll_gpu_stage_t   s, r;
    int                    kinds, rc;

    kinds = mca_coll_gpu_describe(a, &send, &recv);
    mca_coll_gpu_log_args(a, kinds);
    cg_count((kinds & MCA_COLL_GPU_KIND_DEVICE) ? CG_CNT_CALLS_STAGED : CG_CNT_CALLS_UNDER, 1);
    if (!(kinds & MCA_COLL_GPU_KIND_DEVICE)) {
        return mca_coll_gpu_under_call(m, a, a->sbuf, a->rbuf, NULL);
    }
    rc = mca_coll_gpu_stage_regions(&st, m, &send, &recv, &s, &r, 1, 1);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    rc = mca_coll_gpu_under_call(m, mca_coll_gpu_args_staged(a, &s, &r, &staged), s.host, r.host,
                                 NULL);
    if (OMPI_SUCCESS == rc && recv.copy_out &&
        OMPI_SUCCESS == (rc = mca_coll_gpu_stage_out(&st, &r))) {
        rc = mca_coll_gpu_staging_sync(&st);
    }
    return mca_coll_gpu_staging_end(&st, rc);
}

int mca_coll_gpu_reduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                        struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                        mca_coll_base_module_t *module)
{
    if (((mca_coll_gpu_module_t *)module)->nested > 0) { /* from the layer underneath */
        return MCA_COLL_GPU_NESTED((mca_coll_gpu_module_t *)module, reduce, sbuf, rbuf, count,
                                   dtype, op, root, comm);
    }
    const mca_coll_gpu_args_t a = {.id = MCA_COLL_GPU_ID_REDUCE, .sbuf = sbuf, .rbuf = rbuf,
                                   .count = count, .dtype = dtype, .op = op, .root = root,
                                   .comm = comm};

    return mca_coll_gpu_staged_run((mca_coll_gpu_module_t *)module, &a);
}

int mca_coll_gpu_scan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                      struct ompi_op_t *op, struct ompi_communicator_t *comm,
                      mca_coll_base_module_t *module)
{
    if (((mca_coll_gpu_module_t *)module)->nested > 0) { /* from the layer underneath */
        return MCA_COLL_GPU_NESTED((mca_coll_gpu_module_t *)module, scan, sbuf, rbuf, count, dtype,
                                   op, comm);
    }
    const mca_coll_gpu_args_t a = {.id = MCA_COLL_GPU_ID_SCAN, .sbuf = sbuf, .rbuf = rbuf,
                                   .count = count, .dtype = dtype, .op = op, .comm = comm};

    return mca_coll_gpu_staged_run((mca_coll_gpu_module_t *)module, &a);
}

int mca_coll_gpu_exscan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                        struct ompi_op_t *op, struct ompi_communicator_t *comm,
                        mca_coll_base_module_t *module)
{
    if (((mca_coll_gpu_module_t *)module)->nested > 0) { /* from the layer underneath */
        return MCA_COLL_GPU_NESTED((mca_coll_gpu_module_t *)module, exscan, sbuf, rbuf, count,
                                   dtype, op, comm);
    }
    const mca_coll_gpu_args_t a = {.id = MCA_COLL_GPU_ID_EXSCAN, .sbuf = sbuf, .rbuf = rbuf,
                                   .count = count, .dtype = dtype, .op = op, .comm = comm};

    return mca_coll_gpu_staged_run((mca_coll_gpu_module_t *)module, &a);
}

int mca_coll_gpu_gather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                        void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                        struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (((mca_coll_gpu_module_t *)module)->nested > 0) { /* from the layer underneath */
        return MCA_COLL_GPU_NESTED((mca_coll_gpu_module_t *)module, gather, sbuf, scount, sdtype,
                                   rbuf, rcount, rdtype, root, comm);
    }
    const mca_coll_gpu_args_t a = {.id = MCA_COLL_GPU_ID_GATHER, .sbuf = sbuf,
                                   .scount = scount, .sdtype = sdtype, .rbuf = rbuf,
                                   .rcount = rcount, .rdtype = rdtype, .root = root,
                                   .comm = comm};

    return mca_coll_gpu_staged_run((mca_coll_gpu_module_t *)module, &a);
}

int mca_coll_gpu_gatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                         void *rbuf, const int *rcounts, const int *displs,
                         struct ompi_datatype_t *rdtype, int root,
                         struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (((mca_coll_gpu_module_t *)module)->nested > 0) { /* from the layer underneath */
        return MCA_COLL_GPU_NESTED((mca_coll_gpu_module_t *)module, gatherv, sbuf, scount, sdtype,
                                   rbuf, rcounts, displs, rdtype, root, comm);
    }
    const mca_coll_gpu_args_t a = {.id = MCA_COLL_GPU_ID_GATHERV, .sbuf = sbuf,
                                   .scount = scount, .sdtype = sdtype, .rbuf = rbuf,
                                   .rcounts = rcounts, .rdispls = displs, .rdtype = rdtype,
                                   .root = root, .comm = comm};

    return mca_coll_gpu_staged_run((mca_coll_gpu_module_t *)module, &a);
}

int mca_coll_gpu_scatter(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                         void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                         struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (((mca_coll_gpu_module_t *)module)->nested > 0) { /* from the layer underneath */
        return MCA_COLL_GPU_NESTED((mca_coll_gpu_module_t *)module, scatter, sbuf, scount, sdtype,
                                   rbuf, rcount, rdtype, root, comm);
    }
    const mca_coll_gpu_args_t a = {.id = MCA_COLL_GPU_ID_SCATTER, .sbuf = sbuf,
                                   .scount = scount, .sdtype = sdtype, .rbuf = rbuf,
                                   .rcount = rcount, .rdtype = rdtype, .root = root,
                                   .comm = comm};

    return mca_coll_gpu_staged_run((mca_coll_gpu_module_t *)module, &a);
}

int mca_coll_gpu_scatterv(const void *sbuf, const int *scounts, const int *displs,
                          struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                          struct ompi_datatype_t *rdtype, int root,
                          struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (((mca_coll_gpu_module_t *)module)->nested > 0) { /* from the layer underneath */
        return MCA_COLL_GPU_NESTED((mca_coll_gpu_module_t *)module, scatterv, sbuf, scounts,
                                   displs, sdtype, rbuf, rcount, rdtype, root, comm);
    }
    const mca_coll_gpu_args_t a = {.id = MCA_COLL_GPU_ID_SCATTERV, .sbuf = sbuf,
                                   .scounts = scounts, .sdispls = displs, .sdtype = sdtype,
                                   .rbuf = rbuf, .rcount = rcount, .rdtype = rdtype,
                                   .root = root, .comm = comm};

    return mca_coll_gpu_staged_run((mca_coll_gpu_module_t *)module, &a);
}

int mca_coll_gpu_allgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                            void *rbuf, const int *rcounts, const int *displs,
                            struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module)
{
    if (((mca_coll_gpu_module_t *)module)->nested > 0) { /* from the layer underneath */
        return MCA_COLL_GPU_NESTED((mca_coll_gpu_module_t *)module, allgatherv, sbuf, scount,
                                   sdtype, rbuf, rcounts, displs, rdtype, comm);
    }
    const mca_coll_gpu_args_t a = {.id = MCA_COLL_GPU_ID_ALLGATHERV, .sbuf = sbuf,
                                   .scount = scount, .sdtype = sdtype, .rbuf = rbuf,
                                   .rcounts = rcounts, .rdispls = displs, .rdtype = rdtype,
                                   .comm = comm};

    return mca_coll_gpu_staged_run((mca_coll_gpu_module_t *)module, &a);
}

int mca_coll_gpu_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                          void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                          struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (((mca_coll_gpu_module_t *)module)->nested > 0) { /* from the layer underneath */
        return MCA_COLL_GPU_NESTED((mca_coll_gpu_module_t *)module, alltoall, sbuf, scount, sdtype,
                                   rbuf, rcount, rdtype, comm);
    }
    const mca_coll_gpu_args_t a = {.id = MCA_COLL_GPU_ID_ALLTOALL, .sbuf = sbuf,
                                   .scount = scount, .sdtype = sdtype, .rbuf = rbuf,
                                   .rcount = rcount, .rdtype = rdtype, .comm = comm};

    return mca_coll_gpu_staged_run((mca_coll_gpu_module_t *)module, &a);
}

int mca_coll_gpu_alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                           struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                           const int *rdispls, struct ompi_datatype_t *rdtype,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (((mca_coll_gpu_module_t *)module)->nested > 0) { /* from the layer underneath */
        return MCA_COLL_GPU_NESTED((mca_coll_gpu_module_t *)module, alltoallv, sbuf, scounts,
                                   sdispls, sdtype, rbuf, rcounts, rdispls, rdtype, comm);
    }
    const mca_coll_gpu_args_t a = {.id = MCA_COLL_GPU_ID_ALLTOALLV, .sbuf = sbuf,
                                   .scounts = scounts, .sdispls = sdispls, .sdtype = sdtype,
                                   .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls,
                                   .rdtype = rdtype, .comm = comm};

    return mca_coll_gpu_staged_run((mca_coll_gpu_module_t *)module, &a);
}

int mca_coll_gpu_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                           struct ompi_datatype_t *const *sdtypes, void *rbuf,
                           const int *rcounts, const int *rdispls,
                           struct ompi_datatype_t *const *rdtypes,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (((mca_coll_gpu_module_t *)module)->nested > 0) { /* from the layer underneath */
        return MCA_COLL_GPU_NESTED((mca_coll_gpu_module_t *)module, alltoallw, sbuf, scounts,
                                   sdispls, sdtypes, rbuf, rcounts, rdispls, rdtypes, comm);
    }
    const mca_coll_gpu_args_t a = {.id = MCA_COLL_GPU_ID_ALLTOALLW, .sbuf = sbuf,
                                   .scounts = scounts, .sdispls = sdispls, .sdtypes = sdtypes,
                                   .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls,
                                   .rdtypes = rdtypes, .comm = comm};

    return mca_coll_gpu_staged_run((mca_coll_gpu_module_t *)module, &a);
}
