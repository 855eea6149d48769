/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The collectives of coll_coverage: for each, the buffers of a call on this rank, the
 * inputs written into them and the results expected after it (prepare), and the call in
 * each mode (call). Element idx of rank r's input is what check_types.c generates for
 * (seed, r, idx); alltoall's and scatter's block for peer p starts at idx p * CV_STRIDE.
 */
#include "check_coverage.h"

#include <stdlib.h>

#define CV_STRIDE ((size_t)1 << 20)

static int cv_rank(const cv_call_t *k) { return k->ctx->rank; }
static int cv_size(const cv_call_t *k) { return k->ctx->size; }

/* Send buffer of n elements of rank's input idx first.. (unless in place). */
static void cv_send_block(cv_call_t *k, size_t n, size_t first)
{
    cv_buf_alloc(k, &k->send, n);
    for (size_t i = 0; i < n; i++) {
        cv_input(k, &k->send, i, cv_rank(k), first + i);
    }
    k->sarg = cv_ptr(&k->send);
}

/* A buffer that the call ignores on this rank: NULL, or one that must stay as it was. */
static void *cv_ignored(cv_call_t *k, cv_buf_t *b, size_t n)
{
    if (k->null_ignored) {
        return NULL;
    }
    cv_buf_alloc(k, b, n);
    return cv_ptr(b);
}

/* ---- reductions ---------------------------------------------------------------------- */

/* allreduce, scan, exscan: every rank's result over ranks [0, hi] (-1: undefined). */
static void cv_prep_reduction(cv_call_t *k, int hi)
{
    const size_t n = k->count;

    if (!k->in_place) {
        cv_send_block(k, n, 0);
    } else {
        k->sarg = MPI_IN_PLACE;
    }
    cv_buf_alloc(k, &k->recv, n);
    for (size_t i = 0; i < n; i++) {
        if (k->in_place) {
            cv_input(k, &k->recv, i, cv_rank(k), i);
        }
        if (hi < 0) {
            cv_expect_any(k, &k->recv, i);
        } else {
            cv_expect_reduced(k, &k->recv, i, 0, hi, i);
        }
    }
    k->rarg = cv_ptr(&k->recv);
}

static void cv_prep_allreduce(cv_call_t *k) { cv_prep_reduction(k, cv_size(k) - 1); }
static void cv_prep_scan(cv_call_t *k) { cv_prep_reduction(k, cv_rank(k)); }
static void cv_prep_exscan(cv_call_t *k) { cv_prep_reduction(k, cv_rank(k) - 1); }

static void cv_prep_reduce(cv_call_t *k)
{
    const size_t n = k->count;
    const int    root = cv_rank(k) == k->root, in_place = k->in_place && root;

    if (in_place) {
        k->sarg = MPI_IN_PLACE;
    } else {
        cv_send_block(k, n, 0);
    }
    if (!root) {
        k->rarg = cv_ignored(k, &k->recv, n);
        return;
    }
    cv_buf_alloc(k, &k->recv, n);
    for (size_t i = 0; i < n; i++) {
        if (in_place) {
            cv_input(k, &k->recv, i, cv_rank(k), i);
        }
        cv_expect_reduced(k, &k->recv, i, 0, cv_size(k) - 1, i);
    }
    k->rarg = cv_ptr(&k->recv);
}

/* reduce_scatter: uneven blocks (block: count each) */
static void cv_prep_rs_common(cv_call_t *k, int block)
{
    const int me = cv_rank(k);
    size_t    total = 0, first = 0, own;

    for (int r = 0; r < cv_size(k); r++) {
        k->rcounts[r] = block ? (int)k->count : cv_vcount(k, r);
        first += r < me ? (size_t)k->rcounts[r] : 0;
        total += (size_t)k->rcounts[r];
    }
    own = (size_t)k->rcounts[me];
    if (k->in_place) {
        k->sarg = MPI_IN_PLACE;
        cv_buf_alloc(k, &k->recv, total);
        for (size_t i = 0; i < total; i++) {
            cv_input(k, &k->recv, i, me, i);
            if (i >= own) {
                cv_expect_any(k, &k->recv, i); /* the rest of the input: undefined */
            }
        }
    } else {
        cv_send_block(k, total, 0);
        cv_buf_alloc(k, &k->recv, own);
    }
    for (size_t i = 0; i < own; i++) {
        cv_expect_reduced(k, &k->recv, i, 0, cv_size(k) - 1, first + i);
    }
    k->rarg = cv_ptr(&k->recv);
}

static void cv_prep_reduce_scatter(cv_call_t *k) { cv_prep_rs_common(k, 0); }
static void cv_prep_reduce_scatter_block(cv_call_t *k) { cv_prep_rs_common(k, 1); }

/* ---- data movement ------------------------------------------------------------------- */

static void cv_prep_bcast(cv_call_t *k)
{
    cv_buf_alloc(k, &k->recv, k->count);
    for (size_t i = 0; i < k->count; i++) {
        if (cv_rank(k) == k->root) {
            cv_input(k, &k->recv, i, k->root, i);
        }
        cv_expect(k, &k->recv, i, k->root, i);
    }
    k->rarg = cv_ptr(&k->recv);
}

/* Blocks of counts[r] elements of rank r's input at displs[r] (NULL: r * n, n each). */
static void cv_gathered(cv_call_t *k, const int *counts, const int *displs, size_t n)
{
    for (int r = 0; r < cv_size(k); r++) {
        size_t c = counts ? (size_t)counts[r] : n, at = displs ? (size_t)displs[r] : r * n;
        for (size_t i = 0; i < c; i++) {
            if (k->in_place && r == cv_rank(k)) {
                cv_input(k, &k->recv, at + i, r, i);
            }
            cv_expect(k, &k->recv, at + i, r, i);
        }
    }
    k->rarg = cv_ptr(&k->recv);
}

static void cv_prep_allgather(cv_call_t *k)
{
    if (k->in_place) {
        k->sarg = MPI_IN_PLACE;
    } else {
        cv_send_block(k, k->count, 0);
    }
    cv_buf_alloc(k, &k->recv, k->count * (size_t)cv_size(k));
    cv_gathered(k, NULL, NULL, k->count);
}

static void cv_prep_allgatherv(cv_call_t *k)
{
    for (int r = 0; r < cv_size(k); r++) {
        k->rcounts[r] = cv_vcount(k, r);
    }
    if (k->in_place) {
        k->sarg = MPI_IN_PLACE;
    } else {
        cv_send_block(k, (size_t)k->rcounts[cv_rank(k)], 0);
    }
    cv_buf_alloc(k, &k->recv, cv_vdispls(k->rcounts, k->rdispls, cv_size(k)));
    cv_gathered(k, k->rcounts, k->rdispls, 0);
}

static void cv_prep_gather_common(cv_call_t *k, int v)
{
    const int root = cv_rank(k) == k->root, in_place = k->in_place && root;

    for (int r = 0; r < cv_size(k); r++) {
        k->rcounts[r] = v ? cv_vcount(k, r) : (int)k->count;
    }
    if (in_place) {
        k->sarg = MPI_IN_PLACE;
    } else {
        cv_send_block(k, (size_t)k->rcounts[cv_rank(k)], 0);
    }
    if (!root) {
        k->rarg = cv_ignored(k, &k->recv, k->count);
        return;
    }
    if (v) {
        cv_buf_alloc(k, &k->recv, cv_vdispls(k->rcounts, k->rdispls, cv_size(k)));
    } else {
        cv_buf_alloc(k, &k->recv, k->count * (size_t)cv_size(k));
    }
    cv_gathered(k, v ? k->rcounts : NULL, v ? k->rdispls : NULL, k->count);
}

static void cv_prep_gather(cv_call_t *k) { cv_prep_gather_common(k, 0); }
static void cv_prep_gatherv(cv_call_t *k) { cv_prep_gather_common(k, 1); }

static void cv_prep_scatter_common(cv_call_t *k, int v)
{
    const int    me = cv_rank(k), root = me == k->root;
    const size_t n  = k->count;
    size_t       own;

    for (int p = 0; p < cv_size(k); p++) {
        k->scounts[p] = v ? cv_vcount(k, p) : (int)n;
    }
    own = (size_t)k->scounts[me];
    if (root) {
        cv_buf_alloc(k, &k->send, v ? cv_vdispls(k->scounts, k->sdispls, cv_size(k))
                                    : n * (size_t)cv_size(k));
        for (int p = 0; p < cv_size(k); p++) {
            size_t at = v ? (size_t)k->sdispls[p] : p * n;
            for (size_t i = 0; i < (size_t)k->scounts[p]; i++) {
                cv_input(k, &k->send, at + i, me, p * CV_STRIDE + i);
            }
        }
        k->sarg = cv_ptr(&k->send);
    } else {
        k->sarg = cv_ignored(k, &k->send, n);
    }
    if (root && k->in_place) {
        k->rarg = MPI_IN_PLACE; /* the root's block stays in its send buffer */
        return;
    }
    cv_buf_alloc(k, &k->recv, own);
    for (size_t i = 0; i < own; i++) {
        cv_expect(k, &k->recv, i, k->root, me * CV_STRIDE + i);
    }
    k->rarg = cv_ptr(&k->recv);
}

static void cv_prep_scatter(cv_call_t *k) { cv_prep_scatter_common(k, 0); }
static void cv_prep_scatterv(cv_call_t *k) { cv_prep_scatter_common(k, 1); }

/* alltoall(v, w): rank r sends c(r, p) elements to p; c is symmetric, so the in-place forms
 * (which use the receive counts for both) work too. */
static int cv_pair_count(const cv_call_t *k, int r, int p, int v)
{
    return !v || k->count == 0 ? (int)k->count : (int)k->count + (r + p) % 3 - 1;
}

static void cv_prep_alltoall_common(cv_call_t *k, int v, int bytes)
{
    const int me = cv_rank(k), n = cv_size(k);
    size_t    selems, relems;

    for (int p = 0; p < n; p++) {
        k->scounts[p] = cv_pair_count(k, me, p, v);
        k->rcounts[p] = cv_pair_count(k, p, me, v);
        k->stypes[p]  = k->lay->dt;
        k->rtypes[p]  = k->lay->dt;
    }
    if (v) {
        selems = cv_vdispls(k->scounts, k->sdispls, n);
        relems = cv_vdispls(k->rcounts, k->rdispls, n);
    } else {
        for (int p = 0; p < n; p++) {
            k->sdispls[p] = k->rdispls[p] = p * (int)k->count;
        }
        selems = relems = k->count * (size_t)n;
    }
    if (k->in_place) {
        k->sarg = MPI_IN_PLACE;
    } else {
        cv_buf_alloc(k, &k->send, selems);
        for (int p = 0; p < n; p++) {
            for (size_t i = 0; i < (size_t)k->scounts[p]; i++) {
                cv_input(k, &k->send, (size_t)k->sdispls[p] + i, me, p * CV_STRIDE + i);
            }
        }
        k->sarg = cv_ptr(&k->send);
    }
    cv_buf_alloc(k, &k->recv, relems);
    for (int p = 0; p < n; p++) {
        for (size_t i = 0; i < (size_t)k->rcounts[p]; i++) {
            if (k->in_place) { /* what this rank sends to p, where p's data will arrive */
                cv_input(k, &k->recv, (size_t)k->rdispls[p] + i, me, p * CV_STRIDE + i);
            }
            cv_expect(k, &k->recv, (size_t)k->rdispls[p] + i, p, me * CV_STRIDE + i);
        }
    }
    k->rarg = cv_ptr(&k->recv);
    if (bytes) { /* alltoallw: displacements in bytes */
        for (int p = 0; p < n; p++) {
            k->sdispls[p] *= (int)k->lay->extent;
            k->rdispls[p] *= (int)k->lay->extent;
        }
    }
}

static void cv_prep_alltoall(cv_call_t *k) { cv_prep_alltoall_common(k, 0, 0); }
static void cv_prep_alltoallv(cv_call_t *k) { cv_prep_alltoall_common(k, 1, 0); }
static void cv_prep_alltoallw(cv_call_t *k) { cv_prep_alltoall_common(k, 1, 1); }

/* ---- the calls ----------------------------------------------------------------------- */

#define CV_MODES(blocking, nonblocking, persistent)                                       \
    switch (k->mode) {                                                                    \
    case CV_BLOCKING:    return blocking;                                                 \
    case CV_NONBLOCKING: return nonblocking;                                              \
    default:             return persistent;                                               \
    }

static int cv_call_allreduce(cv_call_t *k)
{
    const int n = (int)k->count;
    CV_MODES(MPI_Allreduce(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op, k->ctx->comm),
             MPI_Iallreduce(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op, k->ctx->comm, &k->req),
             CV_INIT(Allreduce)(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op, k->ctx->comm,
                                MPI_INFO_NULL, &k->req))
}

static int cv_call_scan(cv_call_t *k)
{
    const int n = (int)k->count;
    CV_MODES(MPI_Scan(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op, k->ctx->comm),
             MPI_Iscan(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op, k->ctx->comm, &k->req),
             CV_INIT(Scan)(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op, k->ctx->comm,
                           MPI_INFO_NULL, &k->req))
}

static int cv_call_exscan(cv_call_t *k)
{
    const int n = (int)k->count;
    CV_MODES(MPI_Exscan(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op, k->ctx->comm),
             MPI_Iexscan(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op, k->ctx->comm, &k->req),
             CV_INIT(Exscan)(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op, k->ctx->comm,
                             MPI_INFO_NULL, &k->req))
}

static int cv_call_reduce(cv_call_t *k)
{
    const int n = (int)k->count;
    CV_MODES(MPI_Reduce(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op, k->root, k->ctx->comm),
             MPI_Ireduce(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op, k->root, k->ctx->comm,
                         &k->req),
             CV_INIT(Reduce)(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op, k->root, k->ctx->comm,
                             MPI_INFO_NULL, &k->req))
}

static int cv_call_reduce_scatter(cv_call_t *k)
{
    CV_MODES(MPI_Reduce_scatter(k->sarg, k->rarg, k->rcounts, k->lay->dt, k->mpi_op,
                                k->ctx->comm),
             MPI_Ireduce_scatter(k->sarg, k->rarg, k->rcounts, k->lay->dt, k->mpi_op,
                                 k->ctx->comm, &k->req),
             CV_INIT(Reduce_scatter)(k->sarg, k->rarg, k->rcounts, k->lay->dt, k->mpi_op,
                                     k->ctx->comm, MPI_INFO_NULL, &k->req))
}

static int cv_call_reduce_scatter_block(cv_call_t *k)
{
    const int n = (int)k->count;
    CV_MODES(MPI_Reduce_scatter_block(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op, k->ctx->comm),
             MPI_Ireduce_scatter_block(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op, k->ctx->comm,
                                       &k->req),
             CV_INIT(Reduce_scatter_block)(k->sarg, k->rarg, n, k->lay->dt, k->mpi_op,
                                           k->ctx->comm, MPI_INFO_NULL, &k->req))
}

static int cv_call_bcast(cv_call_t *k)
{
    const int n = (int)k->count;
    CV_MODES(MPI_Bcast(k->rarg, n, k->lay->dt, k->root, k->ctx->comm),
             MPI_Ibcast(k->rarg, n, k->lay->dt, k->root, k->ctx->comm, &k->req),
             CV_INIT(Bcast)(k->rarg, n, k->lay->dt, k->root, k->ctx->comm, MPI_INFO_NULL,
                            &k->req))
}

static int cv_call_allgather(cv_call_t *k)
{
    const int n = (int)k->count;
    MPI_Datatype dt = k->lay->dt;
    CV_MODES(MPI_Allgather(k->sarg, n, dt, k->rarg, n, dt, k->ctx->comm),
             MPI_Iallgather(k->sarg, n, dt, k->rarg, n, dt, k->ctx->comm, &k->req),
             CV_INIT(Allgather)(k->sarg, n, dt, k->rarg, n, dt, k->ctx->comm, MPI_INFO_NULL,
                                &k->req))
}

static int cv_call_allgatherv(cv_call_t *k)
{
    const int    n  = k->rcounts[k->ctx->rank];
    MPI_Datatype dt = k->lay->dt;
    CV_MODES(MPI_Allgatherv(k->sarg, n, dt, k->rarg, k->rcounts, k->rdispls, dt, k->ctx->comm),
             MPI_Iallgatherv(k->sarg, n, dt, k->rarg, k->rcounts, k->rdispls, dt, k->ctx->comm,
                             &k->req),
             CV_INIT(Allgatherv)(k->sarg, n, dt, k->rarg, k->rcounts, k->rdispls, dt,
                                 k->ctx->comm, MPI_INFO_NULL, &k->req))
}

static int cv_call_gather(cv_call_t *k)
{
    const int    n  = (int)k->count;
    MPI_Datatype dt = k->lay->dt;
    /* blocking: the receive type where MPI says it is not significant is a null handle
     * (the verbose line must not name it) */
    MPI_Datatype rdt = k->ctx->rank == k->root ? dt : MPI_DATATYPE_NULL;
    CV_MODES(MPI_Gather(k->sarg, n, dt, k->rarg, n, rdt, k->root, k->ctx->comm),
             MPI_Igather(k->sarg, n, dt, k->rarg, n, dt, k->root, k->ctx->comm, &k->req),
             CV_INIT(Gather)(k->sarg, n, dt, k->rarg, n, dt, k->root, k->ctx->comm,
                             MPI_INFO_NULL, &k->req))
}

static int cv_call_gatherv(cv_call_t *k)
{
    const int    n  = k->rcounts[k->ctx->rank];
    MPI_Datatype dt = k->lay->dt;
    CV_MODES(MPI_Gatherv(k->sarg, n, dt, k->rarg, k->rcounts, k->rdispls, dt, k->root,
                         k->ctx->comm),
             MPI_Igatherv(k->sarg, n, dt, k->rarg, k->rcounts, k->rdispls, dt, k->root,
                          k->ctx->comm, &k->req),
             CV_INIT(Gatherv)(k->sarg, n, dt, k->rarg, k->rcounts, k->rdispls, dt, k->root,
                              k->ctx->comm, MPI_INFO_NULL, &k->req))
}

static int cv_call_scatter(cv_call_t *k)
{
    const int    n  = (int)k->count;
    MPI_Datatype dt = k->lay->dt;
    CV_MODES(MPI_Scatter(k->sarg, n, dt, k->rarg, n, dt, k->root, k->ctx->comm),
             MPI_Iscatter(k->sarg, n, dt, k->rarg, n, dt, k->root, k->ctx->comm, &k->req),
             CV_INIT(Scatter)(k->sarg, n, dt, k->rarg, n, dt, k->root, k->ctx->comm,
                              MPI_INFO_NULL, &k->req))
}

static int cv_call_scatterv(cv_call_t *k)
{
    const int    n  = k->scounts[k->ctx->rank];
    MPI_Datatype dt = k->lay->dt;
    CV_MODES(MPI_Scatterv(k->sarg, k->scounts, k->sdispls, dt, k->rarg, n, dt, k->root,
                          k->ctx->comm),
             MPI_Iscatterv(k->sarg, k->scounts, k->sdispls, dt, k->rarg, n, dt, k->root,
                           k->ctx->comm, &k->req),
             CV_INIT(Scatterv)(k->sarg, k->scounts, k->sdispls, dt, k->rarg, n, dt, k->root,
                               k->ctx->comm, MPI_INFO_NULL, &k->req))
}

static int cv_call_alltoall(cv_call_t *k)
{
    const int    n  = (int)k->count;
    MPI_Datatype dt = k->lay->dt;
    CV_MODES(MPI_Alltoall(k->sarg, n, dt, k->rarg, n, dt, k->ctx->comm),
             MPI_Ialltoall(k->sarg, n, dt, k->rarg, n, dt, k->ctx->comm, &k->req),
             CV_INIT(Alltoall)(k->sarg, n, dt, k->rarg, n, dt, k->ctx->comm, MPI_INFO_NULL,
                               &k->req))
}

static int cv_call_alltoallv(cv_call_t *k)
{
    MPI_Datatype dt = k->lay->dt;
    CV_MODES(MPI_Alltoallv(k->sarg, k->scounts, k->sdispls, dt, k->rarg, k->rcounts,
                           k->rdispls, dt, k->ctx->comm),
             MPI_Ialltoallv(k->sarg, k->scounts, k->sdispls, dt, k->rarg, k->rcounts,
                            k->rdispls, dt, k->ctx->comm, &k->req),
             CV_INIT(Alltoallv)(k->sarg, k->scounts, k->sdispls, dt, k->rarg, k->rcounts,
                                k->rdispls, dt, k->ctx->comm, MPI_INFO_NULL, &k->req))
}

static int cv_call_alltoallw(cv_call_t *k)
{
    CV_MODES(MPI_Alltoallw(k->sarg, k->scounts, k->sdispls, k->stypes, k->rarg, k->rcounts,
                           k->rdispls, k->rtypes, k->ctx->comm),
             MPI_Ialltoallw(k->sarg, k->scounts, k->sdispls, k->stypes, k->rarg, k->rcounts,
                            k->rdispls, k->rtypes, k->ctx->comm, &k->req),
             CV_INIT(Alltoallw)(k->sarg, k->scounts, k->sdispls, k->stypes, k->rarg,
                                k->rcounts, k->rdispls, k->rtypes, k->ctx->comm,
                                MPI_INFO_NULL, &k->req))
}

/* name, reduces, rooted, in place, fast paths (blocking), prepare, call */
const cv_coll_t cv_colls[] = {
    {"allreduce", 1, 0, 1, 1, cv_prep_allreduce, cv_call_allreduce},
    {"bcast", 0, 1, 0, 1, cv_prep_bcast, cv_call_bcast},
    {"allgather", 0, 0, 1, 1, cv_prep_allgather, cv_call_allgather},
    {"reduce_scatter", 1, 0, 1, 1, cv_prep_reduce_scatter, cv_call_reduce_scatter},
    {"reduce_scatter_block", 1, 0, 1, 1, cv_prep_reduce_scatter_block,
     cv_call_reduce_scatter_block},
    {"allgatherv", 0, 0, 1, 0, cv_prep_allgatherv, cv_call_allgatherv},
    {"alltoall", 0, 0, 1, 0, cv_prep_alltoall, cv_call_alltoall},
    {"alltoallv", 0, 0, 1, 0, cv_prep_alltoallv, cv_call_alltoallv},
    {"alltoallw", 0, 0, 1, 0, cv_prep_alltoallw, cv_call_alltoallw},
    {"exscan", 1, 0, 1, 0, cv_prep_exscan, cv_call_exscan},
    {"gather", 0, 1, 1, 0, cv_prep_gather, cv_call_gather},
    {"gatherv", 0, 1, 1, 0, cv_prep_gatherv, cv_call_gatherv},
    {"reduce", 1, 1, 1, 0, cv_prep_reduce, cv_call_reduce},
    {"scan", 1, 0, 1, 0, cv_prep_scan, cv_call_scan},
    {"scatter", 0, 1, 1, 0, cv_prep_scatter, cv_call_scatter},
    {"scatterv", 0, 1, 1, 0, cv_prep_scatterv, cv_call_scatterv},
};
const int cv_num_colls = (int)(sizeof(cv_colls) / sizeof(cv_colls[0]));
