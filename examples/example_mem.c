/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Device memory for MPI programs (see example_mem.h). */
#include "example_mem.h"

#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Host memory in POSIX shared memory ("shm" mode): each block keeps its name until freed. */
typedef struct em_shm_block {
    void                *ptr;
    size_t               size;
    char                 name[64];
    struct em_shm_block *next;
} em_shm_block_t;

static int             em_shm_mode;
static em_shm_block_t *em_shm_blocks;
static unsigned        em_shm_serial;

static void *em_shm_alloc(size_t bytes)
{
    em_shm_block_t *b = calloc(1, sizeof(*b));
    int             fd, attempts = 0;

    do { /* a name left behind by a dead process with the same pid: take the next one */
        snprintf(b->name, sizeof(b->name), "/cg-example-%d-%u", (int)getpid(), em_shm_serial++);
        fd = shm_open(b->name, O_CREAT | O_EXCL | O_RDWR, 0600);
    } while (fd < 0 && errno == EEXIST && ++attempts < 64);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0 ||
        (b->ptr = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        fprintf(stderr, "cannot allocate %zu bytes of shared memory\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    close(fd);
    b->size       = bytes;
    b->next       = em_shm_blocks;
    em_shm_blocks = b;
    return b->ptr;
}

static int em_shm_free(void *p)
{
    for (em_shm_block_t **pp = &em_shm_blocks; *pp != NULL; pp = &(*pp)->next) {
        em_shm_block_t *b = *pp;
        if (b->ptr == p) {
            munmap(b->ptr, b->size);
            shm_unlink(b->name);
            *pp = b->next;
            free(b);
            return 1;
        }
    }
    return 0;
}

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
    if (strcmp(mode, "shm") == 0) {
        em_shm_mode = 1;
        return EM_HOST;
    }
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
    return em_shm_mode ? "host shared memory (no GPU)" : "host memory (no GPU)";
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
    if (em_shm_mode) {
        return em_shm_alloc(bytes);
    }
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
    if (!em_shm_free(p)) {
        free(p);
    }
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

void em_to_dev_queued(void *dst, const void *src, size_t bytes, em_kind_t kind)
{
#ifdef CG_HAVE_CUDA
    if (EM_ON_GPU(kind)) {
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
