/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* The five collectives on predefined types: run on memory under test, verify on the host. */
#include "check_colls.h"

#include <dirent.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TC_POISON 0xA5

static int tc_gap_byte(const tc_type_t *t, size_t b);

static void tc_report(const tc_case_t *c, const char *coll, const char *what, size_t i,
                      const void *got, const void *want)
{
    char detail[512], g[96] = "", w[96] = "";

    if (got != NULL) {
        tc_format(c->type, got, g, sizeof(g));
        tc_format(c->type, want, w, sizeof(w));
    }
    snprintf(detail, sizeof(detail), "%s %s op=%s count=%zu %s comm=%s rank=%d: %s at %zu (got %s, want %s)",
             coll, c->type->name, c->op >= 0 ? tc_ops[c->op].name : "-", c->count,
             c->in_place ? "in-place" : "out-of-place", c->ctx->comm_name, c->ctx->rank, what,
             i, g, w);
    tc_fail(coll, detail);
}

/* Compare n elements; returns the number of mismatches (reports the first). before: the
 * receive buffer as it was before the call (NULL: not checked): MPI leaves the bytes
 * outside the type map of the receive datatype (the padding of pair types) untouched. */
static size_t tc_verify(const tc_case_t *c, const char *coll, const char *what, const char *got,
                        const char *want, size_t n, const char *before)
{
    size_t bad = 0, gaps = 0, ext = c->type->extent;

    for (size_t i = 0; i < n; i++) {
        if (tc_compare(c->type, got + i * ext, want + i * ext) != 0) {
            if (bad++ == 0) {
                tc_report(c, coll, what, i, got + i * ext, want + i * ext);
            }
        }
    }
    for (size_t i = 0; before != NULL && c->type->cls == TC_PAIR && i < n; i++) {
        for (size_t b = 0; b < ext; b++) {
            if (tc_gap_byte(c->type, b) && got[i * ext + b] != before[i * ext + b] && gaps++ == 0) {
                char detail[96];
                snprintf(detail, sizeof(detail), "padding byte %zu written (0x%02x, was 0x%02x)", b,
                         (unsigned char)got[i * ext + b], (unsigned char)before[i * ext + b]);
                tc_report(c, coll, detail, i, NULL, NULL);
            }
        }
    }
    return bad + gaps;
}

/* want[i] = op over ranks 0..size-1 of rank r's element (first + i). */
static void tc_expect_reduce(const tc_case_t *c, size_t first, size_t n, char *want)
{
    size_t ext = c->type->extent;
    char   x[64];

    for (size_t i = 0; i < n; i++) {
        tc_gen(c->type, c->op, c->seed, 0, first + i, want + i * ext);
        for (int r = 1; r < c->ctx->size; r++) {
            tc_gen(c->type, c->op, c->seed, r, first + i, x);
            tc_combine(c->type, c->op, want + i * ext, x);
        }
    }
}

/* Is byte b of an element outside the type map (the padding of a pair type)? */
static int tc_gap_byte(const tc_type_t *t, size_t b)
{
    return t->cls == TC_PAIR && b >= t->vsize && (b < t->ioff || b >= t->ioff + sizeof(int));
}

/* Rank's input; the padding of pair types carries a mark of the rank, so that padding
 * copied from another rank's buffer into this one shows. */
static void tc_fill(const tc_case_t *c, int rank, size_t first, size_t n, char *dst)
{
    for (size_t i = 0; i < n; i++) {
        tc_gen(c->type, c->op, c->seed, rank, first + i, dst + i * c->type->extent);
        for (size_t b = 0; b < c->type->extent; b++) {
            if (tc_gap_byte(c->type, b)) {
                dst[i * c->type->extent + b] = (char)(0x40 + (rank & 0x3f));
            }
        }
    }
}

/* The poison of this rank's outputs (different on every rank, for the same reason). */
static int tc_poison(const tc_case_t *c)
{
    return TC_POISON ^ ((c->ctx->rank & 0x3f) << 1);
}

size_t tc_offset;

/* Device buffers of the checks start tc_offset bytes into their allocation (--offset: user
 * buffers that are not aligned, as a pointer into an array gives). */
static void *tc_dev_copy(const void *host, size_t bytes, em_kind_t kind)
{
    char *d = (char *)em_alloc(bytes + tc_offset, kind) + tc_offset;
    em_to_dev(d, host, bytes, kind);
    return d;
}

static void tc_dev_free(void *d, em_kind_t kind)
{
    em_free((char *)d - tc_offset, kind);
}

static void *tc_dev_poisoned(const tc_case_t *c, size_t bytes, char *scratch)
{
    memset(scratch, tc_poison(c), bytes);
    return tc_dev_copy(scratch, bytes, c->ctx->kind);
}

/* Input on the device must be left as it was. */
static void tc_check_input(const tc_case_t *c, const char *coll, const void *dev, const char *host,
                           size_t bytes, char *scratch)
{
    em_to_host(scratch, dev, bytes, c->ctx->kind);
    if (memcmp(scratch, host, bytes) != 0) {
        tc_report(c, coll, "send buffer modified", 0, NULL, NULL);
    }
}

/* The call's return code, and no CUDA error left behind for the application's next
 * cudaGetLastError (the component's own failures are its to clear). */
static void tc_check_rc(const tc_case_t *c, const char *coll, int rc)
{
    const char *left = em_error_left();

    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int  len = 0;
        MPI_Error_string(rc, msg, &len);
        tc_report(c, coll, msg, 0, NULL, NULL);
    }
    if (left != NULL) {
        tc_report(c, coll, left, 0, NULL, NULL);
    }
}

void tc_run_allreduce(const tc_case_t *c)
{
    const size_t bytes = c->count * c->type->extent;
    char *in = calloc(bytes + 1, 1), *want = calloc(bytes + 1, 1), *got = malloc(bytes + 1);
    void *dsend = NULL, *drecv;

    char *before = malloc(bytes + 1);

    tc_fill(c, c->ctx->rank, 0, c->count, in);
    if (c->in_place) {
        drecv = tc_dev_copy(in, bytes, c->ctx->kind);
        memcpy(before, in, bytes);
    } else {
        dsend = tc_dev_copy(in, bytes, c->ctx->kind);
        drecv = tc_dev_poisoned(c, bytes, before);
    }
    tc_check_rc(c, "allreduce", MPI_Allreduce(c->in_place ? MPI_IN_PLACE : dsend, drecv, (int)c->count,
                                              c->type->dt, tc_ops[c->op].op, c->ctx->comm));
    tc_count(TC_ALLREDUCE, bytes, c->ctx->kind);
    em_to_host(got, drecv, bytes, c->ctx->kind);
    tc_expect_reduce(c, 0, c->count, want);
    tc_verify(c, "allreduce", "wrong result", got, want, c->count, before);
    free(before);
    if (!c->in_place) {
        tc_check_input(c, "allreduce", dsend, in, bytes, got);
        tc_dev_free(dsend, c->ctx->kind);
    }
    tc_dev_free(drecv, c->ctx->kind);
    free(in), free(want), free(got);
    tc_tests++;
}

/* Reduce-scatter with rcounts (block: all equal). */
static void tc_run_rs_common(const tc_case_t *c, const int *rcounts, int block)
{
    const char  *coll = block ? "reduce_scatter_block" : "reduce_scatter";
    const size_t ext  = c->type->extent;
    size_t       total = 0, first = 0, own = (size_t)rcounts[c->ctx->rank];

    for (int r = 0; r < c->ctx->size; r++) {
        first += (r < c->ctx->rank) ? (size_t)rcounts[r] : 0;
        total += (size_t)rcounts[r];
    }
    char *in = calloc(total * ext + 1, 1), *want = calloc(own * ext + 1, 1), *got = malloc(total * ext + 1);
    void *dsend = NULL, *drecv;
    int   rc;

    char *before = malloc(total * ext + 1);

    tc_fill(c, c->ctx->rank, 0, total, in);
    if (c->in_place) {
        drecv = tc_dev_copy(in, total * ext, c->ctx->kind);
        memcpy(before, in, total * ext);
    } else {
        dsend = tc_dev_copy(in, total * ext, c->ctx->kind);
        drecv = tc_dev_poisoned(c, own * ext, before);
    }
    if (block) {
        rc = MPI_Reduce_scatter_block(c->in_place ? MPI_IN_PLACE : dsend, drecv, rcounts[0],
                                      c->type->dt, tc_ops[c->op].op, c->ctx->comm);
    } else {
        rc = MPI_Reduce_scatter(c->in_place ? MPI_IN_PLACE : dsend, drecv, rcounts, c->type->dt,
                                tc_ops[c->op].op, c->ctx->comm);
    }
    tc_check_rc(c, coll, rc);
    tc_count(block ? TC_RSB : TC_RS, total * ext, c->ctx->kind);
    em_to_host(got, drecv, own * ext, c->ctx->kind);
    tc_expect_reduce(c, first, own, want);
    tc_verify(c, coll, "wrong result", got, want, own, before);
    free(before);
    if (!c->in_place) {
        tc_check_input(c, coll, dsend, in, total * ext, got);
        tc_dev_free(dsend, c->ctx->kind);
    }
    tc_dev_free(drecv, c->ctx->kind);
    free(in), free(want), free(got);
    tc_tests++;
}

void tc_run_reduce_scatter_block(const tc_case_t *c)
{
    int *rcounts = malloc(sizeof(int) * (size_t)c->ctx->size);
    for (int r = 0; r < c->ctx->size; r++) {
        rcounts[r] = (int)c->count;
    }
    tc_run_rs_common(c, rcounts, 1);
    free(rcounts);
}

void tc_run_reduce_scatter(const tc_case_t *c)
{
    int *rcounts = malloc(sizeof(int) * (size_t)c->ctx->size);
    /* Uneven blocks around count, with an empty block when count is small. */
    for (int r = 0; r < c->ctx->size; r++) {
        long v = (long)c->count + (r % 3) - 1;
        rcounts[r] = (c->count == 0) ? 0 : (int)(v < 0 ? 0 : v);
    }
    tc_run_rs_common(c, rcounts, 0);
    free(rcounts);
}

void tc_run_allgather(const tc_case_t *c)
{
    const size_t ext = c->type->extent, n = c->count, size = (size_t)c->ctx->size;
    char *in = calloc(n * ext + 1, 1), *want = calloc(size * n * ext + 1, 1), *got = malloc(size * n * ext + 1);
    char *before = malloc(size * n * ext + 1);
    void *dsend = NULL, *drecv;

    for (int r = 0; r < c->ctx->size; r++) {
        tc_fill(c, r, 0, n, want + (size_t)r * n * ext);
    }
    memcpy(in, want + (size_t)c->ctx->rank * n * ext, n * ext);
    memset(got, tc_poison(c), size * n * ext);
    if (c->in_place) {
        memcpy(got + (size_t)c->ctx->rank * n * ext, in, n * ext);
    } else {
        dsend = tc_dev_copy(in, n * ext, c->ctx->kind);
    }
    drecv = tc_dev_copy(got, size * n * ext, c->ctx->kind);
    memcpy(before, got, size * n * ext);
    tc_check_rc(c, "allgather", MPI_Allgather(c->in_place ? MPI_IN_PLACE : dsend, (int)n, c->type->dt,
                                              drecv, (int)n, c->type->dt, c->ctx->comm));
    tc_count(TC_ALLGATHER, size * n * ext, c->ctx->kind);
    em_to_host(got, drecv, size * n * ext, c->ctx->kind);
    tc_verify(c, "allgather", "wrong result", got, want, size * n, before);
    free(before);
    if (!c->in_place) {
        tc_check_input(c, "allgather", dsend, in, n * ext, got);
        tc_dev_free(dsend, c->ctx->kind);
    }
    tc_dev_free(drecv, c->ctx->kind);
    free(in), free(want), free(got);
    tc_tests++;
}

void tc_run_bcast(const tc_case_t *c)
{
    const size_t ext = c->type->extent, n = c->count;
    char *want = calloc(n * ext + 1, 1), *got = malloc(n * ext + 1);
    void *dbuf;

    char *before = malloc(n * ext + 1);

    tc_fill(c, c->root, 0, n, want);
    if (c->ctx->rank == c->root) {
        dbuf = tc_dev_copy(want, n * ext, c->ctx->kind);
        memcpy(before, want, n * ext);
    } else {
        dbuf = tc_dev_poisoned(c, n * ext, before);
    }
    tc_check_rc(c, "bcast", MPI_Bcast(dbuf, (int)n, c->type->dt, c->root, c->ctx->comm));
    tc_count(TC_BCAST, n * ext, c->ctx->kind);
    em_to_host(got, dbuf, n * ext, c->ctx->kind);
    tc_verify(c, "bcast", c->ctx->rank == c->root ? "root buffer modified" : "wrong result", got,
              want, n, before);
    free(before);
    tc_dev_free(dbuf, c->ctx->kind);
    free(want), free(got);
    tc_tests++;
}

/* Random floats: every rank must get the same bits, close to the exact sum. */
void tc_run_float_consistency(tc_ctx_t *ctx, size_t count, uint64_t seed)
{
    float  *in = malloc(count * sizeof(float) + 4), *got = malloc(count * sizeof(float) + 4);
    float  *all = NULL;
    void   *d;
    size_t  bad = 0;

    for (size_t i = 0; i < count; i++) {
        uint64_t h = seed ^ (i * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)ctx->rank << 48);
        h ^= h >> 29, h *= 0xbf58476d1ce4e5b9ull, h ^= h >> 32;
        in[i] = (float)((double)(h % 1000003) / 1000003.0 - 0.5) * 3.1f;
    }
    d = tc_dev_copy(in, count * sizeof(float), ctx->kind);
    MPI_Allreduce(MPI_IN_PLACE, d, (int)count, MPI_FLOAT, MPI_SUM, ctx->comm);
    tc_count(TC_ALLREDUCE, count * sizeof(float), ctx->kind);
    em_to_host(got, d, count * sizeof(float), ctx->kind);
    if (ctx->rank == 0) {
        all = malloc(count * sizeof(float) + 4);
        memcpy(all, got, count * sizeof(float));
    } else {
        all = malloc(count * sizeof(float) + 4);
    }
    MPI_Bcast(all, (int)(count * sizeof(float)), MPI_BYTE, 0, ctx->comm); /* host buffers */
    tc_count(TC_BCAST, count * sizeof(float), EM_HOST);
    for (size_t i = 0; i < count; i++) {
        double exact = 0;
        for (int r = 0; r < ctx->size; r++) {
            uint64_t h = seed ^ (i * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)r << 48);
            h ^= h >> 29, h *= 0xbf58476d1ce4e5b9ull, h ^= h >> 32;
            exact += (double)(float)((double)(h % 1000003) / 1000003.0 - 0.5) * 3.1f;
        }
        if (memcmp(&got[i], &all[i], sizeof(float)) != 0 ||
            (got[i] - exact) * (got[i] - exact) > 1e-8 * (1 + exact * exact) * ctx->size) {
            if (bad++ == 0) {
                char detail[256];
                snprintf(detail, sizeof(detail),
                         "float sum count=%zu comm=%s rank=%d at %zu: got %.9g, rank 0 has %.9g, exact %.9g",
                         count, ctx->comm_name, ctx->rank, i, got[i], all[i], exact);
                tc_fail("allreduce", detail);
            }
        }
    }
    tc_dev_free(d, ctx->kind);
    free(in), free(got), free(all);
    tc_tests++;
}

/* Free and allocate again between calls (the allocator often hands back the same address):
 * a peer that kept a mapping of the old memory would read stale data. Large enough for the
 * zero-copy algorithms, which map peers' buffers through the IPC cache. */
/* Buffers freed and allocated again (often at the same address), used on two
 * communicators over the same ranks: every rank maps its peers' buffers once per process
 * (legacy CUDA IPC refuses a second mapping of the same allocation, and one of memory freed
 * and reused while the old mapping is open), never reads a stale mapping. */
/* Open file descriptors of this process. */
static int tc_open_fds(void)
{
    DIR *dir = opendir("/proc/self/fd");
    int  n   = 0;

    if (dir == NULL) {
        return -1;
    }
    while (readdir(dir) != NULL) {
        n++;
    }
    closedir(dir);
    return n;
}

void tc_run_reuse(tc_ctx_t *ctx, uint64_t seed)
{
    const size_t count = 50000;
    int32_t     *host = malloc(count * sizeof(int32_t)), *got = malloc(count * sizeof(int32_t));
    void        *prev = NULL;
    int          reused = 0, fds;
    MPI_Comm     twin;

    MPI_Comm_dup(ctx->comm, &twin);
    fds = tc_open_fds(); /* every round exports fresh memory (cuMemCreate memory: descriptors) */
    for (int round = 0; round < 4; round++) {
        void  *d = em_alloc(count * sizeof(int32_t), ctx->kind);
        size_t bad = 0;
        reused += (d == prev);
        for (size_t i = 0; i < count; i++) {
            host[i] = (int32_t)((seed + (uint64_t)round * 7919 + i) % 1000) + ctx->rank;
        }
        em_to_dev(d, host, count * sizeof(int32_t), ctx->kind);
        MPI_Allreduce(MPI_IN_PLACE, d, (int)count, MPI_INT32_T, MPI_SUM, ctx->comm);
        tc_count(TC_ALLREDUCE, count * sizeof(int32_t), ctx->kind);
        /* the same buffer on the other communicator: sum again */
        MPI_Allreduce(MPI_IN_PLACE, d, (int)count, MPI_INT32_T, MPI_SUM, twin);
        tc_count(TC_ALLREDUCE, count * sizeof(int32_t), ctx->kind);
        em_to_host(got, d, count * sizeof(int32_t), ctx->kind);
        for (size_t i = 0; i < count; i++) {
            int32_t base = (int32_t)((seed + (uint64_t)round * 7919 + i) % 1000);
            int32_t want = (base * ctx->size + ctx->size * (ctx->size - 1) / 2) * ctx->size;
            bad += (got[i] != want);
        }
        if (bad) {
            char detail[200];
            snprintf(detail, sizeof(detail), "round %d comm=%s rank=%d: %zu wrong elements after "
                     "freeing and allocating again%s, on two communicators", round,
                     ctx->comm_name, ctx->rank, bad, d == prev ? " (same address)" : "");
            tc_fail("allreduce", detail);
        }
        prev = d;
        em_free(d, ctx->kind);
        tc_tests++;
    }
    if (fds >= 0 && tc_open_fds() >= fds + 4) {
        char detail[120];
        snprintf(detail, sizeof(detail), "comm=%s rank=%d: %d file descriptors open after 4 "
                 "rounds, %d before", ctx->comm_name, ctx->rank, tc_open_fds(), fds);
        tc_fail("allreduce", detail);
    }
    MPI_Comm_free(&twin);
    if (tc_verbose && ctx->rank == 0) {
        printf("coll_check: buffer reuse: %d of 3 allocations came back at the same address\n", reused);
    }
    free(host), free(got);
}

/* Inputs written on the default stream just before the call, with no synchronisation (what
 * an application does after its kernel): the component must wait for them, on every path
 * (LL, one_shot, zero copy, staged: a count of each size). On the simulated GPU the write
 * happens only when someone waits for that stream; on host memory at once (results only).
 * Allreduce out of place and in place when allreduce is tested, bcast when bcast is. */
void tc_run_app_order(tc_ctx_t *ctx, uint64_t seed, int allreduce, int bcast)
{
    static const size_t counts[] = {1, 1000, (size_t)1 << 20};
    const size_t        max = counts[2], bytes_max = max * sizeof(int32_t);
    int32_t            *host = malloc(bytes_max), *got = malloc(bytes_max);
    void               *s = em_alloc(bytes_max, ctx->kind), *r = em_alloc(bytes_max, ctx->kind);

    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        const size_t count = counts[c], bytes = count * sizeof(int32_t);
        for (int round = allreduce ? 0 : 2; round < (bcast ? 3 : 2); round++) {
            const int root = ctx->size - 1;
            size_t    bad  = 0;
            memset(got, 0xa5, bytes);
            em_to_dev(s, got, bytes, ctx->kind); /* poison, synchronously */
            em_to_dev(r, got, bytes, ctx->kind);
            for (size_t i = 0; i < count; i++) {
                host[i] = (int32_t)((seed + (uint64_t)round * 131 + i) % 4093) + ctx->rank;
            }
            if (round < 2 || ctx->rank == root) {
                em_to_dev_queued(round == 0 ? s : r, host, bytes, ctx->kind);
            }
            if (round == 0) {
                MPI_Allreduce(s, r, (int)count, MPI_INT32_T, MPI_SUM, ctx->comm);
            } else if (round == 1) {
                MPI_Allreduce(MPI_IN_PLACE, r, (int)count, MPI_INT32_T, MPI_SUM, ctx->comm);
            } else {
                MPI_Bcast(r, (int)count, MPI_INT32_T, root, ctx->comm);
            }
            tc_count(round < 2 ? TC_ALLREDUCE : TC_BCAST, bytes, ctx->kind);
            em_to_host(got, r, bytes, ctx->kind);
            for (size_t i = 0; i < count; i++) {
                int32_t base = (int32_t)((seed + (uint64_t)round * 131 + i) % 4093);
                int32_t want = round < 2 ? base * ctx->size + ctx->size * (ctx->size - 1) / 2
                                         : base + root;
                bad += (got[i] != want);
            }
            if (bad) {
                char detail[200];
                snprintf(detail, sizeof(detail), "round %d count %zu comm=%s rank=%d: %zu wrong "
                         "elements when the input was still being written on the default "
                         "stream", round, count, ctx->comm_name, ctx->rank, bad);
                tc_fail(round < 2 ? "allreduce" : "bcast", detail);
            }
            tc_tests++;
        }
    }
    em_free(s, ctx->kind), em_free(r, ctx->kind);
    free(host), free(got);
}

const char *const tc_coll_names[TC_NCOLL] = {"allreduce", "bcast", "allgather", "reduce_scatter",
                                             "reduce_scatter_block"};

void tc_run_coll(int coll, const tc_case_t *c)
{
    switch (coll) {
    case TC_ALLREDUCE: tc_run_allreduce(c); break;
    case TC_BCAST:     tc_run_bcast(c); break;
    case TC_ALLGATHER: tc_run_allgather(c); break;
    case TC_RS:        tc_run_reduce_scatter(c); break;
    case TC_RSB:       tc_run_reduce_scatter_block(c); break;
    }
}
