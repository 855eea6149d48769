/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Device memory for MPI programs (see example_mem.h). */
#include "example_mem.h"

#include "kernels/sim/cg_sim.h"

#include <mpi.h>
#include <stdio.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>

typedef enum { EM_BACKEND_HOST, EM_BACKEND_SIM, EM_BACKEND_CUDA } em_backend_t;

static em_backend_t em_backend = EM_BACKEND_HOST;
static int          em_pool; /* device allocations that IPC cannot export */
static int          em_vmm;  /* device allocations as cuMemCreate makes them (descriptors) */
static int          em_other; /* device allocations of another context (the simulator's:
                                 another device) */

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

/* cuMemCreate memory with a POSIX file-descriptor handle type, mapped and made accessible
 * to this rank's GPU, as PyTorch's expandable segments make it; the driver API from the
 * driver the runtime loaded. */
#include <cuda.h>
#include <dlfcn.h>

typedef struct {
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                       unsigned long long);
    CUresult (*granularity)(size_t *, const CUmemAllocationProp *,
                            CUmemAllocationGranularity_flags);
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
    CUresult (*access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
    CUresult (*release)(CUmemGenericAllocationHandle);
    CUresult (*unmap)(CUdeviceptr, size_t);
    CUresult (*address_free)(CUdeviceptr, size_t);
    CUresult (*range)(CUdeviceptr *, size_t *, CUdeviceptr);
} em_vmm_api_t;

static em_vmm_api_t em_vmm_api;

/* The driver the runtime loaded. */
static void *em_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

    if (lib == NULL) {
        em_die("dlopen(libcuda.so.1)", "the CUDA driver is not loaded");
    }
    return lib;
}

static void em_vmm_load(void)
{
    void *lib;

    if (em_vmm_api.create != NULL) {
        return;
    }
    lib = em_driver();
    *(void **)&em_vmm_api.granularity  = dlsym(lib, "cuMemGetAllocationGranularity");
    *(void **)&em_vmm_api.reserve      = dlsym(lib, "cuMemAddressReserve");
    *(void **)&em_vmm_api.map          = dlsym(lib, "cuMemMap");
    *(void **)&em_vmm_api.access       = dlsym(lib, "cuMemSetAccess");
    *(void **)&em_vmm_api.release      = dlsym(lib, "cuMemRelease");
    *(void **)&em_vmm_api.unmap        = dlsym(lib, "cuMemUnmap");
    *(void **)&em_vmm_api.address_free = dlsym(lib, "cuMemAddressFree");
    *(void **)&em_vmm_api.range        = dlsym(lib, "cuMemGetAddressRange_v2");
    *(void **)&em_vmm_api.create       = dlsym(lib, "cuMemCreate");
    if (em_vmm_api.create == NULL || em_vmm_api.range == NULL || em_vmm_api.address_free == NULL) {
        em_die("dlsym(cuMemCreate ...)", "the CUDA driver lacks virtual memory management");
    }
}

#define EM_CU(call)                                                                      \
    do {                                                                                 \
        if ((call) != CUDA_SUCCESS) {                                                    \
            em_die(#call, "CUDA driver error");                                          \
        }                                                                                \
    } while (0)

/* em_other on CUDA: a second context of the rank's GPU, made at the first use (the
 * component's layer runs in the primary one: memory of another context is foreign to it, as
 * another GPU's is). Its allocations and their work go there, pushed current around them,
 * so that the work queues on that context's default stream. */
static struct {
    CUcontext ctx;
    CUresult (*push)(CUcontext);
    CUresult (*pop)(CUcontext *);
} em_other_ctx;

static void em_cuda_enter(void)
{
    CUresult (*create)(CUcontext *, unsigned int, CUdevice);
    CUresult (*get)(CUdevice *, int);
    CUcontext popped;
    CUdevice  device;
    void     *lib;

    if (!em_other) {
        return;
    }
    if (em_other_ctx.ctx == NULL) { /* made current: taken off again, pushed below */
        lib = em_driver();
        *(void **)&create            = dlsym(lib, "cuCtxCreate_v2");
        *(void **)&get               = dlsym(lib, "cuDeviceGet");
        *(void **)&em_other_ctx.push = dlsym(lib, "cuCtxPushCurrent_v2");
        *(void **)&em_other_ctx.pop  = dlsym(lib, "cuCtxPopCurrent_v2");
        if (create == NULL || get == NULL || em_other_ctx.push == NULL ||
            em_other_ctx.pop == NULL || get(&device, em_cuda_device) != CUDA_SUCCESS ||
            create(&em_other_ctx.ctx, 0, device) != CUDA_SUCCESS ||
            em_other_ctx.pop(&popped) != CUDA_SUCCESS) {
            em_die("cuCtxCreate", "cannot make a second context");
        }
    }
    if (em_other_ctx.push(em_other_ctx.ctx) != CUDA_SUCCESS) {
        em_die("cuCtxPushCurrent", "cannot make the second context current");
    }
}

static void em_cuda_leave(void)
{
    CUcontext popped;

    if (em_other && em_other_ctx.pop(&popped) != CUDA_SUCCESS) {
        em_die("cuCtxPopCurrent", "cannot leave the second context");
    }
}

static void *em_vmm_alloc(size_t bytes)
{
    CUmemAllocationProp          prop = {0};
    CUmemAccessDesc              desc = {0};
    CUmemGenericAllocationHandle handle;
    CUdeviceptr                  ptr = 0;
    size_t                       granularity = 0, size;

    EM_CUDA(cudaFree(NULL)); /* the runtime's context first: the driver calls need it */
    em_vmm_load();
    prop.type                 = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type        = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id          = em_cuda_device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    EM_CU(em_vmm_api.granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size = (bytes + granularity - 1) / granularity * granularity;
    EM_CU(em_vmm_api.create(&handle, size, &prop, 0));
    EM_CU(em_vmm_api.reserve(&ptr, size, 0, 0, 0));
    EM_CU(em_vmm_api.map(ptr, size, 0, handle, 0));
    EM_CU(em_vmm_api.release(handle)); /* the mapping holds the memory */
    desc.location = prop.location;
    desc.flags    = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    EM_CU(em_vmm_api.access(ptr, size, &desc, 1));
    return (void *)(uintptr_t)ptr;
}

static void em_vmm_free(void *p)
{
    CUdeviceptr base = 0;
    size_t      size = 0;

    EM_CUDA(cudaDeviceSynchronize());
    EM_CU(em_vmm_api.range(&base, &size, (CUdeviceptr)(uintptr_t)p));
    EM_CU(em_vmm_api.unmap(base, size));
    EM_CU(em_vmm_api.address_free(base, size));
}
#endif

/* "vmm-private": this process may not take another's file descriptors (pidfd_getfd fails
 * with EPERM, as under a container's seccomp profile), so the collectives must copy. */
static void em_forbid_fd_taking(void)
{
#ifdef SYS_pidfd_getfd
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_getfd, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = {(unsigned short)(sizeof(filter) / sizeof(filter[0])), filter};

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
        em_die("prctl(PR_SET_SECCOMP)", "cannot forbid pidfd_getfd");
    }
#endif
}

int em_local_rank(int world_rank)
{
    const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    return lr ? atoi(lr) : world_rank;
}

em_kind_t em_init(const char *mode, int local_rank)
{
    em_pool = strcmp(mode, "pool") == 0;
    em_vmm  = strncmp(mode, "vmm", 3) == 0;
    em_other = strcmp(mode, "other") == 0;
    if (strcmp(mode, "host") == 0) {
        em_backend = EM_BACKEND_HOST;
        return EM_HOST;
    }
    if (strcmp(mode, "auto") != 0 && strcmp(mode, "device") != 0 && !em_pool &&
        strcmp(mode, "vmm") != 0 && strcmp(mode, "vmm-private") != 0 && !em_other) {
        fprintf(stderr, "example_mem: unknown memory mode \"%s\" (auto, device, pool, vmm, "
                "vmm-private, other, host)\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (strcmp(mode, "vmm-private") == 0) {
        em_forbid_fd_taking();
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

const char *em_error_left(void)
{
#ifdef CG_HAVE_CUDA
    static char       text[200];
    const cudaError_t err = em_backend == EM_BACKEND_CUDA ? cudaGetLastError() : cudaSuccess;

    if (err != cudaSuccess) {
        snprintf(text, sizeof(text), "a CUDA error left for the application: %s",
                 cudaGetErrorString(err));
        return text;
    }
#endif
    return NULL;
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
    static char text[400];
    const char *pool = em_pool    ? ", pool allocations (not exportable)"
                       : em_vmm   ? ", cuMemCreate allocations (shared as file descriptors)"
                       : em_other ? ", allocations of another context (staged)"
                                  : "";

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
        EM_SIM(cg_sim_malloc(&p, bytes, em_pool    ? CG_SIM_ALLOC_POOL
                                        : em_vmm   ? CG_SIM_ALLOC_VMM
                                        : em_other ? CG_SIM_ALLOC_OTHER_DEVICE
                                                   : CG_SIM_ALLOC_DEFAULT));
        return p;
    }
#ifdef CG_HAVE_CUDA
    if (EM_ON_DEVICE(kind)) {
        if (em_vmm) {
            return em_vmm_alloc(bytes);
        }
        if (em_pool) { /* stream-ordered pool memory: legacy IPC cannot export it */
            EM_CUDA(cudaMallocAsync(&p, bytes, 0));
            EM_CUDA(cudaStreamSynchronize(0));
        } else {
            em_cuda_enter();
            EM_CUDA(cudaMalloc(&p, bytes));
            em_cuda_leave();
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
        if (em_vmm) {
            em_vmm_free(p);
            return;
        }
        if (em_pool) {
            EM_CUDA(cudaFreeAsync(p, 0));
            EM_CUDA(cudaStreamSynchronize(0));
        } else {
            em_cuda_enter();
            EM_CUDA(cudaFree(p));
            em_cuda_leave();
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
        em_cuda_enter();
        EM_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
        em_cuda_leave();
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

void em_to_dev_queued(void *dst, const void *src, size_t bytes, em_kind_t kind)
{
    if (EM_ON_DEVICE(kind) && em_backend == EM_BACKEND_SIM) {
        EM_SIM(cg_sim_memcpy_async(dst, src, bytes)); /* runs when the stream is waited for */
        return;
    }
#ifdef CG_HAVE_CUDA
    if (EM_ON_DEVICE(kind) && em_backend == EM_BACKEND_CUDA) {
        const size_t busy = (size_t)64 << 20;
        void        *tmp = NULL, *a = NULL, *b = NULL;
        /* the data to a temporary first (synchronously), then work the default stream
         * for milliseconds before the copy to dst; stream-ordered frees never block */
        em_cuda_enter();
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
        em_cuda_leave();
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
        em_cuda_enter();
        EM_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
        em_cuda_leave();
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

void em_fill_queued(void *dst, int byte, size_t bytes, em_kind_t kind)
{
    if (EM_ON_DEVICE(kind) && em_backend == EM_BACKEND_SIM) {
        EM_SIM(cg_sim_memset_async(dst, byte, bytes));
        return;
    }
#ifdef CG_HAVE_CUDA
    if (EM_ON_DEVICE(kind)) {
        em_cuda_enter();
        EM_CUDA(cudaMemsetAsync(dst, byte, bytes, 0));
        em_cuda_leave();
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

double em_round_trip_us(int reps, em_kind_t kind)
{
#ifdef CG_HAVE_CUDA
    if (EM_ON_DEVICE(kind) && em_backend == EM_BACKEND_CUDA && reps > 0) {
        char  *a  = em_alloc(8, kind);
        double t0 = 0, t;
        for (int i = -10; i < reps; i++) { /* ten untimed first */
            if (i == 0) {
                t0 = MPI_Wtime();
            }
            EM_CUDA(cudaMemsetAsync(a, i & 0xff, 8, 0));
            EM_CUDA(cudaStreamSynchronize(0));
        }
        t = MPI_Wtime() - t0;
        em_free(a, kind);
        return t / reps * 1e6;
    }
#endif
    (void)kind, (void)reps;
    return 0.0;
}

int em_device_reset(void)
{
#ifdef CG_HAVE_CUDA
    if (em_backend == EM_BACKEND_CUDA) {
        EM_CUDA(cudaDeviceReset());
        return 1;
    }
#endif
    if (em_backend == EM_BACKEND_SIM) {
        (void)cg_sim_device_reset();
        return 1;
    }
    return 0;
}
