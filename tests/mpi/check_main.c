/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_check: the MPI integration suite of coll/gpu.
 *
 * Runs MPI_Allreduce, MPI_Bcast, MPI_Allgather, MPI_Reduce_scatter and
 * MPI_Reduce_scatter_block on memory under test (CUDA device memory, or without a GPU the
 * simulated GPU's memory, which the CPU cannot touch, run by coll_gpu_device=host; --mem
 * pool: allocations that IPC cannot export) over every predefined datatype and the ops
 * the standard defines for it, counts 0/1/7/1000 and a large count, in place and out of
 * place, on several communicators; derived datatypes and user ops; and checks every element
 * against a reference computed on the host. Exit status 0 only when every rank passed.
 *
 * On world rank 0, stderr carries "coll_check: window begin" and "coll_check: window end
 * device=... host=..." around the calls, with the number of calls of each collective that
 * carried data, so that a script can match them with the component's verbose log.
 */
#include "check_colls.h"
#include "tests/mpi/check_pvar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int  tc_verbose;
long tc_tests, tc_failures;

static long tc_calls_dev[TC_NCOLL], tc_calls_host[TC_NCOLL];
static int  tc_current_size;

typedef struct {
    const char *mem;
    char        counts[128];
    long        large;
    char        colls[128];
    char        comms[128];
    char        types[512];
    int         full_comms;
    int         odd_first;  /* --odd-first: a communicator of all ranks but the last, used
                               and freed before the others (its context kept for odd's) */
    int         app_ready; /* run with coll_gpu_app_wait none: no inputs left on the
                              default stream at a call (tc_run_app_order) */
    int         expect_served; /* 1: every rank rang LL calls on a server (coll_gpu_ll_persist);
                                  -1: none did (--expect-ll-launched); 0: not checked */
    char        launched_on[64]; /* --expect-ll-launched-on LIST: these world ranks rang
                                    none, the others some */
    int         reset;      /* the device reset before the communicators are freed */
    int         derived;
    unsigned long long seed;
} tc_options_t;

void tc_fail(const char *what, const char *detail)
{
    tc_failures++;
    if (tc_failures <= 20) {
        fprintf(stderr, "coll_check: FAIL %s: %s\n", what, detail);
    } else if (tc_failures == 21) {
        fprintf(stderr, "coll_check: (further failures not printed)\n");
    }
}

void tc_count(int coll, size_t local_bytes, em_kind_t kind)
{
    if (local_bytes == 0 || (coll == TC_BCAST && tc_current_size < 2)) {
        return; /* nothing to classify; MPI_Bcast on one rank returns before any component */
    }
    if (kind == EM_DEVICE) {
        tc_calls_dev[coll]++;
    } else {
        tc_calls_host[coll]++;
    }
}

static int tc_reduction(int coll)
{
    return coll == TC_ALLREDUCE || coll == TC_RS || coll == TC_RSB;
}

/* Every collective x type x valid op x count x in-place (bcast: x root). */
static void tc_run_matrix(tc_ctx_t *ctx, const tc_options_t *o, const char *types,
                          const size_t *counts, int ncounts, uint64_t *seed)
{
    for (int coll = 0; coll < TC_NCOLL; coll++) {
        if (!tc_listed(o->colls, tc_coll_names[coll])) {
            continue;
        }
        for (int t = 0; t < tc_num_types; t++) {
            int size = 0;
            MPI_Type_size(tc_types[t].dt, &size);
            if (size == 0 || !tc_listed(types, tc_types[t].name)) {
                continue; /* e.g. Fortran types of a build without Fortran */
            }
            for (int op = tc_reduction(coll) ? 0 : -1; op < (tc_reduction(coll) ? tc_num_ops : 0); op++) {
                if (op >= 0 && !tc_op_valid(&tc_types[t], op)) {
                    continue;
                }
                for (int k = 0; k < ncounts; k++) {
                    for (int v = 0; v < (coll == TC_BCAST ? 3 : 2); v++) {
                        tc_case_t c = {ctx, &tc_types[t], op, counts[k], 0, 0, 0};
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
    }
}

/* The large count: every op once, and one op for each kind of type. */
static void tc_run_large(tc_ctx_t *ctx, const tc_options_t *o, uint64_t *seed)
{
    static const struct { int coll; const char *type, *op; } cases[] = {
        {TC_ALLREDUCE, "MPI_INT", "MPI_SUM"},   {TC_ALLREDUCE, "MPI_INT", "MPI_PROD"},
        {TC_ALLREDUCE, "MPI_INT", "MPI_MIN"},   {TC_ALLREDUCE, "MPI_INT", "MPI_MAX"},
        {TC_ALLREDUCE, "MPI_INT", "MPI_LAND"},  {TC_ALLREDUCE, "MPI_INT", "MPI_LOR"},
        {TC_ALLREDUCE, "MPI_INT", "MPI_LXOR"},  {TC_ALLREDUCE, "MPI_INT", "MPI_BAND"},
        {TC_ALLREDUCE, "MPI_INT", "MPI_BOR"},   {TC_ALLREDUCE, "MPI_INT", "MPI_BXOR"},
        {TC_ALLREDUCE, "MPI_2INT", "MPI_MINLOC"}, {TC_ALLREDUCE, "MPI_DOUBLE_INT", "MPI_MAXLOC"},
        {TC_ALLREDUCE, "MPI_UINT8_T", "MPI_SUM"}, {TC_ALLREDUCE, "MPI_INT16_T", "MPI_MAX"},
        {TC_ALLREDUCE, "MPI_UINT64_T", "MPI_PROD"}, {TC_ALLREDUCE, "MPI_FLOAT", "MPI_SUM"},
        {TC_ALLREDUCE, "MPI_DOUBLE", "MPI_MIN"}, {TC_ALLREDUCE, "MPI_C_DOUBLE_COMPLEX", "MPI_PROD"},
        {TC_ALLREDUCE, "MPI_C_BOOL", "MPI_LOR"}, {TC_ALLREDUCE, "MPI_LONG_DOUBLE", "MPI_SUM"},
        {TC_RSB, "MPI_FLOAT", "MPI_SUM"},       {TC_RSB, "MPI_INT64_T", "MPI_MAX"},
        {TC_RS, "MPI_DOUBLE", "MPI_SUM"},       {TC_RS, "MPI_UINT32_T", "MPI_BXOR"},
        {TC_ALLGATHER, "MPI_CHAR", NULL},       {TC_ALLGATHER, "MPI_FLOAT", NULL},
        {TC_BCAST, "MPI_DOUBLE", NULL},         {TC_BCAST, "MPI_SHORT_INT", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tc_case_t c = {ctx, tc_type_by_name(cases[i].type), cases[i].op ? tc_op_by_name(cases[i].op) : -1,
                       (size_t)o->large, (int)(i % 2), 0, 0};
        if (!tc_listed(o->colls, tc_coll_names[cases[i].coll])) {
            continue;
        }
        if (cases[i].coll == TC_RS || cases[i].coll == TC_RSB || cases[i].coll == TC_ALLGATHER) {
            c.count = (size_t)o->large / (size_t)ctx->size + 1; /* about large elements in all */
        }
        c.root = ctx->size / 2;
        c.seed = ++*seed * 0x9e3779b97f4a7c15ull;
        tc_run_coll(cases[i].coll, &c);
    }
}

static int tc_parse(int argc, char **argv, tc_options_t *o)
{
    *o = (tc_options_t){.mem = "auto", .large = 1048579, .derived = 1, .seed = 20261122};
    snprintf(o->counts, sizeof(o->counts), "0,1,7,1000");
    snprintf(o->colls, sizeof(o->colls), "all");
    snprintf(o->comms, sizeof(o->comms), "world,dup,split,reversed,odd");
    snprintf(o->types, sizeof(o->types), "all");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = (i + 1 < argc) ? argv[i + 1] : NULL;
#define TC_OPT(name) (strcmp(a, name) == 0 && v != NULL && ++i)
        if (TC_OPT("--mem")) o->mem = v;
        else if (TC_OPT("--counts")) snprintf(o->counts, sizeof(o->counts), "%s", v);
        else if (TC_OPT("--large")) o->large = atol(v);
        else if (TC_OPT("--colls")) snprintf(o->colls, sizeof(o->colls), "%s", v);
        else if (TC_OPT("--comms")) snprintf(o->comms, sizeof(o->comms), "%s", v);
        else if (TC_OPT("--types")) snprintf(o->types, sizeof(o->types), "%s", v);
        else if (TC_OPT("--seed")) o->seed = strtoull(v, NULL, 0);
        else if (TC_OPT("--offset")) tc_offset = (size_t)atol(v);
        else if (strcmp(a, "--full-comms") == 0) o->full_comms = 1;
        else if (strcmp(a, "--odd-first") == 0) o->odd_first = 1;
        else if (strcmp(a, "--app-ready") == 0) o->app_ready = 1;
        else if (strcmp(a, "--expect-ll-served") == 0) o->expect_served = 1;
        else if (strcmp(a, "--expect-ll-launched") == 0) o->expect_served = -1;
        else if (TC_OPT("--expect-ll-launched-on")) {
            snprintf(o->launched_on, sizeof(o->launched_on), ",%s,", v);
            o->expect_served = 1;
        }
        else if (strcmp(a, "--reset") == 0) o->reset = 1;
        else if (strcmp(a, "--no-derived") == 0) o->derived = 0;
        else if (strcmp(a, "--verbose") == 0) tc_verbose = 1;
        else {
            fprintf(stderr, "usage: coll_check "
                            "[--mem auto|device|pool|vmm|vmm-private|other|host|mixed] "
                            "[--counts LIST] "
                            "[--large N] [--colls LIST] [--comms LIST] [--types LIST] "
                            "[--seed N] [--offset BYTES] [--full-comms] [--odd-first] [--app-ready] "
                            "[--expect-ll-served|--expect-ll-launched|--expect-ll-launched-on "
                            "RANKS] [--no-derived] "
                            "[--reset] [--verbose]\n");
            return 1;
        }
#undef TC_OPT
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const comm_names[] = {"world", "dup", "split", "reversed", "odd"};
    tc_options_t o;
    static const size_t small_counts[] = {1, 7, 1000};
    MPI_Comm     comms[5], first;
    size_t       counts[16];
    int          ncounts = 0, wrank, wsize, local_rank, odd_color;
    uint64_t     seed;
    long         totals[2], sums[2];
    double       t0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (tc_parse(argc, argv, &o) != 0) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (o.expect_served) {
        check_pvar_served_start();
    }
    for (const char *p = o.counts; *p != '\0' && ncounts < 16; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        counts[ncounts++] = (size_t)strtoull(p, NULL, 10);
    }
    local_rank = em_local_rank(wrank);
    em_kind_t kind = em_init(strcmp(o.mem, "mixed") == 0 ? "auto" : o.mem, local_rank);
    if (strcmp(o.mem, "mixed") == 0 && (wrank % 2) == 1) {
        kind = EM_HOST; /* odd ranks pass host memory while even ranks pass device memory */
    }
    seed = o.seed;

    /* Communicators are created before the window: their creation runs collectives too. */
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &comms[2]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &comms[3]);
    odd_color = (wrank == wsize - 1 && wsize > 1) ? MPI_UNDEFINED : 0; /* all but the last */
    MPI_Comm_split(MPI_COMM_WORLD, odd_color, wrank, &comms[4]);
    first = MPI_COMM_NULL;
    if (o.odd_first) {
        MPI_Comm_split(MPI_COMM_WORLD, odd_color, wrank, &first);
    }
    if (wrank == 0) {
        printf("coll_check: %d ranks, %s, counts %s, large %ld\n", wsize, em_describe(),
               o.counts, o.large);
        fflush(stdout);
        fprintf(stderr, "coll_check: window begin\n");
        fflush(stderr);
    }
    t0 = MPI_Wtime();
    if (first != MPI_COMM_NULL) { /* freed before odd's first call: its context kept for it */
        tc_ctx_t ctx = {first, "odd-first", 0, 0, kind};
        MPI_Comm_rank(first, &ctx.rank);
        MPI_Comm_size(first, &ctx.size);
        tc_current_size = ctx.size;
        uint64_t first_seed = seed + 7919; /* its own: the last rank's seed goes on as it */
        tc_run_matrix(&ctx, &o, "MPI_INT,MPI_DOUBLE", small_counts, 3, &first_seed);
        MPI_Comm_free(&first);
    }
    for (int k = 0; k < 5; k++) {
        tc_ctx_t ctx = {comms[k], comm_names[k], 0, 0, kind};
        int      full = (k == 0) || o.full_comms;
        if (!tc_listed(o.comms, comm_names[k]) || comms[k] == MPI_COMM_NULL) {
            continue;
        }
        MPI_Comm_rank(comms[k], &ctx.rank);
        MPI_Comm_size(comms[k], &ctx.size);
        tc_current_size = ctx.size;
        if (full) {
            tc_run_matrix(&ctx, &o, o.types, counts, ncounts, &seed);
            if (o.large > 0) {
                tc_run_large(&ctx, &o, &seed);
            }
        } else {
            tc_run_matrix(&ctx, &o, "MPI_INT,MPI_DOUBLE,MPI_UINT8_T,MPI_FLOAT_INT,MPI_C_FLOAT_COMPLEX",
                          small_counts, 3, &seed);
        }
        if (tc_listed(o.colls, "allreduce")) {
            tc_run_float_consistency(&ctx, 1000, ++seed);
            tc_run_float_consistency(&ctx, 65537, ++seed);
            tc_run_reuse(&ctx, ++seed);
        }
        if (full && !o.app_ready && (tc_listed(o.colls, "allreduce") || tc_listed(o.colls, "bcast"))) {
            tc_run_app_order(&ctx, ++seed, tc_listed(o.colls, "allreduce"),
                             tc_listed(o.colls, "bcast"));
        }
        if (o.derived && (k == 0 || k == 3) && strcmp(o.colls, "all") == 0) {
            tc_run_derived(&ctx, ++seed);
        }
        if (wrank == 0 && tc_verbose) {
            printf("coll_check: %s done, %ld tests, %.1f s\n", comm_names[k], tc_tests, MPI_Wtime() - t0);
            fflush(stdout);
        }
    }
    if (wrank == 0) {
        fprintf(stderr, "coll_check: window end device=%ld,%ld,%ld,%ld,%ld host=%ld,%ld,%ld,%ld,%ld\n",
                tc_calls_dev[0], tc_calls_dev[1], tc_calls_dev[2], tc_calls_dev[3], tc_calls_dev[4],
                tc_calls_host[0], tc_calls_host[1], tc_calls_host[2], tc_calls_host[3], tc_calls_host[4]);
        fflush(stderr);
    }
    if (o.launched_on[0] != '\0') { /* this rank among them: it expects none served */
        char mine[16];
        snprintf(mine, sizeof(mine), ",%d,", wrank);
        o.expect_served = strstr(o.launched_on, mine) != NULL ? -1 : 1;
    }
    if (o.expect_served != 0) {
        tc_failures += o.expect_served > 0 ? check_pvar_expect_served("coll_check")
                                           : check_pvar_expect_launched("coll_check");
    }
    totals[0] = tc_tests;
    totals[1] = tc_failures;
    MPI_Allreduce(totals, sums, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) {
        printf("coll_check: %s: %ld checks on %d ranks, %ld failures, %.1f s\n",
               sums[1] ? "FAILED" : "PASSED", sums[0], wsize, sums[1], MPI_Wtime() - t0);
    }
    /* --reset: the device goes before the communicators that used it are freed, and before
     * MPI_Finalize (cudaDeviceReset, a habit of programs derived from CUDA's samples) */
    if (o.reset && em_device_reset() && wrank == 0) {
        printf("coll_check: device reset before MPI_Comm_free and MPI_Finalize\n");
        fflush(stdout);
    }
    for (int k = 1; k < 5; k++) {
        if (comms[k] != MPI_COMM_NULL) {
            MPI_Comm_free(&comms[k]);
        }
    }
    MPI_Finalize();
    return sums[1] ? 1 : 0;
}
