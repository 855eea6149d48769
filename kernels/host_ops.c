/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The host device layer's stream work as the ops table takes it (dev_host.c): copies,
 * fills, reductions and flag operations, each counted as a device operation and run at once
 * or queued on its stream (host_queue.c), or with blocking waits on the calling thread.
 */
#include "kernels/dev_host_int.h"

/* Before new work on the stream: the pending LL wait ends (stream order), and on the
 * application's stream its queued work runs (strict: nothing else runs it). */
static cg_status_t cg_host_stream_ready(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    cg_status_t status = CG_OK;

    if (stream != NULL && stream->on_app) {
        status = cg_host_app_wait(dev, stream);
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
    if (op->kind != CG_HOST_OP_FLAG_WRITE && op->kind != CG_HOST_OP_FLAG_WAIT &&
        cg_dev_fail_injected(dev)) {
        return CG_ERR_DEVICE;
    }
    cg_count(CG_CNT_DEV_OPS, 1);
    if (stream == NULL) {
        int unmet;
        if (op->kind == CG_HOST_OP_FLAG_WAIT) {
            return CG_ERR_INVALID_PARAM; /* a wait needs a stream to wait on */
        }
        return cg_host_op_run(dev, op, &unmet);
    }
    if (cg_host_impl(dev)->blocking_waits) {
        if (op->kind == CG_HOST_OP_FLAG_WAIT) {
            return cg_host_flag_wait_here(dev, op, stream);
        }
        int unmet;
        return cg_host_op_run(dev, op, &unmet);
    }
    return cg_host_queue_submit(dev, &stream->queue, op);
}

/* ---- copies and reductions ----------------------------------------------------------------- */
cg_status_t cg_host_fill(cg_dev_t *dev, void *dst, int byte, size_t bytes,
                                cg_dev_stream_t *stream)
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

cg_status_t cg_host_reduce(cg_dev_t *dev, const cg_reduce_args_t *args,
                                  cg_dev_stream_t *stream)
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
    int          unmet;

    return stream != NULL ? cg_host_submit(dev, stream, &op) : cg_host_op_run(dev, &op, &unmet);
}

cg_status_t cg_host_flag_wait(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                                     cg_dev_stream_t *stream)
{
    cg_host_op_t op = {.kind = CG_HOST_OP_FLAG_WAIT, .dst = flag, .value = value};

    return cg_host_submit(dev, stream, &op);
}

cg_status_t cg_host_flag_release(cg_dev_t *dev, uint64_t *flag, uint64_t value)
{
    return cg_host_flag_write(dev, flag, value, NULL);
}

void cg_host_flag_watch(cg_dev_t *dev, cg_dev_stream_t *stream,
                               void (*watch)(void *arg, const uint64_t *flag), void *arg)
{
    (void)dev;
    stream->watch     = watch;
    stream->watch_arg = arg;
}
