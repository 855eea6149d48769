/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* coll_costs: the counters it reads and the calls it measures (check_costs.c: the table of
 * cases and main; check_costs_calls.c: the calls, and the runs beyond one call). */
#ifndef CG_CHECK_COSTS_H
#define CG_CHECK_COSTS_H

#include "examples/example_mem.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum { C_FAST, C_STAGED, C_UNDER, C_LOCAL, C_MPI, C_AGREE, C_WAITS, C_OPS, C_SCRATCH, C_STAGEB,
       C_EXPORTS, C_IMPORTS, C_MISSED, C_QUERIES, C_HITS, C_NUM };
extern const char *const costs_counter_names[C_NUM];

enum { K_ALLREDUCE, K_BCAST, K_ALLGATHER, K_RSB };
extern const char *const costs_coll_names[4];

/* One case: its name, the call, and the expected deltas (-1: not checked; for host waits
 * and device operations the value is an upper bound when max is set). */
typedef struct {
    const char *name;
    long        want[C_NUM];
    int         max[C_NUM];
} costs_case_t;

extern int costs_failures;   /* this rank's failed checks */
extern int costs_host_cache; /* coll_gpu_host_cache in use (--no-host-cache) */
extern int costs_app_ready;  /* coll_gpu_app_wait=none (--app-ready) */

/* The counters now; coll_gpu_mem_releases (the releases the host-memory cache was told of) */
void               costs_read(unsigned long long v[C_NUM]);
unsigned long long costs_releases(void);
/* Bytes given to the component's exchanges, contexts made, contexts kept and taken, so far */
void costs_contexts(unsigned long long v[3]);
/* --nodes: a new communicator's first call makes its context, the next one's (the first
 * freed) takes it; what each gave the setup's exchanges, checked */
void costs_setup(void *dbuf, void *dsend, int32_t *host, size_t count, em_kind_t kind, int rank);
/* Checks one case's deltas (d) against k; bad_result: the call's result was wrong;
 * releases: this rank's releases of address space from the warm-up to the call's end. */
void costs_check(const costs_case_t *k, const unsigned long long d[C_NUM], int rank,
                 int bad_result, em_kind_t kind, unsigned long long releases);
/* One call of coll on count ints per rank; returns the wrong elements of this rank's result */
int  costs_call(int coll, MPI_Comm comm, void *dbuf, void *dsend, int32_t *host, size_t count,
                em_kind_t kind, int in_place);
/* One measured call (after one warm-up when warm), its deltas checked */
void costs_measure(const costs_case_t *k, int coll, MPI_Comm comm, void *buf, void *send,
                   int32_t *host, em_kind_t kind, int warm);
int  costs_lagging_rank(void *dbuf, void *dsend, int32_t *host, em_kind_t kind);
int  costs_wrap(void *dbuf, void *dsend, int32_t *hbuf, int32_t *hsend, int32_t *host,
                em_kind_t kind, long period);
int  costs_kinds_varying(void *dbuf, void *dsend, int32_t *hbuf, int32_t *hsend, int32_t *host,
                         em_kind_t kind, const char *label);
void costs_host_release(int32_t *host);
void costs_asserted(void *dbuf, void *dsend, int32_t *hbuf, int32_t *hsend, int32_t *host,
                    em_kind_t kind);
/* Staged calls on layouts with gaps: pieces copied, gaps untouched. */
void costs_gapped(void *dbuf, void *dsend, int32_t *host, em_kind_t kind);
/* The group's table of known buffers: a fixed send buffer, receive buffers by turns
 * (allreduce, forced two_shot by the caller). */
void costs_known(void *dsend, int32_t *host, em_kind_t kind);

#endif
