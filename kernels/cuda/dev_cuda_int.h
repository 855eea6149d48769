/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The CUDA device layer's state, shared by its C files (dev_cuda.c: memory, streams,
 * events, copies, kernels, flags; ipc_cuda.c: CUDA IPC). Not for the .cu files.
 */
#ifndef CG_DEV_CUDA_INT_H
#define CG_DEV_CUDA_INT_H

#include "kernels/cuda/cg_cuda.h"

#include <pthread.h>

typedef struct cg_cuda_mapping {
    void                   *base; /* what cudaIpcOpenMemHandle returned, or the reserved range */
    size_t                  size;
    int                     vmm;  /* cuMemCreate memory: unmap and free the range */
    struct cg_cuda_mapping *next;
} cg_cuda_mapping_t;

typedef struct {
    int                ordinal;
    int                sm_count;
    CUdevice           cudev;
    CUcontext          ctx;        /* the device's primary context, retained while open */
    unsigned long long ctx_id;     /* its id (cuCtxGetId), when ctx_id_known: a context
                                      made again after a reset has another */
    int                ctx_id_known;
    unsigned           wait_flags; /* flag waits: flush remote writes where supported */
    cudaEvent_t        app_event;  /* marks the application's default-stream work */
    cudaStream_t       side_stream; /* non-blocking: the host's copies to and from memory
                                       a kernel waits on (cg_cuda_side_copy) */
    pthread_mutex_t    lock;
    cg_cuda_mapping_t *mappings;
} cg_dev_cuda_t;

typedef struct cg_cuda_server cg_cuda_server_t;

struct cg_dev_stream {
    cudaStream_t stream;
    /* LL calls on the stream: the kernel's last store writes ll_queued into ll_done, a
     * page-locked host word (ll_done_dev on the device), allocated at the first call */
    uint64_t    *ll_done;
    uint64_t    *ll_done_dev;
    uint64_t     ll_queued;
    unsigned     ll_polls;
    int          ll_on_app;   /* the last LL call went on the legacy default stream
                                 (cg_ll_args_t after_app), not on this one */
    int          borrowed;    /* stream is the legacy default stream (app_stream_create):
                                 not this layer's to destroy */
    struct cg_cuda_server *server; /* its LL server (coll_gpu_ll_persist), from its first
                                      served call (dev_cuda_server.c) */
    int          ll_served;   /* the last LL call was rung on the server: its end is the
                                 server's (ll_test) */
};
struct cg_dev_event {
    cudaEvent_t event;
};

static inline cg_dev_cuda_t *cg_cuda_impl(cg_dev_t *dev)
{
    return (cg_dev_cuda_t *)dev->impl;
}

/* Make the layer's context current for the scope of one operation, and give the thread
 * back whatever it had (another context, or none: a helper thread that never used CUDA
 * stays without one, and no context is created on another device). */
typedef struct {
    CUcontext previous;
    int       switched;
} cg_cuda_guard_t;

/* After a reset (cg_dev_lost) every call is refused, quietly: the context and what it held
 * are gone, and a handle of theirs may name something else by now. */
static inline cg_status_t cg_cuda_guard_enter(cg_dev_t *dev, cg_cuda_guard_t *g)
{
    CUcontext ctx = cg_cuda_impl(dev)->ctx;

    g->switched = 0;
    if (cg_dev_lost(dev)) {
        return CG_ERR_DEVICE;
    }
    if (CG_CU_CALL(cuCtxGetCurrent, &g->previous) != CG_OK) {
        return CG_ERR_DEVICE;
    }
    if (g->previous != ctx) {
        if (CG_CU_CALL(cuCtxSetCurrent, ctx) != CG_OK) {
            return CG_ERR_DEVICE;
        }
        g->switched = 1;
    }
    return CG_OK;
}

static inline void cg_cuda_guard_exit(cg_cuda_guard_t *g)
{
    if (g->switched) {
        (void)cg_cu.cuCtxSetCurrent(g->previous);
    }
}

#define CG_CUDA_GUARDED(_dev, _expr)                                                      \
    ({                                                                                     \
        cg_cuda_guard_t _g;                                                                \
        cg_status_t     _s = cg_cuda_guard_enter((_dev), &_g);                             \
        if (_s == CG_OK) {                                                                 \
            _s = (_expr);                                                                  \
            cg_cuda_guard_exit(&_g);                                                       \
        }                                                                                  \
        _s;                                                                                \
    })

/* dev_cuda_mem.c: the ops of the same names. */
cg_status_t cg_cuda_mem_query(cg_dev_t *dev, const void *ptr, cg_mem_attr_t *attr);
cg_status_t cg_cuda_app_wait_foreign(cg_dev_t *dev, const void *ptr);
/* dev_cuda_app.c: an event's state (*done), the caller guarded; the ops of the same names. */
cg_status_t cg_cuda_event_query_guarded(cudaEvent_t event, int *done);
cg_status_t cg_cuda_app_wait(cg_dev_t *dev, cg_dev_stream_t *stream);
cg_status_t cg_cuda_app_done(cg_dev_t *dev, cg_dev_stream_t *stream, int *done);
int         cg_cuda_reset_check(cg_dev_t *dev);

/* dev_cuda_ll.c: the side stream's copy (now, never behind a kernel); the LL collective's
 * host side, the ops of the same names; whether the stream's last LL call went on the
 * legacy default stream and has not ended. */
cg_status_t cg_cuda_side_copy(cg_dev_cuda_t *cuda, void *dst, const void *src, size_t bytes,
                              enum cudaMemcpyKind kind);
cg_status_t cg_cuda_ll_run(cg_dev_t *dev, const cg_ll_args_t *args, cg_dev_stream_t *stream);
cg_status_t cg_cuda_ll_test(cg_dev_t *dev, cg_dev_stream_t *stream, int *done);
cg_status_t cg_cuda_ll_abort(cg_dev_t *dev, const cg_ll_args_t *args);
cg_status_t cg_cuda_ll_peek(cg_dev_t *dev, cg_dev_stream_t *stream, const uint64_t *word,
                            uint64_t *value);
int         cg_cuda_ll_running_on_app(const cg_dev_stream_t *stream);

/* The LL server (dev_cuda_server.c), guarded by the caller: post and ring call (the
 * stream's LL call number); the end of the stream's last LL call when it was rung there
 * (*done as ll_test);
 * wait for it; tell it to leave (unguarded: a store); the stream goes (the server stopped
 * and waited for). */
cg_status_t cg_cuda_server_run(cg_dev_t *dev, const cg_ll_args_t *args, cg_dev_stream_t *stream,
                               uint64_t call);
cg_status_t cg_cuda_server_test(cg_dev_stream_t *stream, int *done);
/* May the stream's calls go to a server (none found it could not read its calls)? */
int         cg_cuda_server_usable(const cg_dev_stream_t *stream);
cg_status_t cg_cuda_server_sync(cg_dev_stream_t *stream);
void        cg_cuda_server_stop(cg_dev_stream_t *stream);
void        cg_cuda_server_fini(cg_dev_t *dev, cg_dev_stream_t *stream);

/* CUDA IPC (ipc_cuda.c): the ops of the same names. */
cg_status_t cg_cuda_ipc_export(cg_dev_t *dev, const void *ptr, size_t size, cg_ipc_handle_t *handle);
cg_status_t cg_cuda_ipc_import(cg_dev_t *dev, const cg_ipc_handle_t *handle, void **base);
void        cg_cuda_ipc_close(cg_dev_t *dev, void *base);

#endif /* CG_DEV_CUDA_INT_H */
