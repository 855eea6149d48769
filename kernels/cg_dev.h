/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll/gpu device layer: one operations table, two implementations.
 *
 *   cuda  - CUDA device memory, kernels for reductions, CUDA IPC, stream-ordered flags.
 *   host  - plain memory treated as device memory, CPU copies and reductions, POSIX shared
 *           memory standing in for IPC. It lets every algorithm run under mpirun on a
 *           machine without a GPU (tests, CI, debugging).
 *
 * The algorithms in core/ are written once against cg_dev_ops_t. All operations that take a
 * stream are ordered on it; on the host layer they complete before returning.
 */
#ifndef CG_DEV_H
#define CG_DEV_H

#include "base/cg_base.h"
#include "kernels/cg_reduce_ops.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest number of sources or destinations of one fused reduction (local ranks). */
#define CG_DEV_MAX_FANIN 32
#define CG_IPC_HANDLE_BYTES 128

typedef enum {
    CG_DEV_KIND_HOST = 0,
    CG_DEV_KIND_CUDA = 1
} cg_dev_kind_t;

typedef enum {
    CG_MEM_HOST    = 0, /* pageable or page-locked host memory */
    CG_MEM_DEVICE  = 1, /* device memory of the layer (CUDA device memory, or anything on host) */
    CG_MEM_MANAGED = 2  /* CUDA managed memory: host-accessible, passed through as host memory */
} cg_mem_kind_t;

typedef struct {
    cg_mem_kind_t kind;
    int           device;    /* device ordinal; -1 for host memory */
    uintptr_t     base;      /* start of the allocation that holds the pointer; 0 if unknown */
    size_t        size;      /* size of that allocation; 0 if unknown */
    uint64_t      buffer_id; /* the driver's unique id of that allocation; 0 if unknown */
} cg_mem_attr_t;

/* A shareable handle of one allocation. The first fields identify the allocation, so that
 * an importer can cache its mapping and notice when the memory was freed and reused
 * (same address, another buffer id); opaque is what the layer needs to map it. */
typedef struct {
    uint64_t buffer_id; /* unique id of the allocation (the driver's buffer id, an inode) */
    uint64_t base;      /* the exporter's address of the allocation */
    uint64_t size;      /* bytes of the allocation */
    uint64_t offset;    /* offset of the exported pointer inside the allocation */
    uint8_t  opaque[CG_IPC_HANDLE_BYTES];
} cg_ipc_handle_t;

/* One fused reduction: every dsts[d][i] = srcs[0][i] op srcs[1][i] op ... (in that order),
 * for i < count elements of dtype. Destinations may alias sources element for element. */
typedef struct {
    cg_dtype_t  dtype;
    cg_op_t     op;
    size_t      count;
    int         nsrc;
    int         ndst;
    const void *srcs[CG_DEV_MAX_FANIN];
    void       *dsts[CG_DEV_MAX_FANIN];
} cg_reduce_args_t;

typedef struct cg_dev        cg_dev_t;
typedef struct cg_dev_stream cg_dev_stream_t;
typedef struct cg_dev_event  cg_dev_event_t;

typedef struct {
    unsigned ipc_user_buffers : 1; /* user buffers may be exportable to peers (zero copy) */
    unsigned device_flags     : 1; /* flag_write/flag_wait are stream ordered on the device */
    unsigned async            : 1; /* stream operations return before completing */
} cg_dev_caps_t;

typedef struct cg_dev_ops {
    const char *name;
    void (*close)(cg_dev_t *dev);

    cg_status_t (*mem_query)(cg_dev_t *dev, const void *ptr, cg_mem_attr_t *attr);
    cg_status_t (*mem_alloc)(cg_dev_t *dev, size_t size, void **ptr);
    void        (*mem_free)(cg_dev_t *dev, void *ptr);
    cg_status_t (*host_alloc)(cg_dev_t *dev, size_t size, void **ptr); /* page-locked */
    void        (*host_free)(cg_dev_t *dev, void *ptr);

    cg_status_t (*stream_create)(cg_dev_t *dev, cg_dev_stream_t **stream);
    void        (*stream_destroy)(cg_dev_t *dev, cg_dev_stream_t *stream);
    cg_status_t (*stream_sync)(cg_dev_t *dev, cg_dev_stream_t *stream);
    cg_status_t (*event_create)(cg_dev_t *dev, cg_dev_event_t **event);
    void        (*event_destroy)(cg_dev_t *dev, cg_dev_event_t *event);
    cg_status_t (*event_record)(cg_dev_t *dev, cg_dev_event_t *event, cg_dev_stream_t *stream);
    cg_status_t (*event_query)(cg_dev_t *dev, cg_dev_event_t *event, int *done);

    /* Copy bytes between any two of: device memory, host memory, imported peer memory. */
    cg_status_t (*copy)(cg_dev_t *dev, void *dst, const void *src, size_t bytes,
                        cg_dev_stream_t *stream);
    cg_status_t (*reduce)(cg_dev_t *dev, const cg_reduce_args_t *args, cg_dev_stream_t *stream);

    /* Share memory with processes on the same node. export describes the allocation that
     * holds [ptr, ptr + size): memory from mem_alloc always, user memory where the layer
     * can (CUDA: cudaMalloc memory; host: POSIX shared memory mappings), otherwise
     * CG_ERR_UNSUPPORTED. import maps a peer's allocation and returns the local address of
     * its start; close unmaps what import returned. */
    cg_status_t (*ipc_export)(cg_dev_t *dev, const void *ptr, size_t size, cg_ipc_handle_t *handle);
    cg_status_t (*ipc_import)(cg_dev_t *dev, const cg_ipc_handle_t *handle, void **base);
    void        (*ipc_close)(cg_dev_t *dev, void *base);

    /* 64-bit flags in shared device memory: write after the work queued before on the
     * stream; make later work on the stream wait until *flag >= value. */
    cg_status_t (*flag_write)(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                              cg_dev_stream_t *stream);
    cg_status_t (*flag_wait)(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                             cg_dev_stream_t *stream);
    /* Set *flag to value now, from the host, ordered with no stream: releases stream waits
     * that a failed peer would leave blocked for ever. */
    cg_status_t (*flag_release)(cg_dev_t *dev, uint64_t *flag, uint64_t value);

    /* Make the layer's device current on the calling thread for good (a helper thread:
     * what it calls besides this table, UCX's CUDA transports, finds the device current). */
    cg_status_t (*thread_bind)(cg_dev_t *dev);

    /* Wait for the work the application queued on the device before the call, on the
     * legacy default stream and every blocking stream ordered with it (what a CUDA-aware
     * MPI's copies on the default stream would wait for): the layer's own streams are
     * non-blocking and would not. Work on the application's non-blocking streams is its to
     * synchronise, as with any CUDA-aware MPI. */
    cg_status_t (*app_wait)(cg_dev_t *dev);
} cg_dev_ops_t;

struct cg_dev {
    const cg_dev_ops_t *ops;
    cg_dev_kind_t       kind;
    cg_dev_caps_t       caps;
    int                 ordinal;      /* CUDA device in use; 0 on the host layer */
    char                pci_bus_id[32];
    void               *impl;         /* implementation state */
    int                 fail_countdown; /* testing: the n-th copy or reduction from now fails
                                           (0: none); see cg_dev_fail_injected */
};

/* Testing (coll_gpu_debug_fail): does this copy or reduction fail as if the device had
 * failed? Every layer asks before it queues one. */
static inline int cg_dev_fail_injected(cg_dev_t *dev)
{
    if (__atomic_load_n(&dev->fail_countdown, __ATOMIC_RELAXED) <= 0 ||
        __atomic_sub_fetch(&dev->fail_countdown, 1, __ATOMIC_RELAXED) != 0) {
        return 0;
    }
    cg_error(CG_SUB_DEV, "injected device failure (coll_gpu_debug_fail)");
    return 1;
}

typedef struct {
    /* host layer: world ranks whose buffers are classified as host memory (testing of
     * mixed memory kinds); NULL for none */
    const int *host_buffer_ranks;
    int        num_host_buffer_ranks;
    int        world_rank;
} cg_dev_host_config_t;

/* Open the host layer (never fails for lack of hardware). */
cg_status_t cg_dev_host_open(const cg_dev_host_config_t *config, cg_dev_t **dev_out);
/* Is a usable CUDA driver and at least one GPU present? Quiet: reports why not in reason. */
cg_status_t cg_dev_cuda_probe(char *reason, size_t reason_len);
/* Classify a pointer with the CUDA driver (after a successful probe; no context needed). */
cg_status_t cg_dev_cuda_mem_query(const void *ptr, cg_mem_attr_t *attr);
/* Open the CUDA layer on device ordinal (-1: the calling thread's current device). */
cg_status_t cg_dev_cuda_open(int ordinal, cg_dev_t **dev_out);
int         cg_dev_cuda_built(void);

void cg_dev_close(cg_dev_t *dev);

/* Convenience: synchronous copy through a temporary use of stream. */
cg_status_t cg_dev_copy_sync(cg_dev_t *dev, void *dst, const void *src, size_t bytes,
                             cg_dev_stream_t *stream);

/* Copy count elements of a predefined type on stream; types with padding (the pairs) are
 * stored field by field, never writing the destination's padding (user memory). */
cg_status_t cg_dev_copy_typed(cg_dev_t *dev, void *dst, const void *src, size_t count,
                              cg_dtype_t dtype, cg_dev_stream_t *stream);

/* Reference reduction on the CPU (also the host layer's kernel). */
void cg_reduce_host(const cg_reduce_args_t *args);

#ifdef __cplusplus
}
#endif
#endif /* CG_DEV_H */
