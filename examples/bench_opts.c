/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* coll_gpu_bench's command line: nccl-tests' flags where they mean the same, our own
 * (long) options for the rest; every unsupported choice is an error (docs/BENCH.md). */
#include "bench.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const bench_type_t bench_types[] = {
    {"int8", MPI_INT8_T, 1, BENCH_INT},     {"uint8", MPI_UINT8_T, 1, BENCH_UINT},
    {"int32", MPI_INT32_T, 4, BENCH_INT},   {"uint32", MPI_UINT32_T, 4, BENCH_UINT},
    {"int64", MPI_INT64_T, 8, BENCH_INT},   {"uint64", MPI_UINT64_T, 8, BENCH_UINT},
    {"float", MPI_FLOAT, 4, BENCH_FLOAT},   {"double", MPI_DOUBLE, 8, BENCH_FLOAT},
};

static const struct {
    const char  *name, *alias; /* ours (the component's), nccl-tests' */
    bench_coll_t coll;
} bench_colls[] = {
    {"allreduce", "all_reduce", BENCH_ALLREDUCE},
    {"bcast", "broadcast", BENCH_BCAST},
    {"allgather", "all_gather", BENCH_ALLGATHER},
    {"reduce_scatter", "reducescatter", BENCH_REDUCE_SCATTER},
    {"reduce_scatter_block", "reducescatter_block", BENCH_REDUCE_SCATTER_BLOCK},
};

static const char *const bench_mem_modes[] = {"auto", "device", "pool", "vmm", "vmm-private",
                                               "host"};

const char *bench_usage(void)
{
    return "usage: coll_gpu_bench [options]   (docs/BENCH.md)\n"
           "  -C, --coll NAME          allreduce (all_reduce) | bcast (broadcast) | allgather (all_gather)\n"
           "                           | reduce_scatter | reduce_scatter_block   [allreduce]\n"
           "  -b, --minbytes SIZE      smallest message (K/M/G suffixes)       [8]\n"
           "  -e, --maxbytes SIZE      largest message                         [64M]\n"
           "  -f, --stepfactor F       multiply the size by F                   [2]\n"
           "  -i, --stepbytes SIZE     add SIZE instead (not with -f)\n"
           "  -n, --iters N            timed iterations                         [20]\n"
           "  -w, --warmup_iters N     untimed iterations first                 [5]\n"
           "  -m, --agg_iters N        calls per timed iteration                [1]\n"
           "  -c, --check N            checked calls per size (0: no check)     [1]\n"
           "  -o, --op OP              sum | prod | min | max                   [sum]\n"
           "  -d, --datatype TYPE      int8 uint8 int32 uint32 int64 uint64 float double [float]\n"
           "  -r, --root R             bcast root                               [0]\n"
           "  -z, --blocking 0|1       1: MPI_Barrier after every call (timed)  [0]\n"
           "  -a, --average 0|1|2|3    time reported: rank 0, mean, min, max over ranks [1]\n"
           "  -T, --timeout S          exit with an error when one size takes longer [0: none]\n"
           "  -J, --output_file F.json results as JSON (rank 0)\n"
           "  -t, --nthreads 1  -g, --ngpus 1   accepted for compatibility (one GPU per rank)\n"
           "  -A, --algorithm ALG      coll/gpu algorithm under test             [auto]\n"
           "  -s, --staged 0|1         also measure the staged path              [1]\n"
           "      --mem MODE           auto | device | pool | vmm | vmm-private | host [auto]\n"
           "      --in-place 0|1       MPI_IN_PLACE                              [0]\n"
           "      --staged-max SIZE    measure the staged path up to this size  [all]\n"
           "      --rounds N           measure the component and staged by turns N times\n"
           "                           per size; times are the medians       [1]\n"
           "      --csv FILE           results as CSV (rank 0)\n"
           "      --floor-bytes SIZE   copy size of the device-memory floor (0: no floor)\n"
           "      --comm-info KEY=VALUE   measure on a dup of MPI_COMM_WORLD with this info\n"
           "                           (e.g. mpi_assert_memory_alloc_kinds=system)\n"
           "      --counters           under every row: coll/gpu's cost counters per call of the\n"
           "                           timed loop, rank 0 (MPI_T coll_gpu_<name>)\n"
           "  -h, --help\n";
}

static int bench_fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* A size: digits, an optional K/M/G (binary) suffix, an optional B or iB. */
static int bench_parse_size(const char *s, size_t *out)
{
    char              *end;
    unsigned long long v;
    unsigned           shift = 0;

    if (!isdigit((unsigned char)*s)) {
        return -1;
    }
    errno = 0;
    v     = strtoull(s, &end, 10);
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    }
    if (v > (SIZE_MAX >> shift)) { /* too large: refused, never wrapped to a small size */
        return -1;
    }
    v <<= shift;
    if (toupper((unsigned char)*end) == 'I') {
        end++;
    }
    if (toupper((unsigned char)*end) == 'B') {
        end++;
    }
    if (errno != 0 || *end != '\0') {
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

/* A whole number in [lo, hi]. */
static int bench_parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    long  v;

    errno = 0;
    v     = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int bench_parse_coll(bench_opts_t *o, const char *v, char *err, size_t len)
{
    if (!strcmp(v, "0") || !strcmp(v, "1")) {
        return bench_fail(err, len, "-C selects the collective here; nccl-tests' -C "
                          "(report_cputime) is not supported");
    }
    for (size_t i = 0; i < sizeof(bench_colls) / sizeof(bench_colls[0]); i++) {
        if (!strcmp(v, bench_colls[i].name) || !strcmp(v, bench_colls[i].alias)) {
            o->coll      = bench_colls[i].coll;
            o->coll_name = bench_colls[i].name;
            return 0;
        }
    }
    return bench_fail(err, len, "unknown collective '%s' (allreduce, bcast, allgather, "
                      "reduce_scatter, reduce_scatter_block)", v);
}

static int bench_parse_op(bench_opts_t *o, const char *v, char *err, size_t len)
{
    static const char *const names[] = {"sum", "prod", "min", "max"};

    for (int i = 0; i < 4; i++) {
        if (!strcmp(v, names[i])) {
            o->op      = (bench_op_t)i;
            o->op_name = names[i];
            return 0;
        }
    }
    if (!strcmp(v, "avg")) {
        return bench_fail(err, len, "-o avg: MPI has no average operation (ncclAvg is NCCL's "
                          "own); use sum and divide");
    }
    if (!strcmp(v, "all")) {
        return bench_fail(err, len, "-o all is not supported: one op per run (sum, prod, min, max)");
    }
    return bench_fail(err, len, "unsupported op '%s' (sum, prod, min, max)", v);
}

static int bench_parse_type(bench_opts_t *o, const char *v, char *err, size_t len)
{
    for (size_t i = 0; i < sizeof(bench_types) / sizeof(bench_types[0]); i++) {
        if (!strcmp(v, bench_types[i].name)) {
            o->type = &bench_types[i];
            return 0;
        }
    }
    if (!strcmp(v, "half") || !strcmp(v, "bfloat16") || !strncmp(v, "f8e", 3)) {
        return bench_fail(err, len, "-d %s: MPI (Open MPI 4.1) has no predefined datatype for "
                          "it, so coll/gpu cannot be given one", v);
    }
    if (!strcmp(v, "all")) {
        return bench_fail(err, len, "-d all is not supported: one datatype per run");
    }
    return bench_fail(err, len, "unsupported datatype '%s' (int8 uint8 int32 uint32 int64 "
                      "uint64 float double)", v);
}

enum { OPT_MEM = 256, OPT_IN_PLACE, OPT_CSV, OPT_FLOOR, OPT_STAGED_MAX, OPT_COMM_INFO,
       OPT_COUNTERS, OPT_ROUNDS };

static const struct option bench_longopts[] = {
    {"coll", required_argument, 0, 'C'},         {"minbytes", required_argument, 0, 'b'},
    {"maxbytes", required_argument, 0, 'e'},     {"stepfactor", required_argument, 0, 'f'},
    {"stepbytes", required_argument, 0, 'i'},    {"iters", required_argument, 0, 'n'},
    {"warmup_iters", required_argument, 0, 'w'}, {"agg_iters", required_argument, 0, 'm'},
    {"check", required_argument, 0, 'c'},        {"op", required_argument, 0, 'o'},
    {"datatype", required_argument, 0, 'd'},     {"root", required_argument, 0, 'r'},
    {"blocking", required_argument, 0, 'z'},     {"average", required_argument, 0, 'a'},
    {"timeout", required_argument, 0, 'T'},      {"output_file", required_argument, 0, 'J'},
    {"nthreads", required_argument, 0, 't'},     {"ngpus", required_argument, 0, 'g'},
    {"algorithm", required_argument, 0, 'A'},    {"staged", required_argument, 0, 's'},
    {"mem", required_argument, 0, OPT_MEM},      {"in-place", required_argument, 0, OPT_IN_PLACE},
    {"csv", required_argument, 0, OPT_CSV},      {"floor-bytes", required_argument, 0, OPT_FLOOR},
    {"staged-max", required_argument, 0, OPT_STAGED_MAX}, {"comm-info", required_argument, 0, OPT_COMM_INFO},
    {"counters", no_argument, 0, OPT_COUNTERS},  {"rounds", required_argument, 0, OPT_ROUNDS},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0}};

/* One option with its argument v; 0, or -1 with the reason in err. */
static int bench_option(bench_opts_t *o, int c, const char *v, int *have_f, int *have_i, char *err,
                        size_t len)
{
    size_t sz;
    int    one;

    switch (c) {
    case 'C': return bench_parse_coll(o, v, err, len);
    case 'o': return bench_parse_op(o, v, err, len);
    case 'd': return bench_parse_type(o, v, err, len);
    case 'b':
    case 'e':
    case 'i':
        if (bench_parse_size(v, &sz) != 0) {
            return bench_fail(err, len, "-%c %s: not a size (digits with an optional K, M or G)", c, v);
        }
        *(c == 'b' ? &o->min_bytes : c == 'e' ? &o->max_bytes : &o->step_bytes) = sz;
        *have_i |= (c == 'i');
        return 0;
    case OPT_FLOOR:
        if (bench_parse_size(v, &sz) != 0) {
            return bench_fail(err, len, "--floor-bytes %s: not a size", v);
        }
        o->floor_bytes = (long long)sz;
        return 0;
    case OPT_STAGED_MAX:
        if (bench_parse_size(v, &o->staged_max) != 0) {
            return bench_fail(err, len, "--staged-max %s: not a size", v);
        }
        return 0;
    case 'f': {
        char *end;
        o->factor = strtod(v, &end);
        *have_f   = 1;
        return (*end == '\0' && o->factor > 1.0 && isfinite(o->factor)) ? 0
               : bench_fail(err, len, "-f %s: the step factor must be a number above 1", v);
    }
    case 'n': return bench_parse_int(v, 1, 1000000000, &o->iters) ? bench_fail(err, len, "-n %s: at least 1", v) : 0;
    case 'w': return bench_parse_int(v, 0, 1000000000, &o->warmup) ? bench_fail(err, len, "-w %s: 0 or more", v) : 0;
    case 'm': return bench_parse_int(v, 1, 1000000, &o->agg) ? bench_fail(err, len, "-m %s: at least 1", v) : 0;
    case 'c': return bench_parse_int(v, 0, 1000000, &o->check) ? bench_fail(err, len, "-c %s: 0 or more", v) : 0;
    case 'r': return bench_parse_int(v, 0, INT32_MAX, &o->root) ? bench_fail(err, len, "-r %s: a rank (-r all is not supported)", v) : 0;
    case 'a': return bench_parse_int(v, 0, 3, &o->average) ? bench_fail(err, len, "-a %s: 0 (rank 0), 1 (mean), 2 (min) or 3 (max); the algorithm is -A", v) : 0;
    case 'T': return bench_parse_int(v, 0, 1000000, &o->timeout_s) ? bench_fail(err, len, "-T %s: seconds, 0 or more", v) : 0;
    case 's': return bench_parse_int(v, 0, 1, &o->staged) ? bench_fail(err, len, "-s %s: 0 or 1", v) : 0;
    case OPT_IN_PLACE: return bench_parse_int(v, 0, 1, &o->in_place) ? bench_fail(err, len, "--in-place %s: 0 or 1", v) : 0;
    case 'z':
        return bench_parse_int(v, 0, 1, &o->blocking)
                   ? bench_fail(err, len, "-z %s: 0 or 1 (MPI collectives block; modes 2 and 3 "
                                "of nccl-tests are not supported)", v) : 0;
    case 't':
    case 'g':
        return (bench_parse_int(v, 1, 1, &one) == 0) ? 0
               : bench_fail(err, len, "-%c %s: one GPU per MPI rank (start more ranks with mpirun -np)", c, v);
    case 'A': o->alg = v; return 0;
    case 'J': o->json = v; return 0;
    case OPT_CSV: o->csv = v; return 0;
    case OPT_COUNTERS: o->counters = 1; return 0;
    case OPT_ROUNDS:
        return bench_parse_int(v, 1, BENCH_ROUNDS_MAX, &o->rounds)
                   ? bench_fail(err, len, "--rounds %s: 1 to %d", v, BENCH_ROUNDS_MAX) : 0;
    case OPT_COMM_INFO:
        if (strchr(v, '=') == NULL || v[0] == '=') {
            return bench_fail(err, len, "--comm-info %s: KEY=VALUE", v);
        }
        o->comm_info = v;
        return 0;
    case OPT_MEM:
        for (size_t k = 0; k < sizeof(bench_mem_modes) / sizeof(bench_mem_modes[0]); k++) {
            if (!strcmp(v, bench_mem_modes[k])) {
                o->mem = v;
                return 0;
            }
        }
        return bench_fail(err, len, "--mem %s: auto, device, pool, vmm, vmm-private or host", v);
    }
    return bench_fail(err, len, "internal: option %d", c);
}

int bench_parse(int argc, char **argv, bench_opts_t *o, char *err, size_t len)
{
    int have_f = 0, have_i = 0, c;

    *o = (bench_opts_t){.coll = BENCH_ALLREDUCE, .coll_name = "allreduce", .type = &bench_types[6],
                        .op = BENCH_OP_SUM, .op_name = "sum", .alg = "auto", .mem = "auto",
                        .min_bytes = 8, .max_bytes = 64 << 20, .step_bytes = 1 << 20,
                        .staged_max = (size_t)-1, .factor = 2.0, .iters = 20, .warmup = 5, .agg = 1, .check = 1,
                        .average = 1, .staged = 1, .floor_bytes = -1, .rounds = 1};
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":C:b:e:f:i:n:w:m:c:o:d:r:z:a:T:J:t:g:A:s:h", bench_longopts,
                            NULL)) != -1) {
        if (c == 'h') {
            snprintf(err, len, "%s", bench_usage());
            return 1;
        }
        if (c == '?') { /* optopt: a short option, or a long one's code (its argument refused) */
            return optopt > 0 && optopt < 256
                       ? bench_fail(err, len, "unknown option -%c (see --help)", optopt)
                       : bench_fail(err, len, "unknown option %s (see --help)", argv[optind - 1]);
        }
        if (c == ':') {
            return bench_fail(err, len, "option %s needs a value", argv[optind - 1]);
        }
        if (bench_option(o, c, optarg, &have_f, &have_i, err, len) != 0) {
            return -1;
        }
    }
    if (optind < argc) {
        return bench_fail(err, len, "unexpected argument '%s' (the collective is -C NAME)", argv[optind]);
    }
    if (have_f && have_i) {
        return bench_fail(err, len, "-f and -i exclude each other (a factor or a fixed step)");
    }
    if (have_i) {
        o->factor = 0;
        if (o->step_bytes == 0) {
            return bench_fail(err, len, "-i 0: the step must be at least 1 byte");
        }
    }
    if (o->min_bytes > o->max_bytes) {
        return bench_fail(err, len, "-b %zu is larger than -e %zu", o->min_bytes, o->max_bytes);
    }
    if (o->coll != BENCH_BCAST && o->root != 0) {
        return bench_fail(err, len, "-r is for bcast only");
    }
    if (o->coll == BENCH_BCAST && o->in_place) {
        return bench_fail(err, len, "--in-place does not apply to bcast");
    }
    return 0;
}
