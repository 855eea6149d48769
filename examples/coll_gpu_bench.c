/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_gpu_bench: collective bandwidth on device buffers in the style of nccl-tests, with
 * the algorithm under test, the staged (host) path and the device-memory floor side by
 * side in one run, and the algorithm that ran at every size.
 *
 *   mpirun -np 4 coll_gpu_bench -C allreduce -b 8 -e 256M -f 4 -n 20 -w 5 -c 1
 *
 * Options: coll_gpu_bench --help; their meaning next to nccl-tests': docs/BENCH.md.
 * Sizes follow nccl-tests: allgather counts the gathered bytes, reduce_scatter the input
 * bytes of one rank. algbw = size / time; busbw = algbw x (2(n-1)/n allreduce, (n-1)/n
 * allgather and reduce_scatter, 1 bcast).
 * The floor is the time one shared device needs to read every input once and write every
 * output once at the copy bandwidth B (read + write bytes) that node rank 0 measures alone
 * before the sweep: 2n x size bytes for allreduce, n x size for bcast, (n + 1) x size for
 * allgather and reduce_scatter (n: ranks on the device).
 */
#include "bench.h"

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile size_t bench_alarm_bytes;
static int             bench_alarm_seconds;

static void bench_on_alarm(int sig)
{
    char msg[160];
    int  n = snprintf(msg, sizeof(msg), "coll_gpu_bench: timeout (-T %d) at %zu bytes\n",
                      bench_alarm_seconds, (size_t)bench_alarm_bytes);
    (void)sig;
    if (write(2, msg, (size_t)n) < 0) {
        /* nothing left to do */
    }
    _exit(124);
}

/* Time of one call in seconds, reported as -a asks (rank 0's, mean, min or max); the
 * algorithm the last timed call ran into ran[32] (read before the benchmark's own
 * collectives, which the component may handle too); the cost counters right before and
 * right after the timed loop into counters, unless NULL. */
static double bench_time(bench_run_t *b, long *wrong, char *ran, const char *setting,
                         bench_counters_t *counters)
{
    const bench_opts_t *o = b->o;
    long                w = 0;
    double              t0, t, sum = 0, out = 0;
    const char         *last;

    for (int i = 0; i < o->check; i++) {
        w += bench_check_once(b);
    }
    MPI_Allreduce(&w, wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < o->warmup; i++) {
        bench_call(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (counters != NULL) {
        bench_counters_read(counters, counters->before);
    }
    t0 = MPI_Wtime();
    for (int i = 0; i < o->iters; i++) {
        for (int k = 0; k < o->agg; k++) {
            bench_call(b);
        }
    }
    t = (MPI_Wtime() - t0) / ((double)o->iters * o->agg);
    if (counters != NULL) {
        bench_counters_read(counters, counters->after);
    }
    last = bench_last_algorithm(o->coll_name);
    /* a call of 0 elements runs no algorithm (the component reports none, or the last) */
    snprintf(ran, 32, "%s", b->count == 0 ? "-" : last != NULL ? last : setting);
    switch (o->average) {
    case 0: out = t; MPI_Bcast(&out, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
    case 1: MPI_Allreduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); out = sum / b->size; break;
    case 2: MPI_Allreduce(&t, &out, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD); break;
    default: MPI_Allreduce(&t, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); break;
    }
    return out;
}

/* Measure alg (or the default collective when the component is not there); the algorithm
 * that ran into ran[32], the cost counters around the timed loop into counters unless NULL. */
static double bench_measure(bench_run_t *b, const char *alg, int settable,
                            bench_counters_t *counters, long *wrong, char *ran)
{
    if (settable) {
        bench_set_algorithm(b->o->coll_name, alg, 0);
    }
    return bench_time(b, wrong, ran, settable ? alg : "-", counters);
}

static int bench_double_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), bench_double_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The component's time (and the staged path's when staged), measured by turns --rounds
 * times: the medians, so that a slow moment of a loaded machine moves neither side alone.
 * The cost counters are read around the first round's timed loop; wrong results of every
 * round add up. */
static void bench_measure_row(bench_run_t *b, bench_report_t *rep, bench_row_t *row, int staged)
{
    const bench_opts_t *o = b->o;
    double              ours[BENCH_ROUNDS_MAX], theirs[BENCH_ROUNDS_MAX];

    for (int r = 0; r < o->rounds; r++) {
        long wrong = 0;
        ours[r] = bench_measure(b, o->alg, rep->have_alg, r == 0 ? b->counters : NULL, &wrong,
                                row->alg);
        row->wrong += wrong;
        if (staged) {
            theirs[r] = bench_measure(b, "staged", 1, NULL, &wrong, row->staged_alg);
            row->staged_wrong += wrong;
        }
    }
    row->time = bench_median(ours, o->rounds);
    if (staged) {
        row->staged_time = bench_median(theirs, o->rounds);
    }
}

/* Wait for every rank without spinning (a rank measuring alone keeps the CPU). */
static void bench_quiet_barrier(void)
{
    MPI_Request req;
    int         done = 0;

    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* Copy bandwidth of the device the node's ranks share (GB/s, read + write), measured by
 * the node's first rank alone while the others wait; the slowest node's. 0 when a node's
 * ranks use different devices or no floor was asked for. *per_node: ranks on this node.
 * Measured on MPI_COMM_WORLD: no communicator of the benchmark's own is created and freed
 * before the sweep. */
static double bench_copy_bw(const bench_opts_t *o, em_kind_t kind, int rank, int size, int *per_node)
{
    char      *names = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
    int       *devs  = calloc((size_t)size, sizeof(int));
    double    *bws   = calloc((size_t)size, sizeof(double));
    char       name[MPI_MAX_PROCESSOR_NAME] = "";
    int        len, dev = em_device(), leader = -1, shared = 1, all_shared;
    double     bw = 0, floor_bw = 0;
    long long  bytes = o->floor_bytes >= 0              ? o->floor_bytes
                     : kind == EM_DEVICE && dev >= 0 ? 256LL << 20 /* a GPU */
                                                     : 8LL << 20;

    MPI_Get_processor_name(name, &len);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    MPI_Allgather(&dev, 1, MPI_INT, devs, 1, MPI_INT, MPI_COMM_WORLD);
    *per_node = 0;
    for (int r = 0; r < size; r++) {
        if (strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME, name) == 0) {
            leader = leader < 0 ? r : leader;
            shared &= devs[r] == dev;
            (*per_node)++;
        }
    }
    MPI_Allreduce(&shared, &all_shared, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (bytes > 0 && all_shared) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == leader) {
            bw = em_copy_bandwidth((size_t)bytes, kind);
        }
        bench_quiet_barrier();
        MPI_Allgather(&bw, 1, MPI_DOUBLE, bws, 1, MPI_DOUBLE, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++) { /* the leaders' values */
            if (bws[r] > 0 && (floor_bw == 0 || bws[r] < floor_bw)) {
                floor_bw = bws[r];
            }
        }
    }
    free(names), free(devs), free(bws);
    return floor_bw;
}

static size_t bench_next(const bench_opts_t *o, size_t bytes)
{
    size_t next;

    if (o->factor > 1.0) { /* past -e (or what a size_t holds): -e */
        const double grown = (double)bytes * o->factor;
        next = grown >= (double)o->max_bytes ? o->max_bytes : (size_t)grown;
    } else {
        next = o->step_bytes >= o->max_bytes - bytes ? o->max_bytes : bytes + o->step_bytes;
    }
    next = next > bytes ? next : bytes + 1;
    return next < o->max_bytes ? next : o->max_bytes;
}

static int bench_sweep(bench_run_t *b, bench_report_t *rep)
{
    const bench_opts_t *o         = b->o;
    size_t              last_size = (size_t)-1;

    for (size_t bytes = o->min_bytes;; bytes = bench_next(o, bytes)) {
        bench_row_t row  = {0};
        size_t      size = bench_shape(b, bytes);

        if (size != last_size) {
            last_size         = size;
            bench_alarm_bytes = size;
            if (o->timeout_s > 0) {
                alarm((unsigned)o->timeout_s);
            }
            row.bytes = size;
            row.count = (o->coll == BENCH_ALLREDUCE || o->coll == BENCH_BCAST) ? b->count
                                                                                 : b->count * (size_t)b->size;
            bench_measure_row(b, rep, &row, rep->have_staged && size <= o->staged_max);
            if (rep->copy_bw > 0) {
                row.floor_time = (double)size * bench_floor_factor(o->coll, rep->per_node) /
                                 (rep->copy_bw * 1e9);
            }
            alarm(0);
            if (b->rank == 0) {
                bench_report_row(rep, &row);
            } else {
                rep->wrong += row.wrong + row.staged_wrong;
            }
        }
        if (bytes >= o->max_bytes) {
            break;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    bench_opts_t     o;
    bench_run_t      b   = {0};
    bench_report_t   rep = {0};
    bench_counters_t counters;
    char             err[4096]; /* the usage text too (--help) */
    int              rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    rc = bench_parse(argc, argv, &o, err, sizeof(err));
    if (rc == 0 && o.root >= b.size) {
        snprintf(err, sizeof(err), "-r %d: there are %d ranks", o.root, b.size);
        rc = -1;
    }
    if (rc != 0) {
        if (b.rank == 0) {
            fprintf(rc > 0 ? stdout : stderr, rc > 0 ? "%s" : "coll_gpu_bench: error: %s\n", err);
        }
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    b.o     = &o;
    b.kind  = em_init(o.mem, em_local_rank(b.rank));
    b.comm  = MPI_COMM_WORLD;
    if (o.comm_info != NULL) { /* KEY=VALUE, checked by bench_parse */
        MPI_Info info;
        char     key[MPI_MAX_INFO_KEY + 1];
        size_t   klen = (size_t)(strchr(o.comm_info, '=') - o.comm_info);
        snprintf(key, sizeof(key), "%.*s", (int)klen, o.comm_info);
        MPI_Info_create(&info);
        MPI_Info_set(info, key, o.comm_info + klen + 1);
        MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &b.comm);
        MPI_Info_free(&info);
    }
    bench_mpit_init();
    rep.have_alg = bench_set_algorithm(o.coll_name, o.alg, b.rank == 0) == 0;
    if (!rep.have_alg && strcmp(o.alg, "auto") != 0) {
        if (b.rank == 0) {
            fprintf(stderr, "coll_gpu_bench: error: cannot run algorithm %s (see above)\n", o.alg);
        }
        bench_mpit_finalize();
        MPI_Finalize();
        return 2;
    }
    rep.have_staged = o.staged && rep.have_alg && bench_set_algorithm(o.coll_name, "staged", 0) == 0;
    if (rep.have_alg) { /* back to the algorithm under test for the benchmark's own calls */
        bench_set_algorithm(o.coll_name, o.alg, 0);
    }
    rep.have_pvar   = bench_last_algorithm(o.coll_name) != NULL;
    rep.o           = &o;
    rep.np          = b.size;
    rep.device      = em_describe();
    rep.copy_bw = bench_copy_bw(&o, b.kind, b.rank, b.size, &rep.per_node);
    if (em_device() >= 0) { /* a GPU: the round trip every rank pays at once */
        double round_trip;
        MPI_Barrier(MPI_COMM_WORLD);
        round_trip = em_round_trip_us(200, b.kind);
        MPI_Allreduce(&round_trip, &rep.round_trip_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }

    if (o.counters && b.rank == 0 && bench_counters_open(&counters) > 0) { /* rank 0's own */
        b.counters   = &counters;
        rep.counters = &counters;
    }
    rc = 0;
    if (b.rank == 0) {
        rc = bench_report_open(&rep);
        if (rc == 0) {
            bench_report_header(&rep);
        }
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc != 0) {
        bench_mpit_finalize();
        MPI_Finalize();
        return 2;
    }
    if (bench_shape(&b, o.max_bytes) > 0 && b.count > (size_t)INT_MAX) { /* an MPI count */
        if (b.rank == 0) {
            fprintf(stderr, "coll_gpu_bench: -e %zu: %zu elements per rank in one call, more "
                    "than an MPI count (int) holds\n", o.max_bytes, b.count);
        }
        bench_mpit_finalize();
        MPI_Finalize();
        return 2;
    }
    size_t max_elems = o.max_bytes / o.type->size + (size_t)b.size;
    b.send = em_alloc(max_elems * o.type->size, b.kind);
    b.recv = em_alloc(max_elems * o.type->size, b.kind);
    bench_alarm_seconds = o.timeout_s;
    if (o.timeout_s > 0) {
        signal(SIGALRM, bench_on_alarm);
    }
    bench_sweep(&b, &rep);
    if (rep.have_alg) {
        bench_set_algorithm(o.coll_name, "auto", 0);
    }
    rc = b.rank == 0 ? bench_report_close(&rep) : (rep.wrong ? 1 : 0);
    em_free(b.send, b.kind), em_free(b.recv, b.kind);
    if (b.comm != MPI_COMM_WORLD) {
        MPI_Comm_free(&b.comm);
    }
    bench_mpit_finalize();
    MPI_Finalize();
    return rc;
}
