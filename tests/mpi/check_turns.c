/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* The four collectives by turns, checked: see check_turns.h. */
#include "tests/mpi/check_turns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t check_turns_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* Element i of rank's input to call number call: in [-1000001, 1000001], so that a sum
 * over any number of ranks stays exact. */
static int64_t check_turns_value(int rank, long call, int salt, int i)
{
    const uint64_t key = ((uint64_t)rank << 40) ^ ((uint64_t)call << 8) ^ (uint64_t)salt ^
                         ((uint64_t)i << 20);
    return (int64_t)(check_turns_mix(key) % 2000003) - 1000001;
}

static int check_turns_out_count(const check_turns_t *turns, check_turn_kind_t kind, int n)
{
    return kind == CHECK_TURN_ALLGATHER ? n * turns->size : n;
}

void check_turns_init(check_turns_t *turns, const char *program, MPI_Comm comm,
                      em_kind_t kind, int max_count)
{
    size_t bytes;

    memset(turns, 0, sizeof(*turns));
    turns->program = program;
    turns->kind    = kind;
    MPI_Comm_rank(comm, &turns->rank);
    MPI_Comm_size(comm, &turns->size);
    /* the allgather's output and the reduce_scatter's input */
    bytes = (size_t)(max_count > 1 ? max_count : 1) * (size_t)turns->size * sizeof(int64_t);
    turns->dev_in   = em_alloc(bytes, kind);
    turns->dev_out  = em_alloc(bytes, kind);
    turns->host_in  = malloc(bytes);
    turns->host_out = malloc(bytes);
    turns->expect   = malloc(bytes);
    if (turns->dev_in == NULL || turns->dev_out == NULL || turns->host_in == NULL ||
        turns->host_out == NULL || turns->expect == NULL) {
        fprintf(stderr, "%s: out of memory\n", program);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

void check_turns_free(check_turns_t *turns)
{
    em_free(turns->dev_in, turns->kind);
    em_free(turns->dev_out, turns->kind);
    free(turns->host_in);
    free(turns->host_out);
    free(turns->expect);
    memset(turns, 0, sizeof(*turns));
}

void check_turns_prepare(check_turns_t *turns, check_turn_kind_t kind, int root, int n,
                         int salt)
{
    const int    size = turns->size, out_n = check_turns_out_count(turns, kind, n);
    const int    in_n = kind == CHECK_TURN_REDUCE_SCATTER ? n * size : n;
    const long   call = turns->calls;
    const size_t elem = sizeof(int64_t);

    for (int i = 0; i < in_n; i++) {
        turns->host_in[i] = check_turns_value(turns->rank, call, salt, i);
    }
    for (int i = 0; i < out_n; i++) {
        int64_t sum = 0;
        switch (kind) {
        case CHECK_TURN_ALLREDUCE:
            for (int r = 0; r < size; r++) {
                sum += check_turns_value(r, call, salt, i);
            }
            break;
        case CHECK_TURN_BCAST: sum = check_turns_value(root, call, salt, i); break;
        case CHECK_TURN_ALLGATHER: sum = check_turns_value(i / n, call, salt, i % n); break;
        default: /* reduce_scatter_block: this rank's block of every rank's input */
            for (int r = 0; r < size; r++) {
                sum += check_turns_value(r, call, salt, turns->rank * n + i);
            }
        }
        turns->expect[i] = sum;
    }
    memset(turns->host_out, 0x5a, (size_t)out_n * elem);
    if (kind == CHECK_TURN_BCAST && turns->rank == root) {
        memcpy(turns->host_out, turns->host_in, (size_t)n * elem);
    }
    em_to_dev(turns->dev_in, turns->host_in, (size_t)in_n * elem, turns->kind);
    em_to_dev(turns->dev_out, turns->host_out, (size_t)out_n * elem, turns->kind);
}

void check_turns_run(const check_turns_t *turns, MPI_Comm comm, check_turn_kind_t kind,
                     int root, int n)
{
    switch (kind) {
    case CHECK_TURN_ALLREDUCE:
        MPI_Allreduce(turns->dev_in, turns->dev_out, n, MPI_INT64_T, MPI_SUM, comm);
        break;
    case CHECK_TURN_BCAST: MPI_Bcast(turns->dev_out, n, MPI_INT64_T, root, comm); break;
    case CHECK_TURN_ALLGATHER:
        MPI_Allgather(turns->dev_in, n, MPI_INT64_T, turns->dev_out, n, MPI_INT64_T, comm);
        break;
    default:
        MPI_Reduce_scatter_block(turns->dev_in, turns->dev_out, n, MPI_INT64_T, MPI_SUM, comm);
    }
}

void check_turns_verify(check_turns_t *turns, check_turn_kind_t kind, int n, int salt)
{
    const int out_n = check_turns_out_count(turns, kind, n);

    em_to_host(turns->host_out, turns->dev_out, (size_t)out_n * sizeof(int64_t), turns->kind);
    for (int i = 0; i < out_n; i++) {
        if (turns->host_out[i] != turns->expect[i] && turns->wrong++ < 5) {
            fprintf(stderr, "%s: rank %d call %ld (collective %d, count %d, salt %d) element "
                    "%d: %lld, expected %lld\n", turns->program, turns->rank, turns->calls,
                    (int)kind, n, salt, i, (long long)turns->host_out[i],
                    (long long)turns->expect[i]);
        }
    }
    turns->calls++;
}
