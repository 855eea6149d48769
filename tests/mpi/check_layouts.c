/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_layouts: the four collectives on every node layout and every hierarchical algorithm,
 * in one process per rank (the layout sweep of the MPI suite, and the reproducer of
 * issue #15's hang: allreduce on world, a dup and splits such as {0,2,4} at 5 to 7 ranks in
 * virtual nodes of 2).
 *
 * For every virtual-node layout of --node-sizes (set at run time through the MPI_T control
 * variable coll_gpu_node_size: N consecutive ranks per node, -K nodes dealt in turn; "-":
 * keep the value mpirun gave) it creates fresh communicators (a dup of MPI_COMM_WORLD, the
 * split of even and odd ranks, the reversed order; MPI_COMM_WORLD itself under the first
 * layout), then for every collective selects auto and every hierarchical algorithm in turn
 * (MPI_T: coll_gpu_<coll>_algorithm) and runs the suite's cases (check_colls.c: poisoned
 * outputs, references computed independently on the host, gaps of padded pair types must
 * survive), then frees the communicators. Exit status 0 only when every rank passed.
 *
 * --quick: MPI_INT/MPI_SUM and MPI_DOUBLE_INT/MPI_MAXLOC for the reductions, MPI_INT for the
 * others (the suite's short runs); otherwise also MPI_SHORT_INT/MPI_MINLOC, MPI_UINT8_T/MPI_BXOR,
 * MPI_DOUBLE and MPI_UINT8_T.
 *
 * --watchdog S: a rank still running after S seconds prints what it was doing and exits
 * with status 124 (a hang fails the test, and says where).
 */
#include "check_colls.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int  tc_verbose;
long tc_tests, tc_failures;

static char lay_where[256] = "starting";
static int  lay_world_rank;

void tc_fail(const char *what, const char *detail)
{
    tc_failures++;
    if (tc_failures <= 20) {
        fprintf(stderr, "coll_layouts: FAIL %s: %s [%s]\n", what, detail, lay_where);
    }
}

void tc_count(int coll, size_t local_bytes, em_kind_t kind)
{
    (void)coll, (void)local_bytes, (void)kind;
}

static void lay_watchdog(int sig)
{
    char line[400];
    int  n = snprintf(line, sizeof(line), "coll_layouts: TIMEOUT: world rank %d still in %s\n",
                      lay_world_rank, lay_where);
    (void)sig;
    if (write(2, line, (size_t)n) < 0) {
        _exit(125);
    }
    _exit(124);
}

/* ---- MPI_T: the component's control variables ---------------------------------------- */
static int lay_cvar(const char *name, MPI_T_enum *enumtype)
{
    char want[128], cname[256], desc[1024];
    int  n = 0;

    snprintf(want, sizeof(want), "coll_gpu_%s", name);
    MPI_T_cvar_get_num(&n);
    for (int i = 0; i < n; i++) {
        int          name_len = sizeof(cname), desc_len = sizeof(desc), verbosity, binding, scope;
        MPI_Datatype dt;
        if (MPI_T_cvar_get_info(i, cname, &name_len, &verbosity, &dt, enumtype, desc, &desc_len,
                                &binding, &scope) == MPI_SUCCESS && strcmp(cname, want) == 0) {
            return i;
        }
    }
    return -1;
}

static int lay_cvar_write(const char *name, int value)
{
    MPI_T_enum        e;
    MPI_T_cvar_handle handle;
    int               index = lay_cvar(name, &e), count = 0, rc;

    if (index < 0 || MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) != MPI_SUCCESS) {
        return -1;
    }
    rc = MPI_T_cvar_write(handle, &value);
    MPI_T_cvar_handle_free(&handle);
    return rc == MPI_SUCCESS ? 0 : -1;
}

/* The algorithms of coll to run: auto and every hier_* one (names and enum values). */
static int lay_algorithms(const char *coll, char names[][64], int values[], int max)
{
    char       cvar[64], ename[64];
    MPI_T_enum e;
    int        n = 0, found = 0, elen = sizeof(ename);

    snprintf(cvar, sizeof(cvar), "%s_algorithm", coll);
    if (lay_cvar(cvar, &e) < 0 || e == MPI_T_ENUM_NULL ||
        MPI_T_enum_get_info(e, &n, ename, &elen) != MPI_SUCCESS) {
        return 0;
    }
    for (int i = 0; i < n && found < max; i++) {
        char item[64];
        int  value, ilen = sizeof(item);
        if (MPI_T_enum_get_item(e, i, &value, item, &ilen) == MPI_SUCCESS &&
            (strcmp(item, "auto") == 0 || strncmp(item, "hier_", 5) == 0)) {
            snprintf(names[found], 64, "%s", item);
            values[found++] = value;
        }
    }
    return found;
}

/* ---- the cases ----------------------------------------------------------------------- */
typedef struct {
    const char *mem;
    size_t      counts[8];
    int         ncounts;
    size_t      large; /* one count larger than a pipeline chunk, on the dup only */
    char        node_sizes[128];
    int         cycles;
    int         quick; /* fewer types: one plain and one padded reduction, one moved type */
} lay_options_t;

/* (type, op) of the reductions: plain, padded pairs (gaps), size != extent */
static const char *const lay_reduce_cases[][2] = {
    {"MPI_INT", "MPI_SUM"}, {"MPI_DOUBLE_INT", "MPI_MAXLOC"}, {"MPI_SHORT_INT", "MPI_MINLOC"},
    {"MPI_UINT8_T", "MPI_BXOR"}};
static const char *const lay_move_types[] = {"MPI_INT", "MPI_DOUBLE", "MPI_UINT8_T"};

/* Every case of one collective on one communicator with the algorithm now selected. */
static void lay_run_coll(tc_ctx_t *ctx, int coll, const size_t *counts, int ncounts, int quick,
                         uint64_t *seed)
{
    const int reduces = (coll == TC_ALLREDUCE || coll == TC_RS || coll == TC_RSB);
    const int ntypes  = quick ? (reduces ? 2 : 1)
                      : reduces ? (int)(sizeof(lay_reduce_cases) / sizeof(lay_reduce_cases[0]))
                                : (int)(sizeof(lay_move_types) / sizeof(lay_move_types[0]));

    for (int t = 0; t < ntypes; t++) {
        const tc_type_t *type = tc_type_by_name(reduces ? lay_reduce_cases[t][0] : lay_move_types[t]);
        int              op   = reduces ? tc_op_by_name(lay_reduce_cases[t][1]) : -1;
        for (int k = 0; k < ncounts; k++) {
            for (int v = 0; v < (coll == TC_BCAST ? 3 : 2); v++) {
                tc_case_t c = {ctx, type, op, counts[k], 0, 0, 0};
                if (coll == TC_BCAST) {
                    c.root = (v == 0) ? 0 : (v == 1) ? ctx->size - 1 : ctx->size / 2;
                } else {
                    c.in_place = v;
                }
                c.seed = ++*seed * 0x9e3779b97f4a7c15ull;
                tc_run_coll(coll, &c);
            }
        }
    }
}

/* Every collective x (auto, every hierarchical algorithm) on the communicators. */
static void lay_run_layout(tc_ctx_t *ctxs, int nctx, const lay_options_t *o, const char *layout,
                           uint64_t *seed)
{
    for (int coll = 0; coll < TC_NCOLL; coll++) {
        char names[16][64];
        int  values[16];
        char cvar[64];
        int  nalgs = lay_algorithms(tc_coll_names[coll], names, values, 16);

        snprintf(cvar, sizeof(cvar), "%s_algorithm", tc_coll_names[coll]);
        for (int a = 0; a < (nalgs > 0 ? nalgs : 1); a++) {
            if (nalgs > 0 && lay_cvar_write(cvar, values[a]) != 0) {
                tc_fail(tc_coll_names[coll], "cannot select the algorithm through MPI_T");
                continue;
            }
            for (int k = 0; k < nctx; k++) {
                size_t counts[9];
                int    ncounts = o->ncounts;
                memcpy(counts, o->counts, sizeof(size_t) * (size_t)o->ncounts);
                if (k == 0 && o->large > 0) { /* the dup: one count beyond a chunk */
                    counts[ncounts++] = o->large;
                }
                snprintf(lay_where, sizeof(lay_where), "layout %s, %s %s, comm %s", layout,
                         tc_coll_names[coll], nalgs > 0 ? names[a] : "(component absent)", ctxs[k].comm_name);
                lay_run_coll(&ctxs[k], coll, counts, ncounts, o->quick, seed);
            }
        }
        if (nalgs > 0) {
            lay_cvar_write(cvar, values[0]); /* back to auto (the first item) */
        }
    }
}

static int lay_parse(int argc, char **argv, lay_options_t *o, int *watchdog)
{
    const char *counts = "0,1,7,1000";

    *o = (lay_options_t){.mem = "device", .large = 5000, .cycles = 1};
    snprintf(o->node_sizes, sizeof(o->node_sizes), "-");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = (i + 1 < argc) ? argv[i + 1] : NULL;
#define LAY_OPT(name) (strcmp(a, name) == 0 && v != NULL && ++i)
        if (LAY_OPT("--mem")) o->mem = v;
        else if (LAY_OPT("--counts")) counts = v;
        else if (LAY_OPT("--large")) o->large = (size_t)atol(v);
        else if (LAY_OPT("--node-sizes")) snprintf(o->node_sizes, sizeof(o->node_sizes), "%s", v);
        else if (LAY_OPT("--cycles")) o->cycles = atoi(v);
        else if (LAY_OPT("--watchdog")) *watchdog = atoi(v);
        else if (strcmp(a, "--quick") == 0) o->quick = 1;
        else {
            fprintf(stderr, "usage: coll_layouts [--mem device|pool|host] [--counts LIST] [--large N] "
                            "[--node-sizes LIST|-] [--cycles N] [--watchdog S] [--quick]\n");
            return 1;
        }
#undef LAY_OPT
    }
    for (const char *p = counts; *p != '\0' && o->ncounts < 8; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        o->counts[o->ncounts++] = (size_t)strtoull(p, NULL, 10);
    }
    return 0;
}

int main(int argc, char **argv)
{
    lay_options_t o;
    int           wsize, provided, watchdog = 0, layouts = 0;
    long          totals[2], sums[2];
    uint64_t      seed = 20261215;
    em_kind_t     kind;
    double        t0;

    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &lay_world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (lay_parse(argc, argv, &o, &watchdog) != 0) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (watchdog > 0) {
        signal(SIGALRM, lay_watchdog);
        alarm((unsigned)watchdog);
    }
    kind = em_init(o.mem, em_local_rank(lay_world_rank));
    t0   = MPI_Wtime();
    for (int cycle = 0; cycle < o.cycles; cycle++) {
        for (const char *p = o.node_sizes; *p != '\0'; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
            tc_ctx_t ctxs[4];
            MPI_Comm comms[3];
            char     layout[32];
            int      n = 0;
            double   t1 = MPI_Wtime();
            long     before = tc_tests;

            snprintf(layout, sizeof(layout), "%.*s", (int)strcspn(p, ","), p);
            if (strcmp(layout, "-") != 0 && lay_cvar_write("node_size", atoi(layout)) != 0) {
                tc_fail("setup", "cannot set coll_gpu_node_size through MPI_T");
            }
            /* fresh communicators: their contexts are set up with this layout */
            MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
            MPI_Comm_split(MPI_COMM_WORLD, lay_world_rank % 2, lay_world_rank, &comms[1]);
            MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - lay_world_rank, &comms[2]);
            ctxs[n++] = (tc_ctx_t){comms[0], "dup", 0, 0, kind};
            if (cycle == 0 && layouts == 0) {
                ctxs[n++] = (tc_ctx_t){MPI_COMM_WORLD, "world", 0, 0, kind};
            }
            ctxs[n++] = (tc_ctx_t){comms[1], "split-parity", 0, 0, kind};
            ctxs[n++] = (tc_ctx_t){comms[2], "reversed", 0, 0, kind};
            for (int k = 0; k < n; k++) {
                MPI_Comm_rank(ctxs[k].comm, &ctxs[k].rank);
                MPI_Comm_size(ctxs[k].comm, &ctxs[k].size);
            }
            lay_run_layout(ctxs, n, &o, layout, &seed);
            snprintf(lay_where, sizeof(lay_where), "layout %s: freeing its communicators", layout);
            for (int k = 0; k < 3; k++) {
                MPI_Comm_free(&comms[k]);
            }
            layouts++;
            if (lay_world_rank == 0) {
                printf("coll_layouts: layout %s: %ld checks, %.1f s\n", layout, tc_tests - before,
                       MPI_Wtime() - t1);
                fflush(stdout);
            }
        }
    }
    snprintf(lay_where, sizeof(lay_where), "the final count");
    totals[0] = tc_tests;
    totals[1] = tc_failures;
    MPI_Allreduce(totals, sums, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (lay_world_rank == 0) {
        printf("coll_layouts: %s: %ld checks on %d ranks, %d layouts, %ld failures, %.1f s\n",
               sums[1] ? "FAILED" : "PASSED", sums[0], wsize, layouts, sums[1], MPI_Wtime() - t0);
    }
    alarm(0);
    MPI_T_finalize();
    MPI_Finalize();
    return sums[1] ? 1 : 0;
}
