/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_coverage's matrix and main: every collective x mode x type/layout/op x count x in
 * place on five communicators (world, reversed, odd-sized, self, two halves), roots
 * cycling through 0, the last rank and the middle one, requests completed in seven ways;
 * then the overlap tests (check_coverage_overlap.c) and the layouts staged piece by piece
 * (check_coverage_pieces.c). Options: see cv_parse.
 */
#include "check_coverage.h"
#include "tests/mpi/check_pvar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the matrix ----------------------------------------------------------------------- */

typedef struct {
    const char *type, *layout, *op; /* op NULL: no reduction; "user": the layout's user op */
} cv_variant_t;

/* Reductions: predefined types and ops (padded pairs, complex, long double, bool
 * included); derived layouts with user ops. Data movement: plain and derived types. */
static const cv_variant_t cv_reduction_variants[] = {
    {"MPI_INT", "plain", "MPI_SUM"},         {"MPI_INT", "plain", "MPI_MAX"},
    {"MPI_INT", "plain", "MPI_BXOR"},        {"MPI_DOUBLE", "plain", "MPI_SUM"},
    {"MPI_UINT8_T", "plain", "MPI_SUM"},     {"MPI_FLOAT_INT", "plain", "MPI_MINLOC"},
    {"MPI_DOUBLE_INT", "plain", "MPI_MAXLOC"}, {"MPI_C_DOUBLE_COMPLEX", "plain", "MPI_PROD"},
    {"MPI_LONG_DOUBLE", "plain", "MPI_MIN"}, {"MPI_C_BOOL", "plain", "MPI_LXOR"},
    {"MPI_INT", "vector", "user"},           {"MPI_INT", "neg_lb", "user"},
    {"MPI_INT", "matrix", "user"},
};
static const cv_variant_t cv_data_variants[] = {
    {"MPI_CHAR", "plain", NULL},       {"MPI_INT", "plain", NULL},
    {"MPI_DOUBLE_INT", "plain", NULL}, {"MPI_C_DOUBLE_COMPLEX", "plain", NULL},
    {"MPI_DOUBLE", "vector", NULL},    {"MPI_SHORT_INT", "neg_lb", NULL},
};
#define CV_NVAR(a) ((int)(sizeof(a) / sizeof(a[0])))

typedef struct {
    char   colls[512];
    char   modes[64];
    size_t counts[8];
    int    ncounts;
    int    all_variants; /* every variant (world); otherwise the first two and one derived */
    int    overlap;
    int    expect_compact; /* the pieces' far-apart layouts must be staged compactly */
} cv_options_t;

static MPI_Op cv_user_sum, cv_user_matmul;

static void cv_run_matrix(tc_ctx_t *ctx, const cv_options_t *o, int all_variants, uint64_t *seed)
{
    static const char *const mode_names[] = {"blocking", "nonblocking", "persistent"};
    long                     n = 0;

    for (int c = 0; c < cv_num_colls; c++) {
        const cv_coll_t    *coll = &cv_colls[c];
        const cv_variant_t *vars = coll->reduces ? cv_reduction_variants : cv_data_variants;
        const int           nvar = coll->reduces ? CV_NVAR(cv_reduction_variants)
                                                 : CV_NVAR(cv_data_variants);
        if (!tc_listed(o->colls, coll->name)) {
            continue;
        }
        for (int mode = 0; mode < CV_NUM_MODES; mode++) {
            if ((mode == CV_BLOCKING && coll->fast) || !tc_listed(o->modes, mode_names[mode])) {
                continue; /* blocking with fast paths: coll_check */
            }
            for (int v = 0; v < nvar; v++) {
                const tc_type_t *t = tc_type_by_name(vars[v].type);
                if (!all_variants && v >= 2 && v != nvar - 1) {
                    continue;
                }
                /* A defect of the layer underneath, not of ours (host memory without the
                 * component crashes the same way): Open MPI 4.1.4's libnbc ireduce and
                 * reduce_init free an invalid pointer for a datatype with a negative true
                 * lower bound (a user op, more than two ranks). */
                if (strcmp(coll->name, "reduce") == 0 && mode != CV_BLOCKING &&
                    strcmp(vars[v].layout, "neg_lb") == 0) {
                    continue;
                }
                for (int ci = 0; ci < o->ncounts; ci++) {
                    for (int ip = 0; ip < (coll->in_place ? 2 : 1); ip++, n++) {
                        cv_call_t k = {.ctx = ctx, .coll = coll, .type = t,
                                       .lay = cv_layout(vars[v].layout, t),
                                       .op = -1, .count = o->counts[ci], .in_place = ip,
                                       .mode = (cv_mode_t)mode, .completion = (int)(n % 7),
                                       .null_ignored = (int)(n % 2)};
                        if (vars[v].op != NULL && strcmp(vars[v].op, "user") == 0) {
                            k.op     = k.lay->matmul ? tc_op_by_name("MPI_PROD")
                                                     : tc_op_by_name("MPI_SUM");
                            k.mpi_op = k.lay->matmul ? cv_user_matmul : cv_user_sum;
                        } else if (vars[v].op != NULL) {
                            k.op     = tc_op_by_name(vars[v].op);
                            k.mpi_op = tc_ops[k.op].op;
                        }
                        k.root = !coll->rooted ? 0 : (n % 3 == 0) ? 0 : (n % 3 == 1)
                                 ? ctx->size - 1 : ctx->size / 2;
                        k.seed = ++*seed * 0x9e3779b97f4a7c15ull;
                        cv_run(&k);
                    }
                }
            }
        }
    }
}

static int cv_parse(int argc, char **argv, cv_options_t *o, const char **mem)
{
    const char *counts = "0,1,7,1000";

    *o = (cv_options_t){.all_variants = 1, .overlap = 1};
    snprintf(o->colls, sizeof(o->colls), "all");
    snprintf(o->modes, sizeof(o->modes), "all");
    *mem = "auto";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = (i + 1 < argc) ? argv[i + 1] : NULL;
#define CV_OPT(name) (strcmp(a, name) == 0 && v != NULL && ++i)
        if (CV_OPT("--mem")) *mem = v;
        else if (CV_OPT("--counts")) counts = v;
        else if (CV_OPT("--colls")) snprintf(o->colls, sizeof(o->colls), "%s", v);
        else if (CV_OPT("--modes")) snprintf(o->modes, sizeof(o->modes), "%s", v);
        else if (strcmp(a, "--no-overlap") == 0) o->overlap = 0;
        else if (strcmp(a, "--queued") == 0) cv_queued_inputs = 1;
        else if (strcmp(a, "--expect-compact") == 0) o->expect_compact = 1;
        else if (strcmp(a, "--verbose") == 0) tc_verbose = 1;
        else if (strcmp(a, "--trace") == 0) tc_verbose = 2;
        else {
            fprintf(stderr, "usage: coll_coverage [--mem auto|device|pool|other|host|mixed] "
                            "[--counts LIST] [--colls LIST] [--modes blocking,nonblocking,"
                            "persistent] [--no-overlap] [--queued] [--expect-compact] "
                            "[--verbose] [--trace]\n");
            return 1;
        }
#undef CV_OPT
    }
    for (const char *p = counts; *p != '\0' && o->ncounts < 8; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        o->counts[o->ncounts++] = (size_t)strtoull(p, NULL, 10);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const comm_names[] = {"world", "reversed", "odd", "self", "halves"};
    cv_options_t o;
    const char  *mem;
    MPI_Comm     comms[5], dup;
    int          wrank, wsize;
    uint64_t     seed = 20261123;
    long         totals[2], sums[2];
    double       t0;
    em_kind_t    kind;
    tc_ctx_t     ctxs[5];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (cv_parse(argc, argv, &o, &mem) != 0) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    kind = em_init(strcmp(mem, "mixed") == 0 ? "auto" : mem, em_local_rank(wrank));
    if (strcmp(mem, "mixed") == 0 && (wrank % 2) == 1) {
        kind = EM_HOST; /* odd ranks pass host memory, even ranks device memory */
    }
    cv_user_ops(&cv_user_sum, &cv_user_matmul);
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, (wrank == wsize - 1 && wsize > 1) ? MPI_UNDEFINED : 0, wrank,
                   &comms[2]);
    comms[3] = MPI_COMM_SELF;
    MPI_Comm_split(MPI_COMM_WORLD, wrank < wsize / 2, wrank, &comms[4]);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (wrank == 0) {
        printf("coll_coverage: %d ranks, %s%s\n", wsize, em_describe(),
               strcmp(mem, "mixed") == 0 ? " (odd ranks: host memory)" : "");
        fflush(stdout);
    }
    t0 = MPI_Wtime();
    for (int c = 0; c < 5; c++) {
        tc_ctx_t *ctx = &ctxs[c];
        *ctx = (tc_ctx_t){comms[c], comm_names[c], 0, 0, kind};
        if (comms[c] == MPI_COMM_NULL) {
            continue;
        }
        MPI_Comm_rank(comms[c], &ctx->rank);
        MPI_Comm_size(comms[c], &ctx->size);
        /* the same seeds on every rank of the communicator (the odd-sized one leaves a
         * rank out, so a counter running over all communicators would differ) */
        uint64_t comm_seed = seed + (uint64_t)c * 1000003u;
        cv_run_matrix(ctx, &o, o.all_variants && c == 0, &comm_seed);
        if (wrank == 0 && tc_verbose) {
            printf("coll_coverage: %s done, %ld tests, %.1f s\n", comm_names[c], tc_tests,
                   MPI_Wtime() - t0);
            fflush(stdout);
        }
    }
    if (o.overlap) {
        tc_ctx_t           dctx = {dup, "dup", wrank, wsize, kind};
        check_pvar_watch_t compact;
        int                watched = 0;
        cv_run_overlap(&ctxs[0], &dctx, &ctxs[1], ++seed);
        if (o.expect_compact) {
            watched = check_pvar_watch(&compact, "coll_gpu_staged_compact");
        }
        cv_run_pieces(&ctxs[0], ++seed);
        cv_run_many_persistent(&ctxs[0], cv_user_sum, 80); /* more than the 64 kept */
        /* --expect-compact: the type over host memory terabytes below device memory was
         * staged compactly (as it lies, its arena would need terabytes); where the host
         * memory could not be placed far below, nothing is expected */
        if (o.expect_compact && (check_pvar_watched(&compact) == 0 || !watched) &&
            cv_pieces_far_cases() > 0) {
            tc_fail("staged compactly", watched ? "coll_gpu_staged_compact stayed 0 over the "
                                                  "layouts of allocations far apart"
                                                : "no performance variable "
                                                  "coll_gpu_staged_compact");
        }
        if (o.expect_compact && cv_pieces_far_cases() == 0) {
            fprintf(stderr, "coll_coverage: NOTE rank %d: no type over host memory far below "
                    "device memory ran (host memory only, or that address was taken): compact "
                    "staging not checked\n", wrank);
        }
    }
    if (wrank == 0) {
        cv_print_staged_names();
    }
    totals[0] = tc_tests;
    totals[1] = tc_failures;
    MPI_Allreduce(totals, sums, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) {
        printf("coll_coverage: %s: %ld checks on %d ranks, %ld failures, %.1f s\n",
               sums[1] ? "FAILED" : "PASSED", sums[0], wsize, sums[1], MPI_Wtime() - t0);
    }
    cv_layouts_free();
    MPI_Op_free(&cv_user_sum);
    MPI_Op_free(&cv_user_matmul);
    MPI_Comm_free(&dup);
    for (int c = 1; c < 5; c++) {
        if (comms[c] != MPI_COMM_NULL && comms[c] != MPI_COMM_SELF) {
            MPI_Comm_free(&comms[c]);
        }
    }
    MPI_Finalize();
    return sums[1] ? 1 : 0;
}
