/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * One call of any collective, as its arguments: which bytes of its buffers this rank's
 * part touches (and hence what staging copies in and out), the layer underneath's
 * function for it in each mode, and its verbose line.
 */
#include "ompi_coll_gpu/coll_gpu_staged_calls.h"

#include <stdint.h>
#include <string.h>

static const char *const mca_coll_gpu_id_names[] = {
    [MCA_COLL_GPU_ID_ALLREDUCE]            = "allreduce",
    [MCA_COLL_GPU_ID_BCAST]                = "bcast",
    [MCA_COLL_GPU_ID_ALLGATHER]            = "allgather",
    [MCA_COLL_GPU_ID_REDUCE_SCATTER]       = "reduce_scatter",
    [MCA_COLL_GPU_ID_REDUCE_SCATTER_BLOCK] = "reduce_scatter_block",
    [MCA_COLL_GPU_ID_ALLGATHERV]           = "allgatherv",
    [MCA_COLL_GPU_ID_ALLTOALL]             = "alltoall",
    [MCA_COLL_GPU_ID_ALLTOALLV]            = "alltoallv",
    [MCA_COLL_GPU_ID_ALLTOALLW]            = "alltoallw",
    [MCA_COLL_GPU_ID_EXSCAN]               = "exscan",
    [MCA_COLL_GPU_ID_GATHER]               = "gather",
    [MCA_COLL_GPU_ID_GATHERV]              = "gatherv",
    [MCA_COLL_GPU_ID_REDUCE]               = "reduce",
    [MCA_COLL_GPU_ID_SCAN]                 = "scan",
    [MCA_COLL_GPU_ID_SCATTER]              = "scatter",
    [MCA_COLL_GPU_ID_SCATTERV]             = "scatterv",
};

/* ---- the bytes a call touches ------------------------------------------------------ */

/* count elements of dtype from user: the memory span (see mca_coll_gpu_span). */
static void mca_coll_gpu_region_elements(mca_coll_gpu_region_t *r, void *user,
                                         struct ompi_datatype_t *dtype, size_t count,
                                         size_t *data_bytes)
{
    size_t size = 0;

    ompi_datatype_type_size(dtype, &size);
    r->user     = user;
    r->span     = mca_coll_gpu_span(dtype, count, &r->gap);
    r->dtype    = dtype;
    r->count    = count;
    *data_bytes = size * count;
}

/* Blocks of counts[i] elements at displs[i] (in extents of dtype, or in bytes when every
 * block has its own type, as in alltoallw): one span from the first byte of any block to
 * the last. Empty blocks do not count. */
static void mca_coll_gpu_region_blocks(mca_coll_gpu_region_t *r, void *user,
                                       struct ompi_datatype_t *dtype,
                                       struct ompi_datatype_t *const *dtypes, const int *counts,
                                       const int *displs, int n, size_t *data_bytes)
{
    ptrdiff_t lo = PTRDIFF_MAX, hi = PTRDIFF_MIN;

    *data_bytes = 0;
    for (int i = 0; i < n; i++) {
        struct ompi_datatype_t *type = dtypes != NULL ? dtypes[i] : dtype;
        ptrdiff_t               gap, lb, extent, start;
        size_t                  span, size = 0;

        if (counts[i] <= 0 || (span = mca_coll_gpu_span(type, (size_t)counts[i], &gap)) == 0) {
            continue;
        }
        if (dtypes != NULL) {
            start = (ptrdiff_t)displs[i] + gap;
        } else {
            ompi_datatype_get_extent(type, &lb, &extent);
            start = (ptrdiff_t)displs[i] * extent + gap;
        }
        lo = start < lo ? start : lo;
        hi = start + (ptrdiff_t)span > hi ? start + (ptrdiff_t)span : hi;
        ompi_datatype_type_size(type, &size);
        *data_bytes += size * (size_t)counts[i];
    }
    r->user    = user;
    r->gap     = lo <= hi ? lo : 0;
    r->span    = lo <= hi ? (size_t)(hi - lo) : 0;
    r->dtype   = dtype;
    r->dtypes  = dtypes;
    r->counts  = counts;
    r->displs  = displs;
    r->nblocks = n;
}

/* The region is read (reads), written (writes). */
static int mca_coll_gpu_region_finish(mca_coll_gpu_region_t *r, size_t data_bytes, int reads,
                                      int writes)
{
    r->copy_in    = reads;
    r->copy_out   = writes;
    r->data_bytes = data_bytes;
    r->kind       = (r->span == 0 || r->user == MPI_IN_PLACE)
                        ? 0 : mca_coll_gpu_layout_query((char *)r->user + r->gap, r->span,
                                                        data_bytes == r->span, NULL, 0, &r->attr);
    return r->kind;
}

int mca_coll_gpu_describe(const mca_coll_gpu_args_t *a, mca_coll_gpu_region_t *send,
                          mca_coll_gpu_region_t *recv)
{
    const int    rank = ompi_comm_rank(a->comm), size = ompi_comm_size(a->comm);
    const int    in_place = (a->sbuf == MPI_IN_PLACE), is_root = (rank == a->root);
    void        *sbuf = (void *)a->sbuf;
    size_t       sbytes = 0, rbytes = 0, total = 0;
    int          sreads = 1, rreads = in_place, rwrites = 1;

    memset(send, 0, sizeof(*send));
    memset(recv, 0, sizeof(*recv));
    send->user = sbuf;
    recv->user = a->rbuf;
    switch (a->id) {
    case MCA_COLL_GPU_ID_ALLREDUCE:
    case MCA_COLL_GPU_ID_SCAN:
    case MCA_COLL_GPU_ID_EXSCAN:
        if (!in_place) {
            mca_coll_gpu_region_elements(send, sbuf, a->dtype, (size_t)a->count, &sbytes);
        }
        mca_coll_gpu_region_elements(recv, a->rbuf, a->dtype, (size_t)a->count, &rbytes);
        /* rank 0's exscan output is undefined: leave the application's bytes alone */
        rwrites = !(a->id == MCA_COLL_GPU_ID_EXSCAN && rank == 0);
        break;
    case MCA_COLL_GPU_ID_BCAST:
        mca_coll_gpu_region_elements(recv, a->rbuf, a->dtype, (size_t)a->count, &rbytes);
        rreads  = is_root;
        rwrites = !is_root;
        break;
    case MCA_COLL_GPU_ID_REDUCE:
        if (!in_place) {
            mca_coll_gpu_region_elements(send, sbuf, a->dtype, (size_t)a->count, &sbytes);
        }
        if (is_root) {
            mca_coll_gpu_region_elements(recv, a->rbuf, a->dtype, (size_t)a->count, &rbytes);
        }
        break;
    case MCA_COLL_GPU_ID_REDUCE_SCATTER:
    case MCA_COLL_GPU_ID_REDUCE_SCATTER_BLOCK:
        for (int i = 0; i < size; i++) {
            total += a->rcounts != NULL ? (size_t)a->rcounts[i] : (size_t)a->rcount;
        }
        if (!in_place) {
            mca_coll_gpu_region_elements(send, sbuf, a->dtype, total, &sbytes);
        }
        mca_coll_gpu_region_elements(recv, a->rbuf, a->dtype,
                                     in_place ? total
                                     : a->rcounts != NULL ? (size_t)a->rcounts[rank]
                                                          : (size_t)a->rcount, &rbytes);
        break;
    case MCA_COLL_GPU_ID_ALLGATHER:
    case MCA_COLL_GPU_ID_ALLTOALL:
        if (!in_place) {
            mca_coll_gpu_region_elements(send, sbuf, a->sdtype,
                                         (size_t)a->scount * (a->id == MCA_COLL_GPU_ID_ALLTOALL
                                                              ? (size_t)size : 1), &sbytes);
        }
        mca_coll_gpu_region_elements(recv, a->rbuf, a->rdtype, (size_t)a->rcount * (size_t)size,
                                     &rbytes);
        break;
    case MCA_COLL_GPU_ID_ALLGATHERV:
        if (!in_place) {
            mca_coll_gpu_region_elements(send, sbuf, a->sdtype, (size_t)a->scount, &sbytes);
        }
        mca_coll_gpu_region_blocks(recv, a->rbuf, a->rdtype, NULL, a->rcounts, a->rdispls, size,
                                   &rbytes);
        break;
    case MCA_COLL_GPU_ID_ALLTOALLV:
    case MCA_COLL_GPU_ID_ALLTOALLW:
        if (!in_place) {
            mca_coll_gpu_region_blocks(send, sbuf, a->sdtype, a->sdtypes, a->scounts, a->sdispls,
                                       size, &sbytes);
        }
        mca_coll_gpu_region_blocks(recv, a->rbuf, a->rdtype, a->rdtypes, a->rcounts, a->rdispls,
                                   size, &rbytes);
        break;
    case MCA_COLL_GPU_ID_GATHER:
    case MCA_COLL_GPU_ID_GATHERV:
        if (!in_place) {
            mca_coll_gpu_region_elements(send, sbuf, a->sdtype, (size_t)a->scount, &sbytes);
        }
        if (is_root && a->id == MCA_COLL_GPU_ID_GATHER) {
            mca_coll_gpu_region_elements(recv, a->rbuf, a->rdtype,
                                         (size_t)a->rcount * (size_t)size, &rbytes);
        } else if (is_root) {
            mca_coll_gpu_region_blocks(recv, a->rbuf, a->rdtype, NULL, a->rcounts, a->rdispls,
                                       size, &rbytes);
        }
        break;
    case MCA_COLL_GPU_ID_SCATTER:
    case MCA_COLL_GPU_ID_SCATTERV:
        if (is_root && a->id == MCA_COLL_GPU_ID_SCATTER) {
            mca_coll_gpu_region_elements(send, sbuf, a->sdtype, (size_t)a->scount * (size_t)size,
                                         &sbytes);
        } else if (is_root) {
            mca_coll_gpu_region_blocks(send, sbuf, a->sdtype, NULL, a->scounts, a->sdispls, size,
                                       &sbytes);
        }
        if (a->rbuf != MPI_IN_PLACE) {
            mca_coll_gpu_region_elements(recv, a->rbuf, a->rdtype, (size_t)a->rcount, &rbytes);
        }
        rreads = 0;
        break;
    }
    /* reductions are staged as they lie: the op sees the layout (a user function may know
     * it), and one type is passed for both buffers */
    send->moved = recv->moved = (a->op == NULL);
    return mca_coll_gpu_region_finish(send, sbytes, sreads, 0) |
           mca_coll_gpu_region_finish(recv, rbytes, rreads, rwrites);
}

/* ---- staging both buffers ---------------------------------------------------------- */

/* The pieces of a region's layout, relative to its buffer pointer (mca_coll_gpu_stage_pieces'
 * list). */
static int mca_coll_gpu_region_runs(const void *arg, mca_coll_gpu_runs_t *runs)
{
    const mca_coll_gpu_region_t *reg = arg;
    int                          rc  = OMPI_SUCCESS;

    if (reg->nblocks == 0) {
        return mca_coll_gpu_runs_add(runs, reg->dtype, reg->count, 0);
    }
    for (int i = 0; i < reg->nblocks && OMPI_SUCCESS == rc; i++) {
        struct ompi_datatype_t *type = reg->dtypes != NULL ? reg->dtypes[i] : reg->dtype;
        ptrdiff_t               lb, extent;
        if (reg->counts[i] <= 0) {
            continue;
        }
        ompi_datatype_get_extent(type, &lb, &extent);
        rc = mca_coll_gpu_runs_add(runs, type, (size_t)reg->counts[i],
                                   reg->dtypes != NULL ? (ptrdiff_t)reg->displs[i]
                                                       : (ptrdiff_t)reg->displs[i] * extent);
    }
    return rc;
}

static int mca_coll_gpu_stage_region(mca_coll_gpu_staging_t *st, mca_coll_gpu_region_t *reg,
                                     mca_coll_gpu_stage_t *b, int copy)
{
    mca_coll_gpu_runs_t runs = {0};
    int                 rc;

    if (!(reg->kind & MCA_COLL_GPU_KIND_DEVICE)) {
        memset(b, 0, sizeof(*b));
        b->user = reg->user;
        b->host = reg->user; /* host memory, MPI_IN_PLACE, or nothing: passed on as it is */
        return OMPI_SUCCESS;
    }
    if (copy) { /* not a persistent init: its starts wait */
        mca_coll_gpu_stage_wait_foreign(st, MCA_COLL_GPU_FOREIGN_BASE(&reg->attr));
    }
    if (reg->plan.type != NULL) {
        rc = mca_coll_gpu_stage_compact(st, b, reg->user, reg->dtype, reg->count, &reg->plan,
                                        copy && reg->copy_in);
    } else {
        if (mca_coll_gpu_stage_pieces(&runs, &reg->attr, (char *)reg->user + reg->gap,
                                      reg->span, reg->copy_out && reg->data_bytes != reg->span,
                                      mca_coll_gpu_region_runs, reg)) {
            reg->copy_in |= reg->copy_out; /* one span: its gaps read first, to survive */
        }
        rc = mca_coll_gpu_stage_device(st, b, reg->user, reg->gap, reg->span, &runs,
                                       copy && reg->copy_in);
        mca_coll_gpu_runs_free(&runs);
    }
    b->foreign_base = MCA_COLL_GPU_FOREIGN_BASE(&reg->attr);
    return rc;
}

/* A device region of count elements whose layout is mostly gaps, of a call that only moves
 * its data, is staged compactly. */
static void mca_coll_gpu_region_plan(mca_coll_gpu_region_t *reg)
{
    if (reg->span > 0 && reg->moved && reg->nblocks == 0 &&
        (reg->kind & MCA_COLL_GPU_KIND_DEVICE)) {
        mca_coll_gpu_compact_plan(reg->dtype, reg->count, &reg->plan);
    }
}

static size_t mca_coll_gpu_region_bytes(const mca_coll_gpu_region_t *reg)
{
    return MCA_COLL_GPU_STAGE_BYTES(reg->plan.type != NULL
                                        ? mca_coll_gpu_compact_span(&reg->plan, reg->count)
                                        : reg->span);
}

int mca_coll_gpu_stage_regions(mca_coll_gpu_staging_t *st, mca_coll_gpu_module_t *m,
                               mca_coll_gpu_region_t *send, mca_coll_gpu_region_t *recv,
                               mca_coll_gpu_stage_t *s, mca_coll_gpu_stage_t *r, int copy,
                               int blocking)
{
    size_t total = 0, data = 0;
    int    rc;

    mca_coll_gpu_region_plan(send);
    mca_coll_gpu_region_plan(recv);
    if (send->kind & MCA_COLL_GPU_KIND_DEVICE) {
        total += mca_coll_gpu_region_bytes(send);
        data += send->data_bytes;
    }
    if (recv->kind & MCA_COLL_GPU_KIND_DEVICE) {
        total += mca_coll_gpu_region_bytes(recv);
        data += recv->data_bytes;
    }
    rc = mca_coll_gpu_staging_begin(st, m, total, data, blocking);
    if (OMPI_SUCCESS == rc &&
        (OMPI_SUCCESS != (rc = mca_coll_gpu_stage_region(st, send, s, copy)) ||
         OMPI_SUCCESS != (rc = mca_coll_gpu_stage_region(st, recv, r, copy)) ||
         (copy && OMPI_SUCCESS != (rc = mca_coll_gpu_staging_sync(st))))) {
        rc = mca_coll_gpu_staging_end(st, rc);
    }
    mca_coll_gpu_compact_free(&send->plan); /* the staged buffers hold their types */
    mca_coll_gpu_compact_free(&recv->plan);
    return rc;
}

const mca_coll_gpu_args_t *mca_coll_gpu_args_staged(const mca_coll_gpu_args_t *a,
                                                    const mca_coll_gpu_stage_t *s,
                                                    const mca_coll_gpu_stage_t *r,
                                                    mca_coll_gpu_args_t *copy)
{
    if (s->type == NULL && r->type == NULL) {
        return a;
    }
    *copy = *a;
    if (a->id == MCA_COLL_GPU_ID_BCAST) {
        copy->dtype = r->type; /* its one buffer */
    } else {
        copy->sdtype = MCA_COLL_GPU_STAGED_TYPE(s, a->sdtype);
        copy->rdtype = MCA_COLL_GPU_STAGED_TYPE(r, a->rdtype);
    }
    return copy;
}

/* ---- the layer underneath ---------------------------------------------------------- */

static int mca_coll_gpu_under_blocking(const mca_coll_gpu_underlying_t *u,
                                       const mca_coll_gpu_args_t *a, const void *s, void *r)
{
    struct ompi_communicator_t *c = a->comm;

    switch (a->id) {
    case MCA_COLL_GPU_ID_ALLREDUCE:
        return u->allreduce(s, r, a->count, a->dtype, a->op, c, u->allreduce_module);
    case MCA_COLL_GPU_ID_BCAST:
        return u->bcast(r, a->count, a->dtype, a->root, c, u->bcast_module);
    case MCA_COLL_GPU_ID_ALLGATHER:
        return u->allgather(s, a->scount, a->sdtype, r, a->rcount, a->rdtype, c,
                            u->allgather_module);
    case MCA_COLL_GPU_ID_REDUCE_SCATTER:
        return u->reduce_scatter(s, r, a->rcounts, a->dtype, a->op, c, u->reduce_scatter_module);
    case MCA_COLL_GPU_ID_REDUCE_SCATTER_BLOCK:
        return u->reduce_scatter_block(s, r, a->rcount, a->dtype, a->op, c,
                                       u->reduce_scatter_block_module);
    case MCA_COLL_GPU_ID_ALLGATHERV:
        return u->allgatherv(s, a->scount, a->sdtype, r, a->rcounts, a->rdispls, a->rdtype, c,
                             u->allgatherv_module);
    case MCA_COLL_GPU_ID_ALLTOALL:
        return u->alltoall(s, a->scount, a->sdtype, r, a->rcount, a->rdtype, c,
                           u->alltoall_module);
    case MCA_COLL_GPU_ID_ALLTOALLV:
        return u->alltoallv(s, a->scounts, a->sdispls, a->sdtype, r, a->rcounts, a->rdispls,
                            a->rdtype, c, u->alltoallv_module);
    case MCA_COLL_GPU_ID_ALLTOALLW:
        return u->alltoallw(s, a->scounts, a->sdispls, a->sdtypes, r, a->rcounts, a->rdispls,
                            a->rdtypes, c, u->alltoallw_module);
    case MCA_COLL_GPU_ID_EXSCAN:
        return u->exscan(s, r, a->count, a->dtype, a->op, c, u->exscan_module);
    case MCA_COLL_GPU_ID_GATHER:
        return u->gather(s, a->scount, a->sdtype, r, a->rcount, a->rdtype, a->root, c,
                         u->gather_module);
    case MCA_COLL_GPU_ID_GATHERV:
        return u->gatherv(s, a->scount, a->sdtype, r, a->rcounts, a->rdispls, a->rdtype, a->root,
                          c, u->gatherv_module);
    case MCA_COLL_GPU_ID_REDUCE:
        return u->reduce(s, r, a->count, a->dtype, a->op, a->root, c, u->reduce_module);
    case MCA_COLL_GPU_ID_SCAN:
        return u->scan(s, r, a->count, a->dtype, a->op, c, u->scan_module);
    case MCA_COLL_GPU_ID_SCATTER:
        return u->scatter(s, a->scount, a->sdtype, r, a->rcount, a->rdtype, a->root, c,
                          u->scatter_module);
    case MCA_COLL_GPU_ID_SCATTERV:
        return u->scatterv(s, a->scounts, a->sdispls, a->sdtype, r, a->rcount, a->rdtype,
                           a->root, c, u->scatterv_module);
    }
    return OMPI_ERR_NOT_SUPPORTED;
}

static int mca_coll_gpu_under_nonblocking(const mca_coll_gpu_underlying_t *u,
                                          const mca_coll_gpu_args_t *a, const void *s, void *r,
                                          ompi_request_t **q)
{
    struct ompi_communicator_t *c = a->comm;

    switch (a->id) {
    case MCA_COLL_GPU_ID_ALLREDUCE:
        return u->iallreduce(s, r, a->count, a->dtype, a->op, c, q, u->iallreduce_module);
    case MCA_COLL_GPU_ID_BCAST:
        return u->ibcast(r, a->count, a->dtype, a->root, c, q, u->ibcast_module);
    case MCA_COLL_GPU_ID_ALLGATHER:
        return u->iallgather(s, a->scount, a->sdtype, r, a->rcount, a->rdtype, c, q,
                             u->iallgather_module);
    case MCA_COLL_GPU_ID_REDUCE_SCATTER:
        return u->ireduce_scatter(s, r, a->rcounts, a->dtype, a->op, c, q,
                                  u->ireduce_scatter_module);
    case MCA_COLL_GPU_ID_REDUCE_SCATTER_BLOCK:
        return u->ireduce_scatter_block(s, r, a->rcount, a->dtype, a->op, c, q,
                                        u->ireduce_scatter_block_module);
    case MCA_COLL_GPU_ID_ALLGATHERV:
        return u->iallgatherv(s, a->scount, a->sdtype, r, a->rcounts, a->rdispls, a->rdtype, c,
                              q, u->iallgatherv_module);
    case MCA_COLL_GPU_ID_ALLTOALL:
        return u->ialltoall(s, a->scount, a->sdtype, r, a->rcount, a->rdtype, c, q,
                            u->ialltoall_module);
    case MCA_COLL_GPU_ID_ALLTOALLV:
        return u->ialltoallv(s, a->scounts, a->sdispls, a->sdtype, r, a->rcounts, a->rdispls,
                             a->rdtype, c, q, u->ialltoallv_module);
    case MCA_COLL_GPU_ID_ALLTOALLW:
        return u->ialltoallw(s, a->scounts, a->sdispls, a->sdtypes, r, a->rcounts, a->rdispls,
                             a->rdtypes, c, q, u->ialltoallw_module);
    case MCA_COLL_GPU_ID_EXSCAN:
        return u->iexscan(s, r, a->count, a->dtype, a->op, c, q, u->iexscan_module);
    case MCA_COLL_GPU_ID_GATHER:
        return u->igather(s, a->scount, a->sdtype, r, a->rcount, a->rdtype, a->root, c, q,
                          u->igather_module);
    case MCA_COLL_GPU_ID_GATHERV:
        return u->igatherv(s, a->scount, a->sdtype, r, a->rcounts, a->rdispls, a->rdtype,
                           a->root, c, q, u->igatherv_module);
    case MCA_COLL_GPU_ID_REDUCE:
        return u->ireduce(s, r, a->count, a->dtype, a->op, a->root, c, q, u->ireduce_module);
    case MCA_COLL_GPU_ID_SCAN:
        return u->iscan(s, r, a->count, a->dtype, a->op, c, q, u->iscan_module);
    case MCA_COLL_GPU_ID_SCATTER:
        return u->iscatter(s, a->scount, a->sdtype, r, a->rcount, a->rdtype, a->root, c, q,
                           u->iscatter_module);
    case MCA_COLL_GPU_ID_SCATTERV:
        return u->iscatterv(s, a->scounts, a->sdispls, a->sdtype, r, a->rcount, a->rdtype,
                            a->root, c, q, u->iscatterv_module);
    }
    return OMPI_ERR_NOT_SUPPORTED;
}

static int mca_coll_gpu_under_persistent(const mca_coll_gpu_underlying_t *u,
                                         const mca_coll_gpu_args_t *a, const void *s, void *r,
                                         ompi_request_t **q)
{
    struct ompi_communicator_t *c = a->comm;
    struct ompi_info_t         *i = a->info;

    switch (a->id) {
    case MCA_COLL_GPU_ID_ALLREDUCE:
        return u->allreduce_init(s, r, a->count, a->dtype, a->op, c, i, q,
                                 u->allreduce_init_module);
    case MCA_COLL_GPU_ID_BCAST:
        return u->bcast_init(r, a->count, a->dtype, a->root, c, i, q, u->bcast_init_module);
    case MCA_COLL_GPU_ID_ALLGATHER:
        return u->allgather_init(s, a->scount, a->sdtype, r, a->rcount, a->rdtype, c, i, q,
                                 u->allgather_init_module);
    case MCA_COLL_GPU_ID_REDUCE_SCATTER:
        return u->reduce_scatter_init(s, r, a->rcounts, a->dtype, a->op, c, i, q,
                                      u->reduce_scatter_init_module);
    case MCA_COLL_GPU_ID_REDUCE_SCATTER_BLOCK:
        return u->reduce_scatter_block_init(s, r, a->rcount, a->dtype, a->op, c, i, q,
                                            u->reduce_scatter_block_init_module);
    case MCA_COLL_GPU_ID_ALLGATHERV:
        return u->allgatherv_init(s, a->scount, a->sdtype, r, a->rcounts, a->rdispls, a->rdtype,
                                  c, i, q, u->allgatherv_init_module);
    case MCA_COLL_GPU_ID_ALLTOALL:
        return u->alltoall_init(s, a->scount, a->sdtype, r, a->rcount, a->rdtype, c, i, q,
                                u->alltoall_init_module);
    case MCA_COLL_GPU_ID_ALLTOALLV:
        return u->alltoallv_init(s, a->scounts, a->sdispls, a->sdtype, r, a->rcounts,
                                 a->rdispls, a->rdtype, c, i, q, u->alltoallv_init_module);
    case MCA_COLL_GPU_ID_ALLTOALLW:
        return u->alltoallw_init(s, a->scounts, a->sdispls, a->sdtypes, r, a->rcounts,
                                 a->rdispls, a->rdtypes, c, i, q, u->alltoallw_init_module);
    case MCA_COLL_GPU_ID_EXSCAN:
        return u->exscan_init(s, r, a->count, a->dtype, a->op, c, i, q, u->exscan_init_module);
    case MCA_COLL_GPU_ID_GATHER:
        return u->gather_init(s, a->scount, a->sdtype, r, a->rcount, a->rdtype, a->root, c, i,
                              q, u->gather_init_module);
    case MCA_COLL_GPU_ID_GATHERV:
        return u->gatherv_init(s, a->scount, a->sdtype, r, a->rcounts, a->rdispls, a->rdtype,
                               a->root, c, i, q, u->gatherv_init_module);
    case MCA_COLL_GPU_ID_REDUCE:
        return u->reduce_init(s, r, a->count, a->dtype, a->op, a->root, c, i, q,
                              u->reduce_init_module);
    case MCA_COLL_GPU_ID_SCAN:
        return u->scan_init(s, r, a->count, a->dtype, a->op, c, i, q, u->scan_init_module);
    case MCA_COLL_GPU_ID_SCATTER:
        return u->scatter_init(s, a->scount, a->sdtype, r, a->rcount, a->rdtype, a->root, c, i,
                               q, u->scatter_init_module);
    case MCA_COLL_GPU_ID_SCATTERV:
        return u->scatterv_init(s, a->scounts, a->sdispls, a->sdtype, r, a->rcount, a->rdtype,
                                a->root, c, i, q, u->scatterv_init_module);
    }
    return OMPI_ERR_NOT_SUPPORTED;
}

int mca_coll_gpu_under_call(mca_coll_gpu_module_t *m, const mca_coll_gpu_args_t *a,
                            const void *sbuf, void *rbuf, ompi_request_t **request)
{
    int rc;

    if (m->nested == 0) { /* a call of the layer underneath's own passes uncounted */
        cg_count_caller(CG_CNT_MPI_UNDER, 1);
    }
    switch (a->mode) {
    case MCA_COLL_GPU_NONBLOCKING:
        return mca_coll_gpu_under_nonblocking(&m->under, a, sbuf, rbuf, request);
    case MCA_COLL_GPU_PERSISTENT:
        return mca_coll_gpu_under_persistent(&m->under, a, sbuf, rbuf, request);
    default:
        m->nested++;
        rc = mca_coll_gpu_under_blocking(&m->under, a, sbuf, rbuf);
        m->nested--;
        return rc;
    }
}

/* ---- the verbose line ---------------------------------------------------------------- */

/* Does the line name the receive side's datatype and count? Not where MPI says they are
 * not significant, and may be anything: a gather's non-root, a scatter's root receiving in
 * place. */
static int mca_coll_gpu_log_recv_side(const mca_coll_gpu_args_t *a)
{
    const int at_root = ompi_comm_rank(a->comm) == a->root;

    switch (a->id) {
    case MCA_COLL_GPU_ID_GATHER:
    case MCA_COLL_GPU_ID_GATHERV:
        return at_root;
    case MCA_COLL_GPU_ID_SCATTER:
    case MCA_COLL_GPU_ID_SCATTERV:
        return !(at_root && a->rbuf == MPI_IN_PLACE);
    default:
        return a->rdtype != NULL;
    }
}

void mca_coll_gpu_log_args(const mca_coll_gpu_args_t *a, int kinds)
{
    static const char *const kind_names[4] = {"none", "host", "device", "mixed"};
    static const char *const why[] = {
        [MCA_COLL_GPU_BLOCKING]    = "no fast path for this collective",
        [MCA_COLL_GPU_NONBLOCKING] = "nonblocking: staged",
        [MCA_COLL_GPU_PERSISTENT]  = "persistent: staged",
    };
    struct ompi_datatype_t *dtype;
    const int               device = (kinds & MCA_COLL_GPU_KIND_DEVICE) != 0;
    int                     recv_side, count;
    cg_op_t                 op;

    if (!cg_log_enabled(CG_LOG_CALL, CG_SUB_COLL)) {
        return;
    }
    recv_side = a->dtype == NULL && mca_coll_gpu_log_recv_side(a);
    dtype     = a->dtype != NULL ? a->dtype : recv_side ? a->rdtype : a->sdtype;
    count     = a->dtype != NULL ? a->count : recv_side ? a->rcount : a->scount;
    op        = a->op != NULL ? mca_coll_gpu_op_map(a->op) : CG_OP_NONE;
    cg_log_emit(CG_LOG_CALL, CG_SUB_COLL, __FILE__, __LINE__,
                "%s%s%s count=%d dtype=%s%s%s mem=%s alg=%s comm=%u np=%d why=%s",
                a->mode == MCA_COLL_GPU_NONBLOCKING ? "i" : "", mca_coll_gpu_id_names[a->id],
                a->mode == MCA_COLL_GPU_PERSISTENT ? "_init" : "",
                count, dtype != NULL ? dtype->name : "-", a->op != NULL ? " op=" : "",
                a->op == NULL ? "" : op == CG_OP_NONE ? "user" : cg_op_name(op),
                kind_names[kinds & 3], device ? "staged" : "underlying",
                mca_coll_gpu_comm_id(a->comm), ompi_comm_size(a->comm),
                device ? why[a->mode] : "no device buffers");
}
