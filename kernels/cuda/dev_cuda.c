/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * CUDA device layer: device memory from cudaMalloc, page-locked staging memory, streams and
 * events, copies through the copy engines, reductions through our kernels, CUDA IPC
 * (ipc_cuda.c), and 64-bit flags written and awaited by stream memory operations; what a
 * buffer is, and the wait for another context's work, in dev_cuda_mem.c.
 *
 * The runtime is linked statically; the driver is loaded at run time (cuda_driver.c).
 * Operations run on the device the layer was opened on, whatever the calling thread's
 * current device is (CG_CUDA_DEVICE_GUARD).
 */
#include "kernels/cuda/dev_cuda_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cg_status_t cg_cuda_mem_alloc_guarded(cg_dev_t *dev, size_t size, void **ptr)
{
    (void)dev;
    return CG_CUDART_CALL(cudaMalloc(ptr, size ? size : 1));
}

static cg_status_t cg_cuda_mem_alloc(cg_dev_t *dev, size_t size, void **ptr)
{
    return CG_CUDA_GUARDED(dev, cg_cuda_mem_alloc_guarded(dev, size, ptr));
}

static void cg_cuda_mem_free(cg_dev_t *dev, void *ptr)
{
    (void)CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaFree(ptr)));
}

static cg_status_t cg_cuda_host_alloc(cg_dev_t *dev, size_t size, void **ptr)
{
    return CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaHostAlloc(ptr, size ? size : 1,
                                                             cudaHostAllocPortable)));
}

static void cg_cuda_host_free(cg_dev_t *dev, void *ptr)
{
    (void)CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaFreeHost(ptr)));
}

static cg_status_t cg_cuda_stream_create_guarded(cg_dev_stream_t *s)
{
    return CG_CUDART_CALL(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
}

static cg_status_t cg_cuda_stream_create(cg_dev_t *dev, cg_dev_stream_t **stream)
{
    cg_dev_stream_t *s;
    cg_status_t      status;

    if (__atomic_load_n(&dev->fail_sticky, __ATOMIC_RELAXED) == 2) {
        return CG_ERR_DEVICE; /* an injected GPU fault (coll_gpu_debug_fail sticky) */
    }
    if ((s = calloc(1, sizeof(*s))) == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    status = CG_CUDA_GUARDED(dev, cg_cuda_stream_create_guarded(s));
    if (status != CG_OK) {
        free(s);
        return status;
    }
    *stream = s;
    return CG_OK;
}

/* The application's legacy default stream: nothing is made, the handle names it. */
static cg_status_t cg_cuda_app_stream_create(cg_dev_t *dev, cg_dev_stream_t **stream)
{
    cg_dev_stream_t *s = calloc(1, sizeof(*s));

    (void)dev;
    if (s == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    s->stream   = cudaStreamLegacy;
    s->borrowed = 1;
    *stream     = s;
    return CG_OK;
}

static void cg_cuda_stream_destroy(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    if (cg_dev_lost(dev)) { /* the server went with the context: its records go */
        cg_cuda_server_fini(dev, stream);
    } else {
        cg_cuda_server_stop(stream); /* even when the guard below fails: it leaves at its
                                      * next look at the bell (after the call in flight) */
        (void)CG_CUDA_GUARDED(dev, (cg_cuda_server_fini(dev, stream), CG_OK));
    }
    if (!stream->borrowed) {
        (void)CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaStreamDestroy(stream->stream)));
    }
    if (stream->ll_done != NULL) { /* cudaFreeHost waits for the device: held under threads */
        cg_dev_host_release(dev, stream->ll_done);
    }
    free(stream);
}

/* An LL call that went on the legacy default stream (after_app) or to the stream's server
 * belongs to this stream: it is waited for too while its word is not stored (a call given
 * up). */
static cg_status_t cg_cuda_stream_sync_guarded(cg_dev_stream_t *stream)
{
    cg_status_t status = CG_OK;

    if (cg_cuda_ll_running_on_app(stream)) {
        status = CG_CUDART_CALL(cudaStreamSynchronize(cudaStreamLegacy));
    }
    if (status == CG_OK) { /* a call rung on the stream's LL server */
        status = cg_cuda_server_sync(stream);
    }
    return status == CG_OK ? CG_CUDART_CALL(cudaStreamSynchronize(stream->stream)) : status;
}

static cg_status_t cg_cuda_stream_sync(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    cg_count(CG_CNT_HOST_WAITS, 1);
    return CG_CUDA_GUARDED(dev, cg_cuda_stream_sync_guarded(stream));
}

static cg_status_t cg_cuda_event_create(cg_dev_t *dev, cg_dev_event_t **event)
{
    cg_dev_event_t *e = calloc(1, sizeof(*e));
    cg_status_t     status;

    if (e == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    status = CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaEventCreateWithFlags(
                                      &e->event, cudaEventDisableTiming)));
    if (status != CG_OK) {
        free(e);
        return status;
    }
    *event = e;
    return CG_OK;
}

static void cg_cuda_event_destroy(cg_dev_t *dev, cg_dev_event_t *event)
{
    (void)CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaEventDestroy(event->event)));
    free(event);
}

static cg_status_t cg_cuda_event_record(cg_dev_t *dev, cg_dev_event_t *event,
                                        cg_dev_stream_t *stream)
{
    return CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaEventRecord(event->event, stream->stream)));
}

static cg_status_t cg_cuda_event_query(cg_dev_t *dev, cg_dev_event_t *event, int *done)
{
    return CG_CUDA_GUARDED(dev, cg_cuda_event_query_guarded(event->event, done));
}

static cg_status_t cg_cuda_copy(cg_dev_t *dev, void *dst, const void *src, size_t bytes,
                                cg_dev_stream_t *stream)
{
    if (cg_dev_fail_injected(dev)) {
        return CG_ERR_DEVICE;
    }
    if (bytes == 0 || dst == src) {
        return CG_OK;
    }
    cg_count(CG_CNT_DEV_OPS, 1);
    return CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaMemcpyAsync(dst, src, bytes,
                                                               cudaMemcpyDefault,
                                                               stream->stream)));
}

/* cudaMemcpy2DAsync refuses pitches above the device's largest (cudaDevAttrMaxPitch,
 * 2^31 - 1 on every GPU so far): wider ones go row by row. */
#define CG_CUDA_MAX_PITCH ((size_t)INT32_MAX)

static cg_status_t cg_cuda_copy_2d_guarded(void *dst, size_t dpitch, const void *src,
                                           size_t spitch, size_t width, size_t rows,
                                           cudaStream_t stream)
{
    cg_status_t status = CG_OK;

    if (dpitch <= CG_CUDA_MAX_PITCH && spitch <= CG_CUDA_MAX_PITCH) {
        return CG_CUDART_CALL(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows,
                                                cudaMemcpyDefault, stream));
    }
    for (size_t row = 0; status == CG_OK && row < rows; row++) {
        status = CG_CUDART_CALL(cudaMemcpyAsync((char *)dst + row * dpitch,
                                                (const char *)src + row * spitch, width,
                                                cudaMemcpyDefault, stream));
    }
    return status;
}

static cg_status_t cg_cuda_copy_2d(cg_dev_t *dev, void *dst, size_t dpitch, const void *src,
                                   size_t spitch, size_t width, size_t rows,
                                   cg_dev_stream_t *stream)
{
    if (cg_dev_fail_injected(dev)) {
        return CG_ERR_DEVICE;
    }
    if (width == 0 || rows == 0) {
        return CG_OK;
    }
    if (dpitch < width || spitch < width) {
        return CG_ERR_INVALID_PARAM;
    }
    cg_count(CG_CNT_DEV_OPS, 1);
    return CG_CUDA_GUARDED(dev, cg_cuda_copy_2d_guarded(dst, dpitch, src, spitch, width, rows,
                                                        stream->stream));
}

static cg_status_t cg_cuda_fill(cg_dev_t *dev, void *dst, int byte, size_t bytes,
                                cg_dev_stream_t *stream)
{
    if (cg_dev_fail_injected(dev)) {
        return CG_ERR_DEVICE;
    }
    if (bytes == 0) {
        return CG_OK;
    }
    cg_count(CG_CNT_DEV_OPS, 1);
    return CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaMemsetAsync(dst, byte, bytes, stream->stream)));
}

static cg_status_t cg_cuda_reduce(cg_dev_t *dev, const cg_reduce_args_t *args,
                                  cg_dev_stream_t *stream)
{
    if (cg_dev_fail_injected(dev)) {
        return CG_ERR_DEVICE;
    }
    if (!cg_reduce_supported(args->dtype, args->op) || args->nsrc < 1 ||
        args->nsrc > CG_DEV_MAX_FANIN || args->ndst > CG_DEV_MAX_FANIN) {
        return CG_ERR_UNSUPPORTED;
    }
    if (args->count == 0 || args->ndst == 0) {
        return CG_OK;
    }
    cg_count(CG_CNT_DEV_OPS, 1);
    return CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cg_cuda_reduce_launch(
                                    args, cg_cuda_impl(dev)->sm_count, stream->stream)));
}


/* The default write flag orders the write after the stream's earlier work, its memory
 * included (a system-wide fence before the flag). */
static cg_status_t cg_cuda_flag_write(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                                      cg_dev_stream_t *stream)
{
    cg_count(CG_CNT_DEV_OPS, 1);
    return CG_CUDA_GUARDED(dev, CG_CU_CALL(cuStreamWriteValue64, (CUstream)stream->stream,
                                           (CUdeviceptr)(uintptr_t)flag, value,
                                           CU_STREAM_WRITE_VALUE_DEFAULT));
}

/* GEQ, and a flush of remote writes where the device can: data a peer pushed into this
 * GPU's memory before its flag is visible to the work after the wait. */
static cg_status_t cg_cuda_flag_wait(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                                     cg_dev_stream_t *stream)
{
    unsigned flags = CU_STREAM_WAIT_VALUE_GEQ | cg_cuda_impl(dev)->wait_flags;

    cg_count(CG_CNT_DEV_OPS, 1);
    return CG_CUDA_GUARDED(dev, CG_CU_CALL(cuStreamWaitValue64, (CUstream)stream->stream,
                                           (CUdeviceptr)(uintptr_t)flag, value, flags));
}

/* Now, from the host, outside every stream: a stream waiting for a flag that a failed peer
 * will never write drains (nothing else, not even cudaFree, can wait for it for ever). */
static cg_status_t cg_cuda_flag_release(cg_dev_t *dev, uint64_t *flag, uint64_t value)
{
    return CG_CUDA_GUARDED(dev, cg_cuda_side_copy(cg_cuda_impl(dev), flag, &value, sizeof(value),
                                                  cudaMemcpyHostToDevice));
}

static cg_status_t cg_cuda_thread_bind(cg_dev_t *dev)
{
    return CG_CU_CALL(cuCtxSetCurrent, cg_cuda_impl(dev)->ctx);
}

/* After cg_dev_abandon, device work that never ends may still use the peers' mappings and
 * the primary context: both are left as they are (the records go). After a reset
 * (cg_dev_lost) the guard refuses every call: the records go, and the retain is released
 * (what the driver asks of a retain after a reset too). */
static void cg_cuda_close(cg_dev_t *dev)
{
    cg_dev_cuda_t *cuda      = cg_cuda_impl(dev);
    const int      abandoned = cg_dev_abandoned(dev);

    while (cuda->mappings != NULL) {
        if (abandoned) {
            cg_cuda_mapping_t *next = cuda->mappings->next;
            free(cuda->mappings);
            cuda->mappings = next;
        } else {
            cg_cuda_ipc_close(dev, cuda->mappings->base);
        }
    }
    (void)CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaEventDestroy(cuda->app_event)));
    (void)CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaStreamDestroy(cuda->side_stream)));
    if (!abandoned) {
        (void)cg_cu.cuDevicePrimaryCtxRelease(cuda->cudev);
    }
    pthread_mutex_destroy(&cuda->lock);
    free(cuda);
    free(dev);
}

static const cg_dev_ops_t cg_dev_cuda_ops = {
    .name           = "cuda",
    .close          = cg_cuda_close,
    .reset_check    = cg_cuda_reset_check,
    .mem_query      = cg_cuda_mem_query,
    .mem_alloc      = cg_cuda_mem_alloc,
    .mem_free       = cg_cuda_mem_free,
    .host_alloc     = cg_cuda_host_alloc,
    .host_free      = cg_cuda_host_free,
    .stream_create  = cg_cuda_stream_create,
    .app_stream_create = cg_cuda_app_stream_create,
    .stream_destroy = cg_cuda_stream_destroy,
    .stream_sync    = cg_cuda_stream_sync,
    .event_create   = cg_cuda_event_create,
    .event_destroy  = cg_cuda_event_destroy,
    .event_record   = cg_cuda_event_record,
    .event_query    = cg_cuda_event_query,
    .copy           = cg_cuda_copy,
    .copy_2d        = cg_cuda_copy_2d,
    .fill           = cg_cuda_fill,
    .reduce         = cg_cuda_reduce,
    .ipc_export     = cg_cuda_ipc_export,
    .ipc_import     = cg_cuda_ipc_import,
    .ipc_close      = cg_cuda_ipc_close,
    .ipc_export_done = cg_dev_ipc_export_done,
    .flag_write     = cg_cuda_flag_write,
    .flag_wait      = cg_cuda_flag_wait,
    .flag_release   = cg_cuda_flag_release,
    .ll_run         = cg_cuda_ll_run,
    .ll_test        = cg_cuda_ll_test,
    .ll_abort       = cg_cuda_ll_abort,
    .ll_peek        = cg_cuda_ll_peek,
    .thread_bind    = cg_cuda_thread_bind,
    .app_wait       = cg_cuda_app_wait,
    .app_done       = cg_cuda_app_done,
    .app_wait_foreign = cg_cuda_app_wait_foreign,
};

static cg_status_t cg_cuda_preload_all(void)
{
    cg_status_t status = CG_CUDART_CALL(cg_cuda_reduce_preload());

    status = status == CG_OK ? CG_CUDART_CALL(cg_cuda_ll_preload()) : status;
    if (status != CG_OK) {
        (void)cudaGetLastError(); /* not left for the application's next check */
    }
    return status;
}

cg_status_t cg_dev_cuda_preload(cg_dev_t *dev)
{
    const double t0 = cg_time_now();
    cg_status_t  status;

    if (dev->kind != CG_DEV_KIND_CUDA) {
        return CG_OK;
    }
    status = CG_CUDA_GUARDED(dev, cg_cuda_preload_all());
    if (status == CG_OK) {
        cg_detail(CG_SUB_DEV, "every kernel loaded in %.1f ms (no lazy loading under calls)",
                  (cg_time_now() - t0) * 1e3);
    }
    return status;
}

cg_status_t cg_dev_cuda_open(int ordinal, cg_dev_t **dev_out)
{
    char           reason[200];
    cg_dev_t      *dev = NULL;
    cg_dev_cuda_t *cuda   = NULL;
    int            memops = 0, flush = 0, mps;
    cg_status_t    status;

    status = cg_dev_cuda_probe(reason, sizeof(reason));
    if (status != CG_OK) {
        cg_warn(CG_SUB_DEV, "CUDA device layer unavailable: %s", reason);
        return status;
    }
    dev = calloc(1, sizeof(*dev));
    cuda   = calloc(1, sizeof(*cuda));
    if (dev == NULL || cuda == NULL) {
        status = CG_ERR_NO_MEMORY;
        goto err;
    }
    cuda->ordinal = ordinal;
    if (ordinal < 0) {
        status = CG_CUDART_CALL(cudaGetDevice(&cuda->ordinal));
        if (status != CG_OK) {
            goto err;
        }
    }
    status = CG_CU_CALL(cuDeviceGet, &cuda->cudev, cuda->ordinal);
    if (status == CG_OK) {
        status = CG_CU_CALL(cuDevicePrimaryCtxRetain, &cuda->ctx, cuda->cudev);
    }
    if (status != CG_OK) {
        goto err;
    }
    cuda->ctx_id_known = cg_cu.cuCtxGetId != NULL &&
                         cg_cu.cuCtxGetId(cuda->ctx, &cuda->ctx_id) == CUDA_SUCCESS;
    status = CG_CUDART_CALL(
        cudaDeviceGetAttribute(&cuda->sm_count, cudaDevAttrMultiProcessorCount, cuda->ordinal));
    if (status != CG_OK) {
        goto err_ctx;
    }
    /* device-side barriers need 64-bit stream memory operations */
    if (cg_cu.cuDeviceGetAttribute(&memops, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS,
                                   cuda->cudev) != CUDA_SUCCESS) {
        memops = 0;
    }
    if (cg_cu.cuDeviceGetAttribute(&flush, CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES,
                                   cuda->cudev) == CUDA_SUCCESS && flush) {
        cuda->wait_flags = CU_STREAM_WAIT_VALUE_FLUSH;
    }
    status = CG_CUDART_CALL(
        cudaDeviceGetPCIBusId(dev->pci_bus_id, (int)sizeof(dev->pci_bus_id), cuda->ordinal));
    if (status != CG_OK) {
        goto err_ctx;
    }
    pthread_mutex_init(&cuda->lock, NULL);
    dev->ops                   = &cg_dev_cuda_ops;
    dev->kind                  = CG_DEV_KIND_CUDA;
    dev->ordinal               = cuda->ordinal;
    dev->caps.ipc_user_buffers = 1;
    dev->caps.device_flags     = memops != 0;
    dev->caps.async            = 1;
    mps                        = cg_dev_cuda_mps(cuda->ordinal);
    dev->caps.mps              = mps == 1;
    /* matters where ranks share the GPU; a driver that cannot say (-1): as before, none */
    dev->caps.time_sliced      = mps == 0;
    dev->impl                  = cuda;
    status = CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaEventCreateWithFlags(
                                      &cuda->app_event, cudaEventDisableTiming)));
    if (status != CG_OK) {
        goto err_lock;
    }
    status = CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaStreamCreateWithFlags(&cuda->side_stream,
                                                                         cudaStreamNonBlocking)));
    if (status != CG_OK) {
        (void)CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaEventDestroy(cuda->app_event)));
        goto err_lock;
    }
    cg_detail(CG_SUB_DEV, "CUDA device %d (%s), %d SMs, device-side barriers %s%s, MPS %s",
              cuda->ordinal, dev->pci_bus_id, cuda->sm_count, memops ? "available" : "unavailable "
              "(no 64-bit stream memory operations)", cuda->wait_flags ? ", remote writes flushed" : "",
              dev->caps.mps ? "on" : "off");
    *dev_out = dev;
    return CG_OK;

err_lock:
    pthread_mutex_destroy(&cuda->lock);
err_ctx:
    (void)cg_cu.cuDevicePrimaryCtxRelease(cuda->cudev);
err:
    free(cuda);
    free(dev);
    return status;
}
