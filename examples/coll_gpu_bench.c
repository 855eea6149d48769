/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_gpu_bench: collective bandwidth on device buffers, in the style of nccl-tests, with
 * the algorithm under test and the staged (host) path measured side by side in one run.
 *
 *   mpirun -np 4 coll_gpu_bench -C allreduce -b 8 -e 256M -f 4 -n 20 -w 5 -c 1
 *
 *   -C coll      allreduce | bcast | allgather | reduce_scatter | reduce_scatter_block
 *   -b -e -f     smallest size, largest size, multiplication factor (sizes in bytes; k/M/G)
 *   -n -w        timed iterations, warm-up iterations
 *   -c 0|1       check every result element
 *   -d type      float double int32 int64 uint8 int8
 *   -o op        sum prod min max
 *   -r root      bcast root
 *   -i 0|1       in place
 *   -a alg       coll/gpu algorithm under test (default auto); -s 0 skips the staged run
 *   -m mode      memory: auto (GPU when present) | host | device
 *
 * Sizes follow nccl-tests: allgather counts the gathered bytes, reduce_scatter the input
 * bytes. algbw = size / time; busbw = algbw x (2(n-1)/n for allreduce, (n-1)/n for
 * allgather and reduce_scatter, 1 for bcast). Time is the slowest rank's average.
 * "floor" is the algbw the device memory allows when all ranks of a node share one device
 * (each input read and each output written once): B/(2n) allreduce, B/(n+1) allgather and
 * reduce_scatter, B/n bcast, B the device-to-device copy bandwidth measured at start.
 */
#include "bench.h"
#include "example_mem.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char  *coll, *alg, *type, *op, *mem;
    size_t       min_bytes, max_bytes;
    double       factor;
    int          iters, warmup, check, root, in_place, staged;
} bench_opts_t;

typedef struct {
    const char  *name;
    MPI_Datatype dt;
    size_t       size;
} bench_type_t;

static const bench_type_t bench_types[] = {
    {"float", MPI_FLOAT, 4}, {"double", MPI_DOUBLE, 8}, {"int32", MPI_INT, 4},
    {"int64", MPI_INT64_T, 8}, {"uint8", MPI_UINT8_T, 1}, {"int8", MPI_INT8_T, 1},
};

static size_t bench_size(const char *s)
{
    char  *end;
    double v = strtod(s, &end);
    switch (toupper((unsigned char)*end)) {
    case 'K': v *= 1024; break;
    case 'M': v *= 1024 * 1024; break;
    case 'G': v *= 1024.0 * 1024 * 1024; break;
    }
    return (size_t)v;
}

static MPI_Op bench_op(const char *name)
{
    return !strcmp(name, "prod") ? MPI_PROD : !strcmp(name, "min") ? MPI_MIN
         : !strcmp(name, "max") ? MPI_MAX : MPI_SUM;
}

/* Element i of rank r's input: small integers keep every reduction exact. */
static double bench_value(int r, size_t i, const char *op)
{
    return !strcmp(op, "prod") ? (double)(1 + ((r + i) % 2)) : (double)((r + i) % 8);
}

static void bench_store(const bench_type_t *t, void *buf, size_t i, double v)
{
    switch (t->size == 1 ? 1 : t->dt == MPI_FLOAT ? 2 : t->dt == MPI_DOUBLE ? 3 : t->size == 4 ? 4 : 5) {
    case 1: ((int8_t *)buf)[i] = (int8_t)v; break;
    case 2: ((float *)buf)[i] = (float)v; break;
    case 3: ((double *)buf)[i] = v; break;
    case 4: ((int32_t *)buf)[i] = (int32_t)v; break;
    default: ((int64_t *)buf)[i] = (int64_t)v; break;
    }
}

static double bench_reduce(const char *op, int n, size_t i)
{
    double acc = bench_value(0, i, op);
    for (int r = 1; r < n; r++) {
        double v = bench_value(r, i, op);
        acc = !strcmp(op, "prod") ? acc * v : !strcmp(op, "min") ? (v < acc ? v : acc)
            : !strcmp(op, "max") ? (v > acc ? v : acc) : acc + v;
    }
    return acc;
}

typedef struct {
    const bench_opts_t *o;
    const bench_type_t *t;
    int                 rank, size;
    size_t              count; /* allreduce/bcast: count; allgather/rs: per-rank count */
    em_kind_t           kind;
    void               *send, *recv;
} bench_run_t;

static int bench_call(bench_run_t *b)
{
    const bench_opts_t *o = b->o;
    void *s = o->in_place ? MPI_IN_PLACE : b->send;
    int   c = (int)b->count;

    if (!strcmp(o->coll, "allreduce")) {
        return MPI_Allreduce(s, b->recv, c, b->t->dt, bench_op(o->op), MPI_COMM_WORLD);
    } else if (!strcmp(o->coll, "bcast")) {
        return MPI_Bcast(b->recv, c, b->t->dt, o->root, MPI_COMM_WORLD);
    } else if (!strcmp(o->coll, "allgather")) {
        return MPI_Allgather(s, c, b->t->dt, b->recv, c, b->t->dt, MPI_COMM_WORLD);
    } else if (!strcmp(o->coll, "reduce_scatter_block")) {
        return MPI_Reduce_scatter_block(s, b->recv, c, b->t->dt, bench_op(o->op), MPI_COMM_WORLD);
    } else {
        int *counts = malloc(sizeof(int) * (size_t)b->size), rc;
        for (int r = 0; r < b->size; r++) {
            counts[r] = c;
        }
        rc = MPI_Reduce_scatter(s, b->recv, counts, b->t->dt, bench_op(o->op), MPI_COMM_WORLD);
        free(counts);
        return rc;
    }
}

/* Fill the inputs of one call: send buffer, or the receive buffer where the data lives in
 * place (and at the bcast root). Everything else is zeroed. */
static void bench_fill(bench_run_t *b, size_t send_elems, size_t recv_elems)
{
    size_t max = send_elems > recv_elems ? send_elems : recv_elems;
    char  *host = malloc(max * b->t->size + 1);
    int    is_ag = !strcmp(b->o->coll, "allgather"), is_bc = !strcmp(b->o->coll, "bcast");

    for (size_t i = 0; i < send_elems; i++) {
        bench_store(b->t, host, i, bench_value(b->rank, i, b->o->op));
    }
    em_to_dev(b->send, host, send_elems * b->t->size, b->kind);
    memset(host, 0, recv_elems * b->t->size);
    if (is_bc && b->rank == b->o->root) {
        for (size_t i = 0; i < recv_elems; i++) {
            bench_store(b->t, host, i, bench_value(b->rank, i, b->o->op));
        }
    } else if (!is_bc && b->o->in_place && is_ag) {
        for (size_t i = 0; i < b->count; i++) {
            bench_store(b->t, host, (size_t)b->rank * b->count + i, bench_value(b->rank, i, b->o->op));
        }
    } else if (!is_bc && b->o->in_place) {
        for (size_t i = 0; i < recv_elems; i++) {
            bench_store(b->t, host, i, bench_value(b->rank, i, b->o->op));
        }
    }
    em_to_dev(b->recv, host, recv_elems * b->t->size, b->kind);
    free(host);
}

static long bench_verify(bench_run_t *b, size_t out_elems)
{
    char  *got = malloc(out_elems * b->t->size + 1), *want = malloc(b->t->size + 8);
    long   wrong = 0;
    const char *c = b->o->coll;

    em_to_host(got, b->recv, out_elems * b->t->size, b->kind);
    for (size_t i = 0; i < out_elems; i++) {
        double v;
        if (!strcmp(c, "allreduce")) {
            v = bench_reduce(b->o->op, b->size, i);
        } else if (!strcmp(c, "bcast")) {
            v = bench_value(b->o->root, i, b->o->op);
        } else if (!strcmp(c, "allgather")) {
            v = bench_value((int)(i / b->count), i % b->count, b->o->op);
        } else {
            v = bench_reduce(b->o->op, b->size, (size_t)b->rank * b->count + i);
        }
        bench_store(b->t, want, 0, v);
        wrong += memcmp(got + i * b->t->size, want, b->t->size) != 0;
    }
    free(got), free(want);
    return wrong;
}

/* Average time of one call in seconds (slowest rank); wrong elements in *wrong. */
static double bench_time(bench_run_t *b, size_t send_elems, size_t recv_elems, size_t out_elems,
                         long *wrong)
{
    double t0, t, tmax;

    *wrong = 0;
    if (b->o->check) {
        long w;
        bench_fill(b, send_elems, recv_elems);
        bench_call(b);
        w = bench_verify(b, out_elems);
        MPI_Allreduce(&w, wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
    for (int i = 0; i < b->o->warmup; i++) {
        bench_call(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < b->o->iters; i++) {
        bench_call(b);
    }
    t = (MPI_Wtime() - t0) / b->o->iters;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

static int bench_parse(int argc, char **argv, bench_opts_t *o)
{
    *o = (bench_opts_t){"allreduce", "auto", "float", "sum", "auto", 8, 64 << 20, 2.0, 20, 5, 1, 0, 0, 1};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *v = argv[i + 1];
        if (argv[i][0] != '-' || argv[i][2] != '\0') {
            return -1;
        }
        switch (argv[i][1]) {
        case 'C': o->coll = v; break;
        case 'a': o->alg = v; break;
        case 'd': o->type = v; break;
        case 'o': o->op = v; break;
        case 'm': o->mem = v; break;
        case 'b': o->min_bytes = bench_size(v); break;
        case 'e': o->max_bytes = bench_size(v); break;
        case 'f': o->factor = atof(v); break;
        case 'n': o->iters = atoi(v); break;
        case 'w': o->warmup = atoi(v); break;
        case 'c': o->check = atoi(v); break;
        case 'r': o->root = atoi(v); break;
        case 'i': o->in_place = atoi(v); break;
        case 's': o->staged = atoi(v); break;
        default: return -1;
        }
    }
    return (argc % 2 == 1 && o->factor > 1.0 && o->iters > 0) ? 0 : -1;
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    bench_run_t  b = {0};
    int          shared_device, dev_min, dev_max, node_size;
    double       bw_floor = 0;
    MPI_Comm     node;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    if (bench_parse(argc, argv, &o) != 0) {
        if (b.rank == 0) {
            fprintf(stderr, "usage: coll_gpu_bench [-C coll] [-b min] [-e max] [-f factor] [-n iters] "
                            "[-w warmup] [-c 0|1] [-d type] [-o op] [-r root] [-i 0|1] [-a alg] [-s 0|1] [-m mode]\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    b.o = &o;
    for (size_t i = 0; i < sizeof(bench_types) / sizeof(bench_types[0]); i++) {
        if (!strcmp(bench_types[i].name, o.type)) {
            b.t = &bench_types[i];
        }
    }
    if (b.t == NULL) {
        b.t = &bench_types[0];
    }
    b.kind = em_init(o.mem, em_local_rank(b.rank));
    bench_mpit_init();
    int have_alg = bench_set_algorithm(o.coll, o.alg, b.rank == 0) == 0;
    int have_staged = o.staged && bench_set_algorithm(o.coll, "staged", 0) == 0;

    /* Do the ranks of each node share one device? Then the floor is one device's. */
    int my_dev = em_device();
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Allreduce(&my_dev, &dev_min, 1, MPI_INT, MPI_MIN, node);
    MPI_Allreduce(&my_dev, &dev_max, 1, MPI_INT, MPI_MAX, node);
    shared_device = (dev_min == dev_max);
    double bw = em_copy_bandwidth(o.max_bytes > (1 << 20) ? o.max_bytes : (1 << 20), b.kind);
    MPI_Allreduce(&bw, &bw_floor, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    double floor_div = !strcmp(o.coll, "allreduce") ? 2.0 * node_size
                     : !strcmp(o.coll, "bcast") ? (double)node_size : (double)node_size + 1;

    if (b.rank == 0) {
        printf("# coll_gpu_bench: %s, %d ranks (%d per node), %s, type %s, op %s, %s\n", o.coll,
               b.size, node_size, em_describe(), b.t->name, o.op, o.in_place ? "in place" : "out of place");
        printf("# algorithm under test: %s%s; comparison: %s\n", o.alg,
               have_alg ? "" : " (coll/gpu not loaded: the default collective)",
               have_staged ? "staged (host staging through the layer underneath)" : "none");
        printf("# device copy bandwidth B = %.1f GB/s; floor = B/%.0f per rank group%s\n", bw_floor,
               floor_div, shared_device ? "" : " (ranks use different devices: floor not shown)");
        printf("#%11s %12s %6s %5s %4s | %9s %8s %8s %6s %6s | %9s %8s %7s\n", "size", "count", "type",
               "redop", "root", "time", "algbw", "busbw", "floor", "#wrong", "staged", "busbw", "speedup");
        printf("#%11s %12s %6s %5s %4s | %9s %8s %8s %6s %6s | %9s %8s %7s\n", "(B)", "(elements)", "",
               "", "", "(us)", "(GB/s)", "(GB/s)", "(%)", "", "(us)", "(GB/s)", "(x)");
        fflush(stdout);
    }

    int n = b.size, is_ag = !strcmp(o.coll, "allgather"), is_rs = !strncmp(o.coll, "reduce_scatter", 14);
    double bus = !strcmp(o.coll, "allreduce") ? 2.0 * (n - 1) / n : !strcmp(o.coll, "bcast") ? 1.0 : (double)(n - 1) / n;
    size_t max_elems = o.max_bytes / b.t->size + (size_t)n;
    b.send = em_alloc(max_elems * b.t->size, b.kind);
    b.recv = em_alloc(max_elems * b.t->size, b.kind);
    long total_wrong = 0;
    for (size_t bytes = o.min_bytes;;) {
        size_t elems = bytes / b.t->size, send_elems, recv_elems, out_elems;
        long   wrong = 0, wrong_staged = 0;
        double t, ts = 0;
        b.count = (is_ag || is_rs) ? elems / (size_t)n : elems;
        elems = (is_ag || is_rs) ? b.count * (size_t)n : elems;
        send_elems = is_ag ? b.count : elems;
        recv_elems = (is_rs && !o.in_place) ? b.count : elems;
        out_elems = is_rs ? b.count : elems;
        if (have_alg) {
            bench_set_algorithm(o.coll, o.alg, 0);
        }
        t = bench_time(&b, send_elems, recv_elems, out_elems, &wrong);
        if (have_staged) {
            bench_set_algorithm(o.coll, "staged", 0);
            ts = bench_time(&b, send_elems, recv_elems, out_elems, &wrong_staged);
        }
        total_wrong += wrong + wrong_staged;
        if (b.rank == 0) {
            double size_b = (double)elems * b.t->size, algbw = size_b / t / 1e9;
            char   floor_txt[16] = "-", staged_txt[64] = "        -        -       -";
            if (shared_device && bw_floor > 0) {
                snprintf(floor_txt, sizeof(floor_txt), "%.0f", 100.0 * algbw / (bw_floor / floor_div));
            }
            if (have_staged) {
                snprintf(staged_txt, sizeof(staged_txt), "%9.1f %8.2f %7.2f", ts * 1e6,
                         size_b / ts / 1e9 * bus, ts / t);
            }
            printf("%12.0f %12zu %6s %5s %4d | %9.1f %8.2f %8.2f %6s %6ld | %s\n", size_b, elems,
                   b.t->name, o.op, o.root, t * 1e6, algbw, algbw * bus, floor_txt,
                   wrong + wrong_staged, staged_txt);
            fflush(stdout);
        }
        if (bytes >= o.max_bytes) {
            break;
        }
        size_t next = (size_t)((double)bytes * o.factor);
        bytes = next > bytes ? (next < o.max_bytes ? next : o.max_bytes) : bytes + 1;
    }
    if (have_alg) {
        bench_set_algorithm(o.coll, "auto", 0);
    }
    if (b.rank == 0) {
        printf("# %s: %ld wrong elements\n", total_wrong ? "FAILED" : "all results correct", total_wrong);
    }
    em_free(b.send, b.kind), em_free(b.recv, b.kind);
    MPI_Comm_free(&node);
    bench_mpit_finalize();
    MPI_Finalize();
    return total_wrong ? 1 : 0;
}
