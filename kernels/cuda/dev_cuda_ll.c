/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The CUDA layer's host side of the LL collective (the kernel: ll_cuda.cu): its launch, on
 * the group's stream or, queued behind the application's work (cg_ll_args_t after_app), on
 * the legacy default stream; its completion word; abort lines and peeks at the inbox. And
 * the side stream, for the host's copies that a waiting kernel must not hold back (these,
 * and flag_release's).
 */
#include "kernels/cuda/dev_cuda_int.h"

/* Bytes between the host and the device, now, on the side stream (non-blocking): never
 * queued behind a kernel that waits for them, on the layer's streams or on the legacy
 * default stream (an LL call queued behind the application's work: cg_ll_args_t after_app),
 * where a synchronous copy would be. */
cg_status_t cg_cuda_side_copy(cg_dev_cuda_t *cuda, void *dst, const void *src, size_t bytes,
                              enum cudaMemcpyKind kind)
{
    cg_status_t status = CG_CUDART_CALL(cudaMemcpyAsync(dst, src, bytes, kind, cuda->side_stream));

    return status == CG_OK ? CG_CUDART_CALL(cudaStreamSynchronize(cuda->side_stream)) : status;
}

/* The stream's completion word for LL calls, at its first call. */
static cg_status_t cg_cuda_ll_done_alloc(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    void       *word = NULL, *word_dev = NULL;
    cg_status_t status = CG_CUDART_CALL(
        cudaHostAlloc(&word, sizeof(uint64_t), cudaHostAllocMapped | cudaHostAllocPortable));

    if (status == CG_OK) {
        status = CG_CUDART_CALL(cudaHostGetDevicePointer(&word_dev, word, 0));
        if (status != CG_OK) { /* cudaFreeHost waits for the device: held under threads */
            cg_dev_host_release(dev, word);
            return status;
        }
        *(volatile uint64_t *)word = 0;
        stream->ll_done     = word;
        stream->ll_done_dev = word_dev;
        stream->ll_queued   = 0;
    }
    return status;
}

static cg_status_t cg_cuda_ll_run_guarded(cg_dev_t *dev, const cg_ll_args_t *args,
                                          cg_dev_stream_t *stream)
{
    cg_status_t status = stream->ll_done == NULL ? cg_cuda_ll_done_alloc(dev, stream) : CG_OK;

    if (status != CG_OK) {
        return status;
    }
    if (cg_dev_ll_served(dev, args) && cg_cuda_server_usable(stream)) { /* rung, not launched */
        status = cg_cuda_server_run(dev, args, stream, stream->ll_queued + 1);
        if (status == CG_OK) {
            stream->ll_queued++;
            stream->ll_polls  = 0;
            stream->ll_on_app = 0;
        }
        stream->ll_served = status == CG_OK;
        return status;
    }
    stream->ll_served = 0;
    /* after_app: on the legacy default stream, behind the application's work there and on
     * its blocking streams, as an event recorded there would be (cg_cuda_app_wait) */
    status = CG_CUDART_CALL(cg_cuda_ll_launch(args, args->after_app ? cudaStreamLegacy : stream->stream,
                                              stream->ll_done_dev, stream->ll_queued + 1));
    if (status == CG_OK) {
        stream->ll_queued++;
        stream->ll_polls  = 0;
        stream->ll_on_app = args->after_app;
    }
    return status;
}

cg_status_t cg_cuda_ll_run(cg_dev_t *dev, const cg_ll_args_t *args, cg_dev_stream_t *stream)
{
    if (cg_dev_fail_injected(dev)) {
        return CG_ERR_DEVICE;
    }
    cg_count(CG_CNT_DEV_OPS, 1);
    return CG_CUDA_GUARDED(dev, cg_cuda_ll_run_guarded(dev, args, stream));
}

/* Polls between two looks at the stream's error state while an LL call runs. */
#define CG_CUDA_LL_ERROR_POLLS 1024

/* Has the stream's last LL call ended: 0 not yet, 1 with its result, 2 given up (the
 * kernel's word: the call's number, shifted, and the given-up bit). */
static int cg_cuda_ll_ended(const cg_dev_stream_t *stream)
{
    uint64_t word;

    if (stream->ll_done == NULL) {
        return 1;
    }
    word = __atomic_load_n(stream->ll_done, __ATOMIC_ACQUIRE);
    return (word >> 1) < stream->ll_queued ? 0 : (word & 1) ? 2 : 1;
}

static int cg_cuda_ll_stored(const cg_dev_stream_t *stream)
{
    return cg_cuda_ll_ended(stream) != 0;
}

int cg_cuda_ll_running_on_app(const cg_dev_stream_t *stream)
{
    return stream->ll_on_app && !cg_cuda_ll_stored(stream);
}

/* The stream's error state: a kernel that failed never stores its word (the stream reports
 * the error), and one that ended stored it before. */
static cg_status_t cg_cuda_ll_check_guarded(cg_dev_stream_t *stream, int *done)
{
    cudaError_t err = cudaStreamQuery(stream->ll_on_app ? cudaStreamLegacy : stream->stream);

    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError(); /* not an error: see cg_cuda_event_query_guarded */
        return CG_OK;
    }
    if (err != cudaSuccess) {
        cg_error(CG_SUB_DEV, "the LL kernel failed: %s", cudaGetErrorString(err));
        return CG_ERR_DEVICE;
    }
    *done = cg_cuda_ll_ended(stream);
    if (!*done) {
        cg_error(CG_SUB_DEV, "the LL kernel ended without storing its completion word");
        return CG_ERR_DEVICE;
    }
    return CG_OK;
}

/* The word, with no driver call; the stream every CG_CUDA_LL_ERROR_POLLS polls. */
cg_status_t cg_cuda_ll_test(cg_dev_t *dev, cg_dev_stream_t *stream, int *done)
{
    *done = 0;
    if (cg_dev_lost(dev)) { /* the word went with the context (cg_dev_lost) */
        return CG_ERR_DEVICE;
    }
    if (stream->ll_served) {
        return CG_CUDA_GUARDED(dev, cg_cuda_server_test(stream, done));
    }
    *done = cg_cuda_ll_ended(stream);
    if (*done || ++stream->ll_polls % CG_CUDA_LL_ERROR_POLLS != 0) {
        return CG_OK;
    }
    return CG_CUDA_GUARDED(dev, cg_cuda_ll_check_guarded(stream, done));
}

/* Abort lines copied at a time (from the stack: a call that must end its kernel never
 * fails for want of memory, which would leave the kernel waiting). */
#define CG_CUDA_ABORT_CHUNK 512

/* Abort lines into this rank's inbox, every slot but its own (its empty line included,
 * cg_ll_slot_lines), from the host: the copy runs outside the layer's (non-blocking) streams,
 * so it reaches the waiting kernel. */
static cg_status_t cg_cuda_ll_abort_guarded(cg_dev_cuda_t *cuda, const cg_ll_args_t *args)
{
    uint64_t    abort_lines[CG_CUDA_ABORT_CHUNK];
    cg_status_t status = CG_OK;

    for (size_t i = 0; i < CG_CUDA_ABORT_CHUNK; i++) {
        abort_lines[i] = (uint64_t)(args->flag | CG_LL_ABORT) << 32;
    }
    for (int p = 0; p < args->size && status == CG_OK; p++) {
        char        *slot  = cg_ll_slot_at(args, args->rank, p);
        const size_t lines = cg_ll_slot_lines(cg_ll_recv_bytes(args, p));
        for (size_t done = 0; p != args->rank && done < lines && status == CG_OK;
             done += CG_CUDA_ABORT_CHUNK) {
            status = cg_cuda_side_copy(cuda, slot + done * sizeof(uint64_t), abort_lines,
                                       CG_MIN(lines - done, (size_t)CG_CUDA_ABORT_CHUNK) *
                                           sizeof(uint64_t),
                                       cudaMemcpyHostToDevice);
        }
    }
    return status;
}

cg_status_t cg_cuda_ll_abort(cg_dev_t *dev, const cg_ll_args_t *args)
{
    return CG_CUDA_GUARDED(dev, cg_cuda_ll_abort_guarded(cg_cuda_impl(dev), args));
}

/* On the side stream: it reads the inbox while the LL kernel waits on it (the kernel runs
 * meanwhile: stream needs no help). */
cg_status_t cg_cuda_ll_peek(cg_dev_t *dev, cg_dev_stream_t *stream, const uint64_t *word,
                            uint64_t *value)
{
    (void)stream;
    *value = 0;
    return CG_CUDA_GUARDED(dev, cg_cuda_side_copy(cg_cuda_impl(dev), value, word, sizeof(*value),
                                                  cudaMemcpyDeviceToHost));
}
