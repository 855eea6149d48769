/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Persistent collectives (MPI 4.0 MPI_<Coll>_init; Open MPI 4.1: MPIX_<Coll>_init from
 * <mpi-ext.h>) on device buffers: staged.
 *
 * Planned once, at init: this rank's device buffers get their places in a staging arena
 * that the request keeps until it is freed, and the layer underneath's persistent
 * collective is set up on those host places. Every start copies the inputs in (the start
 * waits for that local copy) and starts the layer underneath's request; the request
 * completes when that request has and the results are back on the device
 * (coll_gpu_request.c). Host buffers go to the layer underneath untouched and the
 * application gets its request.
 */
#include "ompi_coll_gpu/coll_gpu_staged_calls.h"

#include "ompi/errhandler/errcode-internal.h"

/* One request's start: its copies in, then the request of the layer underneath. */
static int mca_coll_gpu_persistent_start_one(mca_coll_gpu_request_t *req)
{
    int rc;

    if (mca_coll_gpu_staging_gone(&req->st)) { /* the device was reset since its init: its
                                                * arena went, and the layer underneath must
                                                * not start on it */
        mca_coll_gpu_reset_explain();
        return OMPI_ERROR;
    }
    req->st.lost = 0; /* a new round: its copies are tried again */
    mca_coll_gpu_app_wait(req->st.module); /* on the stream its copies take */
    /* buffers of another device or context: their own streams, on the host */
    mca_coll_gpu_stage_wait_foreign(&req->st, req->send.foreign_base);
    mca_coll_gpu_stage_wait_foreign(&req->st, req->recv.foreign_base);
    if ((req->send_copy_in &&
         OMPI_SUCCESS != (rc = mca_coll_gpu_stage_copy_in(&req->st, &req->send))) ||
        (req->recv_copy_in &&
         OMPI_SUCCESS != (rc = mca_coll_gpu_stage_copy_in(&req->st, &req->recv))) ||
        OMPI_SUCCESS != (rc = mca_coll_gpu_staging_sync(&req->st))) {
        return rc;
    }
    /* a request of the layer underneath that has nothing to do (OMPI_REQUEST_NOOP) is
     * complete from the start */
    if (req->under->req_type != OMPI_REQUEST_NOOP &&
        OMPI_SUCCESS != (rc = req->under->req_start(1, &req->under))) {
        return rc;
    }
    mca_coll_gpu_request_submit(req);
    return OMPI_SUCCESS;
}

/* MPI_Start, MPI_Startall: requests of this component only (Open MPI groups them). MPI_Start
 * hands what this returns to the application as it is (an MPI error class); MPI_Startall
 * drops it (Open MPI 4.1 and 5.0), so a request that cannot start completes at once with
 * its error, which its wait reports, and the others start all the same. */
static int mca_coll_gpu_persistent_start(size_t count, ompi_request_t **requests)
{
    int first = OMPI_SUCCESS;

    for (size_t i = 0; i < count; i++) {
        mca_coll_gpu_request_t *req = (mca_coll_gpu_request_t *)requests[i];
        int                     rc;
        if (req->super.super.req_state != OMPI_REQUEST_INACTIVE) {
            /* started again before its wait (erroneous; Open MPI 4.1's MPI_Start does not
             * check): the round in flight goes on untouched */
            first = OMPI_SUCCESS == first ? OMPI_ERR_REQUEST : first;
            continue;
        }
        rc = mca_coll_gpu_persistent_start_one(req);
        if (OMPI_SUCCESS != rc) {
            mca_coll_gpu_request_fail(req, rc);
            first = OMPI_SUCCESS == first ? rc : first;
        }
    }
    return OMPI_SUCCESS == first ? OMPI_SUCCESS : ompi_errcode_get_mpi_code(first);
}

int mca_coll_gpu_staged_init(mca_coll_gpu_module_t *m, const mca_coll_gpu_args_t *a,
                             ompi_request_t **request)
{
    mca_coll_gpu_region_t   send, recv;
    mca_coll_gpu_request_t *req;
    /* places in the arena now, the copies at every start */
    int rc = mca_coll_gpu_request_stage(m, a, true, request, &req, &send, &recv);

    if (OMPI_SUCCESS != rc || req == NULL) {
        return rc;
    }
    req->send_copy_in              = send.copy_in;
    req->recv_copy_in              = recv.copy_in;
    req->recv_copy_out             = recv.copy_out;
    req->super.super.req_start     = mca_coll_gpu_persistent_start;
    *request = &req->super.super;
    return OMPI_SUCCESS;
}

int mca_coll_gpu_allreduce_init(const void *sbuf, void *rbuf, int count,
                                struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_ALLREDUCE, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf,
        .rbuf = rbuf, .count = count, .dtype = dtype, .op = op, .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_bcast_init(void *buf, int count, struct ompi_datatype_t *dtype, int root,
                            struct ompi_communicator_t *comm, struct ompi_info_t *info,
                            ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_BCAST, .mode = MCA_COLL_GPU_PERSISTENT, .rbuf = buf, .count = count,
        .dtype = dtype, .root = root, .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_allgather_init(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                                void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                                struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_ALLGATHER, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf,
        .scount = scount, .sdtype = sdtype, .rbuf = rbuf, .rcount = rcount, .rdtype = rdtype,
        .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_reduce_scatter_init(const void *sbuf, void *rbuf, const int *rcounts,
                                     struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                     struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                     ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_REDUCE_SCATTER, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf,
        .rbuf = rbuf, .rcounts = rcounts, .dtype = dtype, .op = op, .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_reduce_scatter_block_init(const void *sbuf, void *rbuf, int rcount,
                                           struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                           struct ompi_communicator_t *comm,
                                           struct ompi_info_t *info, ompi_request_t **request,
                                           mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_REDUCE_SCATTER_BLOCK, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf,
        .rbuf = rbuf, .rcount = rcount, .dtype = dtype, .op = op, .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_allgatherv_init(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                                 void *rbuf, const int *rcounts, const int *displs,
                                 struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                                 struct ompi_info_t *info, ompi_request_t **request,
                                 mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_ALLGATHERV, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf,
        .scount = scount, .sdtype = sdtype, .rbuf = rbuf, .rcounts = rcounts, .rdispls = displs,
        .rdtype = rdtype, .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_alltoall_init(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                               void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                               struct ompi_communicator_t *comm, struct ompi_info_t *info,
                               ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_ALLTOALL, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf,
        .scount = scount, .sdtype = sdtype, .rbuf = rbuf, .rcount = rcount, .rdtype = rdtype,
        .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_alltoallv_init(const void *sbuf, const int *scounts, const int *sdispls,
                                struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                                const int *rdispls, struct ompi_datatype_t *rdtype,
                                struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_ALLTOALLV, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf,
        .scounts = scounts, .sdispls = sdispls, .sdtype = sdtype, .rbuf = rbuf,
        .rcounts = rcounts, .rdispls = rdispls, .rdtype = rdtype, .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_alltoallw_init(const void *sbuf, const int *scounts, const int *sdispls,
                                struct ompi_datatype_t *const *sdtypes, void *rbuf,
                                const int *rcounts, const int *rdispls,
                                struct ompi_datatype_t *const *rdtypes,
                                struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_ALLTOALLW, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf,
        .scounts = scounts, .sdispls = sdispls, .sdtypes = sdtypes, .rbuf = rbuf,
        .rcounts = rcounts, .rdispls = rdispls, .rdtypes = rdtypes, .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_exscan_init(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                             struct ompi_op_t *op, struct ompi_communicator_t *comm,
                             struct ompi_info_t *info, ompi_request_t **request,
                             mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_EXSCAN, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf, .rbuf = rbuf,
        .count = count, .dtype = dtype, .op = op, .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_gather_init(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                             void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                             struct ompi_communicator_t *comm, struct ompi_info_t *info,
                             ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_GATHER, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf,
        .scount = scount, .sdtype = sdtype, .rbuf = rbuf, .rcount = rcount, .rdtype = rdtype,
        .root = root, .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_gatherv_init(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                              void *rbuf, const int *rcounts, const int *displs,
                              struct ompi_datatype_t *rdtype, int root,
                              struct ompi_communicator_t *comm, struct ompi_info_t *info,
                              ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_GATHERV, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf,
        .scount = scount, .sdtype = sdtype, .rbuf = rbuf, .rcounts = rcounts, .rdispls = displs,
        .rdtype = rdtype, .root = root, .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_reduce_init(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                             struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                             struct ompi_info_t *info, ompi_request_t **request,
                             mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_REDUCE, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf, .rbuf = rbuf,
        .count = count, .dtype = dtype, .op = op, .root = root, .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_scan_init(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                           struct ompi_op_t *op, struct ompi_communicator_t *comm,
                           struct ompi_info_t *info, ompi_request_t **request,
                           mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_SCAN, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf, .rbuf = rbuf,
        .count = count, .dtype = dtype, .op = op, .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_scatter_init(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                              void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                              struct ompi_communicator_t *comm, struct ompi_info_t *info,
                              ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_SCATTER, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf,
        .scount = scount, .sdtype = sdtype, .rbuf = rbuf, .rcount = rcount, .rdtype = rdtype,
        .root = root, .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}

int mca_coll_gpu_scatterv_init(const void *sbuf, const int *scounts, const int *displs,
                               struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                               struct ompi_datatype_t *rdtype, int root,
                               struct ompi_communicator_t *comm, struct ompi_info_t *info,
                               ompi_request_t **request, mca_coll_base_module_t *module)
{
    const mca_coll_gpu_args_t a = {
        .id = MCA_COLL_GPU_ID_SCATTERV, .mode = MCA_COLL_GPU_PERSISTENT, .sbuf = sbuf,
        .scounts = scounts, .sdispls = displs, .sdtype = sdtype, .rbuf = rbuf, .rcount = rcount,
        .rdtype = rdtype, .root = root, .comm = comm, .info = info};

    return mca_coll_gpu_staged_init((mca_coll_gpu_module_t *)module, &a, request);
}
