/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_gpu_hello: a minimal application that puts its data in device memory (host memory
 * when there is no GPU) and calls the four collectives coll/gpu accelerates. Nothing in it
 * knows about the component: run it with and without `--mca coll ^gpu` and compare.
 *
 *   mpirun -np 4 coll_gpu_hello [count [--reset]]
 *
 * --reset: cudaDeviceReset before MPI_Finalize, as programs derived from CUDA's samples do
 * (every allocation and stream of the process goes while MPI still holds its own).
 */
#include "example_mem.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int    rank, size, errors = 0, all_errors = 0;
    size_t count = (argc > 1) ? (size_t)atol(argv[1]) : 1 << 20;
    int    reset = argc > 2 && strcmp(argv[2], "--reset") == 0; /* cudaDeviceReset before
                                                                   * MPI_Finalize */

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    em_kind_t kind = em_init("auto", em_local_rank(rank));

    float *host = malloc(count * size * sizeof(float));
    float *dsend = em_alloc(count * sizeof(float), kind);
    float *drecv = em_alloc(count * size * sizeof(float), kind);
    for (size_t i = 0; i < count; i++) {
        host[i] = (float)(rank + 1) + (float)(i % 16);
    }
    em_to_dev(dsend, host, count * sizeof(float), kind);

    /* Allreduce: sum over ranks of (r + 1 + i % 16). */
    MPI_Allreduce(dsend, drecv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    em_to_host(host, drecv, count * sizeof(float), kind);
    for (size_t i = 0; i < count; i++) {
        errors += host[i] != (float)(size * (size + 1) / 2) + (float)size * (float)(i % 16);
    }

    /* Bcast from the last rank. */
    if (rank == size - 1) {
        for (size_t i = 0; i < count; i++) {
            host[i] = (float)(i % 1000);
        }
        em_to_dev(drecv, host, count * sizeof(float), kind);
    }
    MPI_Bcast(drecv, (int)count, MPI_FLOAT, size - 1, MPI_COMM_WORLD);
    em_to_host(host, drecv, count * sizeof(float), kind);
    for (size_t i = 0; i < count; i++) {
        errors += host[i] != (float)(i % 1000);
    }

    /* Allgather: block r holds rank r's values. */
    MPI_Allgather(dsend, (int)count, MPI_FLOAT, drecv, (int)count, MPI_FLOAT, MPI_COMM_WORLD);
    em_to_host(host, drecv, count * size * sizeof(float), kind);
    for (int r = 0; r < size; r++) {
        for (size_t i = 0; i < count; i++) {
            errors += host[r * count + i] != (float)(r + 1) + (float)(i % 16);
        }
    }

    /* Reduce_scatter_block: each rank gets count / size reduced elements of its block. */
    size_t block = count / (size_t)size;
    MPI_Reduce_scatter_block(dsend, drecv, (int)block, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    em_to_host(host, drecv, block * sizeof(float), kind);
    for (size_t i = 0; i < block; i++) {
        size_t g = (size_t)rank * block + i;
        errors += host[i] != (float)(size * (size + 1) / 2) + (float)size * (float)(g % 16);
    }

    MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("coll_gpu_hello: %d ranks, %zu floats in %s: allreduce, bcast, allgather, "
               "reduce_scatter_block %s (%d wrong elements)\n",
               size, count, em_describe(), all_errors ? "FAILED" : "correct", all_errors);
    }
    em_free(dsend, kind);
    em_free(drecv, kind);
    free(host);
    if (reset && em_device_reset() && rank == 0) {
        printf("coll_gpu_hello: device reset before MPI_Finalize\n");
        fflush(stdout);
    }
    MPI_Finalize();
    return all_errors ? 1 : 0;
}
