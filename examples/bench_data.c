/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* coll_gpu_bench: the calls, their input data and the check of every output element. */
#include "bench.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_POISON 0x5a

static MPI_Op bench_mpi_op(bench_op_t op)
{
    static const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    return ops[op];
}

/* Element i of rank r's input: small integers, so that every reduction is exact in every
 * type; negative values for the signed types; a product of at most one 2. */
static int64_t bench_value(const bench_run_t *b, int r, size_t i)
{
    const int sign = b->o->type->cls != BENCH_UINT;

    switch (b->o->op) {
    case BENCH_OP_PROD: return (size_t)r == i % (size_t)b->size ? 2 : 1;
    case BENCH_OP_SUM: return (int64_t)((r + i) % 4) - sign;
    default: return (int64_t)((r + i) % 8) - 3 * sign;
    }
}

static int64_t bench_reduced(const bench_run_t *b, size_t i)
{
    int64_t acc = bench_value(b, 0, i);

    for (int r = 1; r < b->size; r++) {
        int64_t v = bench_value(b, r, i);
        switch (b->o->op) {
        case BENCH_OP_SUM: acc += v; break;
        case BENCH_OP_PROD: acc *= v; break;
        case BENCH_OP_MIN: acc = v < acc ? v : acc; break;
        case BENCH_OP_MAX: acc = v > acc ? v : acc; break;
        }
    }
    return acc;
}

static void bench_store(const bench_type_t *t, void *buf, size_t i, int64_t v)
{
    char *p = (char *)buf + i * t->size;

    if (t->cls == BENCH_FLOAT) {
        if (t->size == 4) {
            float f = (float)v;
            memcpy(p, &f, 4);
        } else {
            double d = (double)v;
            memcpy(p, &d, 8);
        }
        return;
    }
    switch (t->size) { /* two's complement: the same bytes for signed and unsigned */
    case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    default: { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); break; }
    }
}

size_t bench_shape(bench_run_t *b, size_t bytes)
{
    const bench_coll_t c = b->o->coll;
    const size_t       n = (size_t)b->size, elems = bytes / b->o->type->size;
    const int          blocks = (c == BENCH_ALLGATHER || c == BENCH_REDUCE_SCATTER ||
                                 c == BENCH_REDUCE_SCATTER_BLOCK);

    b->count      = blocks ? elems / n : elems;
    b->out_elems  = (c == BENCH_REDUCE_SCATTER || c == BENCH_REDUCE_SCATTER_BLOCK) ? b->count
                  : blocks ? b->count * n : b->count;
    b->send_elems = c == BENCH_ALLGATHER ? b->count : blocks ? b->count * n : b->count;
    b->recv_elems = (blocks && c != BENCH_ALLGATHER && !b->o->in_place) ? b->count
                  : blocks ? b->count * n : b->count;
    return (blocks ? b->count * n : b->count) * b->o->type->size;
}

int bench_call(bench_run_t *b)
{
    const bench_opts_t *o = b->o;
    void               *s = o->in_place ? MPI_IN_PLACE : b->send;
    const int           c = (int)b->count;
    MPI_Datatype        dt = o->type->dt;
    int                 rc;

    switch (o->coll) {
    case BENCH_ALLREDUCE: rc = MPI_Allreduce(s, b->recv, c, dt, bench_mpi_op(o->op), b->comm); break;
    case BENCH_BCAST: rc = MPI_Bcast(b->recv, c, dt, o->root, b->comm); break;
    case BENCH_ALLGATHER: rc = MPI_Allgather(s, c, dt, b->recv, c, dt, b->comm); break;
    case BENCH_REDUCE_SCATTER_BLOCK:
        rc = MPI_Reduce_scatter_block(s, b->recv, c, dt, bench_mpi_op(o->op), b->comm);
        break;
    default: {
        int *counts = malloc(sizeof(int) * (size_t)b->size);
        for (int r = 0; r < b->size; r++) {
            counts[r] = c;
        }
        rc = MPI_Reduce_scatter(s, b->recv, counts, dt, bench_mpi_op(o->op), b->comm);
        free(counts);
    }
    }
    if (rc == MPI_SUCCESS && o->blocking) {
        rc = MPI_Barrier(b->comm);
    }
    return rc;
}

/* The inputs of one call: the send buffer, or the receive buffer where the data lives in
 * place and at the bcast root; everything else poisoned. */
static void bench_fill(bench_run_t *b)
{
    const bench_opts_t *o = b->o;
    const size_t        ts = o->type->size;
    const size_t        max = b->send_elems > b->recv_elems ? b->send_elems : b->recv_elems;
    char               *host = malloc(max * ts + 1);

    for (size_t i = 0; i < b->send_elems; i++) {
        bench_store(o->type, host, i, bench_value(b, b->rank, i));
    }
    if (!o->in_place && o->coll != BENCH_BCAST) {
        em_to_dev(b->send, host, b->send_elems * ts, b->kind);
    }
    memset(host, BENCH_POISON, b->recv_elems * ts);
    if (o->coll == BENCH_BCAST && b->rank == o->root) {
        for (size_t i = 0; i < b->recv_elems; i++) {
            bench_store(o->type, host, i, bench_value(b, b->rank, i));
        }
    } else if (o->in_place && o->coll == BENCH_ALLGATHER) {
        for (size_t i = 0; i < b->count; i++) {
            bench_store(o->type, host, (size_t)b->rank * b->count + i, bench_value(b, b->rank, i));
        }
    } else if (o->in_place) {
        for (size_t i = 0; i < b->recv_elems; i++) {
            bench_store(o->type, host, i, bench_value(b, b->rank, i));
        }
    }
    em_to_dev(b->recv, host, b->recv_elems * ts, b->kind);
    free(host);
}

long bench_check_once(bench_run_t *b)
{
    const bench_opts_t *o  = b->o;
    const size_t        ts = o->type->size;
    char               *got = malloc(b->out_elems * ts + 1);
    char                want[8];
    long                wrong = 0;

    bench_fill(b);
    if (bench_call(b) != MPI_SUCCESS) {
        free(got);
        return (long)b->out_elems + 1;
    }
    em_to_host(got, b->recv, b->out_elems * ts, b->kind);
    for (size_t i = 0; i < b->out_elems; i++) {
        int64_t v;
        switch (o->coll) {
        case BENCH_ALLREDUCE: v = bench_reduced(b, i); break;
        case BENCH_BCAST: v = bench_value(b, o->root, i); break;
        case BENCH_ALLGATHER: v = bench_value(b, (int)(i / b->count), i % b->count); break;
        default: v = bench_reduced(b, (size_t)b->rank * b->count + i); break;
        }
        bench_store(o->type, want, 0, v);
        wrong += memcmp(got + i * ts, want, ts) != 0;
    }
    free(got);
    return wrong;
}

/* nccl-tests' bus bandwidth factors (doc/PERFORMANCE.md there). */
double bench_bus_factor(bench_coll_t coll, int n)
{
    switch (coll) {
    case BENCH_ALLREDUCE: return 2.0 * (n - 1) / n;
    case BENCH_BCAST: return 1.0;
    default: return (double)(n - 1) / n;
    }
}

/* Device-memory bytes per message byte when n ranks share one device and the call is done
 * with the least traffic possible: every input read once, every output written once.
 *   allreduce (S per rank):          n reads of S + n writes of S          = 2n S
 *   bcast (S):                        1 read at the root + n - 1 writes     = n S
 *   allgather (S gathered):           n reads of S/n + n writes of S        = (n + 1) S
 *   reduce_scatter (S input per rank): n reads of S + n writes of S/n       = (n + 1) S */
double bench_floor_factor(bench_coll_t coll, int n)
{
    switch (coll) {
    case BENCH_ALLREDUCE: return 2.0 * n;
    case BENCH_BCAST: return (double)n;
    default: return (double)n + 1;
    }
}
