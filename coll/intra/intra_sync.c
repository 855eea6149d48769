/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Barriers of a local group, the zero-copy exchange of buffers, and copies on its stream. */
#include "coll/intra/intra.h"

#include <sched.h>
#include <string.h>

static uint64_t *cg_intra_flags(const cg_intra_t *g, int r)
{
    return (uint64_t *)g->scratch[r];
}

/* This rank's stream may wait for flags that a failed peer will never write: set them from
 * the host so that the stream drains (the group is retired; what runs after is moot). */
void cg_intra_release_waits(cg_intra_t *g)
{
    for (int p = 0; p < g->size; p++) {
        if (p != g->rank) {
            (void)g->dev->ops->flag_release(g->dev, &cg_intra_flags(g, g->rank)[p],
                                            g->dev_epoch + (1ull << 32));
        }
    }
}

/* Record this rank's failure where the peers look for it. */
static void cg_intra_report(cg_intra_t *g, uint64_t epoch)
{
    if (g->ctl[g->rank]->failed_epoch == 0) {
        __atomic_store_n(&g->ctl[g->rank]->failed_epoch, epoch ? epoch : 1, __ATOMIC_RELEASE);
    }
    g->failed = 1;
    if (g->sync == CG_SYNC_DEVICE) {
        cg_intra_release_waits(g);
    }
}

static int cg_intra_peer_failed(const cg_intra_t *g)
{
    for (int p = 0; p < g->size; p++) {
        if (p != g->rank && __atomic_load_n(&g->ctl[p]->failed_epoch, __ATOMIC_ACQUIRE) != 0) {
            return 1;
        }
    }
    return 0;
}

/* Between polls: is any peer dead, or are we past the timeout? */
static cg_status_t cg_intra_watch(cg_intra_t *g, double *t0)
{
    double now = cg_time_now();

    if (*t0 == 0) {
        *t0 = now;
    }
    for (int p = 0; p < g->size; p++) {
        if (p != g->rank && g->pids[p] != 0 && !cg_process_alive(g->pids[p])) {
            cg_error(CG_SUB_IPC, "local rank %d (pid %d) died during a collective", p, g->pids[p]);
            return CG_ERR_PEER;
        }
    }
    if (g->timeout_s > 0 && now - *t0 > g->timeout_s) {
        cg_error(CG_SUB_IPC, "a collective waited more than %.0f s for its local peers "
                 "(coll_gpu_timeout)", g->timeout_s);
        return CG_ERR_TIMEOUT;
    }
    return CG_OK;
}

cg_status_t cg_intra_host_barrier(cg_intra_t *g, cg_status_t mine)
{
    const uint64_t epoch = ++g->host_epoch;
    cg_status_t    status;
    double         t0 = 0;

    if (mine != CG_OK) {
        cg_intra_report(g, epoch);
    }
    __atomic_store_n(&g->ctl[g->rank]->epoch, epoch, __ATOMIC_RELEASE);
    for (int p = 0; p < g->size; p++) {
        unsigned spins = 0;
        while (p != g->rank && __atomic_load_n(&g->ctl[p]->epoch, __ATOMIC_ACQUIRE) < epoch) {
            if (++spins < 256) {
                continue;
            }
            sched_yield();
            if ((spins & 1023) == 0 && (status = cg_intra_watch(g, &t0)) != CG_OK) {
                cg_intra_report(g, epoch);
                return status;
            }
            /* a peer that failed may have left the call: never wait for it */
            if ((spins & 255) == 0 && cg_intra_peer_failed(g)) {
                g->failed = 1;
                return mine != CG_OK ? mine : CG_ERR_PEER;
            }
        }
    }
    if (mine != CG_OK) {
        return mine;
    }
    if (cg_intra_peer_failed(g)) {
        g->failed = 1;
        return CG_ERR_PEER;
    }
    return CG_OK;
}

cg_status_t cg_intra_barrier(cg_intra_t *g, cg_status_t mine)
{
    cg_dev_t   *dev = g->dev;
    uint64_t    epoch;
    cg_status_t status = CG_OK;

    if (g->sync == CG_SYNC_HOST) {
        if (mine == CG_OK && dev->caps.async) {
            mine = dev->ops->stream_sync(dev, g->stream);
        }
        return cg_intra_host_barrier(g, mine);
    }
    /* device: the peers notice a failure when they wait for their streams (finish) */
    if (mine != CG_OK) {
        cg_intra_report(g, g->host_epoch + 1);
        return mine;
    }
    epoch = ++g->dev_epoch;
    for (int p = 0; p < g->size && status == CG_OK; p++) {
        if (p != g->rank) {
            status = dev->ops->flag_write(dev, &cg_intra_flags(g, p)[g->rank], epoch, g->stream);
        }
    }
    for (int p = 0; p < g->size && status == CG_OK; p++) {
        if (p != g->rank) {
            status = dev->ops->flag_wait(dev, &cg_intra_flags(g, g->rank)[p], epoch, g->stream);
        }
    }
    if (status != CG_OK) {
        cg_intra_report(g, g->host_epoch + 1);
    }
    return status;
}

cg_status_t cg_intra_finish(cg_intra_t *g, cg_status_t mine)
{
    cg_dev_t   *dev = g->dev;
    cg_status_t status;
    unsigned    polls = 0;
    double      t0    = 0;
    int         done  = 0;

    if (mine != CG_OK) {
        cg_intra_report(g, g->host_epoch + 1);
        return mine;
    }
    if (g->sync == CG_SYNC_HOST || !dev->caps.async) {
        status = dev->ops->stream_sync(dev, g->stream);
        if (status != CG_OK) {
            cg_intra_report(g, g->host_epoch + 1);
        }
        return status;
    }
    /* The stream may wait for peers' flags: poll it, and give up when a peer failed
     * (its flags will never come; the stream stays blocked and the group is retired). */
    status = dev->ops->event_record(dev, g->event, g->stream);
    while (status == CG_OK && !done) {
        status = dev->ops->event_query(dev, g->event, &done);
        if (done || status != CG_OK || ++polls % 256 != 0) {
            continue;
        }
        sched_yield();
        if (cg_intra_peer_failed(g)) {
            g->failed = 1;
            cg_intra_release_waits(g);
            return CG_ERR_PEER;
        }
        status = cg_intra_watch(g, &t0);
    }
    if (status != CG_OK) {
        cg_intra_report(g, g->host_epoch + 1);
    }
    return status;
}

static cg_status_t cg_intra_export(cg_intra_t *g, const void *buf, size_t bytes,
                                   cg_ipc_handle_t *handle, int *ok)
{
    cg_status_t status;

    memset(handle, 0, sizeof(*handle));
    if (buf == NULL || bytes == 0) {
        return CG_OK;
    }
    status = g->dev->ops->ipc_export(g->dev, buf, bytes, handle);
    if (status == CG_ERR_UNSUPPORTED) {
        *ok = 0; /* not shareable memory: everyone runs the copy variant */
        memset(handle, 0, sizeof(*handle));
        return CG_OK;
    }
    return status;
}

cg_status_t cg_intra_publish(cg_intra_t *g, cg_status_t status, const void *in, size_t in_bytes,
                             void *out, size_t out_bytes, char *peer_in[], char *peer_out[],
                             int *all_ok)
{
    cg_intra_ctl_t *mine = g->ctl[g->rank];
    int             ok = 1;

    *all_ok = 0;
    if (status == CG_OK) {
        status = cg_intra_export(g, in, in_bytes, &mine->in, &ok);
    }
    if (status == CG_OK) {
        status = cg_intra_export(g, out, out_bytes, &mine->out, &ok);
    }
    mine->meta_ok = (uint32_t)ok;
    status        = cg_intra_host_barrier(g, status);
    if (status != CG_OK) {
        return status;
    }
    for (int p = 0; p < g->size; p++) {
        ok &= (int)g->ctl[p]->meta_ok;
    }
    if (!ok) {
        return CG_OK;
    }
    for (int p = 0; p < g->size && status == CG_OK; p++) {
        peer_in[p]  = NULL;
        peer_out[p] = NULL;
        if (p == g->rank) {
            peer_in[p]  = (char *)in;
            peer_out[p] = out;
            continue;
        }
        if (g->ctl[p]->in.buffer_id != 0) {
            status = cg_ipc_cache_get(g->cache, p, &g->ctl[p]->in, &peer_in[p]);
        }
        if (status == CG_OK && g->ctl[p]->out.buffer_id != 0) {
            status = cg_ipc_cache_get(g->cache, p, &g->ctl[p]->out, &peer_out[p]);
        }
    }
    /* Every rank must know that every rank mapped its peers before anyone writes. */
    status = cg_intra_host_barrier(g, status);
    *all_ok = (status == CG_OK);
    return status;
}

cg_status_t cg_intra_copy_multi(cg_intra_t *g, char *const dsts[], int n, const void *src,
                                size_t bytes)
{
    cg_reduce_args_t args = {.dtype = CG_DT_UINT8, .op = CG_OP_BOR, .count = bytes, .nsrc = 1,
                             .ndst = n};
    cg_status_t      status = CG_OK;

    if (g->copy == CG_COPY_ENGINE || n == 1) {
        for (int i = 0; i < n && status == CG_OK; i++) {
            status = g->dev->ops->copy(g->dev, dsts[i], src, bytes, g->stream);
        }
        return status;
    }
    /* nsrc == 1: the reduction kernel is a broadcast copy (no op is applied). */
    args.srcs[0] = src;
    for (int i = 0; i < n; i++) {
        args.dsts[i] = dsts[i];
    }
    return n > 0 ? g->dev->ops->reduce(g->dev, &args, g->stream) : CG_OK;
}

cg_status_t cg_intra_copy_typed(cg_intra_t *g, void *dst, const void *src, size_t count,
                                cg_dtype_t dtype)
{
    return cg_dev_copy_typed(g->dev, dst, src, count, dtype, g->stream);
}
