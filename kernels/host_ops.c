/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The host device layer's stream work: the stream's pending work (an LL wait, queued ops,
 * the application's default-stream work), looked at and finished; and the ops table's
 * copies, fills, reductions and flag operations, each counted as a device operation and run
 * at once or queued on its stream (host_queue.c), or with blocking waits on the calling
 * thread. dev_host.c has the streams, events, the LL collective and the table.
 */
#include "kernels/dev_host_int.h"

/* ---- the stream's pending work ------------------------------------------------------------ */
/* The host's wait (stream NULL) runs the application's work now. A stream's wait runs it
 * when the stream reaches it, as a GPU's stream waits for an event: at once on an idle
 * stream, but behind queued work (a slowed rank's, coll_gpu_debug_host_slow, whose wait
 * itself takes that long), so that work on another stream that skipped its own wait reads
 * the bytes from before, as on a GPU. It runs at once, too, on a stream whose LL call is
 * pending (that wait is not the stream's queue), on the application's stream handle, and
 * with blocking waits (no queue). */
cg_status_t cg_host_app_wait(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    const cg_host_op_t op = {.kind = CG_HOST_OP_APP_WAIT};

    if (cg_dev_lost(dev)) { /* refused before anything is counted, as in the CUDA layer */
        return CG_ERR_DEVICE;
    }
    if (stream == NULL) {
        cg_count(CG_CNT_HOST_WAITS, 1); /* a GPU makes the host wait here */
    }
    if (stream == NULL || stream->pending || stream->on_app || cg_host_impl(dev)->sim == NULL ||
        cg_host_impl(dev)->blocking_waits) {
        return cg_host_app_sync(dev);
    }
    return cg_host_queue_submit(dev, &stream->queue, &op);
}

/* Strict: what the application queued on the default stream of the simulated device that
 * holds ptr (device 1 for CG_SIM_ALLOC_OTHER_DEVICE memory) runs now; the layer's own
 * waits (cg_host_app_wait) are device 0's, as a CUDA layer's are its device's. */
cg_status_t cg_host_app_wait_foreign(cg_dev_t *dev, const void *ptr)
{
    const cg_sim_api_t *sim = cg_host_impl(dev)->sim;
    cg_sim_attr_t       attr;

    if (cg_dev_lost(dev)) {
        return CG_ERR_DEVICE;
    }
    cg_count(CG_CNT_HOST_WAITS, 1);
    if (sim == NULL || sim->query(ptr, &attr) != CG_SIM_OK) {
        return CG_OK; /* lenient: nothing is ever queued */
    }
    if (sim->device_sync(attr.device) != CG_SIM_OK) {
        cg_error(CG_SUB_DEV, "the application's work on the default stream of the device "
                 "holding %p failed", ptr);
        return CG_ERR_DEVICE;
    }
    return CG_OK;
}

/* Strict: done when nothing the application queued on the simulated GPU's default stream
 * waits to run (nothing runs it by itself: queued work stays not done, as a kernel that
 * still writes); otherwise the stream's wait for it (cg_host_app_wait). Without the
 * simulated GPU nothing is ever queued. coll_gpu_debug_host_query_miss: a miss now and
 * then, as a GPU's first query of a fresh event may find done work not yet done. */
cg_status_t cg_host_app_done(cg_dev_t *dev, cg_dev_stream_t *stream, int *done)
{
    cg_dev_host_t *host = cg_host_impl(dev);
    const unsigned query = __atomic_add_fetch(&host->queries, 1, __ATOMIC_RELAXED);

    if (cg_dev_lost(dev)) {
        *done = 0;
        return CG_ERR_DEVICE;
    }
    *done = (host->sim == NULL || host->sim->stream_idle()) &&
            !(host->query_miss > 0 && query % (unsigned)host->query_miss == 0);
    return *done ? CG_OK : cg_host_app_wait(dev, stream);
}

/* The stream's LL wait is pending (1) or over (0). */
void cg_host_pending_set(cg_dev_t *dev, cg_dev_stream_t *stream, int pending)
{
    if (stream->pending != pending) {
        stream->pending = pending;
        if (pending) {
            stream->pending_owner = cg_host_peer_wait_start(cg_host_impl(dev));
        } else {
            cg_host_peer_wait_stop(cg_host_impl(dev), stream->pending_owner);
        }
    }
}

/* One look at the stream's pending work: *done when the LL wait is over and the queued ops
 * before mark have run (UINT64_MAX: all). */
cg_status_t cg_host_stream_poll(cg_dev_t *dev, cg_dev_stream_t *stream, uint64_t mark, int *done)
{
    cg_status_t status;

    *done = 1;
    if (stream == NULL) {
        return CG_OK;
    }
    if (!stream->pending) { /* never both: an LL call waits for the queue to empty first */
        status = cg_host_queue_poll(dev, &stream->queue, mark, done);
        if (status != CG_OK && stream->failed == CG_OK) {
            stream->failed = status;
        }
        return CG_OK;
    }
    if (cg_host_impl(dev)->op_delay_s > 0 &&
        cg_time_now() - stream->ll_started < cg_host_impl(dev)->op_delay_s) {
        *done = 0; /* the kernel is slow: its lines, sent at once, wait in the inbox */
        return CG_OK;
    }
    status = cg_host_ll_poll(dev, &stream->ll, &stream->ll_wait, done);
    if (*done) {
        cg_host_pending_set(dev, stream, 0);
        stream->ll_given_up = *done == 2;
        *done               = 1;
        if (status != CG_OK && stream->failed == CG_OK) {
            stream->failed = status;
        }
    }
    return CG_OK;
}

cg_status_t cg_host_ll_launch(cg_dev_t *dev, cg_dev_stream_t *stream, const cg_ll_args_t *args)
{
    cg_status_t status;

    stream->ll_served = 0;
    status = cg_host_ll_push(dev, args);
    if (status == CG_OK) {
        status = cg_host_ll_wait_start(args, &stream->ll_wait);
    }
    if (status != CG_OK) {
        return status;
    }
    stream->ll          = *args;
    stream->ll_started  = cg_time_now();
    cg_host_pending_set(dev, stream, 1);
    stream->ll_given_up = 0;
    if (args->coll == CG_LL_REDUCE_SCATTER) { /* the caller's arrays may go before the wait */
        if (args->counts != stream->counts) { /* a server's call: copied there already */
            memcpy(stream->counts, args->counts, (size_t)args->size * sizeof(size_t));
            memcpy(stream->displs, args->displs, (size_t)args->size * sizeof(size_t));
        }
        stream->ll.counts = stream->counts;
        stream->ll.displs = stream->displs;
    }
    return CG_OK;
}

/* Finish the stream's pending work (bounded: a peer that never sends must not hang, and a
 * queued flag wait gives up on its own); on the application's stream, its queued work first
 * (strict: nothing else runs it). */
cg_status_t cg_host_stream_drain(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    double    t0   = 0;
    cg_pace_t pace = {.quiet = 1}; /* cudaStreamSynchronize's stand-in */
    int       done = 0;

    if (stream != NULL && stream->on_app) {
        cg_status_t status = cg_host_app_sync(dev);
        if (status != CG_OK) {
            return status;
        }
    }
    while (cg_host_stream_poll(dev, stream, UINT64_MAX, &done) == CG_OK && !done) {
        if (cg_pace(&pace)) {
            t0 = t0 ? t0 : cg_time_now();
            if (cg_time_now() - t0 > CG_HOST_FLAG_TIMEOUT) {
                if (!stream->pending) {
                    continue; /* queued work: its flag waits give up on their own */
                }
                cg_error(CG_SUB_DEV, "an LL collective waited %d s for a peer: giving up",
                         CG_HOST_FLAG_TIMEOUT);
                cg_host_pending_set(dev, stream, 0);
                return CG_ERR_TIMEOUT;
            }
        }
    }
    return CG_OK;
}

/* ---- new work on a stream ------------------------------------------------------------------ */
/* Before new work on the stream: the pending LL wait ends (stream order), and on the
 * application's stream its queued work runs (strict: nothing else runs it). */
static cg_status_t cg_host_stream_ready(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    cg_status_t status = CG_OK;

    if (stream != NULL && stream->on_app) {
        status = cg_host_app_sync(dev);
    }
    if (status == CG_OK && stream != NULL && stream->pending) {
        status = cg_host_stream_drain(dev, stream);
    }
    return status;
}

/* A blocking flag wait (coll_gpu_debug_host_blocking_waits 1): on the calling thread, with
 * the stream's watch between polls (what the host does meanwhile on a GPU). Gives up as a
 * queued one does. */
static cg_status_t cg_host_flag_wait_here(cg_dev_t *dev, cg_host_op_t *op, cg_dev_stream_t *stream)
{
    unsigned   *owner = cg_host_peer_wait_start(cg_host_impl(dev));
    cg_pace_t   pace  = {0};
    int         unmet = 1;
    cg_status_t status = CG_OK;

    while (status == CG_OK && unmet) {
        status = cg_host_op_run(dev, op, &unmet);
        if (status == CG_OK && unmet && cg_pace(&pace) && stream->watch != NULL) {
            stream->watch(stream->watch_arg, op->dst);
        }
    }
    cg_host_peer_wait_stop(cg_host_impl(dev), owner);
    return status;
}

/* New work on stream (counted as a device operation): run now or queued. */
static cg_status_t cg_host_submit(cg_dev_t *dev, cg_dev_stream_t *stream, cg_host_op_t *op)
{
    cg_status_t status = cg_host_stream_ready(dev, stream);

    if (status != CG_OK) {
        return status;
    }
    if (cg_host_op_is_work(op) && cg_dev_fail_injected(dev)) {
        return CG_ERR_DEVICE;
    }
    cg_count(CG_CNT_DEV_OPS, 1);
    if (stream != NULL && !cg_host_impl(dev)->blocking_waits) {
        return cg_host_queue_submit(dev, &stream->queue, op);
    }
    if (op->kind == CG_HOST_OP_FLAG_WAIT) { /* a wait needs a stream to wait on */
        return stream != NULL ? cg_host_flag_wait_here(dev, op, stream) : CG_ERR_INVALID_PARAM;
    }
    int unmet;
    return cg_host_op_run(dev, op, &unmet);
}

/* ---- copies and reductions ----------------------------------------------------------------- */
cg_status_t cg_host_fill(cg_dev_t *dev, void *dst, int byte, size_t bytes, cg_dev_stream_t *stream)
{
    cg_host_op_t op = {.kind = CG_HOST_OP_FILL, .dst = dst, .byte = byte, .bytes = bytes};

    if (bytes == 0) {
        return cg_dev_fail_injected(dev) ? CG_ERR_DEVICE : CG_OK;
    }
    return cg_host_submit(dev, stream, &op);
}

cg_status_t cg_host_copy(cg_dev_t *dev, void *dst, const void *src, size_t bytes,
                         cg_dev_stream_t *stream)
{
    cg_host_op_t op = {.kind = CG_HOST_OP_COPY, .dst = dst, .src = src, .bytes = bytes};

    if (bytes == 0 || dst == src) {
        return cg_dev_fail_injected(dev) ? CG_ERR_DEVICE : CG_OK;
    }
    return cg_host_submit(dev, stream, &op);
}

cg_status_t cg_host_copy_2d(cg_dev_t *dev, void *dst, size_t dpitch, const void *src,
                            size_t spitch, size_t width, size_t rows, cg_dev_stream_t *stream)
{
    cg_host_op_t op = {.kind = CG_HOST_OP_COPY_2D, .dst = dst, .src = src, .bytes = width,
                       .dpitch = dpitch, .spitch = spitch, .rows = rows};

    if (width == 0 || rows == 0) {
        return cg_dev_fail_injected(dev) ? CG_ERR_DEVICE : CG_OK;
    }
    if (dpitch < width || spitch < width) {
        return cg_dev_fail_injected(dev) ? CG_ERR_DEVICE : CG_ERR_INVALID_PARAM; /* as CUDA */
    }
    return cg_host_submit(dev, stream, &op);
}

cg_status_t cg_host_reduce(cg_dev_t *dev, const cg_reduce_args_t *args, cg_dev_stream_t *stream)
{
    cg_host_op_t op = {.kind = CG_HOST_OP_REDUCE, .reduce = *args};

    if (!cg_reduce_supported(args->dtype, args->op) || args->nsrc < 1 ||
        args->nsrc > CG_DEV_MAX_FANIN || args->ndst > CG_DEV_MAX_FANIN) {
        return cg_dev_fail_injected(dev) ? CG_ERR_DEVICE : CG_ERR_UNSUPPORTED;
    }
    if (args->count == 0 || args->ndst == 0) {
        return cg_dev_fail_injected(dev) ? CG_ERR_DEVICE : CG_OK;
    }
    return cg_host_submit(dev, stream, &op);
}

/* ---- flags ---------------------------------------------------------------------------------- */
/* A stream memory operation on a GPU; stream NULL: a release from the host, now. */
cg_status_t cg_host_flag_write(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                               cg_dev_stream_t *stream)
{
    cg_host_op_t op = {.kind = CG_HOST_OP_FLAG_WRITE, .dst = flag, .value = value};

    return stream != NULL ? cg_host_submit(dev, stream, &op)
                          : cg_host_flag_release(dev, flag, value);
}

cg_status_t cg_host_flag_wait(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                              cg_dev_stream_t *stream)
{
    cg_host_op_t op = {.kind = CG_HOST_OP_FLAG_WAIT, .dst = flag, .value = value};

    return cg_host_submit(dev, stream, &op);
}

/* A copy from the host in the CUDA layer (its side stream): it reaches what a copy does. */
cg_status_t cg_host_flag_release(cg_dev_t *dev, uint64_t *flag, uint64_t value)
{
    uint64_t   *view;
    cg_status_t status = cg_host_resolve(dev, flag, sizeof(*flag), (void **)&view);

    if (status == CG_OK) {
        __atomic_store_n(view, value, __ATOMIC_RELEASE);
    }
    return status;
}

void cg_host_flag_watch(cg_dev_t *dev, cg_dev_stream_t *stream,
                        void (*watch)(void *arg, const uint64_t *flag), void *arg)
{
    (void)dev;
    stream->watch     = watch;
    stream->watch_arg = arg;
}
