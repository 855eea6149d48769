/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Tagged exchanges between nodes over UCX, directly or through pipelined host chunks. */
#include "coll/inter/inter.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define CG_INTER_MAX_DEPTH 32

/* Tags: communicator (16 bits), call sequence (16), step (12), source rank (20). Step 0xfff
 * is reserved for aborts: a rank whose collective failed tells the ranks that may wait for
 * it, whatever the call and the step they are at. */
#define CG_INTER_ABORT_STEP 0xfffu

static uint64_t cg_inter_tag(const cg_inter_t *x, unsigned step, int src)
{
    return ((uint64_t)x->comm_id << 48) | ((uint64_t)x->seq << 32) |
           ((uint64_t)(step % CG_INTER_ABORT_STEP) << 20) | (uint64_t)(src & 0xfffff);
}

static uint64_t cg_inter_abort_tag(const cg_inter_t *x)
{
    return ((uint64_t)x->comm_id << 48) | ((uint64_t)CG_INTER_ABORT_STEP << 20);
}

#define CG_INTER_ABORT_MASK ((0xffffull << 48) | (0xfffull << 20))

cg_status_t cg_inter_create(cg_ucx_t *ucx, cg_dev_t *dev, int rank, int size, uint16_t comm_id,
                            const char *addrs, size_t addr_stride, const cg_inter_config_t *config,
                            cg_inter_t **inter_out)
{
    cg_inter_t *x = calloc(1, sizeof(*x));
    cg_status_t status;

    if (x == NULL) {
        free((void *)addrs);
        return CG_ERR_NO_MEMORY;
    }
    x->ucx          = ucx;
    x->dev          = dev;
    x->rank         = rank;
    x->size         = size;
    x->comm_id      = comm_id;
    x->config       = *config;
    x->config.depth = CG_MAX(1, CG_MIN(config->depth, CG_INTER_MAX_DEPTH));
    x->config.chunk_bytes = CG_MAX(config->chunk_bytes, (size_t)4096);
    x->addr_stride  = addr_stride;
    x->eps          = calloc((size_t)size, sizeof(*x->eps));
    x->addrs        = (char *)addrs;
    if (x->eps == NULL) {
        status = CG_ERR_NO_MEMORY;
        goto err;
    }
    /* Device memory to UCX when it can take it; otherwise stage through host chunks. The
     * host layer's "device" memory is host memory: UCX takes it as it is. */
    x->ucx_device = (dev->kind == CG_DEV_KIND_CUDA) && cg_ucx_supports_cuda(ucx);
    x->staged     = config->staging == 1 ||
                    (config->staging == 0 && dev->kind == CG_DEV_KIND_CUDA && !x->ucx_device);
    status = dev->ops->stream_create(dev, &x->stream);
    if (status != CG_OK) {
        x->stream = NULL;
        goto err;
    }
    if (x->staged) {
        status = dev->ops->host_alloc(dev, 2 * (size_t)x->config.depth * x->config.chunk_bytes,
                                      (void **)&x->pinned);
        for (int i = 0; status == CG_OK && i < 2 * x->config.depth; i++) {
            status = dev->ops->event_create(dev, &x->events[i]);
        }
        if (status != CG_OK) {
            goto err;
        }
    }
    cg_detail(CG_SUB_UCX, "inter-node transport: %s, %s", cg_ucx_describe(ucx),
              x->staged ? "staged through page-locked chunks" : "direct");
    *inter_out = x;
    return CG_OK;

err:
    cg_inter_destroy(x);
    return status;
}

void cg_inter_destroy(cg_inter_t *x)
{
    cg_dev_t *dev;

    if (x == NULL) {
        return;
    }
    dev = x->dev;
    /* messages of this communicator still waiting (aborts; data a failed call left
     * unreceived) must not reach another communicator that gets its id */
    for (int i = 0; x->ucx != NULL && i < 1 << 16 &&
                    cg_ucx_probe(x->ucx, cg_inter_abort_tag(x), 0xffffull << 48, 1); i++) {
    }
    for (int r = 0; x->eps != NULL && r < x->size; r++) {
        cg_ucx_ep_destroy(x->ucx, x->eps[r], x->failed);
    }
    for (int i = 0; i < CG_INTER_MAX_DEPTH * 2 && i < 64; i++) {
        if (x->events[i] != NULL) {
            dev->ops->event_destroy(dev, x->events[i]);
        }
    }
    if (x->pinned != NULL) {
        dev->ops->host_free(dev, x->pinned);
    }
    if (x->tmp != NULL) {
        dev->ops->mem_free(dev, x->tmp);
    }
    if (x->stream != NULL) {
        dev->ops->stream_destroy(dev, x->stream);
    }
    free(x->eps);
    free(x->addrs);
    free(x);
}

void cg_inter_begin(cg_inter_t *x)
{
    x->seq++;
}

cg_status_t cg_inter_tmp(cg_inter_t *x, size_t bytes, void **tmp)
{
    cg_status_t status;

    if (bytes > x->tmp_bytes) {
        if (x->tmp != NULL) {
            x->dev->ops->mem_free(x->dev, x->tmp);
            x->tmp       = NULL;
            x->tmp_bytes = 0;
        }
        status = x->dev->ops->mem_alloc(x->dev, bytes, &x->tmp);
        if (status != CG_OK) {
            x->tmp = NULL;
            return status;
        }
        x->tmp_bytes = bytes;
    }
    *tmp = x->tmp;
    return CG_OK;
}

static cg_status_t cg_inter_ep(cg_inter_t *x, int peer, cg_ucx_ep_t **ep)
{
    if (x->eps[peer] == NULL) {
        const char *addr = x->addrs + (size_t)peer * x->addr_stride;
        cg_status_t status = cg_ucx_ep_create(x->ucx, addr + sizeof(uint64_t), &x->eps[peer]);
        if (status != CG_OK) {
            x->eps[peer] = NULL;
            return status;
        }
    }
    *ep = x->eps[peer];
    return CG_OK;
}

/* Cancel what is still posted: the buffers may be released once the caller returns. */
static void cg_inter_cancel(cg_inter_t *x, void **reqs, int n)
{
    for (int i = 0; i < n; i++) {
        cg_ucx_cancel(x->ucx, reqs[i]);
        reqs[i] = NULL;
    }
}

/* Every so often while a wait makes no progress: the timeout, and aborts from ranks whose
 * collective failed (they will never send what is awaited). */
static cg_status_t cg_inter_idle(cg_inter_t *x, double *t0)
{
    double now = cg_time_now();

    *t0 = *t0 ? *t0 : now;
    if (cg_ucx_probe(x->ucx, cg_inter_abort_tag(x), CG_INTER_ABORT_MASK, 0)) {
        cg_error(CG_SUB_UCX, "a rank on another node failed this collective: giving up");
        return CG_ERR_PEER;
    }
    if (x->config.timeout_s > 0 && now - *t0 > x->config.timeout_s) {
        cg_error(CG_SUB_UCX, "an inter-node exchange waited more than %.0f s (coll_gpu_timeout)",
                 x->config.timeout_s);
        return CG_ERR_TIMEOUT;
    }
    sched_yield();
    return CG_OK;
}

void cg_inter_abort(cg_inter_t *x, const int *ranks, int n, double seconds)
{
    void      **reqs = calloc((size_t)CG_MAX(n, 1), sizeof(void *));
    double      t0   = cg_time_now();
    int         pending;
    cg_ucx_ep_t *ep;

    x->failed = 1; /* no more exchanges here; endpoints close without waiting for peers */
    if (reqs == NULL) {
        return;
    }
    for (int i = 0; i < n; i++) {
        if (cg_inter_ep(x, ranks[i], &ep) != CG_OK ||
            cg_ucx_isend(x->ucx, ep, NULL, 0, cg_inter_abort_tag(x) | (uint64_t)(x->rank & 0xfffff),
                         0, &reqs[i]) != CG_OK) {
            reqs[i] = NULL; /* that peer is gone or unreachable: it waits for nobody */
        }
    }
    do { /* bounded: a peer that cannot take it must not hold this rank */
        pending = 0;
        for (int i = 0; i < n; i++) {
            int done = 1;
            if (reqs[i] != NULL && (cg_ucx_test(x->ucx, reqs[i], &done) != CG_OK || done)) {
                reqs[i] = NULL, done = 1;
            }
            pending += !done;
        }
    } while (pending > 0 && cg_time_now() - t0 < seconds);
    for (int i = 0; i < n; i++) { /* zero bytes: nothing to outlive; may still arrive */
        cg_ucx_release(x->ucx, reqs[i]);
    }
    free(reqs);
}

/* Wait for n requests, progressing UCX; give up on a transport error, an abort or the
 * timeout (and cancel the rest). */
static cg_status_t cg_inter_wait(cg_inter_t *x, void **reqs, int n)
{
    unsigned    idle   = 0;
    double      t0     = 0;
    cg_status_t status = CG_OK;

    for (;;) {
        int pending = 0;
        for (int i = 0; i < n; i++) {
            int done = 1;
            if (reqs[i] != NULL) {
                cg_status_t s = cg_ucx_test(x->ucx, reqs[i], &done);
                status        = (status == CG_OK) ? s : status;
                if (done) {
                    reqs[i] = NULL;
                }
            }
            pending += !done;
        }
        if (!pending || status != CG_OK) {
            cg_inter_cancel(x, reqs, n);
            return status;
        }
        if (++idle % 1024 == 0 && (status = cg_inter_idle(x, &t0)) != CG_OK) {
            cg_inter_cancel(x, reqs, n);
            return status;
        }
    }
}

static cg_status_t cg_inter_direct(cg_inter_t *x, int dst, const void *sbuf, size_t sbytes,
                                   unsigned sstep, int src, void *rbuf, size_t rbytes,
                                   unsigned rstep)
{
    void       *reqs[2] = {NULL, NULL};
    cg_ucx_ep_t *ep;
    cg_status_t status = CG_OK;

    if (src >= 0 && rbytes > 0) {
        status = cg_ucx_irecv(x->ucx, rbuf, rbytes, cg_inter_tag(x, rstep, src), UINT64_MAX,
                              x->ucx_device, &reqs[0]);
    }
    if (status == CG_OK && dst >= 0 && sbytes > 0 && (status = cg_inter_ep(x, dst, &ep)) == CG_OK) {
        status = cg_ucx_isend(x->ucx, ep, sbuf, sbytes, cg_inter_tag(x, sstep, x->rank),
                              x->ucx_device, &reqs[1]);
    }
    if (status != CG_OK) {
        cg_inter_cancel(x, reqs, 2);
        return status;
    }
    return cg_inter_wait(x, reqs, 2);
}

/* One direction of the staged pipeline: chunk i of the message, its slot and its state. */
typedef struct {
    size_t bytes, chunks, next, done;
    size_t sent;                      /* chunks handed to UCX, in order */
    int    state[CG_INTER_MAX_DEPTH]; /* 0 free, 1 copying, 2 on the network */
    size_t chunk_of[CG_INTER_MAX_DEPTH];
    void  *req[CG_INTER_MAX_DEPTH];
} cg_inter_flow_t;

static size_t cg_inter_chunk_len(const cg_inter_t *x, const cg_inter_flow_t *f, size_t i)
{
    return CG_MIN(x->config.chunk_bytes, f->bytes - i * x->config.chunk_bytes);
}

/* Send side: device -> host chunk (copy, event) -> network; receive side: network -> host
 * chunk -> device (copy, event). Each step of the loop advances whatever is ready. */
static cg_status_t cg_inter_staged(cg_inter_t *x, int dst, const char *sbuf, size_t sbytes,
                                   unsigned sstep, int src, char *rbuf, size_t rbytes,
                                   unsigned rstep)
{
    const size_t    C = x->config.chunk_bytes;
    const int       D = x->config.depth;
    cg_dev_t       *dev = x->dev;
    cg_inter_flow_t s = {0}, r = {0};
    cg_ucx_ep_t    *ep = NULL;
    cg_status_t     status = CG_OK;
    unsigned        idle = 0;
    double          t0 = 0;

    s.bytes  = (dst >= 0) ? sbytes : 0;
    r.bytes  = (src >= 0) ? rbytes : 0;
    s.chunks = (s.bytes + C - 1) / C;
    r.chunks = (r.bytes + C - 1) / C;
    if (s.chunks > 0) {
        status = cg_inter_ep(x, dst, &ep);
    }
    while (status == CG_OK && (s.done < s.chunks || r.done < r.chunks)) {
        int progressed = 0;
        for (int k = 0; k < D && status == CG_OK; k++) {
            char *hs = x->pinned + (size_t)k * C, *hr = x->pinned + (size_t)(D + k) * C;
            int   ready = 0, done = 0;
            /* send slot k */
            if (s.state[k] == 0 && s.next < s.chunks) {
                s.chunk_of[k] = s.next++;
                status = dev->ops->copy(dev, hs, sbuf + s.chunk_of[k] * C,
                                        cg_inter_chunk_len(x, &s, s.chunk_of[k]), x->stream);
                if (status == CG_OK) {
                    status = dev->ops->event_record(dev, x->events[k], x->stream);
                }
                s.state[k] = 1, progressed = 1;
            } else if (s.state[k] == 1 && s.chunk_of[k] == s.sent &&
                       (status = dev->ops->event_query(dev, x->events[k], &ready)) == CG_OK && ready) {
                /* every chunk has the same tag and the receiver posts its receives in
                 * chunk order: send in chunk order too, whatever slot holds the chunk */
                status = cg_ucx_isend(x->ucx, ep, hs, cg_inter_chunk_len(x, &s, s.chunk_of[k]),
                                      cg_inter_tag(x, sstep, x->rank), 0, &s.req[k]);
                s.state[k] = 2, s.sent++, progressed = 1;
            } else if (s.state[k] == 2) {
                status = cg_ucx_test(x->ucx, s.req[k], &done);
                s.req[k] = done ? NULL : s.req[k]; /* a finished request is released */
                if (status == CG_OK && done) {
                    s.state[k] = 0, s.done++, progressed = 1;
                }
            }
            if (status != CG_OK) {
                break;
            }
            /* receive slot k: posted in chunk order, so chunk i lands in its slot */
            if (r.state[k] == 0 && r.next < r.chunks) {
                r.chunk_of[k] = r.next++;
                status = cg_ucx_irecv(x->ucx, hr, cg_inter_chunk_len(x, &r, r.chunk_of[k]),
                                      cg_inter_tag(x, rstep, src), UINT64_MAX, 0, &r.req[k]);
                r.state[k] = 2, progressed = 1;
            } else if (r.state[k] == 2) {
                status = cg_ucx_test(x->ucx, r.req[k], &done);
                r.req[k] = done ? NULL : r.req[k];
                if (status == CG_OK && done) {
                    status = dev->ops->copy(dev, rbuf + r.chunk_of[k] * C, hr,
                                            cg_inter_chunk_len(x, &r, r.chunk_of[k]), x->stream);
                    if (status == CG_OK) {
                        status = dev->ops->event_record(dev, x->events[D + k], x->stream);
                    }
                    r.state[k] = 1, progressed = 1;
                }
            } else if (r.state[k] == 1 &&
                       (status = dev->ops->event_query(dev, x->events[D + k], &ready)) == CG_OK && ready) {
                r.state[k] = 0, r.done++, progressed = 1;
            }
        }
        cg_ucx_progress(x->ucx);
        if (!progressed && ++idle % 1024 == 0) {
            status = cg_inter_idle(x, &t0);
        }
    }
    if (status != CG_OK) { /* nothing may land in the chunks after this */
        cg_inter_cancel(x, s.req, D);
        cg_inter_cancel(x, r.req, D);
    }
    return status;
}

cg_status_t cg_inter_sendrecv(cg_inter_t *x, int dst, const void *sbuf, size_t sbytes, int src,
                              void *rbuf, size_t rbytes, unsigned step)
{
    return cg_inter_exchange(x, dst, sbuf, sbytes, step, src, rbuf, rbytes, step);
}

cg_status_t cg_inter_exchange(cg_inter_t *x, int dst, const void *sbuf, size_t sbytes,
                              unsigned sstep, int src, void *rbuf, size_t rbytes, unsigned rstep)
{
    cg_status_t status;

    if (x->failed) {
        return CG_ERR_PEER;
    }
    status = x->staged ? cg_inter_staged(x, dst, sbuf, sbytes, sstep, src, rbuf, rbytes, rstep)
                       : cg_inter_direct(x, dst, sbuf, sbytes, sstep, src, rbuf, rbytes, rstep);
    if (status == CG_OK && x->staged && src >= 0 && rbytes > 0) {
        status = x->dev->ops->stream_sync(x->dev, x->stream); /* data in rbuf for the caller */
    }
    if (status != CG_OK) {
        x->failed = 1;
    }
    return status;
}
