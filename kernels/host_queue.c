/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The host device layer's stream work (dev_host.c): copies, fills, reductions and flag
 * operations, run on the CPU through the device's view of memory.
 *
 * Queued streams (the default): a flag wait whose flag is not there yet does not block the
 * thread that queued it. It stays on the stream's queue, with everything queued after it,
 * and runs in stream order once its flag comes, as a GPU's stream memory operation does
 * while the host goes on. Whoever looks at the stream (an event query, a synchronisation)
 * runs what can run, and so does the layer's progress thread, which stands for the GPU
 * running streams on its own: a host that never looks at its stream while a peer waits for
 * a flag queued there does not hang the peer here either. A wait for a flag that never
 * comes (a failed peer) gives up after CG_HOST_FLAG_TIMEOUT seconds, as only this layer
 * does: code that must not wait for a failed peer releases such waits (flag_release) or
 * stops looking, as it must on a GPU.
 *
 * Blocking waits (coll_gpu_debug_host_blocking_waits 1): a flag wait blocks the calling
 * thread (dev_host.c), which calls the stream's watch between polls.
 */
#include "kernels/dev_host_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Microseconds the progress thread sleeps between looks at the queues that hold work: the
 * least after a look that ran something, doubled after each that ran nothing, up to the
 * most (a peer that is late costs the machine little). */
#define CG_HOST_PROGRESS_US     50
#define CG_HOST_PROGRESS_MAX_US 1000

/* Strict: what the application queued on the simulated GPU's default stream runs now
 * (nothing else runs it: a path that skips this wait reads the bytes from before, as on a
 * GPU). */
cg_status_t cg_host_app_sync(cg_dev_t *dev)
{
    const cg_sim_api_t *sim = cg_host_impl(dev)->sim;

    if (cg_dev_lost(dev)) { /* as every call of the CUDA layer after a reset */
        return CG_ERR_DEVICE;
    }
    if (sim != NULL && sim->stream_sync() != CG_SIM_OK) {
        cg_error(CG_SUB_DEV, "the application's work on the default stream failed");
        return CG_ERR_DEVICE;
    }
    return CG_OK;
}

static cg_status_t cg_host_run_copy(cg_dev_t *dev, const cg_host_op_t *op)
{
    void       *d;
    void       *s;
    cg_status_t status = cg_host_resolve(dev, op->dst, op->bytes, &d);

    if (status == CG_OK) {
        status = cg_host_resolve(dev, op->src, op->bytes, &s);
    }
    if (status == CG_OK && (char *)d < (char *)s + op->bytes && (char *)s < (char *)d + op->bytes) {
        /* cudaMemcpyAsync's result is undefined there: no caller may ask for it */
        cg_error(CG_SUB_DEV, "copy of %zu bytes between overlapping ranges %p and %p "
                 "(undefined on a GPU)", op->bytes, op->dst, op->src);
        status = CG_ERR_INTERNAL;
    }
    if (status == CG_OK) {
        memcpy(d, s, op->bytes);
    }
    return status;
}

/* Rows of a 2D copy: each side resolved over its whole extent, which must lie in one
 * allocation (cudaMemcpy2DAsync's rule), row by row. */
static cg_status_t cg_host_run_copy_2d(cg_dev_t *dev, const cg_host_op_t *op)
{
    const size_t dext = (op->rows - 1) * op->dpitch + op->bytes;
    const size_t sext = (op->rows - 1) * op->spitch + op->bytes;
    char        *d, *s;
    cg_status_t  status = cg_host_resolve(dev, op->dst, dext, (void **)&d);

    if (status == CG_OK) {
        status = cg_host_resolve(dev, op->src, sext, (void **)&s);
    }
    if (status == CG_OK && d < s + sext && s < d + dext) {
        cg_error(CG_SUB_DEV, "2D copy between overlapping ranges %p and %p (undefined on a "
                 "GPU)", op->dst, op->src);
        status = CG_ERR_INTERNAL;
    }
    for (size_t row = 0; status == CG_OK && row < op->rows; row++) {
        memcpy(d + row * op->dpitch, s + row * op->spitch, op->bytes);
    }
    return status;
}

static cg_status_t cg_host_run_reduce(cg_dev_t *dev, const cg_host_op_t *op)
{
    cg_reduce_args_t resolved = op->reduce;
    const size_t     bytes    = op->reduce.count * cg_dtype_size(op->reduce.dtype);
    cg_status_t      status   = CG_OK;

    for (int i = 0; i < op->reduce.nsrc && status == CG_OK; i++) {
        status = cg_host_resolve_kernel(dev, op->reduce.srcs[i], bytes, (void **)&resolved.srcs[i]);
    }
    for (int i = 0; i < op->reduce.ndst && status == CG_OK; i++) {
        status = cg_host_resolve_kernel(dev, op->reduce.dsts[i], bytes, &resolved.dsts[i]);
    }
    if (status == CG_OK) {
        cg_reduce_host(&resolved);
    }
    return status;
}

/* A flag wait: met, or not yet (*unmet), or given up after CG_HOST_FLAG_TIMEOUT seconds. */
static cg_status_t cg_host_run_flag_wait(cg_dev_t *dev, cg_host_op_t *op, int *unmet)
{
    void       *view;
    double      now;
    cg_status_t status = cg_host_resolve_kernel(dev, op->dst, sizeof(uint64_t), &view);

    if (status != CG_OK || __atomic_load_n((uint64_t *)view, __ATOMIC_ACQUIRE) >= op->value) {
        return status;
    }
    now   = cg_time_now();
    op->since = op->since > 0 ? op->since : now;
    if (now - op->since > CG_HOST_FLAG_TIMEOUT) {
        cg_error(CG_SUB_DEV, "a device-side barrier waited %d s for a peer: giving up",
                 CG_HOST_FLAG_TIMEOUT);
        return CG_ERR_TIMEOUT;
    }
    *unmet = 1;
    return CG_OK;
}

cg_status_t cg_host_op_run(cg_dev_t *dev, cg_host_op_t *op, int *unmet)
{
    void       *view;
    cg_status_t status = CG_OK;

    *unmet = 0;
    if (cg_dev_lost(dev)) { /* the reset ended the device's work: dropped */
        return CG_ERR_DEVICE;
    }
    switch (op->kind) {
    case CG_HOST_OP_COPY:
        return cg_host_run_copy(dev, op);
    case CG_HOST_OP_COPY_2D:
        return cg_host_run_copy_2d(dev, op);
    case CG_HOST_OP_FILL:
        status = cg_host_resolve_kernel(dev, op->dst, op->bytes, &view);
        if (status == CG_OK) {
            memset(view, op->byte, op->bytes);
        }
        return status;
    case CG_HOST_OP_REDUCE:
        return cg_host_run_reduce(dev, op);
    case CG_HOST_OP_FLAG_WRITE:
        status = cg_host_resolve_kernel(dev, op->dst, sizeof(uint64_t), &view);
        if (status == CG_OK) {
            __atomic_store_n((uint64_t *)view, op->value, __ATOMIC_RELEASE);
        }
        return status;
    case CG_HOST_OP_FLAG_WAIT:
        return cg_host_run_flag_wait(dev, op, unmet);
    case CG_HOST_OP_APP_WAIT:
        return cg_host_app_sync(dev);
    }
    return CG_ERR_INTERNAL;
}

/* ---- queues ------------------------------------------------------------------------------ */

void cg_host_queue_init(cg_host_queue_t *queue)
{
    memset(queue, 0, sizeof(*queue));
    pthread_mutex_init(&queue->lock, NULL);
    queue->tail = &queue->head;
}

/* The head op is done (run, or dropped after an error): unlink and free it (lock held). */
static void cg_host_queue_pop(cg_dev_host_t *host, cg_host_queue_t *queue)
{
    cg_host_op_t *op = queue->head;

    queue->head = op->next;
    if (queue->head == NULL) {
        queue->tail = &queue->head;
    }
    if (op->kind == CG_HOST_OP_FLAG_WAIT) {
        cg_host_peer_wait_stop(host, &host->queued_waits);
    }
    __atomic_sub_fetch(&host->queued_ops, 1, __ATOMIC_RELEASE);
    queue->ran++;
    free(op);
}

/* coll_gpu_debug_host_slow: work at the head of the queue runs once it has been there
 * op_delay_s, as a long kernel ends that long after it starts. */
static int cg_host_op_delayed(const cg_dev_host_t *host, cg_host_op_t *op)
{
    double now;

    if (host->op_delay_s <= 0 || !cg_host_op_is_work(op)) {
        return 0;
    }
    now       = cg_time_now();
    op->since = op->since > 0 ? op->since : now;
    return now - op->since < host->op_delay_s;
}

/* Run the queue's ops in order until one cannot run yet (lock held). After an error the
 * rest is dropped, as work behind a GPU fault never runs; every look at the stream past the
 * failed op reports the error, until a look at the whole stream (a synchronisation).
 * Returns how many ops ran (or were dropped). */
static unsigned cg_host_queue_run(cg_dev_t *dev, cg_host_queue_t *queue)
{
    cg_dev_host_t *host = cg_host_impl(dev);
    unsigned       ran  = 0;

    while (queue->head != NULL) {
        int         unmet  = queue->failed == CG_OK && cg_host_op_delayed(host, queue->head);
        cg_status_t status = queue->failed == CG_OK && !unmet
                               ? cg_host_op_run(dev, queue->head, &unmet) : CG_OK;
        if (unmet) {
            return ran;
        }
        if (status != CG_OK && queue->failed == CG_OK) {
            queue->failed    = status;
            queue->failed_at = queue->ran;
        }
        cg_host_queue_pop(host, queue);
        ran++;
    }
    return ran;
}

static void *cg_host_progress_main(void *arg);

/* Put the queue on the layer's list of queues with work (its lock held). */
static void cg_host_queue_mark_busy(cg_dev_host_t *host, cg_host_queue_t *queue)
{
    if (queue->busy) {
        return;
    }
    pthread_mutex_lock(&host->busy_lock);
    queue->busy_next = host->busy;
    host->busy       = queue;
    queue->busy      = 1;
    if (host->progress_started == 0) { /* tried once: 1 running, -1 could not start */
        host->progress_started = pthread_create(&host->progress, NULL, cg_host_progress_main,
                                                host->dev) == 0 ? 1 : -1;
        if (host->progress_started > 0) {
            cg_detail(CG_SUB_DEV, "stream work queued behind a flag wait: the host layer's "
                      "progress thread runs it");
        } else {
            cg_warn(CG_SUB_DEV, "cannot start the host layer's progress thread: queued "
                    "stream work runs only when its stream is polled");
        }
    }
    pthread_cond_signal(&host->busy_cond);
    pthread_mutex_unlock(&host->busy_lock);
}

cg_status_t cg_host_queue_submit(cg_dev_t *dev, cg_host_queue_t *queue, const cg_host_op_t *op)
{
    cg_dev_host_t *host   = cg_host_impl(dev);
    cg_host_op_t  *queued = NULL;
    cg_host_op_t   now    = *op;
    cg_status_t    status = CG_OK;
    int            unmet  = 1;

    pthread_mutex_lock(&queue->lock);
    cg_host_queue_run(dev, queue);
    if (queue->head == NULL && queue->failed == CG_OK &&
        !(host->op_delay_s > 0 && cg_host_op_is_work(op))) { /* nothing before it: runs now */
        status = cg_host_op_run(dev, &now, &unmet);
        if (!unmet) {
            queue->queued++;
            queue->ran++;
        }
    }
    if (unmet) {
        queued = malloc(sizeof(*queued));
        if (queued == NULL) { /* not queued: the caller has the error, the stream goes on */
            status = CG_ERR_NO_MEMORY;
        } else {
            *queued      = now;
            queued->next = NULL;
            *queue->tail = queued;
            queue->tail  = &queued->next;
            queue->queued++;
            __atomic_add_fetch(&host->queued_ops, 1, __ATOMIC_ACQ_REL);
            if (queued->kind == CG_HOST_OP_FLAG_WAIT) { /* what frees wait for, as on a GPU */
                (void)cg_host_peer_wait_start_for(host, &host->queued_waits);
            }
            cg_host_queue_mark_busy(host, queue);
        }
    }
    pthread_mutex_unlock(&queue->lock);
    return status;
}

cg_status_t cg_host_queue_poll(cg_dev_t *dev, cg_host_queue_t *queue, uint64_t mark, int *reached)
{
    cg_status_t status;

    pthread_mutex_lock(&queue->lock);
    cg_host_queue_run(dev, queue);
    *reached = queue->head == NULL || queue->ran >= mark;
    status   = queue->failed_at < mark ? queue->failed : CG_OK;
    if (queue->head == NULL && mark == UINT64_MAX) { /* the whole stream: reported */
        queue->failed = CG_OK;
    }
    pthread_mutex_unlock(&queue->lock);
    return status;
}

uint64_t cg_host_queue_mark(cg_host_queue_t *queue)
{
    uint64_t mark;

    pthread_mutex_lock(&queue->lock);
    mark = queue->queued;
    pthread_mutex_unlock(&queue->lock);
    return mark;
}

void cg_host_queue_fini(cg_dev_t *dev, cg_host_queue_t *queue)
{
    cg_dev_host_t *host = cg_host_impl(dev);

    pthread_mutex_lock(&host->busy_lock); /* the progress thread never sees it again */
    for (cg_host_queue_t **at = &host->busy; *at != NULL; at = &(*at)->busy_next) {
        if (*at == queue) {
            *at = queue->busy_next;
            break;
        }
    }
    pthread_mutex_unlock(&host->busy_lock);
    while (queue->head != NULL) { /* left waiting (the drain gave up): never runs */
        cg_host_queue_pop(host, queue);
    }
    pthread_mutex_destroy(&queue->lock);
}

/* ---- the progress thread: the GPU running streams while their hosts do other things ---- */

static void *cg_host_progress_main(void *arg)
{
    cg_dev_t       *dev    = arg;
    cg_dev_host_t  *host   = cg_host_impl(dev);
    long            nap_us = CG_HOST_PROGRESS_US;

    cg_pace_no_progress(); /* the stand-in of a GPU running streams: no MPI here */
    pthread_mutex_lock(&host->busy_lock);
    while (!host->progress_stop) {
        cg_host_queue_t **at  = &host->busy;
        unsigned          ran = 0;
        while (*at != NULL) {
            cg_host_queue_t *queue = *at;
            if (pthread_mutex_trylock(&queue->lock) != 0) { /* its host looks at it now */
                at = &queue->busy_next;
                continue;
            }
            ran += cg_host_queue_run(dev, queue);
            if (queue->head == NULL) {
                queue->busy = 0;
                *at         = queue->busy_next;
            } else {
                at = &queue->busy_next;
            }
            pthread_mutex_unlock(&queue->lock);
        }
        nap_us = ran > 0 ? CG_HOST_PROGRESS_US : CG_MIN(2 * nap_us, CG_HOST_PROGRESS_MAX_US);
        if (host->busy == NULL) {
            nap_us = CG_HOST_PROGRESS_US;
            pthread_cond_wait(&host->busy_cond, &host->busy_lock);
        } else {
            struct timespec nap = {0, nap_us * 1000};
            pthread_mutex_unlock(&host->busy_lock);
            nanosleep(&nap, NULL);
            pthread_mutex_lock(&host->busy_lock);
        }
    }
    pthread_mutex_unlock(&host->busy_lock);
    return NULL;
}

void cg_host_progress_stop(cg_dev_host_t *host)
{
    int running;

    pthread_mutex_lock(&host->busy_lock);
    host->progress_stop = 1;
    running             = host->progress_started > 0;
    pthread_cond_signal(&host->busy_cond);
    pthread_mutex_unlock(&host->busy_lock);
    if (running) {
        pthread_join(host->progress, NULL);
    }
}
