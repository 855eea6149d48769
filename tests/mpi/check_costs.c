/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_costs: what one call costs, from the component's counters (MPI_T performance
 * variables coll_gpu_*), asserted per path and algorithm. Counts, not times: they are the
 * same on a loaded machine. Each case runs its call twice (the first one warms up: mappings,
 * the board, contexts) and measures the second on every rank; rank 0 prints the table.
 *
 *   coll_costs [--mem device|pool|vmm|vmm-private] [--nodes] [--local] [--no-host-cache]
 *     --nodes  the communicator spans (virtual) nodes: expect the agreement allreduce
 *     --local  run with coll_gpu_buffer_check=local: no in-band agreement either, so the
 *              small calls wait once on the host
 *     --no-host-cache  run with coll_gpu_host_cache=0: host buffers are queried every call
 *     --app-ready  run with coll_gpu_app_wait=none: no wait for the application's work, so
 *              a zero-copy call waits on the host once less and a one_shot no differently
 * Then a run of LL calls with one rank lagging (results checked; a hang is a failure).
 * Results are checked too (against host arithmetic), so a cheap wrong call cannot pass.
 */
#include "examples/example_mem.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

enum { C_FAST, C_STAGED, C_UNDER, C_LOCAL, C_MPI, C_AGREE, C_WAITS, C_OPS, C_SCRATCH, C_STAGEB,
       C_EXPORTS, C_IMPORTS, C_MISSED, C_QUERIES, C_HITS, C_NUM };
static const char *const counter_names[C_NUM] = {
    "calls_fast", "calls_staged", "calls_underlying", "calls_local", "mpi_underlying",
    "agreements", "host_waits", "device_ops", "scratch_bytes", "staged_bytes", "ipc_exports",
    "ipc_imports", "ll_missed", "mem_queries", "mem_cache_hits"};

static MPI_T_pvar_session  session;
static MPI_T_pvar_handle   handles[C_NUM];
static int                 failures;
static int                 host_cache = 1; /* coll_gpu_host_cache in use (--no-host-cache) */
static int                 app_ready;      /* coll_gpu_app_wait=none (--app-ready) */

static void costs_init(void)
{
    int provided, n = 0;

    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&session);
    MPI_T_pvar_get_num(&n);
    for (int c = 0; c < C_NUM; c++) {
        char want[96];
        handles[c] = MPI_T_PVAR_HANDLE_NULL;
        snprintf(want, sizeof(want), "coll_gpu_%s", counter_names[c]);
        for (int i = 0; i < n; i++) {
            char         name[256], desc[1024];
            int          nl = sizeof(name), dl = sizeof(desc), verb, cls, bind, ro, cont, atomic, cnt;
            MPI_Datatype dt;
            MPI_T_enum   e;
            if (MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &e, desc, &dl, &bind, &ro,
                                    &cont, &atomic) == MPI_SUCCESS && strcmp(name, want) == 0) {
                MPI_T_pvar_handle_alloc(session, i, NULL, &handles[c], &cnt);
            }
        }
        if (handles[c] == MPI_T_PVAR_HANDLE_NULL) {
            fprintf(stderr, "coll_costs: no performance variable %s (component not loaded?)\n", want);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
}

static void costs_read(unsigned long long v[C_NUM])
{
    for (int c = 0; c < C_NUM; c++) {
        MPI_T_pvar_read(session, handles[c], &v[c]);
    }
}

/* One case: its name, the call, and the expected deltas (-1: not checked; for host waits
 * and device operations the value is an upper bound when max is set). */
typedef struct {
    const char *name;
    long        want[C_NUM];
    int         max[C_NUM];
} costs_case_t;

/* The cases give the memory queries of a call; on host memory seen before (every measured
 * call: a warm-up came first), the host-memory cache answers them instead (mem_cache_hits). */
static void costs_check(const costs_case_t *k, const unsigned long long d[C_NUM], int rank,
                        int bad_result, em_kind_t kind)
{
    char line[512];
    int  used = snprintf(line, sizeof(line), "%-34s", k->name), bad = bad_result;
    long hits = 0;

    if (kind == EM_HOST && host_cache && k->want[C_QUERIES] >= 0) {
        hits = k->want[C_QUERIES];
    }
    for (int c = 0; c < C_NUM; c++) {
        long want = c == C_HITS ? hits : c == C_QUERIES && hits > 0 ? 0 : k->want[c];
        int  ok   = want < 0 || (k->max[c] ? (long)d[c] <= want : (long)d[c] == want);
        used += snprintf(line + used, sizeof(line) - (size_t)used, " %s%llu", ok ? "" : "!", d[c]);
        bad |= !ok;
    }
    if (bad) {
        failures++;
        fprintf(stderr, "coll_costs: FAIL rank %d %s%s: %s\n", rank, k->name,
                bad_result ? " (wrong result)" : "", line);
    } else if (rank == 0) {
        printf("%s\n", line);
    }
}

enum { K_ALLREDUCE, K_BCAST, K_ALLGATHER, K_RSB };
static const char *const coll_names[] = {"allreduce", "bcast", "allgather", "reduce_scatter_block"};

/* One call of coll on count ints per rank (SUM), in place when in_place (root 0 for bcast);
 * returns the wrong elements of this rank's result. */
static int costs_call(int coll, MPI_Comm comm, void *dbuf, void *dsend, int32_t *host, size_t count,
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
static int costs_lagging_rank(void *dbuf, void *dsend, int32_t *host, em_kind_t kind)
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

/* Calls on a communicator with its context and board, where the ranks' memory kinds
 * change from call to call: the calls run before the agreement (the agreement rides on the
 * LL lines, or on the first host barrier), so in every call where one rank passes host
 * buffers, each of the others starts the call and must find it missing a rank, cancel it
 * and take the staged path (exactly size - 1 misses per such call, coll_gpu_ll_missed); in
 * the others nobody misses. label: what the forced algorithms are. Then
 * runs of 100 bcasts with the root on host memory (it runs ahead of the others, past the
 * board's ring of 64 calls) and with a non-root on host memory. Every result is checked.
 * Returns the wrong elements (and counts a failure on a wrong number of misses). */
static int costs_kinds_varying(void *dbuf, void *dsend, int32_t *hbuf, int32_t *hsend,
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
        failures++;
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

/* The host-memory cache forgets every buffer at any release of address space (UCX's memory
 * hooks; a released range may come back as device memory): a host buffer known from the
 * call before is queried again after an unrelated munmap, then known again. */
static void costs_host_release(int32_t *hbuf, int32_t *hsend, int32_t *host)
{
    unsigned long long before[C_NUM], after[C_NUM], q[3], h[3];
    int                rank, bad = 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    bad += costs_call(K_ALLREDUCE, MPI_COMM_WORLD, hbuf, hsend, host, 16, EM_HOST, 0);
    for (int step = 0; step < 3; step++) {
        if (step == 1) {
            void *page = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                              -1, 0);
            if (page != MAP_FAILED) {
                munmap(page, 1 << 16);
            }
        }
        costs_read(before);
        bad += costs_call(K_ALLREDUCE, MPI_COMM_WORLD, hbuf, hsend, host, 16, EM_HOST, 0);
        costs_read(after);
        q[step] = after[C_QUERIES] - before[C_QUERIES];
        h[step] = after[C_HITS] - before[C_HITS];
    }
    /* known, forgotten by the munmap, known again */
    if (bad || q[0] != 0 || h[0] != 2 || q[1] != 2 || h[1] != 0 || q[2] != 0 || h[2] != 2) {
        failures++;
        fprintf(stderr, "coll_costs: FAIL rank %d: host buffers around a munmap: queries %llu %llu "
                "%llu, cache hits %llu %llu %llu (expected 0 2 0, 2 0 2)%s\n", rank, q[0], q[1],
                q[2], h[0], h[1], h[2], bad ? ", wrong result" : "");
    } else if (rank == 0) {
        printf("%-34s queries 0 2 0, cache hits 2 0 2\n", "host buffers around a munmap");
    }
}

/* One measured call on comm (after one warm-up when warm): its counter deltas checked. */
static void costs_measure(const costs_case_t *k, int coll, MPI_Comm comm, void *buf, void *send,
                          int32_t *host, em_kind_t kind, int warm)
{
    unsigned long long before[C_NUM], after[C_NUM], delta[C_NUM];
    int                rank, bad;

    MPI_Comm_rank(comm, &rank);
    if (warm) {
        bad = costs_call(coll, comm, buf, send, host, 16, kind, 0);
    }
    costs_read(before);
    bad = costs_call(coll, comm, buf, send, host, 16, kind, 0);
    costs_read(after);
    for (int x = 0; x < C_NUM; x++) {
        delta[x] = after[x] - before[x];
    }
    costs_check(k, delta, rank, bad != 0, kind);
}

/* Communicators whose info asserts host memory only (mpi_assert_memory_alloc_kinds, MPI
 * 4.1): when every rank asserts it, calls after the first agreement agree no more (across
 * nodes too): host buffers go underneath at the cost of Open MPI alone, device buffers
 * (against the assertion) are staged, and a mix of both still meets underneath with exact
 * results. When one rank only asserts it, every call still agrees. */
static void costs_asserted(void *dbuf, void *dsend, int32_t *hbuf, int32_t *hsend, int32_t *host,
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
        snprintf(name, sizeof(name), "asserted: host %s", coll_names[coll]);
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

static void costs_watchdog(int sig)
{
    static const char msg[] = "coll_costs: watchdog: a call did not return (hang)\n";

    (void)sig;
    (void)!write(2, msg, sizeof(msg) - 1);
    _exit(3);
}

/* coll_gpu_<coll>_algorithm (MPI_T), by name. */
static void costs_force(int coll, const char *alg)
{
    int               n = 0, count = 0;
    MPI_T_cvar_handle h;
    char              want[96];

    snprintf(want, sizeof(want), "coll_gpu_%s_algorithm", coll_names[coll]);
    MPI_T_cvar_get_num(&n);
    for (int i = 0; i < n; i++) {
        char         name[256], desc[2048], item[64];
        int          nl = sizeof(name), dl = sizeof(desc), verb, bind, scope, items = 0, value;
        MPI_Datatype dt;
        MPI_T_enum   e;
        char         ename[64];
        int          el = sizeof(ename);
        if (MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &e, desc, &dl, &bind, &scope) != MPI_SUCCESS ||
            strcmp(name, want) != 0 || MPI_T_enum_get_info(e, &items, ename, &el) != MPI_SUCCESS) {
            continue;
        }
        for (int k = 0; k < items; k++) {
            int il = sizeof(item);
            if (MPI_T_enum_get_item(e, k, &value, item, &il) == MPI_SUCCESS && !strcmp(item, alg)) {
                MPI_T_cvar_handle_alloc(i, NULL, &h, &count);
                MPI_T_cvar_write(h, &value);
                MPI_T_cvar_handle_free(&h);
                return;
            }
        }
    }
    fprintf(stderr, "coll_costs: no %s algorithm %s\n", coll_names[coll], alg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    const char *mem = "device";
    int         nodes = 0, local = 0, rank, size, total;
    em_kind_t   kind;
    unsigned long long before[C_NUM], after[C_NUM], delta[C_NUM];

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mem") && i + 1 < argc) {
            mem = argv[++i];
        } else if (!strcmp(argv[i], "--nodes")) {
            nodes = 1;
        } else if (!strcmp(argv[i], "--local")) {
            local = 1;
        } else if (!strcmp(argv[i], "--no-host-cache")) {
            host_cache = 0;
        } else if (!strcmp(argv[i], "--app-ready")) {
            app_ready = 1;
        }
    }
    signal(SIGALRM, costs_watchdog);
    alarm(300); /* a hang is a failure, long before the suite's limit */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    kind = em_init(mem, em_local_rank(rank));
    costs_init();
    if (rank == 0) {
        printf("coll_costs: %d ranks, %s%s; deltas of one warm call:\n%-34s", size, em_describe(),
               nodes ? ", several nodes" : "", "case");
        for (int c = 0; c < C_NUM; c++) {
            printf(" %s", counter_names[c]);
        }
        printf("\n");
    }
    {
        const size_t big  = 300000; /* 1.2 MB per rank: above the LL inbox and one_shot */
        /* memory that the calls copy through scratch */
        const int    pool = strcmp(mem, "pool") == 0 || strcmp(mem, "vmm-private") == 0;
        const long   N    = nodes ? 1 : 0, X = -1; /* agreement across nodes; unchecked */
        const long   ZC_WAITS = 4 - app_ready; /* zero copy, warm: see below */
        int32_t     *host = malloc(4 * big * sizeof(int32_t));
        int32_t     *hbuf = malloc(4 * big * sizeof(int32_t)), *hsend = malloc(4 * big * sizeof(int32_t));
        void        *dbuf = em_alloc(4 * big * sizeof(int32_t), kind);
        void        *dsend = em_alloc(4 * big * sizeof(int32_t), kind);
        /* counters: fast staged under local mpi agree waits ops scratch staged exports imports
         * missed queries (max: the value is an upper bound); one node unless --nodes.
         * queries: memory queries of the device layer, a cuPointerGetAttributes each on a GPU:
         * one per user buffer at the entry point (MPI_IN_PLACE: none); the staged path and
         * a zero-copy publish use the entry's answers, across nodes too. */
        const struct {
            int          coll;
            const char  *alg;
            size_t       count;
            int          host_mem, in_place, nodes_too;
            costs_case_t k;
        } cases[] = {
            /* host buffers: straight underneath; inside a node no agreement call */
            {K_ALLREDUCE, "auto", 1, 1, 0, 1, {"host allreduce 4 B", {0, 0, 1, 0, 1 + N, N, 0, 0, 0, 0, 0, 0, 0, 2}, {0}}},
            {K_BCAST, "auto", 1, 1, 0, 1, {"host bcast 4 B", {0, 0, 1, 0, 1 + N, N, 0, 0, 0, 0, 0, 0, 0, 1}, {0}}},
            /* whatever the layer underneath does inside (Open MPI's linear reduce_scatter_block
             * calls MPI_Reduce and MPI_Scatter on the same communicator): one call
             * underneath, the two entry queries, nothing counted for its own collectives */
            {K_RSB, "auto", 1, 1, 0, 1, {"host reduce_scatter_block 4 B", {0, 0, 1, 0, 1 + N, N, 0, 0, 0, 0, 0, 0, 0, 2}, {0}}},
            {K_RSB, "auto", 1000, 1, 0, 1, {"host reduce_scatter_block 4 KB", {0, 0, 1, 0, 1 + N, N, 0, 0, 0, 0, 0, 0, 0, 2}, {0}}},
            /* a warm small allreduce: no MPI call, one device operation, one host wait (the
             * result): the agreement rides on the LL lines */
            {K_ALLREDUCE, "auto", 1, 0, 0, 0, {"device allreduce 4 B auto", {1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 2}, {0}}},
            {K_ALLREDUCE, "ll", 1000, 0, 1, 0, {"device allreduce 4 KB ll", {1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1}, {0}}},
            {K_BCAST, "ll", 1000, 0, 0, 0, {"device bcast 4 KB ll", {1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1}, {0}}},
            {K_ALLGATHER, "ll", 100, 0, 0, 0, {"device allgather 400 B ll", {1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 2}, {0}}},
            {K_RSB, "ll", 100, 0, 1, 0, {"device reduce_scatter_block 400 B ll", {1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1}, {0}}},
            /* copy variants and zero copy: no MPI call; zero copy puts nothing in scratch,
             * and once warm exports and maps nothing (the group's known buffers) and waits
             * at most 4 times on the host: the application's work on the buffers, one
             * barrier for the handles (which carries the agreement on the memory kinds),
             * this rank's copies (before the peers may reuse their buffers) and the closing
             * barrier; no second barrier for the mappings, and no wait for a stream that the
             * closing barrier drained. The host layer counts the copies' wait as a GPU makes
             * it (the first GPU run found 4 where the host layer said 3). With
             * coll_gpu_app_wait=none the first of them goes (ZC_WAITS). */
            /* one_shot is stream-ordered: no host wait for the application's work, one for
             * its barrier's copy, one at the barrier, one for the result (device-side
             * barriers: fewer); two device operations (copy in, reduce) and its input
             * through scratch */
            {K_ALLREDUCE, "one_shot", 1000, 0, 0, 0, {"device allreduce 4 KB one_shot", {1, 0, 0, 0, 0, 0, 3, X, 4000, 0, 0, 0, 0, 2}, {0, 0, 0, 0, 0, 0, 1, 0}}},
            {K_ALLREDUCE, "one_shot", big, 0, 0, 0, {"device allreduce 1.2 MB one_shot", {1, 0, 0, 0, 0, 0, X, X, 1200000, 0, 0, 0, 0, 2}, {0}}},
            {K_ALLREDUCE, "two_shot", big, 0, 1, 0, {"device allreduce 1.2 MB two_shot", {1, 0, 0, 0, 0, 0, pool ? X : ZC_WAITS, X, pool ? X : 0, 0, 0, 0, 0, 1}, {0, 0, 0, 0, 0, 0, 1, 0}}},
            {K_BCAST, "direct", big, 0, 0, 0, {"device bcast 1.2 MB direct", {1, 0, 0, 0, 0, 0, pool ? X : ZC_WAITS, X, pool ? X : 0, 0, 0, 0, 0, 1}, {0, 0, 0, 0, 0, 0, 1, 0}}},
            {K_ALLGATHER, "direct", big / 4, 0, 0, 0, {"device allgather 300 KB direct", {1, 0, 0, 0, 0, 0, pool ? X : ZC_WAITS, X, pool ? X : 0, 0, 0, 0, 0, 2}, {0, 0, 0, 0, 0, 0, 1, 0}}},
            {K_RSB, "direct", big / 4, 0, 0, 0, {"device reduce_scatter_block direct", {1, 0, 0, 0, 0, 0, pool ? X : ZC_WAITS, X, pool ? X : 0, 0, 0, 0, 0, 2}, {0, 0, 0, 0, 0, 0, 1, 0}}},
            /* staged: the collective underneath, the input and the output through host
             * memory; two host waits, one per copy (the application's work is waited for on
             * the staging stream, before the first) */
            {K_ALLREDUCE, "staged", 1, 0, 0, 1, {"device allreduce 4 B staged", {0, 1, 0, 0, 1, 0, 2, X, 0, 8, 0, 0, 0, 2}, {0}}},
            /* across nodes (the suite pins the model's latencies): a small call is staged
             * with no agreement, the staged path being faster than the agreement alone;
             * host buffers then go underneath with no agreement either; a large call
             * agrees and runs the planner's fast path, waiting at most 15 times on the host
             * (19 when the ring between nodes waited after every reduction) */
            {K_ALLREDUCE, "auto", 1, 0, 0, 2, {"device allreduce 4 B across nodes", {0, 1, 0, 0, 1, 0, 2, X, 0, 8, 0, 0, 0, 2}, {0}}},
            {K_ALLREDUCE, "auto", 1, 1, 0, 2, {"host allreduce 4 B across nodes", {0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2}, {0}}},
            {K_ALLREDUCE, "auto", big, 0, 0, 2, {"device allreduce 1.2 MB across nodes", {1, 0, 0, 0, 1, 1, 15, X, X, 0, X, X, 0, 2}, {0, 0, 0, 0, 0, 0, 1, 0}}},
        };
        /* The board (inside a node, coll_gpu_buffer_check=auto) comes at the 8th call that
         * needs an agreement (MCA_COLL_GPU_BOARD_AFTER): each of the 8 calls agrees through
         * the layer underneath (one allreduce), the 8th makes the board, the cases below
         * then run with it. With --local nothing ever agrees. */
        {
            const unsigned long long want = local ? 0 : 8;
            costs_read(before);
            for (int i = 0; i < 8; i++) {
                MPI_Allreduce(MPI_IN_PLACE, hbuf, 1, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
            }
            costs_read(after);
            if (after[C_AGREE] - before[C_AGREE] != want) {
                failures++;
                fprintf(stderr, "coll_costs: FAIL rank %d: the first 8 calls made %lld agreements "
                        "underneath, expected %llu\n", rank,
                        (long long)(after[C_AGREE] - before[C_AGREE]), want);
            } else if (rank == 0) {
                printf("%-34s %llu agreements underneath, then the board\n", "first 8 host calls", want);
            }
        }
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
            const int host_mem = cases[c].host_mem;
            em_kind_t k        = host_mem ? EM_HOST : kind;
            int       bad;
            if ((nodes && !cases[c].nodes_too) || (!nodes && cases[c].nodes_too == 2) ||
                (cases[c].coll == K_RSB && size > 4)) {
                continue;
            }
            costs_force(cases[c].coll, cases[c].alg);
            costs_call(cases[c].coll, MPI_COMM_WORLD, host_mem ? (void *)hbuf : dbuf,
                       host_mem ? (void *)hsend : dsend, host, cases[c].count, k, cases[c].in_place);
            costs_read(before);
            bad = costs_call(cases[c].coll, MPI_COMM_WORLD, host_mem ? (void *)hbuf : dbuf,
                             host_mem ? (void *)hsend : dsend, host, cases[c].count, k,
                             cases[c].in_place);
            costs_read(after);
            for (int x = 0; x < C_NUM; x++) {
                delta[x] = after[x] - before[x];
            }
            {
                costs_case_t expect = cases[c].k;
                if (local && c < 2) { /* host buffers, no agreement at all */
                    expect.want[C_AGREE] = 0;
                    expect.want[C_MPI]   = 1;
                }
                costs_check(&expect, delta, rank, bad != 0, k);
            }
            costs_force(cases[c].coll, "auto");
        }
        if (!nodes) { /* both buffers in one allocation (a caching allocator's blocks): one query */
            const costs_case_t one = {"device allreduce 64 B, one alloc", {1, 0, 0, 0, 0, 0, X, X, X, 0, X, X, 0, 1}, {0}};
            costs_measure(&one, K_ALLREDUCE, MPI_COMM_WORLD, dbuf, (char *)dbuf + 4096, host, kind, 1);
        }
        if (nodes) { /* small, across nodes, ranks mixing kinds: no agreement, exact */
            const costs_case_t mixed = {"mixed host/device 64 B across nodes", {0, X, X, 0, 1, 0, X, X, 0, X, 0, 0, 0, 2}, {0}};
            costs_measure(&mixed, K_ALLREDUCE, MPI_COMM_WORLD, rank == 0 ? dbuf : (void *)hbuf,
                          rank == 0 ? dsend : (void *)hsend, host, rank == 0 ? kind : EM_HOST, 1);
        }
        if (host_cache) {
            costs_host_release(hbuf, hsend, host);
        }
        if (!local) {
            costs_asserted(dbuf, dsend, hbuf, hsend, host, kind);
        }
        /* a slow rank, and kinds changing from call to call, through the calls that run
         * before the agreement: LL (the agreement in its lines) and, on the host layer's
         * host-synchronised node, plans whose first barrier carries it (zero copy, and
         * through scratch halves filled before that barrier) */
        for (int set = 0; !nodes && size <= 4 && set < 3; set++) {
            static const char *const algs[3][4] = {{"ll", "ll", "ll", "ll"},
                                                   {"two_shot", "direct", "direct", "direct"},
                                                   {"one_shot", "scatter_allgather", "direct",
                                                    "direct"}};
            static const char *const labels[3] = {"LL calls", "zero-copy calls", "scratch calls"};
            int bad;
            for (int c = K_ALLREDUCE; c <= K_RSB; c++) {
                costs_force(c, algs[set][c]);
            }
            bad = costs_lagging_rank(dbuf, dsend, host, kind);
            if (!bad && !local && /* local: kinds must not differ between ranks */
                (bad = costs_kinds_varying(dbuf, dsend, hbuf, hsend, host, kind, labels[set])) != 0) {
                failures++;
                fprintf(stderr, "coll_costs: FAIL rank %d: %s with kinds changing: %d wrong "
                        "elements\n", rank, labels[set], bad);
                bad = 0;
            }
            for (int c = K_ALLREDUCE; c <= K_RSB; c++) {
                costs_force(c, "auto");
            }
            if (bad) {
                failures++;
                fprintf(stderr, "coll_costs: FAIL rank %d: %s with a lagging rank: %d wrong "
                        "elements\n", rank, labels[set], bad);
            } else if (rank == 0) {
                char what[64];
                snprintf(what, sizeof(what), "%s, one rank lagging", labels[set]);
                printf("%-34s results exact\n", what);
            }
        }
        em_free(dbuf, kind), em_free(dsend, kind);
        free(host), free(hbuf), free(hsend);
    }
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("coll_costs: %s (%d failures)\n", total ? "FAILED" : "PASSED", total);
    }
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    MPI_Finalize();
    return total ? 1 : 0;
}
