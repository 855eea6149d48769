/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* coll_gpu_bench internals: options, data, MPI_T access, reports (docs/BENCH.md). */
#ifndef CG_BENCH_H
#define CG_BENCH_H

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

#include "example_mem.h"

typedef enum {
    BENCH_ALLREDUCE,
    BENCH_BCAST,
    BENCH_ALLGATHER,
    BENCH_REDUCE_SCATTER,
    BENCH_REDUCE_SCATTER_BLOCK
} bench_coll_t;

typedef enum { BENCH_OP_SUM, BENCH_OP_PROD, BENCH_OP_MIN, BENCH_OP_MAX } bench_op_t;

typedef enum { BENCH_INT, BENCH_UINT, BENCH_FLOAT } bench_class_t;

typedef struct {
    const char   *name; /* nccl-tests' name */
    MPI_Datatype  dt;
    size_t        size;
    bench_class_t cls;
} bench_type_t;

typedef struct {
    bench_coll_t        coll;
    const char         *coll_name; /* the component's name: allreduce, bcast, ... */
    const bench_type_t *type;
    bench_op_t          op;
    const char         *op_name;
    const char         *alg;        /* coll/gpu algorithm under test (auto) */
    const char         *mem;        /* example_mem mode */
    const char         *csv, *json; /* result files (rank 0), or NULL */
    size_t              min_bytes, max_bytes, step_bytes;
    size_t              staged_max; /* largest size the staged path is measured at */
    double              factor;     /* > 1: multiply; 0: add step_bytes */
    int                 iters, warmup, agg, check, root, blocking, average, in_place, staged;
    int                 rounds;      /* component and staged measured by turns, medians */
    int                 timeout_s;
    long long           floor_bytes; /* copy size of the floor measurement; -1: default, 0: none */
    const char         *comm_info;   /* KEY=VALUE: measure on a dup of MPI_COMM_WORLD with it */
    int                 counters;    /* print the component's cost counters per call */
} bench_opts_t;

/* Parse the command line (the same on every rank). Returns 0, 1 for --help (usage in
 * err), or -1 with the reason in err. */
int         bench_parse(int argc, char **argv, bench_opts_t *o, char *err, size_t errlen);
const char *bench_usage(void);

/* coll/gpu's cost counters: the performance variables coll_gpu_<name> of class counter,
 * read before and after the timed loop of the algorithm under test (--counters). */
#define BENCH_COUNTERS_MAX 64
#define BENCH_ROUNDS_MAX   31 /* --rounds */

typedef struct {
    int                count; /* counters found */
    char               names[BENCH_COUNTERS_MAX][64]; /* without coll_gpu_ */
    MPI_T_pvar_handle  handles[BENCH_COUNTERS_MAX];
    MPI_Datatype       types[BENCH_COUNTERS_MAX];
    unsigned long long before[BENCH_COUNTERS_MAX], after[BENCH_COUNTERS_MAX];
} bench_counters_t;

/* One benchmark: buffers and the results of the last measurement. */
typedef struct {
    const bench_opts_t *o;
    int                 rank, size;
    size_t              count; /* allreduce/bcast: elements; allgather/rs: per rank */
    size_t              send_elems, recv_elems, out_elems;
    em_kind_t           kind;
    void               *send, *recv;
    MPI_Comm            comm;  /* the communicator under test */
    bench_counters_t   *counters; /* rank 0 with --counters when coll/gpu has them, else NULL */
} bench_run_t;

/* Set count and the element counts of the buffers for a message of bytes; returns the
 * bytes actually measured (a multiple of the ranks' blocks for allgather/rs). */
size_t bench_shape(bench_run_t *b, size_t bytes);
int    bench_call(bench_run_t *b);
/* Fill the inputs, run one call, return this rank's wrong output elements. */
long   bench_check_once(bench_run_t *b);
double bench_bus_factor(bench_coll_t coll, int n);
/* Bytes through device memory that a call on one shared device must move at least, per
 * message byte (x message size = read + write bytes); 0 when undefined. */
double bench_floor_factor(bench_coll_t coll, int n);

/* MPI_T: the coll_gpu_<coll>_algorithm control variable and the
 * coll_gpu_<coll>_last_algorithm performance variable. */
int         bench_mpit_init(void);
int         bench_set_algorithm(const char *coll, const char *alg, int verbose);
const char *bench_algorithms(const char *coll);
/* The algorithm this process's last call of coll ran, or NULL when the component does not
 * tell (an older build, or not loaded). */
const char *bench_last_algorithm(const char *coll);
/* Find the cost counters and allocate their handles; returns how many (0: coll/gpu is not
 * loaded). */
int         bench_counters_open(bench_counters_t *counters);
/* Read every counter into values (counters->before or ->after). */
void        bench_counters_read(bench_counters_t *counters, unsigned long long *values);
void        bench_mpit_finalize(void);

/* One row of results. */
typedef struct {
    size_t bytes, count;
    char   alg[32], staged_alg[32];
    double time, staged_time, floor_time; /* seconds; 0: not measured */
    long   wrong, staged_wrong;
} bench_row_t;

typedef struct {
    const bench_opts_t *o;
    int                 np, per_node;
    const char         *device;
    double              copy_bw;   /* GB/s read + write, 0: not measured */
    double              round_trip_us; /* slowest rank's device round trip, all at once */
    int                 have_alg, have_staged, have_pvar;
    const bench_counters_t *counters; /* --counters: the ones found (rank 0), NULL: none */
    FILE               *csv, *json;
    int                 rows, staged_rows; /* staged_rows: rows that measured staged */
    double              busbw_sum, staged_busbw_sum;
    long                wrong;
} bench_report_t;

int  bench_report_open(bench_report_t *r);
void bench_report_header(bench_report_t *r);
void bench_report_row(bench_report_t *r, const bench_row_t *row);
/* Summary lines; closes the files. Returns 0 when every result was correct. */
int  bench_report_close(bench_report_t *r);

#endif
