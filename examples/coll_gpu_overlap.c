/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_gpu_overlap: the gradient exchange of data-parallel training, overlapped with the
 * computation that produces the gradients. The backward pass computes the gradients of
 * the last layer first; as soon as a layer's gradients are written (a "kernel" on the
 * device), their sum over the ranks starts with MPI_Iallreduce on the device buffer, and
 * the computation of the next layer goes on while the exchanges run. At the end one
 * MPI_Waitall, and every element is checked. Nothing in it knows about the component:
 * run it with and without `--mca coll ^gpu` (without it, Open MPI reads device memory on
 * the CPU and crashes, unless it was built with CUDA support).
 *
 *   mpirun -np 4 coll_gpu_overlap [elements per layer] [layers]
 *
 * On a GPU the "kernel" is a cudaMemsetAsync on the default stream: it runs on the GPU
 * while the host starts the exchange of the previous layer and tests the requests; the
 * component waits for the default stream before it reads a gradient. Without a GPU it
 * writes the simulated GPU's memory, and the host's share of the computation (here a loop
 * standing for the optimizer's work on each layer) is done between tests of the requests,
 * which progress the exchanges.
 */
#include "example_mem.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The gradient byte of layer l on rank r: every int element is byte * 0x01010101, and the
 * sum over ranks (at most 8 * 8 per byte) never carries from one byte into the next. */
static int grad_byte(int rank, int layer)
{
    return 1 + (rank + layer) % 8;
}

/* Host work standing for the rest of a layer's backward step; tests the requests in flight
 * now and then so that MPI progresses them. */
static int host_work(MPI_Request *reqs, int n, double *sink)
{
    int tests = 0, done;

    for (int chunk = 0; chunk < 16; chunk++) {
        for (int i = 0; i < 20000; i++) {
            *sink += (double)i * 1e-9;
        }
        MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
        tests++;
    }
    return tests;
}

int main(int argc, char **argv)
{
    int         rank, size, layers, errors = 0, all_errors = 0, tests = 0;
    size_t      count;
    double      sink = 0, t0, t_issue, t_wait;
    int32_t   **grads, *host;
    MPI_Request *reqs;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    count  = (argc > 1) ? (size_t)atol(argv[1]) : (size_t)1 << 18;
    layers = (argc > 2) ? atoi(argv[2]) : 8;
    if (size > 8 || layers < 1) {
        if (rank == 0) {
            fprintf(stderr, "coll_gpu_overlap: at most 8 ranks and at least one layer\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    em_kind_t kind = em_init("auto", em_local_rank(rank));

    grads = calloc((size_t)layers, sizeof(*grads));
    reqs  = calloc((size_t)layers, sizeof(*reqs));
    host  = malloc(count * sizeof(int32_t));
    for (int l = 0; l < layers; l++) {
        grads[l] = em_alloc(count * sizeof(int32_t), kind);
        reqs[l]  = MPI_REQUEST_NULL;
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* backward pass: last layer first */
    t0 = MPI_Wtime();
    for (int l = layers - 1; l >= 0; l--) {
        em_fill_queued(grads[l], grad_byte(rank, l), count * sizeof(int32_t), kind);
        MPI_Iallreduce(MPI_IN_PLACE, grads[l], (int)count, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD,
                       &reqs[l]);
        tests += host_work(reqs, layers, &sink); /* the next layer's work meanwhile */
    }
    t_issue = MPI_Wtime() - t0;
    MPI_Waitall(layers, reqs, MPI_STATUSES_IGNORE);
    t_wait = MPI_Wtime() - t0 - t_issue;

    for (int l = 0; l < layers; l++) {
        int32_t want = 0;
        for (int r = 0; r < size; r++) {
            want += grad_byte(r, l) * 0x01010101;
        }
        em_to_host(host, grads[l], count * sizeof(int32_t), kind);
        for (size_t i = 0; i < count; i++) {
            errors += host[i] != want;
        }
    }
    MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("coll_gpu_overlap: %d ranks, %d layers of %zu ints in %s: gradients %s "
               "(%d wrong elements); backward pass %.1f ms with %d tests of the exchanges in "
               "flight, then %.1f ms waiting for them\n",
               size, layers, count, em_describe(), all_errors ? "FAILED" : "correct",
               all_errors, t_issue * 1e3, tests, t_wait * 1e3);
    }
    for (int l = 0; l < layers; l++) {
        em_free(grads[l], kind);
    }
    free(grads), free(reqs), free(host);
    MPI_Finalize();
    return all_errors || sink < 0 ? 1 : 0;
}
