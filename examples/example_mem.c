/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Device memory for MPI programs (see example_mem.h). */
#include "example_mem.h"

#include "kernels/sim/cg_sim.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { EM_BACKEND_HOST, EM_BACKEND_SIM, EM_BACKEND_CUDA } em_backend_t;

static em_backend_t em_backend = EM_BACKEND_HOST;
static int          em_pool; /* device allocations that IPC cannot export */

#define EM_ON_DEVICE(kind) ((kind) == EM_DEVICE && em_backend != EM_BACKEND_HOST)

static void em_die(const char *what, const char *why)
{
    fprintf(stderr, "example_mem: %s failed: %s\n", what, why);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

#define EM_SIM(call)                                                                     \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        if (rc_ != CG_SIM_OK) {                                                          \
            em_die(#call, cg_sim_status_string(rc_));                                    \
        }                                                                                \
    } while (0)

#ifdef CG_HAVE_CUDA
#include <cuda_runtime_api.h>
static int em_cuda_device = -1;

#define EM_CUDA(call)                                                                    \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            em_die(#call, cudaGetErrorString(e_));                                       \
        }                                                                                \
    } while (0)
#endif

int em_local_rank(int world_rank)
{
    const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    return lr ? atoi(lr) : world_rank;
}

em_kind_t em_init(const char *mode, int local_rank)
{
    em_pool = strcmp(mode, "pool") == 0;
    if (strcmp(mode, "host") == 0) {
        em_backend = EM_BACKEND_HOST;
        return EM_HOST;
    }
    if (strcmp(mode, "auto") != 0 && strcmp(mode, "device") != 0 && !em_pool) {
        fprintf(stderr, "example_mem: unknown memory mode \"%s\" (auto, device, pool, host)\n",
                mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
#ifdef CG_HAVE_CUDA
    int count = 0;
    if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
        em_cuda_device = local_rank % count;
        EM_CUDA(cudaSetDevice(em_cuda_device));
        em_backend = EM_BACKEND_CUDA;
        return EM_DEVICE;
    }
    (void)cudaGetLastError();
#else
    (void)local_rank;
#endif
    em_backend = EM_BACKEND_SIM; /* no GPU: the simulated one */
    return EM_DEVICE;
}

int em_device(void)
{
#ifdef CG_HAVE_CUDA
    return em_backend == EM_BACKEND_CUDA ? em_cuda_device : -1;
#else
    return -1;
#endif
}

const char *em_describe(void)
{
    static char text[320];
    const char *pool = em_pool ? ", pool allocations (not exportable)" : "";

    switch (em_backend) {
    case EM_BACKEND_CUDA: {
#ifdef CG_HAVE_CUDA
        struct cudaDeviceProp prop;
        EM_CUDA(cudaGetDeviceProperties(&prop, em_cuda_device));
        snprintf(text, sizeof(text), "CUDA device %d (%s)%s", em_cuda_device, prop.name, pool);
#endif
        return text;
    }
    case EM_BACKEND_SIM:
        snprintf(text, sizeof(text), "simulated GPU (no GPU: device memory the CPU cannot touch)%s",
                 pool);
        return text;
    default:
        return "host memory (no GPU)";
    }
}

void *em_alloc(size_t bytes, em_kind_t kind)
{
    void *p = NULL;

    bytes = bytes ? bytes : 1;
    if (EM_ON_DEVICE(kind) && em_backend == EM_BACKEND_SIM) {
        EM_SIM(cg_sim_malloc(&p, bytes, em_pool ? CG_SIM_ALLOC_POOL : CG_SIM_ALLOC_DEFAULT));
        return p;
    }
#ifdef CG_HAVE_CUDA
    if (EM_ON_DEVICE(kind)) {
        if (em_pool) { /* stream-ordered pool memory: legacy IPC cannot export it */
            EM_CUDA(cudaMallocAsync(&p, bytes, 0));
            EM_CUDA(cudaStreamSynchronize(0));
        } else {
            EM_CUDA(cudaMalloc(&p, bytes));
        }
        return p;
    }
#endif
    p = malloc(bytes);
    if (p == NULL) {
        em_die("malloc", "out of host memory");
    }
    return p;
}

void em_free(void *p, em_kind_t kind)
{
    if (EM_ON_DEVICE(kind) && em_backend == EM_BACKEND_SIM) {
        EM_SIM(cg_sim_free(p));
        return;
    }
#ifdef CG_HAVE_CUDA
    if (EM_ON_DEVICE(kind)) {
        if (em_pool) {
            EM_CUDA(cudaFreeAsync(p, 0));
            EM_CUDA(cudaStreamSynchronize(0));
        } else {
            EM_CUDA(cudaFree(p));
        }
        return;
    }
#endif
    free(p);
}

void em_to_dev(void *dst, const void *src, size_t bytes, em_kind_t kind)
{
    if (EM_ON_DEVICE(kind) && em_backend == EM_BACKEND_SIM) {
        EM_SIM(cg_sim_memcpy(dst, src, bytes));
        return;
    }
#ifdef CG_HAVE_CUDA
    if (EM_ON_DEVICE(kind)) {
        EM_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

void em_to_dev_queued(void *dst, const void *src, size_t bytes, em_kind_t kind)
{
#ifdef CG_HAVE_CUDA
    if (EM_ON_DEVICE(kind) && em_backend == EM_BACKEND_CUDA) {
        const size_t busy = (size_t)64 << 20;
        void        *tmp = NULL, *a = NULL, *b = NULL;
        /* the data to a temporary first (synchronously), then work the default stream
         * for milliseconds before the copy to dst; stream-ordered frees never block */
        EM_CUDA(cudaMalloc(&tmp, bytes ? bytes : 1));
        EM_CUDA(cudaMemcpy(tmp, src, bytes, cudaMemcpyHostToDevice));
        EM_CUDA(cudaMallocAsync(&a, busy, 0));
        EM_CUDA(cudaMallocAsync(&b, busy, 0));
        for (int i = 0; i < 40; i++) {
            EM_CUDA(cudaMemcpyAsync(i % 2 ? a : b, i % 2 ? b : a, busy,
                                    cudaMemcpyDeviceToDevice, 0));
        }
        EM_CUDA(cudaMemcpyAsync(dst, tmp, bytes, cudaMemcpyDeviceToDevice, 0));
        EM_CUDA(cudaFreeAsync(a, 0));
        EM_CUDA(cudaFreeAsync(b, 0));
        EM_CUDA(cudaFreeAsync(tmp, 0));
        return;
    }
#endif
    em_to_dev(dst, src, bytes, kind);
}

void em_to_host(void *dst, const void *src, size_t bytes, em_kind_t kind)
{
    if (EM_ON_DEVICE(kind) && em_backend == EM_BACKEND_SIM) {
        EM_SIM(cg_sim_memcpy(dst, src, bytes));
        return;
    }
#ifdef CG_HAVE_CUDA
    if (EM_ON_DEVICE(kind)) {
        EM_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

void em_fill_queued(void *dst, int byte, size_t bytes, em_kind_t kind)
{
    if (EM_ON_DEVICE(kind) && em_backend == EM_BACKEND_SIM) {
        EM_SIM(cg_sim_memset(dst, byte, bytes));
        return;
    }
#ifdef CG_HAVE_CUDA
    if (EM_ON_DEVICE(kind)) {
        EM_CUDA(cudaMemsetAsync(dst, byte, bytes, 0));
        return;
    }
#endif
    memset(dst, byte, bytes);
}

/* Device-memory bandwidth in GB/s, counting the bytes read and the bytes written (2 x bytes
 * per copy), as the benchmark's floors count them. Call it on one rank of a device while
 * the others wait: ranks copying at once would share the device's bandwidth. */
double em_copy_bandwidth(size_t bytes, em_kind_t kind)
{
    const int reps = 20;
    void     *a = em_alloc(bytes, kind), *b = em_alloc(bytes, kind);
    double    t0, t;

#ifdef CG_HAVE_CUDA
    if (EM_ON_DEVICE(kind) && em_backend == EM_BACKEND_CUDA) {
        EM_CUDA(cudaMemset(a, 1, bytes));
        EM_CUDA(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice)); /* warm-up */
        EM_CUDA(cudaDeviceSynchronize());
        t0 = MPI_Wtime();
        for (int i = 0; i < reps; i++) {
            EM_CUDA(cudaMemcpyAsync(i % 2 ? a : b, i % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice, 0));
        }
        EM_CUDA(cudaDeviceSynchronize());
        t = MPI_Wtime() - t0;
        em_free(a, kind), em_free(b, kind);
        return 2.0 * (double)bytes * reps / t / 1e9;
    }
#endif
    if (EM_ON_DEVICE(kind)) { /* the simulated GPU copies on the CPU */
        EM_SIM(cg_sim_memset(a, 1, bytes));
        EM_SIM(cg_sim_memcpy(b, a, bytes)); /* warm-up: every page touched */
        t0 = MPI_Wtime();
        for (int i = 0; i < reps; i++) {
            EM_SIM(cg_sim_memcpy(i % 2 ? a : b, i % 2 ? b : a, bytes));
        }
        t = MPI_Wtime() - t0;
        em_free(a, kind), em_free(b, kind);
        return 2.0 * (double)bytes * reps / t / 1e9;
    }
    memset(a, 1, bytes);
    memcpy(b, a, bytes); /* warm-up: every page touched */
    t0 = MPI_Wtime();
    for (int i = 0; i < reps; i++) {
        memcpy(i % 2 ? a : b, i % 2 ? b : a, bytes);
        ((volatile char *)a)[i] = (char)i; /* keep every copy */
    }
    t = MPI_Wtime() - t0;
    em_free(a, kind), em_free(b, kind);
    return 2.0 * (double)bytes * reps / t / 1e9;
}
