/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_costs: the calls it measures, and its runs beyond one call (a lagging rank, kinds
 * changing, the host-memory cache around releases, communicators asserting host memory).
 */
#include "tests/mpi/check_costs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const char *const costs_coll_names[4] = {"allreduce", "bcast", "allgather", "reduce_scatter_block"};

/* One call of coll on count ints per rank (SUM), in place when in_place (root 0 for bcast);
 * returns the wrong elements of this rank's result. */
int costs_call(int coll, MPI_Comm comm, void *dbuf, void *dsend, int32_t *host, size_t count,
                      em_kind_t kind, int in_place)
{
    int    rank, size, bad = 0;
    size_t out_elems;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    switch (coll) {
    case K_ALLREDUCE:
        for (size_t i = 0; i < count; i++) {
            host[i] = (int32_t)(i % 97) + rank;
        }
        em_to_dev(in_place ? dbuf : dsend, host, count * 4, kind);
        MPI_Allreduce(in_place ? MPI_IN_PLACE : dsend, dbuf, (int)count, MPI_INT32_T, MPI_SUM, comm);
        em_to_host(host, dbuf, count * 4, kind);
        for (size_t i = 0; i < count; i++) {
            bad += host[i] != (int32_t)((i % 97) * size + size * (size - 1) / 2);
        }
        break;
    case K_BCAST:
        for (size_t i = 0; i < count; i++) {
            host[i] = rank == 0 ? (int32_t)(i * 7 + 3) : -1;
        }
        em_to_dev(dbuf, host, count * 4, kind);
        MPI_Bcast(dbuf, (int)count, MPI_INT32_T, 0, comm);
        em_to_host(host, dbuf, count * 4, kind);
        for (size_t i = 0; i < count; i++) {
            bad += host[i] != (int32_t)(i * 7 + 3);
        }
        break;
    case K_ALLGATHER:
        out_elems = count * (size_t)size;
        for (size_t i = 0; i < count; i++) {
            host[i] = (int32_t)(rank * 1000 + (int)i);
        }
        em_to_dev(in_place ? (char *)dbuf + (size_t)rank * count * 4 : dsend, host, count * 4, kind);
        MPI_Allgather(in_place ? MPI_IN_PLACE : dsend, (int)count, MPI_INT32_T, dbuf, (int)count,
                      MPI_INT32_T, comm);
        em_to_host(host, dbuf, out_elems * 4, kind);
        for (size_t i = 0; i < out_elems; i++) {
            bad += host[i] != (int32_t)((int)(i / count) * 1000 + (int)(i % count));
        }
        break;
    default: /* reduce_scatter_block: count per rank */
        for (size_t i = 0; i < count * (size_t)size; i++) {
            host[i] = (int32_t)(i % 89) + rank;
        }
        em_to_dev(in_place ? dbuf : dsend, host, count * (size_t)size * 4, kind);
        MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : dsend, dbuf, (int)count, MPI_INT32_T,
                                 MPI_SUM, comm);
        em_to_host(host, dbuf, count * 4, kind);
        for (size_t i = 0; i < count; i++) {
            size_t g = (size_t)rank * count + i;
            bad += host[i] != (int32_t)((g % 89) * size + size * (size - 1) / 2);
        }
        break;
    }
    return bad;
}

/* A rank that lags behind its peers through a run of LL calls: the root of a bcast needs
 * nothing from the others, so without the empty lines (cg_ll_slot_lines) it ran two calls
 * ahead and its third call's lines overwrote the first's before the slow rank read them
 * (a hang, or the wrong data). The last rank sleeps before every call; every result is
 * checked. Returns the wrong elements. */
int costs_lagging_rank(void *dbuf, void *dsend, int32_t *host, em_kind_t kind)
{
    static const int sequence[] = {K_BCAST, K_BCAST, K_ALLGATHER, K_BCAST, K_ALLREDUCE, K_BCAST,
                                   K_BCAST, K_RSB, K_BCAST, K_BCAST};
    int              rank, size, bad = 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (size_t i = 0; i < sizeof(sequence) / sizeof(sequence[0]); i++) {
        if (rank == size - 1) {
            usleep(50000);
        }
        bad += costs_call(sequence[i], MPI_COMM_WORLD, dbuf, dsend, host, 16, kind, 0);
    }
    return bad;
}

/* One allreduce (SUM) of count ints whose values depend on salt, checked; wrong elements. */
static int costs_wrap_call(void *dbuf, void *dsend, int32_t *host, size_t count, em_kind_t kind,
                           int salt)
{
    int rank, size, bad = 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (size_t i = 0; i < count; i++) {
        host[i] = (int32_t)((i * 131 + (size_t)salt * 7919 + (size_t)rank * 17) % 100003);
    }
    em_to_dev(dsend, host, count * 4, kind);
    MPI_Allreduce(dsend, dbuf, (int)count, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
    em_to_host(host, dbuf, count * 4, kind);
    for (size_t i = 0; i < count; i++) {
        int64_t want = 0;
        for (int r = 0; r < size; r++) {
            want += (int64_t)((i * 131 + (size_t)salt * 7919 + (size_t)r * 17) % 100003);
        }
        bad += host[i] != (int32_t)want;
    }
    return bad;
}

/* The LL flags' wrap, run with coll_gpu_debug_ll_flag_period = period and allreduce forced
 * to ll: a call of 1000 ints, period - 1 calls of one int, then 1000 ints again, which has
 * the first call's flag and its inbox half. Even period: the first call completes (period
 * completions in between). Odd: the last rank passes host memory to the first call, which
 * the others give up, their lines left unread (period - 1 completions in between). Either
 * way the first call's lines lie further into the slots than the one-int calls wrote, and
 * must not be taken as the last call's. The ranks but 0 wait 20 ms before the last call, so
 * that rank 0 looks at its inbox before their lines come. Inputs differ from round to
 * round; every result is checked. Returns the wrong elements. */
int costs_wrap(void *dbuf, void *dsend, int32_t *hbuf, int32_t *hsend, int32_t *host,
               em_kind_t kind, long period)
{
    int rank, size, bad = 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < 3; round++) {
        const int on_host = period % 2 == 1 && rank == size - 1;
        bad += costs_wrap_call(on_host ? (void *)hbuf : dbuf, on_host ? (void *)hsend : dsend,
                               host, 1000, on_host ? EM_HOST : kind, 2 * round);
        for (long i = 0; i < period - 1; i++) {
            bad += costs_wrap_call(dbuf, dsend, host, 1, kind, (int)i);
        }
        if (rank != 0) {
            usleep(20000);
        }
        bad += costs_wrap_call(dbuf, dsend, host, 1000, kind, 2 * round + 1);
    }
    return bad;
}

/* Calls on a communicator with its context and board, where the ranks' memory kinds
 * change from call to call: the calls run before the agreement (the agreement rides on the
 * LL lines, or on the first host barrier), so in every call where one rank passes host
 * buffers, each of the others starts the call and must find it missing a rank, cancel it
 * and take the staged path (exactly size - 1 misses per such call, coll_gpu_ll_missed); in
 * the others nobody misses. label: what the forced algorithms are. Then
 * runs of 100 bcasts with the root on host memory (it runs ahead of the others, past the
 * board's ring of 64 calls) and with a non-root on host memory. Every result is checked.
 * Returns the wrong elements (and counts a failure on a wrong number of misses). */
int costs_kinds_varying(void *dbuf, void *dsend, int32_t *hbuf, int32_t *hsend,
                               int32_t *host, em_kind_t kind, const char *label)
{
    unsigned long long before[C_NUM], after[C_NUM], missed, all_missed = 0;
    unsigned long long want = 0;
    int                rank, size, bad = 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    costs_read(before);
    for (int i = 0; i < 120; i++) {
        const int coll = i % (size > 4 ? 3 : 4), host_rank = i % 3 == 0 ? (i / 3) % size : -1;
        const int on_host = rank == host_rank;
        bad += costs_call(coll, MPI_COMM_WORLD, on_host ? (void *)hbuf : dbuf,
                          on_host ? (void *)hsend : dsend, host, 16 + (size_t)(i % 5),
                          on_host ? EM_HOST : kind, i % 2);
        want += host_rank >= 0 ? (unsigned long long)(size - 1) : 0;
    }
    for (int run = 0; run < 2; run++) { /* the root on host memory, then rank size - 1 */
        const int on_host = run == 0 ? rank == 0 : rank == size - 1;
        for (int i = 0; i < 100; i++) {
            bad += costs_call(K_BCAST, MPI_COMM_WORLD, on_host ? (void *)hbuf : dbuf, NULL, host,
                              8, on_host ? EM_HOST : kind, 0);
        }
        want += 100ull * (unsigned long long)(size - 1);
    }
    costs_read(after);
    missed = after[C_MISSED] - before[C_MISSED];
    MPI_Allreduce(&missed, &all_missed, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (all_missed != want) {
        costs_failures++;
        if (rank == 0) {
            fprintf(stderr, "coll_costs: FAIL %s, kinds changing: %llu misses over the "
                    "ranks, expected %llu\n", label, all_missed, want);
        }
    } else if (rank == 0) {
        char what[64];
        snprintf(what, sizeof(what), "%s, kinds changing", label);
        printf("%-34s %llu misses, as expected\n", what, all_missed);
    }
    return bad;
}

/* The host-memory cache forgets the buffers that a release of address space overlaps, and
 * no other (UCX's memory hooks report each release with its range; a released range may
 * come back as device memory). Two host buffers in pages of their own: known from the call
 * before (no query), still known after an unrelated munmap (which the hooks saw: the
 * releases counter moved), the send buffer queried again after its page was mapped anew
 * (MAP_FIXED over it: a release of that page; the receive buffer still known), then both
 * known again. The first version forgot everything at any release, and missed on every call
 * where the collective underneath released memory of its own. A release by another thread
 * during a call's query (Open MPI's, UCX's) makes that buffer's entry wait for the next
 * call: a round that saw one is run again, up to three times. */
static int costs_host_release_round(char *pages, size_t page, int32_t *host, int last)
{
    static const char *const steps[4] = {"nothing", "an unrelated munmap",
                                         "the send page mapped anew", "nothing"};
    static const unsigned long long want_queries[4] = {0, 0, 1, 0}, want_hits[4] = {2, 2, 1, 2};
    unsigned long long before[C_NUM], after[C_NUM], q[4], h[4], released[4], stray = 0;
    int                rank, bad = 0, wrong[4], any_wrong = 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int step = -1; step < 4; step++) { /* -1: the call that makes both known */
        unsigned long long releases = costs_releases();
        if (step == 1) {
            void *other = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                               -1, 0);
            if (other != MAP_FAILED) {
                munmap(other, 1 << 16);
            }
        } else if (step == 2 &&
                   mmap(pages + page, page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != pages + page) {
            fprintf(stderr, "coll_costs: FAIL rank %d: the send page not mapped anew\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1); /* the others are in the collectives of this round */
        }
        if (step >= 0) {
            released[step] = costs_releases() - releases;
        }
        releases = costs_releases();
        costs_read(before);
        bad += costs_call(K_ALLREDUCE, MPI_COMM_WORLD, pages, pages + page, host, 16, EM_HOST, 0);
        costs_read(after);
        stray += costs_releases() - releases;
        if (step >= 0) {
            q[step]     = after[C_QUERIES] - before[C_QUERIES];
            h[step]     = after[C_HITS] - before[C_HITS];
            wrong[step] = q[step] != want_queries[step] || h[step] != want_hits[step] ||
                          ((step == 1 || step == 2) && released[step] == 0);
            any_wrong |= wrong[step];
        }
    }
    if (!bad && !any_wrong) {
        return 0;
    }
    if (!bad && stray > 0 && !last) {
        return 1; /* run it again */
    }
    for (int step = 0; step < 4; step++) {
        fprintf(stderr, "coll_costs: %s rank %d: host buffers after %s: %llu releases seen, "
                "queries %llu, cache hits %llu (expected %llu, %llu)%s; %llu releases during "
                "the calls\n", wrong[step] ? "FAIL" : "fine", rank, steps[step], released[step],
                q[step], h[step], want_queries[step], want_hits[step],
                bad ? ", wrong result" : "", stray);
    }
    return -1;
}

void costs_host_release(int32_t *host)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char        *pages;
    int          rank, rc = 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pages = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) {
        fprintf(stderr, "coll_costs: FAIL rank %d: no pages for the host buffers\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int round = 0; round < 3; round++) { /* every rank takes part in every round */
        int worst[2], mine[2];
        rc      = costs_host_release_round(pages, page, host, round == 2);
        mine[0] = -rc, mine[1] = rc; /* -min and max of 0 pass, 1 again, -1 failed */
        MPI_Allreduce(mine, worst, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (worst[0] > 0 || worst[1] == 0) {
            break; /* a rank failed, or every rank passed */
        }
    }
    if (rc != 0) {
        costs_failures++;
    } else if (rank == 0) {
        printf("%-34s queries 0 0 1 0, cache hits 2 2 1 2\n", "host buffers around releases");
    }
    munmap(pages, 2 * page);
}

/* One measured call on comm (after one warm-up when warm): its counter deltas checked. */
void costs_measure(const costs_case_t *k, int coll, MPI_Comm comm, void *buf, void *send,
                          int32_t *host, em_kind_t kind, int warm)
{
    unsigned long long before[C_NUM], after[C_NUM], delta[C_NUM], releases = costs_releases();
    int                rank, bad = 0;

    MPI_Comm_rank(comm, &rank);
    if (warm) {
        bad = costs_call(coll, comm, buf, send, host, 16, kind, 0);
    }
    costs_read(before);
    bad += costs_call(coll, comm, buf, send, host, 16, kind, 0);
    costs_read(after);
    for (int x = 0; x < C_NUM; x++) {
        delta[x] = after[x] - before[x];
    }
    costs_check(k, delta, rank, bad != 0, kind, costs_releases() - releases);
}

/* Communicators whose info asserts host memory only (mpi_assert_memory_alloc_kinds, MPI
 * 4.1): when every rank asserts it, calls after the first agreement agree no more (across
 * nodes too): host buffers go underneath at the cost of Open MPI alone, device buffers
 * (against the assertion) are staged, and a mix of both still meets underneath with exact
 * results. When one rank only asserts it, every call still agrees. */
void costs_asserted(void *dbuf, void *dsend, int32_t *hbuf, int32_t *hsend, int32_t *host,
                           em_kind_t kind)
{
    const long X = -1;
    const costs_case_t host_call = {"asserted: host allreduce", {0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2}, {0}};
    const costs_case_t dev_call  = {"asserted: device allreduce", {0, 1, 0, 0, 1, 0, X, X, 0, 8 * 16, 0, 0, 0, 2}, {0}};
    const costs_case_t mixed     = {"asserted: mixed host/device", {0, X, X, 0, 1, 0, X, X, 0, X, 0, 0, 0, 2}, {0}};
    const costs_case_t partial   = {"asserted on rank 0 only", {0, 0, 1, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 2}, {0}};
    MPI_Info           info;
    MPI_Comm           all, some;
    int                rank;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_memory_alloc_kinds", "system, mpi");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &all);
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, rank == 0 ? info : MPI_INFO_NULL, &some);
    MPI_Info_free(&info);
    costs_measure(&host_call, K_ALLREDUCE, all, hbuf, hsend, host, EM_HOST, 1);
    for (int coll = K_BCAST; coll <= K_RSB; coll++) { /* each entry point's direct path */
        costs_case_t k = host_call;
        char         name[64];
        snprintf(name, sizeof(name), "asserted: host %s", costs_coll_names[coll]);
        k.name               = name;
        k.want[C_QUERIES] = coll == K_BCAST ? 1 : 2; /* one per buffer */
        costs_measure(&k, coll, all, hbuf, hsend, host, EM_HOST, 1);
    }
    costs_measure(&dev_call, K_ALLREDUCE, all, dbuf, dsend, host, kind, 0);
    costs_measure(&mixed, K_ALLREDUCE, all, rank == 0 ? dbuf : (void *)hbuf,
                  rank == 0 ? dsend : (void *)hsend, host, rank == 0 ? kind : EM_HOST, 0);
    costs_measure(&partial, K_ALLREDUCE, some, hbuf, hsend, host, EM_HOST, 1);
    MPI_Comm_free(&all);
    MPI_Comm_free(&some);
}


/* Layouts with gaps, staged piece by piece: an allgather into elements of 4 int32s one
 * extent of 8 apart (16 elements per rank) copies its input in (one copy) and its output
 * out as one strided copy of all ranks' rows (one 2D copy, its data bytes only); two
 * allgathervs into the even and odd blocks of one array likewise (each one copy in, its
 * blocks one strided copy out). The gaps are never read nor written, and the results are
 * exact. */
void costs_gapped(void *dbuf, void *dsend, int32_t *host, em_kind_t kind)
{
    const long   X = -1, n = 16;
    MPI_Datatype quad, spaced;
    int          rank, size, bad = 0;
    int         *counts, *displs[2];
    unsigned long long before[C_NUM], after[C_NUM], delta[C_NUM];

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    counts    = malloc(sizeof(int) * (size_t)size);
    displs[0] = malloc(sizeof(int) * (size_t)size);
    displs[1] = malloc(sizeof(int) * (size_t)size);
    MPI_Type_contiguous(4, MPI_INT32_T, &quad);
    MPI_Type_create_resized(quad, 0, 32, &spaced);
    MPI_Type_commit(&spaced);
    for (int round = 0; round < 2; round++) { /* a warm-up, then the measured call */
        const costs_case_t gapped = {"device allgather, gaps (staged)",
                                     {0, 1, 0, 0, 1, 0, X, 2, 0, (n * 16) * (1 + size), 0, 0, 0, 2}, {0}};
        for (long i = 0; i < 4 * n; i++) {
            host[i] = (int32_t)(rank * 100000 + i);
        }
        em_to_dev(dsend, host, (size_t)n * 16, kind);
        costs_read(before);
        MPI_Allgather(dsend, 4 * (int)n, MPI_INT32_T, dbuf, (int)n, spaced, MPI_COMM_WORLD);
        costs_read(after);
        em_to_host(host, dbuf, (size_t)(n * size) * 32, kind);
        bad = 0;
        for (long e = 0; e < n * size; e++) {
            for (long j = 0; j < 4; j++) {
                bad += host[e * 8 + j] != (int32_t)((e / n) * 100000 + (e % n) * 4 + j);
            }
        }
        for (int x = 0; x < C_NUM; x++) {
            delta[x] = after[x] - before[x];
        }
        if (round == 1) {
            costs_check(&gapped, delta, rank, bad != 0, kind, 0);
        }
    }
    {
        const costs_case_t interleaved = {"two iallgathervs, interleaved",
                                          {0, 2, 0, 0, 2, 0, X, 4, 0, 2 * n * 4 * (1 + size), 0, 0, 0, 4}, {0}};
        MPI_Request req[2];
        for (int half = 0; half < 2; half++) {
            for (int r = 0; r < size; r++) {
                counts[r]       = (int)n;
                displs[half][r] = (2 * r + half) * (int)n;
            }
            for (long i = 0; i < n; i++) {
                host[i] = (int32_t)(half * 1000000 + rank * 1000 + i);
            }
            em_to_dev((char *)dsend + (size_t)half * 4096, host, (size_t)n * 4, kind);
        }
        costs_read(before);
        for (int half = 0; half < 2; half++) {
            MPI_Iallgatherv((char *)dsend + (size_t)half * 4096, (int)n, MPI_INT32_T, dbuf, counts,
                            displs[half], MPI_INT32_T, MPI_COMM_WORLD, &req[half]);
        }
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        costs_read(after);
        em_to_host(host, dbuf, (size_t)(2 * n * size) * 4, kind);
        bad = 0;
        for (long b = 0; b < 2 * size; b++) {
            for (long i = 0; i < n; i++) {
                bad += host[b * n + i] != (int32_t)((b % 2) * 1000000 + (b / 2) * 1000 + i);
            }
        }
        for (int x = 0; x < C_NUM; x++) {
            delta[x] = after[x] - before[x];
        }
        costs_check(&interleaved, delta, rank, bad != 0, kind, 0);
    }
    MPI_Type_free(&spaced), MPI_Type_free(&quad);
    free(counts), free(displs[0]), free(displs[1]);
}

/* The group's table of known buffers under a caching allocator's reuse: a fixed send buffer
 * and receive buffers taken by turns (two_shot, zero copy; the caller forces it). Few
 * enough (12: 13 buffers of every rank, 52 entries at 4 ranks) and after one pass every
 * call finds them all known: nothing exported. Too many for the table (70) and every call
 * exports its receive buffer, but never the send buffer, which every call uses: the table
 * keeps what is used, least recently used out. */
void costs_known(void *dsend, int32_t *host, em_kind_t kind)
{
    static const int rotating[2] = {12, 70};
    const size_t     count = 256;
    int              rank;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int set = 0; set < 2; set++) {
        const int n = rotating[set];
        void    **recv = calloc((size_t)n, sizeof(void *));
        unsigned long long before[C_NUM], after[C_NUM];
        long      exports, want = set == 0 ? 0 : 2L * n;
        int       bad = 0;
        for (int i = 0; i < n; i++) {
            recv[i] = em_alloc(count * sizeof(int32_t), kind);
        }
        for (int i = 0; i < n; i++) { /* the first pass: every buffer exported once */
            bad += costs_call(K_ALLREDUCE, MPI_COMM_WORLD, recv[i], dsend, host, count, kind, 0);
        }
        costs_read(before);
        for (int i = 0; i < 2 * n; i++) {
            bad += costs_call(K_ALLREDUCE, MPI_COMM_WORLD, recv[i % n], dsend, host, count, kind, 0);
        }
        costs_read(after);
        exports = (long)(after[C_EXPORTS] - before[C_EXPORTS]);
        if (bad || exports != want || after[C_FAST] - before[C_FAST] != 2ull * (unsigned)n) {
            costs_failures++;
            fprintf(stderr, "coll_costs: FAIL rank %d: %d receive buffers by turns: %ld exports "
                    "in %d calls (expected %ld), %llu fast, %d wrong elements\n", rank, n, exports,
                    2 * n, want, after[C_FAST] - before[C_FAST], bad);
        } else if (rank == 0) {
            char what[64];
            snprintf(what, sizeof(what), "known buffers, %d by turns", n);
            printf("%-34s %ld exports in %d calls\n", what, exports, 2 * n);
        }
        for (int i = 0; i < n; i++) {
            em_free(recv[i], kind);
        }
        free(recv);
    }
}

/* A first call that makes a context across nodes (the default 4 inter-node lanes): what
 * this rank gave its exchanges, worker addresses included, is less than those alone took
 * in slots of the longest UCX may make (4 KiB, as until 2026-11-30): they go in slots of
 * the longest any rank has. made > 0: the first call of a communicator that takes a freed
 * one's context (coll_gpu_context_keep), which exchanges no addresses: half of what
 * making it gave at most. contexts: the call made or took a context as said. */
static void costs_check_setup(int bad, unsigned long long given, unsigned long long made,
                              int contexts, int rank)
{
    const unsigned long long most = made > 0 ? made / 2 : 4 * (4096 + 8) - 1;
    const char *what = made > 0 ? "context kept, new communicator" : "context made across nodes";

    if (bad || !contexts || given == 0 || given > most) {
        costs_failures++;
        fprintf(stderr, "coll_costs: FAIL rank %d: %s: its first call (%d wrong elements, "
                "context %s) gave %llu bytes to the setup's exchanges, expected 1 to %llu\n",
                rank, what, bad, contexts ? "as expected" : "not made or taken as expected",
                given, most);
    } else if (rank == 0) {
        printf("%-34s %llu bytes given to its exchanges (at most %llu)\n", what, given, most);
    }
}

/* A new communicator's first large call across nodes makes its context; freed, the next
 * communicator's takes it (coll_gpu_contexts_made, coll_gpu_contexts_kept). */
void costs_setup(void *dbuf, void *dsend, int32_t *host, size_t count, em_kind_t kind, int rank)
{
    unsigned long long made = 0;

    for (int round = 0; round < 2; round++) {
        unsigned long long before[3], after[3];
        MPI_Comm           dup;
        int                bad;
        costs_contexts(before);
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        bad = costs_call(K_ALLREDUCE, dup, dbuf, dsend, host, count, kind, 0);
        costs_contexts(after);
        costs_check_setup(bad, after[0] - before[0], made,
                          after[1] - before[1] == (round == 0 ? 1u : 0u) &&
                              after[2] - before[2] == (round == 0 ? 0u : 1u), rank);
        made = after[0] - before[0];
        MPI_Comm_free(&dup);
    }
}
