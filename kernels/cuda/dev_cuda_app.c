/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The CUDA layer and the application's side of the device: waiting for, or asking about,
 * the work the application queued on the legacy default stream before a call (app_wait,
 * app_done), and whether the application reset the device under the layer (reset_check).
 * And an event's state, which app_done asks, as the layer's event_query does.
 */
#include "kernels/cuda/dev_cuda_int.h"

cg_status_t cg_cuda_event_query_guarded(cudaEvent_t event, int *done)
{
    cudaError_t err = cudaEventQuery(event);

    if (err == cudaSuccess) {
        *done = 1;
        return CG_OK;
    }
    if (err == cudaErrorNotReady) {
        /* not an error, but the runtime keeps it as the thread's last error: clear it, or
         * the next launch check reports it */
        (void)cudaGetLastError();
        *done = 0;
        return CG_OK;
    }
    cg_error(CG_SUB_DEV, "cudaEventQuery failed: %s", cudaGetErrorString(err));
    return CG_ERR_DEVICE;
}

/* An event recorded on the legacy default stream completes after everything queued before
 * on it and on the blocking streams (per-thread default streams included). Another thread
 * recording at the same time only makes the wait longer. */
static cg_status_t cg_cuda_app_wait_guarded(cg_dev_cuda_t *cuda, cg_dev_stream_t *stream)
{
    cg_status_t status = CG_CUDART_CALL(cudaEventRecord(cuda->app_event, cudaStreamLegacy));

    if (status != CG_OK) {
        return status;
    }
    if (stream != NULL) { /* stream-ordered: the host does not wait */
        return CG_CUDART_CALL(cudaStreamWaitEvent(stream->stream, cuda->app_event, 0));
    }
    cg_count(CG_CNT_HOST_WAITS, 1);
    return CG_CUDART_CALL(cudaEventSynchronize(cuda->app_event));
}

cg_status_t cg_cuda_app_wait(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    return CG_CUDA_GUARDED(dev, cg_cuda_app_wait_guarded(cg_cuda_impl(dev), stream));
}

/* The same event, queried once: done when the driver already knows that everything before
 * the record is done; otherwise the stream waits for it. Another thread's record at the
 * same time is a later point of the same stream: done then still means done, and the wait
 * is only longer. */
static cg_status_t cg_cuda_app_done_guarded(cg_dev_cuda_t *cuda, cg_dev_stream_t *stream, int *done)
{
    cg_status_t status = CG_CUDART_CALL(cudaEventRecord(cuda->app_event, cudaStreamLegacy));

    *done = 0;
    if (status == CG_OK) {
        status = cg_cuda_event_query_guarded(cuda->app_event, done);
    }
    if (status == CG_OK && !*done) {
        status = CG_CUDART_CALL(cudaStreamWaitEvent(stream->stream, cuda->app_event, 0));
    }
    return status;
}

cg_status_t cg_cuda_app_done(cg_dev_t *dev, cg_dev_stream_t *stream, int *done)
{
    return CG_CUDA_GUARDED(dev, cg_cuda_app_done_guarded(cg_cuda_impl(dev), stream, done));
}

/* Has the application reset the device under the layer (cudaDeviceReset)? The primary
 * context this layer retained is then inactive, or, when something made it again since,
 * another context (another id: the handle may be the same), or no context at all. A
 * driver that cannot say, or answers with another error (a fault's, which sticks to the
 * context: the device's calls report it, not a reset): not reset. */
int cg_cuda_reset_check(cg_dev_t *dev)
{
    cg_dev_cuda_t     *cuda   = cg_cuda_impl(dev);
    unsigned           flags  = 0;
    int                active = 1;
    unsigned long long id     = 0;
    CUresult           res;

    if (cg_cu.cuDevicePrimaryCtxGetState != NULL &&
        cg_cu.cuDevicePrimaryCtxGetState(cuda->cudev, &flags, &active) == CUDA_SUCCESS && !active) {
        return 1;
    }
    if (!cuda->ctx_id_known) {
        return 0;
    }
    res = cg_cu.cuCtxGetId(cuda->ctx, &id);
    return res == CUDA_SUCCESS ? id != cuda->ctx_id
                               : res == CUDA_ERROR_INVALID_CONTEXT || res == CUDA_ERROR_CONTEXT_IS_DESTROYED;
}
