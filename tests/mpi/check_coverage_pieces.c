/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Staged buffers whose layout has gaps are copied piece by piece: the bytes between the
 * pieces belong to the application while the call runs. Three cases that a copy of the
 * whole span gets wrong:
 *   - gap bytes written (from the host, as a kernel of the application could) while a
 *     nonblocking allgather into a layout with gaps is in flight keep their new values;
 *   - two nonblocking allgathervs into the even and odd blocks of one array, in flight
 *     together, both land (each request's holes are the other's blocks; with blocks of
 *     64 bytes the staged receive buffer once fell on the send buffer's address, which Open
 *     MPI's nonblocking collectives take for a call in place);
 *   - a datatype over two allocations (absolute addresses, MPI_BOTTOM): bcast into it,
 *     allgather, iallgather and allgather_init (two starts) from it (the span between them
 *     lies in neither, and its two equal pieces are no strided run); also with host memory
 *     first and device memory last (once passed underneath as host memory), the host
 *     memory terabytes below the device memory (a span no arena can mirror: staged
 *     compactly); and an allgather from and a bcast into two elements of such a type
 *     whose extent is half a part (elements that lie across each other's pieces), the
 *     allgather also from one contiguous pair of them (a block that itself spans both).
 * Also (MPI allows it: the communicator goes when its last operation has completed) a
 * nonblocking allreduce and a persistent one whose communicator is freed while they are
 * pending; the persistent one is started twice after the free. Device memory on every
 * rank only: Open MPI 4.1's own nonblocking collectives (host memory) crash on that.
 */
#include "check_coverage.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CP_POISON 0xA5

static int32_t cp_value(uint64_t seed, int rank, size_t i)
{
    return (int32_t)((seed * 31 + (uint64_t)rank * 1000003u + i * 2654435761u) % 1000033u);
}

static void cp_expect(const tc_ctx_t *ctx, const char *what, size_t n, size_t wrong)
{
    if (wrong) {
        char detail[200];
        snprintf(detail, sizeof(detail), "%s n=%zu comm=%s rank=%d: %zu wrong elements", what,
                 n, ctx->comm_name, ctx->rank, wrong);
        tc_fail(what, detail);
    }
    tc_tests++;
}

static void cp_rc(const tc_ctx_t *ctx, const char *what, int rc)
{
    if (rc != MPI_SUCCESS) {
        char detail[200];
        snprintf(detail, sizeof(detail), "%s comm=%s rank=%d: error %d", what, ctx->comm_name,
                 ctx->rank, rc);
        tc_fail(what, detail);
    }
}

/* Elements of 4 int32s of data then 4 of gap; every gap is rewritten during the call. */
static void cp_gap_writes(tc_ctx_t *ctx, size_t n, uint64_t seed)
{
    const size_t total = n * (size_t)ctx->size, rbytes = total * 32;
    int32_t     *mine = malloc(n * 16), *got = malloc(rbytes);
    char        *sdev = em_alloc(n * 16, ctx->kind), *rdev = em_alloc(rbytes, ctx->kind);
    MPI_Datatype quad, spaced;
    MPI_Request  req;
    size_t       wrong = 0;

    MPI_Type_contiguous(4, MPI_INT32_T, &quad);
    MPI_Type_create_resized(quad, 0, 32, &spaced);
    MPI_Type_commit(&spaced);
    for (size_t i = 0; i < n * 4; i++) {
        mine[i] = cp_value(seed, ctx->rank, i);
    }
    em_to_dev(sdev, mine, n * 16, ctx->kind);
    memset(got, CP_POISON, rbytes);
    em_to_dev(rdev, got, rbytes, ctx->kind);
    cp_rc(ctx, "iallgather into gaps",
          MPI_Iallgather(sdev, (int)n * 4, MPI_INT32_T, rdev, (int)n, spaced, ctx->comm, &req));
    for (size_t e = 0; e < total; e++) { /* the application owns the gaps meanwhile */
        int32_t mark[4] = {-(int32_t)e, 1, 2, 3};
        em_to_dev(rdev + e * 32 + 16, mark, sizeof(mark), ctx->kind);
    }
    cp_rc(ctx, "wait (gaps)", MPI_Wait(&req, MPI_STATUS_IGNORE));
    em_to_host(got, rdev, rbytes, ctx->kind);
    for (size_t e = 0; e < total; e++) {
        const int r = (int)(e / n);
        for (size_t j = 0; j < 4; j++) {
            wrong += got[e * 8 + j] != cp_value(seed, r, (e % n) * 4 + j);
            wrong += got[e * 8 + 4 + j] != (j == 0 ? -(int32_t)e : (int32_t)j);
        }
    }
    cp_expect(ctx, "iallgather: gap bytes written during the call", n, wrong);
    MPI_Type_free(&spaced), MPI_Type_free(&quad);
    em_free(sdev, ctx->kind), em_free(rdev, ctx->kind);
    free(mine), free(got);
}

/* Request 0 gathers into the even blocks of one array, request 1 into the odd ones. */
static void cp_interleaved(tc_ctx_t *ctx, size_t n, uint64_t seed)
{
    const size_t bytes = 2 * n * (size_t)ctx->size * 4;
    int         *counts = malloc(sizeof(int) * (size_t)ctx->size);
    int         *displs[2] = {malloc(sizeof(int) * (size_t)ctx->size),
                              malloc(sizeof(int) * (size_t)ctx->size)};
    int32_t     *mine = malloc(n * 4), *got = malloc(bytes);
    char        *sdev[2] = {em_alloc(n * 4, ctx->kind), em_alloc(n * 4, ctx->kind)};
    char        *rdev = em_alloc(bytes, ctx->kind);
    MPI_Request  req[2];
    size_t       wrong = 0;

    for (int half = 0; half < 2; half++) {
        for (int r = 0; r < ctx->size; r++) {
            counts[r]       = (int)n;
            displs[half][r] = (2 * r + half) * (int)n;
        }
        for (size_t i = 0; i < n; i++) {
            mine[i] = cp_value(seed + (uint64_t)half, ctx->rank, i);
        }
        em_to_dev(sdev[half], mine, n * 4, ctx->kind);
    }
    memset(got, CP_POISON, bytes);
    em_to_dev(rdev, got, bytes, ctx->kind);
    for (int half = 0; half < 2; half++) {
        cp_rc(ctx, "iallgatherv (interleaved)",
              MPI_Iallgatherv(sdev[half], (int)n, MPI_INT32_T, rdev, counts, displs[half],
                              MPI_INT32_T, ctx->comm, &req[half]));
    }
    cp_rc(ctx, "waitall (interleaved)", MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    em_to_host(got, rdev, bytes, ctx->kind);
    for (size_t b = 0; b < 2 * (size_t)ctx->size; b++) {
        for (size_t i = 0; i < n; i++) {
            wrong += got[b * n + i] != cp_value(seed + b % 2, (int)(b / 2), i);
        }
    }
    cp_expect(ctx, "two iallgathervs into interleaved blocks", n, wrong);
    em_free(sdev[0], ctx->kind), em_free(sdev[1], ctx->kind), em_free(rdev, ctx->kind);
    free(counts), free(displs[0]), free(displs[1]), free(mine), free(got);
}

/* Write or read part of a layout: host memory by the CPU, the rest as em_ does. */
static void cp_put(char *part, em_kind_t kind, const int32_t *from, size_t bytes)
{
    if (kind == EM_HOST) {
        memcpy(part, from, bytes);
    } else {
        em_to_dev(part, from, bytes, kind);
    }
}

static void cp_get(int32_t *to, const char *part, em_kind_t kind, size_t bytes)
{
    if (kind == EM_HOST) {
        memcpy(to, part, bytes);
    } else {
        em_to_host(to, part, bytes, kind);
    }
}

/* Host memory at the bottom of the address space (4 GiB), terabytes below the mappings
 * device memory comes from: a type over both spans more address space than the process
 * has. Where that address is taken, anywhere. */
#define CP_FAR_ADDRESS ((uintptr_t)1 << 32)
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000 /* Linux 4.17; older kernels take the address as a hint */
#endif

static int cp_far_cases; /* calls on device memory over allocations over 64 MiB apart */

int cv_pieces_far_cases(void)
{
    return cp_far_cases;
}

static char *cp_far_alloc(size_t bytes)
{
    void *ptr = mmap((void *)CP_FAR_ADDRESS, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

    if (ptr == MAP_FAILED) {
        ptr = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    return ptr == MAP_FAILED ? NULL : ptr;
}

/* n int32s in each of two allocations, as one element at absolute addresses; host_part:
 * the first part (in address order) is host memory, far below the second, device memory
 * (staged compactly: as it lies, it would need terabytes of arena). */
static void cp_two_allocations(tc_ctx_t *ctx, size_t n, uint64_t seed, int host_part)
{
    const size_t all = 2 * n * (size_t)ctx->size;
    const int    root = ctx->size - 1, blens[2] = {(int)n, (int)n};
    em_kind_t    kinds[2] = {host_part ? EM_HOST : ctx->kind, ctx->kind};
    char        *far = host_part ? cp_far_alloc(n * 4) : NULL;
    char        *part[2] = {host_part ? far : em_alloc(n * 4, kinds[0]),
                            em_alloc(n * 4, kinds[1])};
    char        *rdev = em_alloc(all * 4, ctx->kind);
    int32_t     *mine = malloc(2 * n * 4), *got = malloc(all * 4);
    MPI_Aint     at[2];
    MPI_Datatype both;
    MPI_Request  req, persistent = MPI_REQUEST_NULL;
    size_t       wrong = 0;

    if (part[1] < part[0]) { /* rising addresses: equal pieces at one distance, which one
                                copy must not join (it would cross from one allocation to
                                the other); with a host part, host memory first */
        char     *low  = part[1];
        em_kind_t kind = kinds[1];
        part[1] = part[0], kinds[1] = kinds[0];
        part[0] = low, kinds[0] = kind;
    }
    MPI_Get_address(part[0], &at[0]);
    MPI_Get_address(part[1], &at[1]);
    if (host_part && ctx->kind != EM_HOST && at[1] - at[0] > ((MPI_Aint)64 << 20)) {
        cp_far_cases++; /* a span mostly gaps: staged compactly (--expect-compact) */
    }
    MPI_Type_create_hindexed(2, blens, at, MPI_INT32_T, &both);
    MPI_Type_commit(&both);

    /* bcast from the last rank into both parts */
    for (size_t i = 0; i < 2 * n; i++) {
        mine[i] = ctx->rank == root ? cp_value(seed, root, i) : (int32_t)0xA5A5A5A5;
    }
    cp_put(part[0], kinds[0], mine, n * 4);
    cp_put(part[1], kinds[1], mine + n, n * 4);
    cp_rc(ctx, "bcast (two allocations)", MPI_Bcast(MPI_BOTTOM, 1, both, root, ctx->comm));
    cp_get(got, part[0], kinds[0], n * 4);
    cp_get(got + n, part[1], kinds[1], n * 4);
    for (size_t i = 0; i < 2 * n; i++) {
        wrong += got[i] != cp_value(seed, root, i);
    }
    cp_expect(ctx, host_part ? "bcast into a type over host and device memory"
                             : "bcast into a type over two allocations", n, wrong);

    /* allgather from both parts: blocking, nonblocking, persistent (started twice, new
     * data in the same parts each time) */
    for (int mode = 0; mode < 4; mode++) {
        static const char *const names[4] = {"allgather", "iallgather", "allgather_init",
                                             "allgather_init, second start"};
        const uint64_t           round = seed + 7 + (uint64_t)mode;
        char                     what[96];
        for (size_t i = 0; i < 2 * n; i++) {
            mine[i] = cp_value(round, ctx->rank, i);
        }
        cp_put(part[0], kinds[0], mine, n * 4);
        cp_put(part[1], kinds[1], mine + n, n * 4);
        memset(got, CP_POISON, all * 4);
        em_to_dev(rdev, got, all * 4, ctx->kind);
        snprintf(what, sizeof(what), "%s (two allocations)", names[mode]);
        if (mode == 0) {
            cp_rc(ctx, what,
                  MPI_Allgather(MPI_BOTTOM, 1, both, rdev, 2 * (int)n, MPI_INT32_T, ctx->comm));
        } else {
            if (mode == 1) {
                cp_rc(ctx, what, MPI_Iallgather(MPI_BOTTOM, 1, both, rdev, 2 * (int)n,
                                                MPI_INT32_T, ctx->comm, &req));
            } else {
                if (mode == 2) {
                    cp_rc(ctx, what, CV_INIT(Allgather)(MPI_BOTTOM, 1, both, rdev, 2 * (int)n,
                                                        MPI_INT32_T, ctx->comm, MPI_INFO_NULL,
                                                        &persistent));
                }
                req = persistent;
                cp_rc(ctx, "start (two allocations)", MPI_Start(&req));
            }
            cp_rc(ctx, "wait (two allocations)", MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        em_to_host(got, rdev, all * 4, ctx->kind);
        wrong = 0;
        for (size_t j = 0; j < all; j++) {
            wrong += got[j] != cp_value(round, (int)(j / (2 * n)), j % (2 * n));
        }
        snprintf(what, sizeof(what), "%s from a type over two allocations", names[mode]);
        cp_expect(ctx, what, n, wrong);
    }
    MPI_Request_free(&persistent);
    MPI_Type_free(&both);

    /* two elements of half of each part, one extent (half a part) apart: each element
     * lies across the other's pieces */
    if (n >= 2) {
        const int    h = (int)(n / 2), hblens[2] = {h, h};
        const size_t per_rank = 4 * (size_t)h;
        MPI_Datatype halves, pieces, pair;
        MPI_Type_create_hindexed(2, hblens, at, MPI_INT32_T, &pieces);
        MPI_Type_create_resized(pieces, at[0], (MPI_Aint)h * 4, &halves);
        MPI_Type_commit(&halves);
        MPI_Type_contiguous(2, halves, &pair); /* the same two, one block of a wider type */
        MPI_Type_commit(&pair);
        for (int form = 0; form < 2; form++) { /* 2 halves; 1 pair */
            for (size_t i = 0; i < 2 * n; i++) {
                mine[i] = cp_value(seed + 9 + (uint64_t)form, ctx->rank, i);
            }
            cp_put(part[0], kinds[0], mine, n * 4);
            cp_put(part[1], kinds[1], mine + n, n * 4);
            memset(got, CP_POISON, all * 4);
            em_to_dev(rdev, got, all * 4, ctx->kind);
            cp_rc(ctx, "allgather (two elements over two allocations)",
                  MPI_Allgather(MPI_BOTTOM, 2 - form, form ? pair : halves, rdev, (int)per_rank,
                                MPI_INT32_T, ctx->comm));
            em_to_host(got, rdev, all * 4, ctx->kind);
            wrong = 0;
            for (int r = 0; r < ctx->size; r++) { /* element k: part 0 then part 1, h each */
                for (size_t j = 0; j < per_rank; j++) {
                    const size_t k = j / (2 * (size_t)h), in = j % (2 * (size_t)h);
                    const size_t from = in < (size_t)h ? k * (size_t)h + in
                                                       : n + k * (size_t)h + (in - (size_t)h);
                    wrong += got[(size_t)r * per_rank + j] !=
                             cp_value(seed + 9 + (uint64_t)form, r, from);
                }
            }
            cp_expect(ctx, form ? "allgather from a pair of elements over two allocations"
                                : "allgather from two elements over two allocations", n, wrong);
        }
        MPI_Type_free(&pair);

        /* and bcast into two such elements (each written back to its own pieces) */
        for (size_t i = 0; i < 2 * n; i++) {
            mine[i] = ctx->rank == root ? cp_value(seed + 13, root, i) : (int32_t)0xA5A5A5A5;
        }
        cp_put(part[0], kinds[0], mine, n * 4);
        cp_put(part[1], kinds[1], mine + n, n * 4);
        cp_rc(ctx, "bcast (two elements over two allocations)",
              MPI_Bcast(MPI_BOTTOM, 2, halves, root, ctx->comm));
        cp_get(got, part[0], kinds[0], n * 4);
        cp_get(got + n, part[1], kinds[1], n * 4);
        wrong = 0;
        for (size_t i = 0; i < 2 * n; i++) { /* beyond 2h of a part: untouched */
            const size_t in_part = i % n;
            const int    sent = in_part < 2 * (size_t)h;
            wrong += got[i] != (sent || ctx->rank == root ? cp_value(seed + 13, root, i)
                                                          : (int32_t)0xA5A5A5A5);
        }
        cp_expect(ctx, "bcast into two elements over two allocations", n, wrong);
        MPI_Type_free(&halves);
        MPI_Type_free(&pieces);
    }
    for (int i = 0; i < 2; i++) {
        if (part[i] == far) {
            munmap(far, n * 4);
        } else {
            em_free(part[i], kinds[i]);
        }
    }
    em_free(rdev, ctx->kind);
    free(mine), free(got);
}

/* A type of more far-apart blocks than compact staging takes apart (4096): 3000 elements,
 * each a word at the head and one at the tail of one 64 MiB allocation (a span mostly of
 * gaps). The plan is given up at once, and the bcast into it is staged as it lies: exact. */
static void cp_many_blocks(tc_ctx_t *ctx, uint64_t seed)
{
    const size_t span = (size_t)64 << 20, n = 3000, bytes = n * 4;
    const int    root = ctx->size - 1, blens[2] = {1, 1};
    char        *big = em_alloc(span, ctx->kind);
    int32_t     *mine = malloc(2 * bytes), *got = malloc(2 * bytes);
    MPI_Aint     at[2] = {0, (MPI_Aint)(span - bytes)};
    MPI_Datatype ends, one, many;
    size_t       wrong = 0;

    MPI_Type_create_hindexed(2, blens, at, MPI_INT32_T, &ends);
    MPI_Type_create_resized(ends, 0, 4, &one); /* element k: word k of the head and tail */
    MPI_Type_contiguous((int)n, one, &many);
    MPI_Type_commit(&many);
    for (size_t i = 0; i < 2 * n; i++) {
        mine[i] = ctx->rank == root ? cp_value(seed, root, i) : (int32_t)0xA5A5A5A5;
    }
    em_to_dev(big, mine, bytes, ctx->kind);
    em_to_dev(big + span - bytes, mine + n, bytes, ctx->kind);
    cp_rc(ctx, "bcast (many far blocks)", MPI_Bcast(big, 1, many, root, ctx->comm));
    em_to_host(got, big, bytes, ctx->kind);
    em_to_host(got + n, big + span - bytes, bytes, ctx->kind);
    for (size_t i = 0; i < 2 * n; i++) { /* the root's head, then its tail */
        wrong += got[i] != cp_value(seed, root, i);
    }
    cp_expect(ctx, "bcast into a type of more far-apart blocks than compact staging takes",
              n, wrong);
    MPI_Type_free(&many), MPI_Type_free(&one), MPI_Type_free(&ends);
    em_free(big, ctx->kind);
    free(mine), free(got);
}

/* Allreduces on a duplicate of ctx's communicator, freed while they are pending. */
static void cp_freed_comm(tc_ctx_t *ctx, size_t n, uint64_t seed)
{
    const size_t bytes = n * sizeof(int32_t);
    int32_t     *mine = malloc(bytes), *got = malloc(bytes);
    char        *sdev = em_alloc(bytes, ctx->kind), *rdev = em_alloc(bytes, ctx->kind);
    MPI_Comm     dup;
    MPI_Request  reqs[2];
    size_t       wrong = 0;

    for (size_t i = 0; i < n; i++) {
        mine[i] = cp_value(seed, ctx->rank, i);
    }
    em_to_dev(sdev, mine, bytes, ctx->kind);
    memset(got, CP_POISON, bytes);
    em_to_dev(rdev, got, bytes, ctx->kind);
    MPI_Comm_dup(ctx->comm, &dup);
    cp_rc(ctx, "freed-comm iallreduce",
          MPI_Iallreduce(sdev, rdev, (int)n, MPI_INT32_T, MPI_SUM, dup, &reqs[0]));
    cp_rc(ctx, "freed-comm allreduce_init",
          CV_INIT(Allreduce)(MPI_IN_PLACE, sdev, (int)n, MPI_INT32_T, MPI_MAX, dup,
                             MPI_INFO_NULL, &reqs[1]));
    MPI_Comm_free(&dup);
    cp_rc(ctx, "freed-comm wait", MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    em_to_host(got, rdev, bytes, ctx->kind);
    for (size_t i = 0; i < n; i++) {
        int64_t sum = 0;
        for (int r = 0; r < ctx->size; r++) {
            sum += cp_value(seed, r, i);
        }
        wrong += got[i] != (int32_t)sum;
    }
    cp_expect(ctx, "iallreduce on a freed communicator", n, wrong);
    for (int round = 0; round < 2; round++) { /* max of the ranks' values, then again */
        cp_rc(ctx, "freed-comm start", MPI_Start(&reqs[1]));
        cp_rc(ctx, "freed-comm wait", MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
    }
    em_to_host(got, sdev, bytes, ctx->kind);
    wrong = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t max = cp_value(seed, 0, i);
        for (int r = 1; r < ctx->size; r++) {
            max = cp_value(seed, r, i) > max ? cp_value(seed, r, i) : max;
        }
        wrong += got[i] != max;
    }
    cp_expect(ctx, "persistent allreduce on a freed communicator", n, wrong);
    MPI_Request_free(&reqs[1]);
    em_free(sdev, ctx->kind), em_free(rdev, ctx->kind);
    free(mine), free(got);
}

void cv_run_pieces(tc_ctx_t *ctx, uint64_t seed)
{
    /* 16: blocks of 64 bytes, the staging arena's alignment (the receive buffer passed
     * underneath once fell on the send buffer, and the call was taken for one in place) */
    static const size_t counts[] = {1, 7, 16, 100};
    int                 device = ctx->kind != EM_HOST, all_device = 0;

    MPI_Allreduce(&device, &all_device, 1, MPI_INT, MPI_MIN, ctx->comm);
    cp_many_blocks(ctx, seed + 50);

    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        cp_gap_writes(ctx, counts[c], seed + c);
        cp_interleaved(ctx, counts[c], seed + 10 + c);
        cp_two_allocations(ctx, counts[c], seed + 20 + c, 0);
        cp_two_allocations(ctx, counts[c], seed + 30 + c, 1);
        if (all_device) {
            cp_freed_comm(ctx, counts[c], seed + 40 + c);
        }
    }
}
