/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Test cases of the MPI suite. */
#ifndef CG_CHECK_COLLS_H
#define CG_CHECK_COLLS_H

#include "check.h"

typedef struct {
    MPI_Comm    comm;
    const char *comm_name;
    int         rank;
    int         size;
    em_kind_t   kind; /* memory this rank hands to MPI */
} tc_ctx_t;

typedef struct {
    tc_ctx_t        *ctx;
    const tc_type_t *type;
    int              op; /* index into tc_ops; -1 for bcast/allgather */
    size_t           count;
    int              in_place;
    int              root;
    uint64_t         seed;
} tc_case_t;

enum { TC_ALLREDUCE, TC_BCAST, TC_ALLGATHER, TC_RS, TC_RSB, TC_NCOLL };

/* Names of the collectives, by TC_* index (as --colls lists them). */
extern const char *const tc_coll_names[TC_NCOLL];
extern size_t            tc_offset; /* device buffers start this many bytes into their allocation */
/* Run one case of collective coll (a TC_* index). */
void tc_run_coll(int coll, const tc_case_t *c);
void tc_run_allreduce(const tc_case_t *c);
void tc_run_bcast(const tc_case_t *c);
void tc_run_allgather(const tc_case_t *c);
void tc_run_reduce_scatter(const tc_case_t *c);
void tc_run_reduce_scatter_block(const tc_case_t *c);
void tc_run_float_consistency(tc_ctx_t *ctx, size_t count, uint64_t seed);
void tc_run_derived(tc_ctx_t *ctx, uint64_t seed);
void tc_run_reuse(tc_ctx_t *ctx, uint64_t seed);
void tc_run_app_order(tc_ctx_t *ctx, uint64_t seed, int allreduce, int bcast);

/* Count one collective call that carries data on this rank (for the verbose-log proof). */
void tc_count(int coll, size_t local_bytes, em_kind_t kind);

#endif
