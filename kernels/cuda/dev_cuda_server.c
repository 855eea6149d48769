/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The CUDA layer's LL server (coll_gpu_ll_persist; the protocol: kernels/dev_ll_server.h,
 * the kernel: ll_server_kernel in ll_server.cu). One per stream, started at its first served
 * call on a non-blocking stream of its own, beside the stream's work: a call is posted into
 * page-locked memory and rung with a store, and its end is the stream's completion word, as
 * a launched LL call's. The host layer plays it with a thread (host_server.c).
 */
#include "kernels/cuda/dev_cuda_int.h"
#include "kernels/dev_ll_server.h"

#include <stdlib.h>

struct cg_cuda_server {
    cg_ll_server_t proto;
    cudaStream_t   queue;      /* the server's: non-blocking, beside the stream's work */
    char          *pinned;     /* the protocol's words, then the posted call (host view) */
    char          *pinned_dev; /* the same, as the device sees it */
    uint64_t      *done_dev;   /* the stream's completion word, as the device sees it */
    uint64_t       idle_ns, life_ns;
    int            polled;     /* posted lines a server reads with the bell: the most a call
                                * posted (the group's: every call of a stream has its ranks) */
    int            rung;       /* a rung call not seen to end */
    unsigned       polls;
    cg_status_t    failed;     /* the server's kernel failed (its queue's error): sticky */
    int            deaf;       /* a server could not read a call posted to it: none again */
};

#define CG_CUDA_SERVER_POSTED sizeof(cg_ll_server_words_t) /* the call, after the words */

static cg_status_t cg_cuda_server_start(cg_ll_server_t *proto, uint64_t gen, uint64_t served)
{
    cg_cuda_server_t *server = proto->ctx;

    if (server->failed != CG_OK) {
        return server->failed;
    }
    return CG_CUDART_CALL(cg_cuda_ll_server_start(server->pinned_dev, server->pinned_dev + CG_CUDA_SERVER_POSTED,
                                                  server->polled, server->done_dev, gen, served,
                                                  server->idle_ns, server->life_ns, server->queue));
}

static cg_status_t cg_cuda_server_create(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    cg_cuda_server_t *server = calloc(1, sizeof(*server));
    const size_t      bytes  = CG_CUDA_SERVER_POSTED + cg_cuda_ll_posted_bytes();
    void             *pinned = NULL, *pinned_dev = NULL;
    cg_status_t       status = server != NULL ? CG_OK : CG_ERR_NO_MEMORY;

    if (status == CG_OK) {
        status = CG_CUDART_CALL(cudaHostAlloc(&pinned, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    }
    if (status == CG_OK) {
        memset(pinned, 0, bytes);
        status = CG_CUDART_CALL(cudaHostGetDevicePointer(&pinned_dev, pinned, 0));
    }
    if (status == CG_OK) {
        status = CG_CUDART_CALL(cudaStreamCreateWithFlags(&server->queue, cudaStreamNonBlocking));
    }
    if (status != CG_OK) {
        if (pinned != NULL) {
            cg_dev_host_release(dev, pinned);
        }
        free(server);
        return status;
    }
    server->pinned      = pinned;
    server->pinned_dev  = pinned_dev;
    server->done_dev    = stream->ll_done_dev;
    server->idle_ns     = (uint64_t)(dev->ll_persist_idle_s * 1e9);
    server->life_ns     = (uint64_t)(dev->ll_persist_life_s * 1e9);
    server->proto.words = (cg_ll_server_words_t *)(void *)server->pinned;
    server->proto.done  = stream->ll_done;
    server->proto.start = cg_cuda_server_start;
    server->proto.ctx   = server;
    stream->server      = server;
    return CG_OK;
}

/* The call posted and rung: call is the stream's LL call number (ll_queued + 1). The
 * completion word was allocated by the caller (cg_cuda_ll_run). */
cg_status_t cg_cuda_server_run(cg_dev_t *dev, const cg_ll_args_t *args, cg_dev_stream_t *stream,
                               uint64_t call)
{
    cg_status_t status = stream->server == NULL ? cg_cuda_server_create(dev, stream) : CG_OK;

    if (status == CG_OK && (status = stream->server->failed) == CG_OK && stream->server->rung) {
        cg_error(CG_SUB_DEV, "an LL call rung while the last one had not ended");
        status = CG_ERR_INTERNAL; /* the server may read the last call's arguments still */
    }
    if (status == CG_OK) { /* a ring that fails (no server could start) leaves the call's
                            * number unused, and the next call posts under it again: no
                            * server reads meanwhile (the last one stored left first) */
        int lines = 0;
        status = CG_CUDART_CALL(cg_cuda_ll_post(args, stream->server->pinned + CG_CUDA_SERVER_POSTED,
                                                call, &lines));
        stream->server->polled = CG_MAX(stream->server->polled, lines);
    }
    if (status == CG_OK) {
        status = cg_ll_server_ring(&stream->server->proto, call);
    }
    if (status == CG_OK) {
        stream->server->rung  = 1;
        stream->server->polls = 0;
    }
    return status;
}

static int cg_cuda_server_rung(const cg_dev_stream_t *stream)
{
    return stream->server != NULL && stream->server->rung;
}

/* The server's queue: running (not ready) or ended are fine; an error is the kernel's. */
static cg_status_t cg_cuda_server_check(cg_cuda_server_t *server)
{
    cudaError_t err = cudaStreamQuery(server->queue);

    if (err == cudaSuccess || err == cudaErrorNotReady) {
        if (err == cudaErrorNotReady) { /* not an error: not left for the application's next
                                         * check (after a success, its own error stays) */
            (void)cudaGetLastError();
        }
        return CG_OK;
    }
    cg_error(CG_SUB_DEV, "the LL server failed: %s", cudaGetErrorString(err));
    return CG_ERR_DEVICE;
}

int cg_cuda_server_usable(const cg_dev_stream_t *stream)
{
    return stream->server == NULL || !stream->server->deaf;
}

/* The rung call, which no server could read (cg_ll_server_test: CG_ERR_UNSUPPORTED),
 * launched on the stream as a call that is not served: its end is the same word. */
static cg_status_t cg_cuda_server_relaunch(cg_cuda_server_t *server, cg_dev_stream_t *stream)
{
    cg_status_t status;

    server->deaf      = 1;
    server->rung      = 0;
    stream->ll_served = 0;
    stream->ll_on_app = 0;
    stream->ll_polls  = 0;
    status = CG_CUDART_CALL(cg_cuda_ll_launch_posted(server->pinned + CG_CUDA_SERVER_POSTED,
                                                     server->proto.rung, stream->stream,
                                                     server->done_dev));
    if (status != CG_OK) { /* the call never runs: every later wait on the stream says so */
        server->failed = status;
    }
    return status;
}

/* Polls between two looks at the server's queue for an error. */
#define CG_CUDA_SERVER_ERROR_POLLS 1024

/* Guarded by the caller: the end of the stream's last LL call, rung here (ll_served); the
 * answer of a call seen to end stays (ll_test after stream_sync), and so does a failure. A
 * call no server could read is launched on the stream (ll_served 0: its end is ll_test's,
 * and stream_sync waits for it), and no server runs again on the stream. */
cg_status_t cg_cuda_server_test(cg_dev_stream_t *stream, int *done)
{
    cg_cuda_server_t *server = stream->server;
    cg_status_t       status = server->failed;

    *done = 0;
    if (status == CG_OK) {
        status = cg_ll_server_test(&server->proto, done);
    }
    if (status == CG_ERR_UNSUPPORTED) { /* not run: launched now (not a failure) */
        return cg_cuda_server_relaunch(server, stream);
    }
    if (status == CG_OK && *done == 0 && server->rung &&
        ++server->polls % CG_CUDA_SERVER_ERROR_POLLS == 0) {
        status = cg_cuda_server_check(server);
    }
    if (status != CG_OK) { /* an error of the queue is the server's kernel's (nothing else
                            * runs there): it ended, and no server starts again */
        server->failed = status;
    }
    if (*done != 0 || status != CG_OK) {
        server->rung = 0;
    }
    return status;
}

/* A rung call's end waited for this long is a defect (every wait of the call's LL protocol
 * ends at a peer's failure, by the abort lines its waiters write): said, not waited for
 * ever. As the host layer's CG_HOST_FLAG_TIMEOUT. */
#define CG_CUDA_SERVER_SYNC_TIMEOUT 300

/* Guarded by the caller: the rung call's end (the stream's synchronisation includes it). */
cg_status_t cg_cuda_server_sync(cg_dev_stream_t *stream)
{
    cg_pace_t   pace   = {.quiet = 1}; /* the stream's synchronisation, under the guard */
    cg_status_t status = stream->server != NULL ? stream->server->failed : CG_OK; /* sticky */
    double      t0     = 0;
    int         done   = 0;

    while (status == CG_OK && cg_cuda_server_rung(stream) &&
           (status = cg_cuda_server_test(stream, &done)) == CG_OK && done == 0) {
        if (!cg_pace(&pace)) {
            continue;
        }
        t0 = t0 ? t0 : cg_time_now();
        if (cg_time_now() - t0 > CG_CUDA_SERVER_SYNC_TIMEOUT) {
            cg_error(CG_SUB_DEV, "an LL server's call did not end in %d s: stopped waiting",
                     CG_CUDA_SERVER_SYNC_TIMEOUT);
            return CG_ERR_TIMEOUT;
        }
    }
    return status;
}

/* Tell the stream's server to leave now: a store, no driver call (no guard needed). */
void cg_cuda_server_stop(cg_dev_stream_t *stream)
{
    if (stream->server != NULL) {
        (void)cg_ll_server_stop(&stream->server->proto);
    }
}

/* Guarded by the caller: the server told to leave and waited for (unless device work was
 * abandoned: it may wait for ever), its queue and memory gone. After a reset (cg_dev_lost;
 * unguarded then) the kernel, its queue and its words went with the context: the records
 * go, nothing is stored or called. */
void cg_cuda_server_fini(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    cg_cuda_server_t *server = stream->server;

    if (server == NULL) {
        return;
    }
    if (!cg_dev_lost(dev)) {
        if (cg_ll_server_stop(&server->proto) && !cg_dev_abandoned(dev)) {
            (void)CG_CUDART_CALL(cudaStreamSynchronize(server->queue));
        }
        (void)CG_CUDART_CALL(cudaStreamDestroy(server->queue));
    }
    cg_dev_host_release(dev, server->pinned);
    free(server);
    stream->server = NULL;
}
