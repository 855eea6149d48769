/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Nonblocking collectives (MPI_Iallreduce, MPI_Ibcast, ...) on device buffers: staged.
 *
 * At the call, this rank's device inputs are copied into a staging arena (the call waits
 * for that local copy, nothing else) and the layer underneath's nonblocking collective
 * starts on the host copies; the request of the component that the application gets back
 * completes once that collective has and the results are back on the device
 * (coll_gpu_request.c). The arena lives until then. Host buffers go to the layer
 * underneath untouched and the application gets its request.
 *
 * Why not the fast paths: they synchronise with the node's ranks on the host (the memory
 * kind agreement is a blocking allreduce, the intra-node barriers wait for peers), so a
 * nonblocking call could wait for a peer that has not reached it yet (MPI allows a rank
 * to start a nonblocking collective and then wait in a receive for a rank that starts it
 * later). Until the fast paths run as steps that progress can advance, every nonblocking
 * call is staged; each rank decides alone, so no agreement round is needed.
 */
#include "ompi_coll_gpu/coll_gpu_staged_calls.h"

int mca_coll_gpu_staged_start(mca_coll_gpu_module_t *m, const mca_coll_gpu_args_t *a,
                              ompi_request_t **request)
{
    mca_coll_gpu_region_t   send, recv;
    mca_coll_gpu_request_t *req;
    int                     rc = mca_coll_gpu_request_stage(m, a, false, request, &req, &send, &recv);

    if (OMPI_SUCCESS != rc || req == NULL) {
        return rc;
    }
    req->recv_copy_out = recv.copy_out;
    mca_coll_gpu_request_submit(req);
    *request = &req->super.super;
    return OMPI_SUCCESS;
}

int mca_coll_gpu_iallreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                            struct ompi_op_t *op, struct ompi_communicator_t *comm,
                            ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_ALLREDUCE, .mode = MCA_COLL_GPU_NONBLOCKING, .sbuf = sbuf,
        .rbuf = rbuf, .count = count, .dtype = dtype, .op = op, .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_ibcast(void *buf, int count, struct ompi_datatype_t *dtype, int root,
                        struct ompi_communicator_t *comm, ompi_request_t **request,
                        mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_BCAST, .mode = MCA_COLL_GPU_NONBLOCKING, .rbuf = buf,
        .count = count, .dtype = dtype, .root = root, .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_iallgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                            void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                            struct ompi_communicator_t *comm, ompi_request_t **request,
                            mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_ALLGATHER, .mode = MCA_COLL_GPU_NONBLOCKING, .sbuf = sbuf,
        .scount = scount, .sdtype = sdtype, .rbuf = rbuf, .rcount = rcount, .rdtype = rdtype,
        .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_ireduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                                 struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                 struct ompi_communicator_t *comm, ompi_request_t **request,
                                 mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_REDUCE_SCATTER, .mode = MCA_COLL_GPU_NONBLOCKING, .sbuf = sbuf,
        .rbuf = rbuf, .rcounts = rcounts, .dtype = dtype, .op = op, .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                       struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                       struct ompi_communicator_t *comm, ompi_request_t **request,
                                       mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_REDUCE_SCATTER_BLOCK, .mode = MCA_COLL_GPU_NONBLOCKING,
        .sbuf = sbuf, .rbuf = rbuf, .rcount = rcount, .dtype = dtype, .op = op, .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_iallgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                             void *rbuf, const int *rcounts, const int *displs,
                             struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                             ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_ALLGATHERV, .mode = MCA_COLL_GPU_NONBLOCKING, .sbuf = sbuf,
        .scount = scount, .sdtype = sdtype, .rbuf = rbuf, .rcounts = rcounts, .rdispls = displs,
        .rdtype = rdtype, .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_ialltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf,
                           int rcount, struct ompi_datatype_t *rdtype,
                           struct ompi_communicator_t *comm, ompi_request_t **request,
                           mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_ALLTOALL, .mode = MCA_COLL_GPU_NONBLOCKING, .sbuf = sbuf,
        .scount = scount, .sdtype = sdtype, .rbuf = rbuf, .rcount = rcount, .rdtype = rdtype,
        .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_ialltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                            struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                            const int *rdispls, struct ompi_datatype_t *rdtype,
                            struct ompi_communicator_t *comm, ompi_request_t **request,
                            mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_ALLTOALLV, .mode = MCA_COLL_GPU_NONBLOCKING, .sbuf = sbuf,
        .scounts = scounts, .sdispls = sdispls, .sdtype = sdtype, .rbuf = rbuf,
        .rcounts = rcounts, .rdispls = rdispls, .rdtype = rdtype, .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_ialltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                            struct ompi_datatype_t *const *sdtypes, void *rbuf, const int *rcounts,
                            const int *rdispls, struct ompi_datatype_t *const *rdtypes,
                            struct ompi_communicator_t *comm, ompi_request_t **request,
                            mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_ALLTOALLW, .mode = MCA_COLL_GPU_NONBLOCKING, .sbuf = sbuf,
        .scounts = scounts, .sdispls = sdispls, .sdtypes = sdtypes, .rbuf = rbuf,
        .rcounts = rcounts, .rdispls = rdispls, .rdtypes = rdtypes, .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_iexscan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                         struct ompi_op_t *op, struct ompi_communicator_t *comm,
                         ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_EXSCAN, .mode = MCA_COLL_GPU_NONBLOCKING, .sbuf = sbuf,
        .rbuf = rbuf, .count = count, .dtype = dtype, .op = op, .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_igather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf,
                         int rcount, struct ompi_datatype_t *rdtype, int root,
                         struct ompi_communicator_t *comm, ompi_request_t **request,
                         mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_GATHER, .mode = MCA_COLL_GPU_NONBLOCKING, .sbuf = sbuf,
        .scount = scount, .sdtype = sdtype, .rbuf = rbuf, .rcount = rcount, .rdtype = rdtype,
        .root = root, .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_igatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf,
                          const int *rcounts, const int *displs, struct ompi_datatype_t *rdtype,
                          int root, struct ompi_communicator_t *comm, ompi_request_t **request,
                          mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_GATHERV, .mode = MCA_COLL_GPU_NONBLOCKING, .sbuf = sbuf,
        .scount = scount, .sdtype = sdtype, .rbuf = rbuf, .rcounts = rcounts, .rdispls = displs,
        .rdtype = rdtype, .root = root, .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_ireduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                         struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                         ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_REDUCE, .mode = MCA_COLL_GPU_NONBLOCKING, .sbuf = sbuf,
        .rbuf = rbuf, .count = count, .dtype = dtype, .op = op, .root = root, .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_iscan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                       struct ompi_op_t *op, struct ompi_communicator_t *comm,
                       ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_SCAN, .mode = MCA_COLL_GPU_NONBLOCKING, .sbuf = sbuf, .rbuf = rbuf,
        .count = count, .dtype = dtype, .op = op, .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_iscatter(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf,
                          int rcount, struct ompi_datatype_t *rdtype, int root,
                          struct ompi_communicator_t *comm, ompi_request_t **request,
                          mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_SCATTER, .mode = MCA_COLL_GPU_NONBLOCKING, .sbuf = sbuf,
        .scount = scount, .sdtype = sdtype, .rbuf = rbuf, .rcount = rcount, .rdtype = rdtype,
        .root = root, .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_iscatterv(const void *sbuf, const int *scounts, const int *displs,
                           struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                           struct ompi_datatype_t *rdtype, int root,
                           struct ompi_communicator_t *comm, ompi_request_t **request,
                           mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_SCATTERV, .mode = MCA_COLL_GPU_NONBLOCKING, .sbuf = sbuf,
        .scounts = scounts, .sdispls = displs, .sdtype = sdtype, .rbuf = rbuf, .rcount = rcount,
        .rdtype = rdtype, .root = root, .comm = comm};

    return mca_coll_gpu_staged_start((mca_coll_gpu_module_t *)module, &a, request);
}
