/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * A simulated GPU for machines without one (libcg_sim): device memory that the CPU cannot
 * touch, shared between processes the way CUDA IPC shares it, with CUDA's failure modes.
 *
 * Every allocation is a POSIX shared-memory object mapped twice in the process: once
 * PROT_NONE at the address the application gets (the "device pointer": any CPU load or
 * store through it faults, as it would on a GPU), once readable and writable at an address
 * only this library hands out (cg_sim_access: what a kernel or a copy engine sees). The
 * host device layer of coll/gpu reaches the bytes through cg_sim_access only, so code that
 * would read device memory on the CPU, or hand a device pointer to Open MPI, crashes here
 * exactly as it would on a GPU.
 *
 * IPC follows legacy CUDA IPC: an allocation is exported as a handle; opening it maps it
 * into the importer's "device" address space; a process cannot open an allocation of a
 * peer while it still maps an allocation of that peer over the same address range
 * (CG_SIM_ERR_ALREADY_MAPPED, as cudaErrorAlreadyMapped: the same handle twice, or memory
 * the peer freed and allocated again at the same address); pool allocations (like
 * cudaMallocAsync pools) cannot be exported. VMM allocations (like cuMemCreate memory made
 * with a POSIX file-descriptor handle type) refuse legacy IPC too, but export a file
 * descriptor (cg_sim_vmm_export, as cuMemExportToShareableHandle) that a peer maps once it
 * holds a copy of it (cg_sim_vmm_import, as cuMemImportFromShareableHandle + cuMemMap).
 *
 * A reset (cg_sim_device_reset, as cudaDeviceReset) takes the process's device state away:
 * every allocation and mapping, the default stream's queued work, and the page-locked host
 * memory it handed out (cg_sim_host_alloc, as cudaMallocHost). Their addresses stay reserved
 * and inaccessible, so that a stale pointer faults on the CPU and is no device memory,
 * rather than aliasing a later allocation. Device work that a library runs on its own
 * threads (a kernel that stays on the GPU) is ended first, by the hooks it registered
 * (cg_sim_reset_hook), as a reset ends a GPU's kernels.
 *
 * The component finds the library in the process with dlopen(CG_SIM_SONAME, RTLD_NOLOAD)
 * and cg_sim_api(): an application that allocates simulated device memory has loaded it.
 */
#ifndef CG_SIM_H
#define CG_SIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CG_SIM_SONAME      "libcg_sim.so.0"
#define CG_SIM_API_VERSION 7

typedef enum {
    CG_SIM_OK                 = 0,
    CG_SIM_ERR_INVALID        = 1, /* not simulated device memory, or out of its bounds */
    CG_SIM_ERR_NO_MEMORY      = 2,
    CG_SIM_ERR_ALREADY_MAPPED = 3, /* the peer's range is already mapped here */
    CG_SIM_ERR_NOT_SHAREABLE  = 4, /* pool memory: no IPC handle */
    CG_SIM_ERR_GONE           = 5, /* the exporter freed the allocation, or exited */
    CG_SIM_ERR_SYSTEM         = 6  /* a system call failed */
} cg_sim_status_t;

/* cg_sim_malloc flags */
enum {
    CG_SIM_ALLOC_DEFAULT = 0, /* like cudaMalloc: exportable */
    CG_SIM_ALLOC_POOL    = 1, /* like cudaMallocAsync: not exportable */
    CG_SIM_ALLOC_VMM     = 2, /* like cuMemCreate (POSIX file descriptor handles): exported
                                 as a file descriptor only */
    CG_SIM_ALLOC_OTHER_DEVICE = 4 /* memory of the process's second GPU (device 1; the rest
                                     is device 0's): copies reach it, and the application's
                                     work on it queues on device 1's default stream */
};

typedef struct {
    uintptr_t base;      /* start of the allocation (or imported mapping) holding the pointer */
    size_t    size;      /* its bytes */
    uint64_t  buffer_id; /* unique on the node for the allocation */
    unsigned  flags;     /* CG_SIM_ALLOC_* */
    int       imported;  /* mapped from another process */
    int       device;    /* the simulated device holding it: 1 for CG_SIM_ALLOC_OTHER_DEVICE
                            memory, else 0 */
} cg_sim_attr_t;

typedef struct {
    uint64_t buffer_id;
    uint64_t base;      /* the exporter's device address of the allocation */
    uint64_t size;
    int32_t  owner_pid; /* the exporting process */
    char     name[52];  /* shared-memory object */
} cg_sim_ipc_handle_t;

/* Its first 64 KiB hold garbage, as cudaMalloc's may (the rest is unwritten). */
int  cg_sim_malloc(void **ptr, size_t bytes, unsigned flags);
int  cg_sim_free(void *ptr);
/* Copy between any two of simulated device memory and host memory. */
int  cg_sim_memcpy(void *dst, const void *src, size_t bytes);
int  cg_sim_memset(void *ptr, int value, size_t bytes);
/* CG_SIM_OK and attr for simulated device memory; CG_SIM_ERR_INVALID for anything else. */
int  cg_sim_query(const void *ptr, cg_sim_attr_t *attr);
/* The device's view of [ptr, ptr + bytes): an address the CPU may use, or NULL when the
 * range is not inside one allocation (an illegal address on a GPU). */
void *cg_sim_access(const void *ptr, size_t bytes);
int  cg_sim_ipc_get_handle(cg_sim_ipc_handle_t *handle, const void *ptr);
int  cg_sim_ipc_open(void **ptr, const cg_sim_ipc_handle_t *handle);
int  cg_sim_ipc_close(void *ptr);
/* A new file descriptor of the VMM allocation holding ptr (the caller closes it). */
int  cg_sim_vmm_export(int *fd, const void *ptr);
/* Map size bytes of the VMM allocation behind fd (a copy of an exporter's descriptor) as
 * an import of buffer_id; cg_sim_ipc_close unmaps it. The caller keeps fd. */
int  cg_sim_vmm_import(void **ptr, int fd, size_t size, uint64_t buffer_id);
const char *cg_sim_status_string(int status);
/* The application's default streams, one per device: a copy from host memory (src read
 * now) or a set queued on the stream of the device that holds the destination, and the
 * wait for it (cudaMemcpyAsync / cudaMemsetAsync on stream 0, cudaStreamSynchronize(0) with
 * that device current). Queued work runs at its stream's wait or before a synchronous
 * copy, set or free (every device's), never by itself: whoever reads the memory without
 * the wait sees the bytes from before. cg_sim_stream_sync waits for device 0's stream,
 * cg_sim_device_sync for the given device's (0 or 1). */
int  cg_sim_memcpy_async(void *dst, const void *src, size_t bytes);
int  cg_sim_memset_async(void *ptr, int value, size_t bytes);
int  cg_sim_stream_sync(void);
int  cg_sim_device_sync(int device);
/* Is device 0's default stream's queued work done (1) or not (0)? Nothing runs it: work
 * queued and not yet waited for stays not done, as a kernel still running would (an event
 * recorded on the stream and queried, cudaEventQuery). */
int  cg_sim_stream_idle(void);

/* Page-locked host memory (cudaMallocHost): the CPU may read and write it, until a reset. */
int  cg_sim_host_alloc(void **ptr, size_t bytes);
int  cg_sim_host_free(void *ptr);
/* Is [ptr, ptr + bytes) inside one page-locked allocation (CG_SIM_OK) or not
 * (CG_SIM_ERR_INVALID)? A kernel reaches page-locked host memory (mapped for the device);
 * pageable host memory, only a copy does. */
int  cg_sim_host_query(const void *ptr, size_t bytes);
/* cudaDeviceReset: the hooks run (each must end the device work it stands for and return,
 * while memory is still there), the default stream's queued work is dropped, and every
 * allocation, mapping and page-locked allocation of the process is revoked: PROT_NONE at
 * every address it had, unknown to cg_sim_query and cg_sim_access, its shared-memory name
 * gone (peers that mapped it keep their mappings, as of memory freed on a GPU). A
 * page-locked word the CPU touches after a reset faults: what the CUDA documentation does
 * not promise either way for cudaMallocHost memory, taken here at its worst. Returns the
 * number of resets so far, this one included. */
int  cg_sim_device_reset(void);
/* Register (add 1) or remove (add 0) fn(arg), called by every reset before it revokes
 * anything; a removal waits for a reset's hooks that run. A few hooks at most
 * (CG_SIM_ERR_NO_MEMORY beyond); a hook must not call this. */
int  cg_sim_reset_hook(void (*fn)(void *arg), void *arg, int add);

/* The same functions as one table, for code that loads the library at run time. */
typedef struct {
    unsigned version;
    int (*malloc_fn)(void **ptr, size_t bytes, unsigned flags);
    int (*free_fn)(void *ptr);
    int (*memcpy_fn)(void *dst, const void *src, size_t bytes);
    int (*memset_fn)(void *ptr, int value, size_t bytes);
    int (*query)(const void *ptr, cg_sim_attr_t *attr);
    void *(*access)(const void *ptr, size_t bytes);
    int (*ipc_get_handle)(cg_sim_ipc_handle_t *handle, const void *ptr);
    int (*ipc_open)(void **ptr, const cg_sim_ipc_handle_t *handle);
    int (*ipc_close)(void *ptr);
    const char *(*status_string)(int status);
    int (*vmm_export)(int *fd, const void *ptr);
    int (*vmm_import)(void **ptr, int fd, size_t size, uint64_t buffer_id);
    int (*stream_sync)(void);
    int (*stream_idle)(void);
    int (*host_alloc_fn)(void **ptr, size_t bytes);
    int (*host_free_fn)(void *ptr);
    int (*reset_hook)(void (*fn)(void *arg), void *arg, int add);
    int (*device_sync)(int device);
    int (*host_query)(const void *ptr, size_t bytes);
} cg_sim_api_t;

const cg_sim_api_t *cg_sim_api(void);

#ifdef __cplusplus
}
#endif
#endif /* CG_SIM_H */
