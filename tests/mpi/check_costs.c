/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_costs: what one call costs, from the component's counters (MPI_T performance
 * variables coll_gpu_*), asserted per path and algorithm. Counts, not times: they are the
 * same on a loaded machine. Each case runs its call twice (the first one warms up: mappings,
 * the board, contexts) and measures the second on every rank; rank 0 prints the table.
 *
 *   coll_costs [--mem device|pool|vmm|vmm-private] [--nodes] [--local] [--no-host-cache]
 *     --nodes  the communicator spans (virtual) nodes: expect the agreement allreduce;
 *              and what a new communicator's setup exchanges (coll_gpu_exchange_bytes):
 *              worker addresses in slots of the longest, none when it takes a freed
 *              communicator's context
 *     --local  run with coll_gpu_buffer_check=local: no in-band agreement either, so the
 *              small calls wait once on the host
 *     --no-host-cache  run with coll_gpu_host_cache=0: host buffers are queried every call
 *     --app-ready  run with coll_gpu_app_wait=none: no wait for the application's work, so
 *              a zero-copy call waits on the host once less and a one_shot no differently
 *     --app-wait-event  run with coll_gpu_app_wait=default_stream: LL calls too wait for
 *              the application's work by an event. Otherwise (auto, the default, or
 *              launch) LL calls and staged copies are queued on the legacy default stream
 *              behind that work, with no event to wait for
 *     --ll-persist  run with coll_gpu_ll_persist 1: every LL call is rung on a server
 *              that stays on the device (coll_gpu_ll_served), with the same counts as a
 *              launched one; otherwise none is. Without --app-ready each LL call first asks
 *              whether the application's work is done (coll_gpu_app_queries 1; the inputs
 *              were written synchronously, so it is) and then waits for none
 *     --query-may-miss  with --ll-persist without --app-ready: a GPU's query may find the
 *              work not yet done (a fresh event, a copy's last bytes): such a call is
 *              launched after one event wait instead of rung (the host layer's query
 *              always finds synchronous writes done, so the suite gives this on GPUs only)
 *     --expect-query-misses  with --query-may-miss: some LL calls must have been rung and
 *              some launched after a miss (the host layer's coll_gpu_debug_host_query_miss)
 *     --thread-level funneled|multiple  MPI_Init_thread at that level: launch is then
 *              not used (another thread's device work would queue behind the LL kernel)
 *     --calls-only  no table of counts: only the runs with a lagging rank and with kinds
 *              changing (results and misses checked), for settings that add work now and
 *              then (coll_gpu_debug_ll_flag_period: the LL inboxes cleared at a wrap)
 *     --wrap P  --calls-only, and first the LL flags' wrap (costs_wrap), run with
 *              coll_gpu_debug_ll_flag_period P
 * Every device call orders itself after the application's work once (coll_gpu_app_waits),
 * but with --app-ready none and, at MPI_THREAD_SINGLE without --app-wait-event, none for
 * LL calls and staged calls (queued on the application's default stream); host calls never.
 * Then a run of LL calls with one rank lagging (results checked; a hang is a failure).
 * Then the host-memory cache around releases of address space (coll_gpu_mem_releases).
 * Results are checked too (against host arithmetic), so a cheap wrong call cannot pass.
 */
#include "tests/mpi/check_costs.h"
#include "tests/mpi/check_pvar.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const costs_counter_names[C_NUM] = {
    "calls_fast", "calls_staged", "calls_underlying", "calls_local", "mpi_underlying",
    "agreements", "host_waits", "device_ops", "scratch_bytes", "staged_bytes", "ipc_exports",
    "ipc_imports", "ll_missed", "mem_queries", "mem_cache_hits"};

static MPI_T_pvar_session session;
static MPI_T_pvar_handle  handles[C_NUM];
static MPI_T_pvar_handle  releases_handle, app_waits_handle, served_handle, queries_handle;
static MPI_T_pvar_handle  exchange_handle, made_handle, kept_handle;
int                       costs_failures;
int                       costs_host_cache = 1;
int                       costs_app_ready;
static int                costs_app_launch = 1; /* auto (the default) or launch, single thread */
static int                costs_ll_persist;     /* coll_gpu_ll_persist 1 (--ll-persist) */
static int                costs_query_may_miss; /* --query-may-miss */
static int                costs_expect_misses;  /* --expect-query-misses */
static int                costs_queried[2];     /* LL calls after a query: rung, launched */

/* The handle of the performance variable coll_gpu_<counter>; aborts when there is none. */
static MPI_T_pvar_handle costs_handle(const char *counter)
{
    char              want[96];
    MPI_T_pvar_handle handle;

    snprintf(want, sizeof(want), "coll_gpu_%s", counter);
    handle = check_pvar_handle(session, want);
    if (handle == MPI_T_PVAR_HANDLE_NULL) {
        fprintf(stderr, "coll_costs: no performance variable %s (component not loaded?)\n", want);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return handle;
}

static void costs_init(void)
{
    int provided;

    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&session);
    for (int c = 0; c < C_NUM; c++) {
        handles[c] = costs_handle(costs_counter_names[c]);
    }
    releases_handle  = costs_handle("mem_releases");
    app_waits_handle = costs_handle("app_waits");
    served_handle    = costs_handle("ll_served");
    queries_handle   = costs_handle("app_queries");
    exchange_handle  = costs_handle("exchange_bytes");
    made_handle      = costs_handle("contexts_made");
    kept_handle      = costs_handle("contexts_kept");
}

void costs_read(unsigned long long v[C_NUM])
{
    for (int c = 0; c < C_NUM; c++) {
        MPI_T_pvar_read(session, handles[c], &v[c]);
    }
}

static unsigned long long costs_pvar(MPI_T_pvar_handle handle)
{
    unsigned long long value = 0;

    MPI_T_pvar_read(session, handle, &value);
    return value;
}

/* What the setup of contexts cost so far: bytes given to the component's exchanges,
 * contexts made, contexts kept and taken. */
void costs_contexts(unsigned long long v[3])
{
    v[0] = costs_pvar(exchange_handle);
    v[1] = costs_pvar(made_handle);
    v[2] = costs_pvar(kept_handle);
}

/* The waits for the application's default-stream work one call made: one per device call,
 * none for host buffers, none with --app-ready, none for an LL call or a staged call's
 * copies queued on the legacy default stream (auto or launch, one thread), none for an LL
 * call rung on a server (--ll-persist: that work found done by a query, one per call
 * without --app-ready; --query-may-miss: or found not done, then one wait and no ring). */
static void costs_check_app_waits(const char *name, unsigned long long waits,
                                  unsigned long long queries, unsigned long long served,
                                  int host_mem, int ll, int staged, int rank)
{
    const unsigned long long want_queries = ll && !host_mem && costs_ll_persist && !costs_app_ready;
    /* a query that found the work not done: one event wait, and the call launched */
    const int                missed = want_queries && costs_query_may_miss && served == 0;
    const unsigned long long want = host_mem || costs_app_ready ? 0
                                    : missed                   ? 1
                                    : ((ll || staged) && costs_app_launch) || (ll && costs_ll_persist) ? 0 : 1;

    if (want_queries) {
        costs_queried[missed]++;
    }

    if (waits != want || queries != want_queries) {
        costs_failures++;
        fprintf(stderr, "coll_costs: FAIL rank %d %s: %llu waits for the application's work "
                "(app_waits) and %llu queries (app_queries), expected %llu and %llu\n", rank,
                name, waits, queries, want, want_queries);
    }
}

/* The LL calls one call rang on a server (coll_gpu_ll_served): one for an LL call with
 * --ll-persist (run with coll_gpu_ll_persist 1), none otherwise. */
static void costs_check_served(const char *name, unsigned long long served, int ll, int rank)
{
    const unsigned long long want     = costs_ll_persist && ll ? 1 : 0;
    const int                may_miss = costs_query_may_miss && !costs_app_ready;

    if (served != want && !(served == 0 && want == 1 && may_miss)) {
        costs_failures++;
        fprintf(stderr, "coll_costs: FAIL rank %d %s: %llu calls rung on an LL server "
                "(ll_served), expected %llu\n", rank, name, served, want);
    }
}

unsigned long long costs_releases(void)
{
    unsigned long long releases = 0;

    MPI_T_pvar_read(session, releases_handle, &releases);
    return releases;
}

/* The cases give the memory queries of a call; on host memory seen before (every measured
 * call: a warm-up came first), the host-memory cache answers them instead (mem_cache_hits).
 * The cache forgets a buffer, or does not keep it, when this process released address space
 * meanwhile (any thread: a progress thread trimming its heap during the warm-up's query is
 * enough): when releases (this rank's, from the warm-up to the end of the call) is not 0, a
 * buffer may be asked again, so the queries and hits only have to add up. */
void costs_check(const costs_case_t *k, const unsigned long long d[C_NUM], int rank,
                 int bad_result, em_kind_t kind, unsigned long long releases)
{
    char line[512];
    int  used = snprintf(line, sizeof(line), "%-34s", k->name), bad = bad_result;
    long hits = 0;
    int  split = 0;

    if (kind == EM_HOST && costs_host_cache && k->want[C_QUERIES] >= 0) {
        hits  = k->want[C_QUERIES];
        split = releases > 0 && (long)(d[C_QUERIES] + d[C_HITS]) == hits && (long)d[C_HITS] < hits;
    }
    for (int c = 0; c < C_NUM; c++) {
        long want = c == C_HITS ? hits : c == C_QUERIES && hits > 0 ? 0 : k->want[c];
        int  ok   = want < 0 || (k->max[c] ? (long)d[c] <= want : (long)d[c] == want) ||
                  (split && (c == C_HITS || c == C_QUERIES));
        used += snprintf(line + used, sizeof(line) - (size_t)used, " %s%llu", ok ? "" : "!", d[c]);
        bad |= !ok;
    }
    if (bad) {
        costs_failures++;
        fprintf(stderr, "coll_costs: FAIL rank %d %s%s: %s\n", rank, k->name,
                bad_result ? " (wrong result)" : "", line);
    } else if (rank == 0) {
        printf("%s\n", line);
    }
    if (!bad && split) {
        fprintf(stderr, "coll_costs: rank %d %s: %llu of %ld host buffers asked again after %llu "
                "releases of address space (allowed)\n", rank, k->name, d[C_QUERIES], hits, releases);
    }
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

    snprintf(want, sizeof(want), "coll_gpu_%s_algorithm", costs_coll_names[coll]);
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
    fprintf(stderr, "coll_costs: no %s algorithm %s\n", costs_coll_names[coll], alg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    const char *mem = "device";
    int         nodes = 0, local = 0, calls_only = 0, level = MPI_THREAD_SINGLE;
    long        wrap = 0;
    int         provided = MPI_THREAD_SINGLE;
    int         rank, size, total;
    em_kind_t   kind;
    unsigned long long before[C_NUM], after[C_NUM], delta[C_NUM];

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mem") && i + 1 < argc) {
            mem = argv[++i];
        } else if (!strcmp(argv[i], "--nodes")) {
            nodes = 1;
        } else if (!strcmp(argv[i], "--local")) {
            local = 1;
        } else if (!strcmp(argv[i], "--calls-only")) {
            calls_only = 1;
        } else if (!strcmp(argv[i], "--wrap") && i + 1 < argc && (wrap = atol(argv[++i])) > 0) {
            calls_only = 1;
        } else if (!strcmp(argv[i], "--no-host-cache")) {
            costs_host_cache = 0;
        } else if (!strcmp(argv[i], "--app-ready")) {
            costs_app_ready = 1;
        } else if (!strcmp(argv[i], "--ll-persist")) {
            costs_ll_persist = 1;
        } else if (!strcmp(argv[i], "--query-may-miss")) {
            costs_query_may_miss = 1;
        } else if (!strcmp(argv[i], "--expect-query-misses")) {
            costs_query_may_miss = costs_expect_misses = 1;
        } else if (!strcmp(argv[i], "--app-wait-event")) {
            costs_app_launch = 0;
        } else if (!strcmp(argv[i], "--thread-level") && i + 1 < argc) {
            i++;
            level = !strcmp(argv[i], "multiple") ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED;
        } else { /* a flag this program no longer knows would check nothing */
            fprintf(stderr, "coll_costs: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    signal(SIGALRM, costs_watchdog);
    alarm(300); /* a hang is a failure, long before the suite's limit */
    if (level != MPI_THREAD_SINGLE) {
        MPI_Init_thread(&argc, &argv, level, &provided);
        if (provided < level) {
            fprintf(stderr, "coll_costs: FAIL: thread level %d asked, %d provided\n", level, provided);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        costs_app_launch = 0; /* one thread only */
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    kind = em_init(mem, em_local_rank(rank));
    costs_init();
    if (rank == 0) {
        printf("coll_costs: %d ranks, %s%s; deltas of one warm call:\n%-34s", size, em_describe(),
               nodes ? ", several nodes" : "", "case");
        for (int c = 0; c < C_NUM; c++) {
            printf(" %s", costs_counter_names[c]);
        }
        printf("\n");
    }
    {
        const size_t big  = 300000; /* 1.2 MB per rank: above the LL inbox and one_shot */
        /* memory that the calls copy through scratch */
        const int    pool = strcmp(mem, "pool") == 0 || strcmp(mem, "vmm-private") == 0;
        const long   N    = nodes ? 1 : 0, X = -1; /* agreement across nodes; unchecked */
        const long   ZC_WAITS = 4 - costs_app_ready; /* zero copy, warm: see below */
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
             * memory; two host waits, one per copy (the copies go on the application's
             * default stream, or after a wait for its work on the staging stream) */
            {K_ALLREDUCE, "staged", 1, 0, 0, 1, {"device allreduce 4 B staged", {0, 1, 0, 0, 1, 0, 2, X, 0, 8, 0, 0, 0, 2}, {0}}},
            /* across nodes (the suite pins the model's latencies): a small call is staged
             * with no agreement, the staged path being faster than the agreement alone;
             * host buffers then go underneath with no agreement either; a large call
             * agrees and runs the planner's fast path, waiting at most 17 times on the host
             * (two of them for the lane threads that carry its two chunks; 21 when the ring
             * between nodes waited after every reduction) */
            {K_ALLREDUCE, "auto", 1, 0, 0, 2, {"device allreduce 4 B across nodes", {0, 1, 0, 0, 1, 0, 2, X, 0, 8, 0, 0, 0, 2}, {0}}},
            {K_ALLREDUCE, "auto", 1, 1, 0, 2, {"host allreduce 4 B across nodes", {0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2}, {0}}},
            {K_ALLREDUCE, "auto", big, 0, 0, 2, {"device allreduce 1.2 MB across nodes", {1, 0, 0, 0, 1, 1, 17, X, X, 0, X, X, 0, 2}, {0, 0, 0, 0, 0, 0, 1, 0}}},
            /* a small call forced hierarchical: the node's phase is one LL call, which
             * waits for the application's work no second time (the route waited) */
            {K_ALLREDUCE, "hier_rd", 16, 0, 0, 2, {"device allreduce 64 B hier_rd", {1, 0, 0, 0, X, X, X, X, X, 0, X, X, 0, 2}, {0}}},
            /* likewise hier_tree's bcast, whose node phase is one LL call at the end */
            {K_BCAST, "hier_tree", 16, 0, 0, 2, {"device bcast 64 B hier_tree", {1, 0, 0, 0, X, X, X, X, X, 0, X, X, 0, 1}, {0}}},
            /* bcast hier_ring carrying one chunk: its chain's two steps run on the calling
             * thread; a hand-over to the lane thread would add a host wait per step (9 on
             * the root's node) */
            {K_BCAST, "hier_ring", 1000, 0, 0, 2, {"device bcast 4 KB hier_ring", {1, 0, 0, 0, X, X, 7, X, X, 0, X, X, 0, 1}, {0, 0, 0, 0, 0, 0, 1, 0}}},
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
                costs_failures++;
                fprintf(stderr, "coll_costs: FAIL rank %d: the first 8 calls made %lld agreements "
                        "underneath, expected %llu\n", rank,
                        (long long)(after[C_AGREE] - before[C_AGREE]), want);
            } else if (rank == 0) {
                printf("%-34s %llu agreements underneath, then the board\n", "first 8 host calls", want);
            }
        }
        if (wrap > 0) {
            int bad;
            costs_force(K_ALLREDUCE, "ll");
            bad = costs_wrap(dbuf, dsend, hbuf, hsend, host, kind, wrap);
            costs_force(K_ALLREDUCE, "auto");
            if (bad) {
                costs_failures++;
                fprintf(stderr, "coll_costs: FAIL rank %d: the LL flags' wrap (period %ld): %d "
                        "wrong elements\n", rank, wrap, bad);
            } else if (rank == 0) {
                printf("%-34s results exact (%s)\n", "LL flags' wrap", wrap % 2 ? "after a "
                       "call given up" : "after a completed call");
            }
        }
        for (size_t c = 0; !calls_only && c < sizeof(cases) / sizeof(cases[0]); c++) {
            const int host_mem = cases[c].host_mem;
            em_kind_t k        = host_mem ? EM_HOST : kind;
            /* LL: forced, or the planner's choice for one element inside a node */
            const int ll = !strcmp(cases[c].alg, "ll") ||
                           (!strcmp(cases[c].alg, "auto") && cases[c].count == 1 && !nodes);
            unsigned long long app_waits, queries, releases, served;
            int       bad;
            if ((nodes && !cases[c].nodes_too) || (!nodes && cases[c].nodes_too == 2) ||
                (cases[c].coll == K_RSB && size > 4)) {
                continue;
            }
            costs_force(cases[c].coll, cases[c].alg);
            releases = costs_releases();
            costs_call(cases[c].coll, MPI_COMM_WORLD, host_mem ? (void *)hbuf : dbuf,
                       host_mem ? (void *)hsend : dsend, host, cases[c].count, k, cases[c].in_place);
            costs_read(before);
            app_waits = costs_pvar(app_waits_handle);
            queries   = costs_pvar(queries_handle);
            served    = costs_pvar(served_handle);
            bad = costs_call(cases[c].coll, MPI_COMM_WORLD, host_mem ? (void *)hbuf : dbuf,
                             host_mem ? (void *)hsend : dsend, host, cases[c].count, k,
                             cases[c].in_place);
            app_waits = costs_pvar(app_waits_handle) - app_waits;
            queries   = costs_pvar(queries_handle) - queries;
            served    = costs_pvar(served_handle) - served;
            costs_read(after);
            if (!nodes) { /* across nodes the node's LL phase of a hierarchical call too */
                costs_check_served(cases[c].k.name, served, ll && !host_mem, rank);
            }
            costs_check_app_waits(cases[c].k.name, app_waits, queries, served, host_mem, ll,
                                  cases[c].k.want[C_STAGED] > 0, rank);
            for (int x = 0; x < C_NUM; x++) {
                delta[x] = after[x] - before[x];
            }
            {
                costs_case_t expect = cases[c].k;
                if (local && c < 2) { /* host buffers, no agreement at all */
                    expect.want[C_AGREE] = 0;
                    expect.want[C_MPI]   = 1;
                }
                costs_check(&expect, delta, rank, bad != 0, k, costs_releases() - releases);
            }
            costs_force(cases[c].coll, "auto");
        }
        if (!nodes && !calls_only) { /* both buffers in one allocation (a caching allocator's blocks): one query */
            const costs_case_t one = {"device allreduce 64 B, one alloc", {1, 0, 0, 0, 0, 0, X, X, X, 0, X, X, 0, 1}, {0}};
            costs_measure(&one, K_ALLREDUCE, MPI_COMM_WORLD, dbuf, (char *)dbuf + 4096, host, kind, 1);
        }
        if (nodes && !calls_only) {
            costs_setup(dbuf, dsend, host, big, kind, rank);
        }
        if (nodes && !calls_only) { /* small, across nodes, ranks mixing kinds: no agreement, exact */
            const costs_case_t mixed = {"mixed host/device 64 B across nodes", {0, X, X, 0, 1, 0, X, X, 0, X, 0, 0, 0, 2}, {0}};
            costs_measure(&mixed, K_ALLREDUCE, MPI_COMM_WORLD, rank == 0 ? dbuf : (void *)hbuf,
                          rank == 0 ? dsend : (void *)hsend, host, rank == 0 ? kind : EM_HOST, 1);
        }
        if (costs_host_cache && !calls_only) {
            costs_host_release(host);
        }
        if (!local && !calls_only) {
            costs_asserted(dbuf, dsend, hbuf, hsend, host, kind);
        }
        if (!nodes && !calls_only) {
            costs_gapped(dbuf, dsend, host, kind);
        }
        if (!nodes && !calls_only && strcmp(mem, "device") == 0 && size <= 4) { /* exported */
            costs_force(K_ALLREDUCE, "two_shot");
            costs_known(dsend, host, kind);
            costs_force(K_ALLREDUCE, "auto");
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
                costs_failures++;
                fprintf(stderr, "coll_costs: FAIL rank %d: %s with kinds changing: %d wrong "
                        "elements\n", rank, labels[set], bad);
                bad = 0;
            }
            for (int c = K_ALLREDUCE; c <= K_RSB; c++) {
                costs_force(c, "auto");
            }
            if (bad) {
                costs_failures++;
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
    if (costs_query_may_miss) { /* how the queries went, on all ranks */
        int queried[2];
        MPI_Allreduce(costs_queried, queried, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("%-34s %d rung, %d launched after a miss\n", "LL calls after a query", queried[0],
                   queried[1]);
        }
        if (costs_expect_misses && rank == 0 && (queried[0] == 0 || queried[1] == 0)) {
            costs_failures++;
            fprintf(stderr, "coll_costs: FAIL: LL calls after a query: %d rung, %d launched; "
                    "expected some of each\n", queried[0], queried[1]);
        }
    }
    MPI_Allreduce(&costs_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("coll_costs: %s (%d failures)\n", total ? "FAILED" : "PASSED", total);
    }
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    MPI_Finalize();
    return total ? 1 : 0;
}
