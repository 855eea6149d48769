/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Tagged exchanges between nodes over UCX, directly or through pipelined host chunks (a
 * transport's setup and end: inter_setup.c). */
#include "ucx_glue/cg_ucx.h"

#include <stdlib.h>
#include <string.h>

/* Tags: communicator (24 bits), call sequence (8), step (12), source rank (20). Step 0xfff
 * is reserved for aborts: a rank whose collective failed tells the ranks that may wait for
 * it, whatever the call and the step they are at; the abort carries the communicator's call
 * that failed (8 bytes: the count of hierarchical calls, the same on every rank and lane),
 * so that a rank still in an earlier call, whose part of it the failed rank completed, does
 * not give that call up. The sequence keeps a sender's messages
 * of one call apart from its next calls' of the same step; where it wraps (a sender 256
 * calls ahead, a bcast root) two calls' messages share a tag, and UCX matches one sender's
 * messages of one tag in the order they were sent: still each to its call. */
#define CG_INTER_ABORT_STEP 0xfffu
#define CG_INTER_ID_SHIFT   40
#define CG_INTER_ID_MASK    (0xffffffull << CG_INTER_ID_SHIFT)

uint32_t cg_inter_tag_id(uint32_t comm_id)
{
    uint32_t h = comm_id;

    if (comm_id < CG_INTER_AGREED_IDS) { /* agreed ids (Open MPI's context ids) as they are */
        return comm_id;
    }
    h ^= h >> 16; /* a 32-bit mix of the rest (Open MPI 5's ids hashed from PMIx) */
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return (1u << 23) | (h & ((1u << 23) - 1));
}

static uint64_t cg_inter_tag(const cg_inter_t *inter, unsigned step, int src)
{
    return ((uint64_t)inter->tag_id << CG_INTER_ID_SHIFT) | ((uint64_t)(inter->seq & 0xffu) << 32) |
           ((uint64_t)(step % CG_INTER_ABORT_STEP) << 20) | (uint64_t)(src & 0xfffff);
}

static uint64_t cg_inter_abort_tag(const cg_inter_t *inter)
{
    return ((uint64_t)inter->tag_id << CG_INTER_ID_SHIFT) | ((uint64_t)CG_INTER_ABORT_STEP << 20);
}

#define CG_INTER_ABORT_MASK (CG_INTER_ID_MASK | (0xfffull << 20))

/* Must this call give up for an abort: one of this call, or of an earlier one (a failure
 * this rank has not seen yet)? Every abort that came is received and its call recorded
 * (the earliest), so that one of a later call, which waits for that call, hides none. */
static int cg_inter_aborted(cg_inter_t *inter)
{
    uint64_t call;

    while (cg_ucx_probe(inter->ucx, cg_inter_abort_tag(inter), CG_INTER_ABORT_MASK, 1, &call)) {
        inter->failed_call = CG_MIN(inter->failed_call, call);
    }
    return inter->failed_call <= inter->call;
}

void cg_inter_set_call(cg_inter_t *inter, uint64_t call)
{
    inter->call = call;
}

void cg_inter_retag(cg_inter_t *inter, uint32_t comm_id)
{
    inter->tag_id      = cg_inter_tag_id(comm_id);
    inter->failed_call = UINT64_MAX;
}

int cg_inter_forget(cg_ucx_t *ucx, uint32_t comm_id)
{
    const uint64_t id      = (uint64_t)cg_inter_tag_id(comm_id) << CG_INTER_ID_SHIFT;
    int            removed = 0;

    while (ucx != NULL && removed < 1 << 16 && cg_ucx_probe(ucx, id, CG_INTER_ID_MASK, 1, NULL)) {
        removed++;
    }
    if (removed > 0) {
        cg_detail(CG_SUB_UCX, "%d messages left by a freed communicator of id %u removed",
                  removed, (unsigned)comm_id);
    }
    return removed;
}

void cg_inter_begin(cg_inter_t *inter)
{
    inter->seq++;
}

static cg_status_t cg_inter_ep(cg_inter_t *inter, int peer, cg_ucx_ep_t **ep)
{
    if (inter->eps[peer] == NULL) {
        const char *addr;
        uint64_t    len;
        cg_status_t status;
        if (inter->addrs == NULL) { /* the setup's exchange of addresses has not happened */
            return CG_ERR_TRANSPORT;
        }
        addr = inter->addrs + (size_t)peer * inter->addr_stride;
        memcpy(&len, addr, sizeof(len)); /* each entry: its length, then the address */
        status = cg_ucx_ep_create(inter->ucx, addr + sizeof(uint64_t), (size_t)len,
                                  inter->pids[peer] > 0, &inter->eps[peer]);
        if (status != CG_OK) {
            inter->eps[peer] = NULL;
            return status;
        }
    }
    *ep = inter->eps[peer];
    return CG_OK;
}

/* Cancel what is still posted: the buffers may be released once the caller returns. */
static void cg_inter_cancel(cg_inter_t *inter, void **reqs, int n)
{
    for (int i = 0; i < n; i++) {
        cg_ucx_cancel(inter->ucx, reqs[i]);
        reqs[i] = NULL;
    }
}

/* Did dst or src (comm ranks, -1: none) die? Known only for peers on this host (their pid);
 * said once, here. */
static int cg_inter_peer_died(const cg_inter_t *inter, int dst, int src)
{
    const int peers[2] = {dst, src};

    for (int i = 0; i < 2; i++) {
        const int pid = peers[i] >= 0 ? inter->pids[peers[i]] : 0;
        if (pid > 0 && !cg_process_alive(pid)) {
            cg_error(CG_SUB_UCX, "rank %d (pid %d) died", peers[i], pid);
            return 1;
        }
    }
    return 0;
}

/* Every 256 polls of a wait (cg_inter_check_due): the timeout, aborts from ranks whose
 * collective failed (they will never send what is awaited), and the peers dst and src when
 * they run on this host (their endpoints have no UCX failure handling: their pids tell). */
static cg_status_t cg_inter_idle(cg_inter_t *inter, double *t0, int dst, int src)
{
    double now = cg_time_now();

    *t0 = *t0 ? *t0 : now;
    if (cg_inter_peer_died(inter, dst, src)) {
        return CG_ERR_PEER_DEAD;
    }
    if (cg_inter_aborted(inter)) {
        cg_error(CG_SUB_UCX, "a rank on another node failed this collective: giving up");
        return CG_ERR_PEER;
    }
    if (inter->config.timeout_s > 0 && now - *t0 > inter->config.timeout_s) {
        cg_error(CG_SUB_UCX, "an inter-node exchange waited more than %.0f s (coll_gpu_timeout)",
                 inter->config.timeout_s);
        return CG_ERR_TIMEOUT;
    }
    return CG_OK;
}

/* Time for a wait's slow checks (cg_inter_idle)? Progress restarts the spin, not the count
 * of polls to the next check: the worker is the process's, and another communicator's
 * traffic must not hold off this wait's timeout and liveness checks. */
static int cg_inter_check_due(cg_pace_t *pace, unsigned *polls, int progressed)
{
    int due;

    if (progressed) {
        *pace = (cg_pace_t){0}; /* spin again */
    }
    due = cg_pace(pace);
    return ++*polls % CG_PACE_CHECK == 0 || due;
}

void cg_inter_abort(cg_inter_t *inter, const int *ranks, int n, double seconds)
{
    void      **reqs = calloc((size_t)CG_MAX(n, 1), sizeof(void *));
    uint64_t   *call = malloc(sizeof(*call)); /* the call that failed: what every abort carries */
    double      t0   = cg_time_now();
    cg_pace_t   pace = {0};
    int         pending, left = 0;
    cg_ucx_ep_t *ep;

    inter->failed = 1; /* no more exchanges here; endpoints close without waiting for peers */
    if (reqs == NULL || call == NULL) {
        free(reqs);
        free(call);
        return;
    }
    *call = inter->call;
    for (int i = 0; i < n; i++) {
        if (cg_inter_ep(inter, ranks[i], &ep) != CG_OK ||
            cg_ucx_isend(inter->ucx, ep, call, sizeof(*call),
                         cg_inter_abort_tag(inter) | (uint64_t)(inter->rank & 0xfffff), 0, &reqs[i]) != CG_OK) {
            reqs[i] = NULL; /* that peer is gone or unreachable: it waits for nobody */
        }
    }
    do { /* bounded: a peer that cannot take it must not hold this rank */
        pending = 0;
        cg_ucx_progress(inter->ucx);
        for (int i = 0; i < n; i++) {
            int done = 1;
            if (reqs[i] != NULL && (cg_ucx_test(inter->ucx, reqs[i], &done) != CG_OK || done)) {
                reqs[i] = NULL, done = 1;
            }
            pending += !done;
        }
        if (pending > 0) {
            (void)cg_pace(&pace); /* yields the core to the peers it waits for */
        }
    } while (pending > 0 && cg_time_now() - t0 < seconds);
    for (int i = 0; i < n; i++) { /* may still arrive: their 8 bytes stay (never freed) */
        left += reqs[i] != NULL;
        cg_ucx_release(inter->ucx, reqs[i]);
    }
    if (left == 0) {
        free(call);
    }
    free(reqs);
}

/* Wait for n requests, progressing UCX; give up on a transport error, an abort or the
 * timeout (and cancel the rest). */
static cg_status_t cg_inter_wait(cg_inter_t *inter, void **reqs, int n, int dst, int src)
{
    cg_pace_t   pace   = {0};
    double      t0     = 0;
    cg_status_t status = CG_OK;
    unsigned    polls  = 0;

    for (;;) {
        const int progressed = cg_ucx_progress(inter->ucx) > 0;
        int       pending    = 0;
        for (int i = 0; i < n; i++) {
            int done = 1;
            if (reqs[i] != NULL) {
                cg_status_t s = cg_ucx_test(inter->ucx, reqs[i], &done);
                status        = (status == CG_OK) ? s : status;
                if (done) {
                    reqs[i] = NULL;
                }
            }
            pending += !done;
        }
        if (!pending || status != CG_OK) {
            cg_inter_cancel(inter, reqs, n);
            return status;
        }
        if (cg_inter_check_due(&pace, &polls, progressed) &&
            (status = cg_inter_idle(inter, &t0, dst, src)) != CG_OK) {
            cg_inter_cancel(inter, reqs, n);
            return status;
        }
    }
}

static cg_status_t cg_inter_direct(cg_inter_t *inter, int dst, const void *sbuf, size_t sbytes,
                                   unsigned sstep, int src, void *rbuf, size_t rbytes,
                                   unsigned rstep)
{
    void       *reqs[2] = {NULL, NULL};
    cg_ucx_ep_t *ep;
    cg_status_t status = CG_OK;

    if (src >= 0 && rbytes > 0) {
        status = cg_ucx_irecv(inter->ucx, rbuf, rbytes, cg_inter_tag(inter, rstep, src), UINT64_MAX,
                              inter->ucx_device, &reqs[0]);
    }
    if (status == CG_OK && dst >= 0 && sbytes > 0 && (status = cg_inter_ep(inter, dst, &ep)) == CG_OK) {
        status = cg_ucx_isend(inter->ucx, ep, sbuf, sbytes, cg_inter_tag(inter, sstep, inter->rank),
                              inter->ucx_device, &reqs[1]);
    }
    if (status != CG_OK) {
        cg_inter_cancel(inter, reqs, 2);
        return status;
    }
    return cg_inter_wait(inter, reqs, 2, dst, src);
}

/* One direction of the staged pipeline: chunk i of the message, its slot and its state. */
typedef struct {
    size_t bytes, chunks, next, done;
    size_t sent;                      /* chunks handed to UCX, in order */
    int    state[CG_INTER_MAX_DEPTH]; /* 0 free, 1 copying, 2 on the network */
    size_t chunk_of[CG_INTER_MAX_DEPTH];
    void  *req[CG_INTER_MAX_DEPTH];
} cg_inter_flow_t;

static size_t cg_inter_chunk_len(const cg_inter_t *inter, const cg_inter_flow_t *f, size_t i)
{
    return CG_MIN(inter->config.chunk_bytes, f->bytes - i * inter->config.chunk_bytes);
}

/* Send side: device -> host chunk (copy, event) -> network; receive side: network -> host
 * chunk -> device (copy, event). Each step of the loop advances whatever is ready. */
static cg_status_t cg_inter_staged(cg_inter_t *inter, int dst, const char *sbuf, size_t sbytes,
                                   unsigned sstep, int src, char *rbuf, size_t rbytes,
                                   unsigned rstep)
{
    const size_t    C = inter->config.chunk_bytes;
    const int       D = inter->config.depth;
    cg_dev_t       *dev = inter->dev;
    cg_inter_flow_t s = {0}, r = {0};
    cg_ucx_ep_t    *ep = NULL;
    cg_status_t     status = CG_OK;
    cg_pace_t       pace = {0};
    double          t0 = 0;
    unsigned        polls = 0;

    s.bytes  = (dst >= 0) ? sbytes : 0;
    r.bytes  = (src >= 0) ? rbytes : 0;
    s.chunks = (s.bytes + C - 1) / C;
    r.chunks = (r.bytes + C - 1) / C;
    if (s.chunks > 0) {
        status = cg_inter_ep(inter, dst, &ep);
    }
    while (status == CG_OK && (s.done < s.chunks || r.done < r.chunks)) {
        int progressed = 0;
        for (int k = 0; k < D && status == CG_OK; k++) {
            char *hs = inter->pinned + (size_t)k * C, *hr = inter->pinned + (size_t)(D + k) * C;
            int   ready = 0, done = 0;
            /* send slot k */
            if (s.state[k] == 0 && s.next < s.chunks) {
                s.chunk_of[k] = s.next++;
                status = dev->ops->copy(dev, hs, sbuf + s.chunk_of[k] * C,
                                        cg_inter_chunk_len(inter, &s, s.chunk_of[k]), inter->stream);
                if (status == CG_OK) {
                    status = dev->ops->event_record(dev, inter->events[k], inter->stream);
                }
                s.state[k] = 1, progressed = 1;
            } else if (s.state[k] == 1 && s.chunk_of[k] == s.sent &&
                       (status = dev->ops->event_query(dev, inter->events[k], &ready)) == CG_OK && ready) {
                /* every chunk has the same tag and the receiver posts its receives in
                 * chunk order: send in chunk order too, whatever slot holds the chunk */
                status = cg_ucx_isend(inter->ucx, ep, hs, cg_inter_chunk_len(inter, &s, s.chunk_of[k]),
                                      cg_inter_tag(inter, sstep, inter->rank), 0, &s.req[k]);
                s.state[k] = 2, s.sent++, progressed = 1;
            } else if (s.state[k] == 2) {
                status = cg_ucx_test(inter->ucx, s.req[k], &done);
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
                status = cg_ucx_irecv(inter->ucx, hr, cg_inter_chunk_len(inter, &r, r.chunk_of[k]),
                                      cg_inter_tag(inter, rstep, src), UINT64_MAX, 0, &r.req[k]);
                r.state[k] = 2, progressed = 1;
            } else if (r.state[k] == 2) {
                status = cg_ucx_test(inter->ucx, r.req[k], &done);
                r.req[k] = done ? NULL : r.req[k];
                if (status == CG_OK && done) {
                    status = dev->ops->copy(dev, rbuf + r.chunk_of[k] * C, hr,
                                            cg_inter_chunk_len(inter, &r, r.chunk_of[k]), inter->stream);
                    if (status == CG_OK) {
                        status = dev->ops->event_record(dev, inter->events[D + k], inter->stream);
                    }
                    r.state[k] = 1, progressed = 1;
                }
            } else if (r.state[k] == 1 &&
                       (status = dev->ops->event_query(dev, inter->events[D + k], &ready)) == CG_OK && ready) {
                r.state[k] = 0, r.done++, progressed = 1;
            }
        }
        progressed |= cg_ucx_progress(inter->ucx) > 0;
        if (cg_inter_check_due(&pace, &polls, progressed)) {
            status = cg_inter_idle(inter, &t0, dst, src);
        }
    }
    if (status != CG_OK) { /* nothing may land in the chunks after this */
        cg_inter_cancel(inter, s.req, D);
        cg_inter_cancel(inter, r.req, D);
    }
    return status;
}

cg_status_t cg_inter_sendrecv(cg_inter_t *inter, int dst, const void *sbuf, size_t sbytes, int src,
                              void *rbuf, size_t rbytes, unsigned step)
{
    return cg_inter_exchange(inter, dst, sbuf, sbytes, step, src, rbuf, rbytes, step);
}

/* A transport error with dst or src: a dead peer only when its pid is known to be gone. */
static cg_status_t cg_inter_verdict(const cg_inter_t *inter, cg_status_t status, int dst, int src)
{
    if (status != CG_ERR_TRANSPORT) {
        return status;
    }
    if (cg_inter_peer_died(inter, dst, src)) {
        return CG_ERR_PEER_DEAD;
    }
    cg_error(CG_SUB_UCX, "a transfer with rank %d / %d failed; %s", dst, src,
             (dst < 0 || inter->pids[dst] > 0) && (src < 0 || inter->pids[src] > 0)
                 ? "both processes are alive: a transport error"
                 : "a peer on another node may have failed");
    return status;
}

cg_status_t cg_inter_exchange(cg_inter_t *inter, int dst, const void *sbuf, size_t sbytes,
                              unsigned sstep, int src, void *rbuf, size_t rbytes, unsigned rstep)
{
    cg_status_t status;

    if (inter->failed) {
        return CG_ERR_PEER;
    }
    inter->used = 1;
    /* staged, the data is in rbuf on return: the pipeline saw every chunk's copy done */
    status = inter->staged ? cg_inter_staged(inter, dst, sbuf, sbytes, sstep, src, rbuf, rbytes, rstep)
                       : cg_inter_direct(inter, dst, sbuf, sbytes, sstep, src, rbuf, rbytes, rstep);
    if (status != CG_OK) {
        inter->failed = 1;
        status        = cg_inter_verdict(inter, status, dst, src);
    }
    return status;
}

/* Did a peer on this host die (cg_inter_peer_died for every rank)? */
static int cg_inter_host_peer_died(const cg_inter_t *inter)
{
    for (int r = 0; r < inter->size; r++) {
        if (r != inter->rank && cg_inter_peer_died(inter, r, -1)) {
            return 1;
        }
    }
    return 0;
}

/* Bounded as the exchanges' waits are, by a peer of this host that died and the timeout;
 * not by aborts: the call is complete here, and what is flushed was sent before them. */
cg_status_t cg_inter_flush(cg_inter_t *inter)
{
    cg_pace_t   pace  = {0};
    double      t0;
    unsigned    polls = 0;
    void       *req   = NULL;
    int         done  = 0;
    cg_status_t status;

    if (!inter->used) {
        return CG_OK;
    }
    inter->used = 0;
    t0          = cg_time_now();
    status      = cg_ucx_flush_start(inter->ucx, &req);
    while (status == CG_OK && req != NULL &&
           (status = cg_ucx_test(inter->ucx, req, &done)) == CG_OK && !done) {
        if (!cg_inter_check_due(&pace, &polls, cg_ucx_progress(inter->ucx) > 0)) {
            continue;
        }
        if (cg_inter_host_peer_died(inter)) { /* which one: said there */
            status = CG_ERR_PEER_DEAD;
        } else if (inter->config.timeout_s > 0 && cg_time_now() - t0 > inter->config.timeout_s) {
            cg_error(CG_SUB_UCX, "flushing the transport at a call's end waited more than "
                     "%.0f s (coll_gpu_timeout)", inter->config.timeout_s);
            status = CG_ERR_TIMEOUT;
        } else {
            continue;
        }
        cg_ucx_release(inter->ucx, req); /* UCX frees it when it completes */
        break;
    }
    if (status == CG_ERR_TRANSPORT) {
        status = cg_inter_host_peer_died(inter) ? CG_ERR_PEER_DEAD : status;
        cg_error(CG_SUB_UCX, "flushing the transport at a call's end failed: %s",
                 cg_status_string(status));
    }
    if (status != CG_OK) {
        inter->failed = 1; /* as a failed exchange: no more here */
    }
    return status;
}
