/* Device memory for MPI programs (see example_mem.h). */
#include "example_mem.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CG_HAVE_CUDA
#include <cuda_runtime_api.h>
static int em_cuda_ok;
static int em_cuda_device = -1;

#define EM_CUDA(call)                                                                    \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_));           \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                \
        }                                                                                \
    } while (0)
#define EM_ON_GPU(kind) ((kind) == EM_DEVICE && em_cuda_ok)
#else
#define EM_ON_GPU(kind) 0
#endif

int em_local_rank(int world_rank)
{
    const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    return lr ? atoi(lr) : world_rank;
}

em_kind_t em_init(const char *mode, int local_rank)
{
#ifdef CG_HAVE_CUDA
    int count = 0;
    if (strcmp(mode, "host") != 0 && cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
        em_cuda_device = local_rank % count;
        EM_CUDA(cudaSetDevice(em_cuda_device));
        em_cuda_ok = 1;
        return EM_DEVICE;
    }
    (void)cudaGetLastError();
#else
    (void)local_rank;
#endif
    if (strcmp(mode, "device") == 0) {
        fprintf(stderr, "device memory requested, but there is no GPU (or no CUDA build)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return EM_HOST;
}

int em_device(void)
{
#ifdef CG_HAVE_CUDA
    return em_cuda_ok ? em_cuda_device : -1;
#else
    return -1;
#endif
}

const char *em_describe(void)
{
#ifdef CG_HAVE_CUDA
    if (em_cuda_ok) {
        static char text[320];
        struct cudaDeviceProp prop;
        EM_CUDA(cudaGetDeviceProperties(&prop, em_cuda_device));
        snprintf(text, sizeof(text), "CUDA device %d (%s)", em_cuda_device, prop.name);
        return text;
    }
#endif
    return "host memory (no GPU)";
}

void *em_alloc(size_t bytes, em_kind_t kind)
{
    void *p = NULL;

    bytes = bytes ? bytes : 1;
#ifdef CG_HAVE_CUDA
    if (EM_ON_GPU(kind)) {
        EM_CUDA(cudaMalloc(&p, bytes));
        return p;
    }
#endif
    (void)kind;
    p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

void em_free(void *p, em_kind_t kind)
{
#ifdef CG_HAVE_CUDA
    if (EM_ON_GPU(kind)) {
        EM_CUDA(cudaFree(p));
        return;
    }
#endif
    (void)kind;
    free(p);
}

void em_to_dev(void *dst, const void *src, size_t bytes, em_kind_t kind)
{
#ifdef CG_HAVE_CUDA
    if (EM_ON_GPU(kind)) {
        EM_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
        return;
    }
#endif
    (void)kind;
    memcpy(dst, src, bytes);
}

void em_to_host(void *dst, const void *src, size_t bytes, em_kind_t kind)
{
#ifdef CG_HAVE_CUDA
    if (EM_ON_GPU(kind)) {
        EM_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
        return;
    }
#endif
    (void)kind;
    memcpy(dst, src, bytes);
}

double em_copy_bandwidth(size_t bytes, em_kind_t kind)
{
    const int reps = 10;
    void     *a = em_alloc(bytes, kind), *b = em_alloc(bytes, kind);
    double    t0, t;

#ifdef CG_HAVE_CUDA
    if (EM_ON_GPU(kind)) {
        EM_CUDA(cudaMemset(a, 1, bytes));
        EM_CUDA(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
        EM_CUDA(cudaDeviceSynchronize());
        t0 = MPI_Wtime();
        for (int i = 0; i < reps; i++) {
            EM_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0));
        }
        EM_CUDA(cudaDeviceSynchronize());
        t = MPI_Wtime() - t0;
        em_free(a, kind), em_free(b, kind);
        return (double)bytes * reps / t / 1e9;
    }
#endif
    memset(a, 1, bytes);
    memcpy(b, a, bytes);
    t0 = MPI_Wtime();
    for (int i = 0; i < reps; i++) {
        memcpy(b, a, bytes);
        ((volatile char *)a)[i] = (char)i; /* keep every copy */
    }
    t = MPI_Wtime() - t0;
    em_free(a, kind), em_free(b, kind);
    return (double)bytes * reps / t / 1e9;
}
