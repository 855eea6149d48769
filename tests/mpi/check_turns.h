/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The four collectives by turns, checked (coll_threads, coll_progress): an allreduce (SUM),
 * a bcast, an allgather and a reduce_scatter_block (SUM) of 64-bit integers, every element
 * compared with a reference computed on the host from (rank, call, salt, element), the
 * output poisoned before the call.
 */
#ifndef CG_CHECK_TURNS_H
#define CG_CHECK_TURNS_H

#include "examples/example_mem.h"

#include <mpi.h>
#include <stdint.h>

typedef enum {
    CHECK_TURN_ALLREDUCE,
    CHECK_TURN_BCAST,
    CHECK_TURN_ALLGATHER,
    CHECK_TURN_REDUCE_SCATTER,
    CHECK_TURN_KINDS
} check_turn_kind_t;

/* One rank's buffers for the calls on one communicator, and what they did. */
typedef struct {
    const char *program; /* the failure lines' prefix */
    em_kind_t   kind;    /* memory of the collectives' buffers */
    int         rank, size;
    int64_t    *dev_in, *dev_out;
    int64_t    *host_in, *host_out, *expect;
    long        calls;   /* calls checked so far: part of the next call's inputs */
    long        wrong;   /* elements found wrong (lines printed for the first 5) */
} check_turns_t;

/* Buffers for counts up to max_count per rank on comm's rank and size (MPI_Abort when out
 * of memory). */
void check_turns_init(check_turns_t *turns, const char *program, MPI_Comm comm,
                      em_kind_t kind, int max_count);
void check_turns_free(check_turns_t *turns);

/* Call number turns->calls of collective kind, count n per rank (root: the bcast's; salt
 * tells apart callers that share a call number): inputs and reference made, the output
 * poisoned, both copied to the buffers' memory. */
void check_turns_prepare(check_turns_t *turns, check_turn_kind_t kind, int root, int n,
                         int salt);
/* The collective itself, on comm (of turns' rank and size). */
void check_turns_run(const check_turns_t *turns, MPI_Comm comm, check_turn_kind_t kind,
                     int root, int n);
/* The output compared with the reference; the call counted. */
void check_turns_verify(check_turns_t *turns, check_turn_kind_t kind, int n, int salt);

#endif
