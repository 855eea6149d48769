/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Barriers of a local group and copies on its stream. */
#include "coll/intra/intra.h"

#include <string.h>

static cg_status_t cg_intra_finish_stream(cg_intra_t *group, cg_status_t mine, int *drained);

static uint64_t *cg_intra_flags(const cg_intra_t *group, int r)
{
    return (uint64_t *)group->scratch[r];
}

/* This rank's stream may wait for flags that a failed peer will never write: set them from
 * the host so that the stream drains (the group is retired; what runs after is moot). */
void cg_intra_release_waits(cg_intra_t *group)
{
    for (int p = 0; p < group->size; p++) {
        if (p != group->rank) {
            (void)group->dev->ops->flag_release(group->dev, &cg_intra_flags(group, group->rank)[p],
                                            group->dev_epoch + (1ull << 32));
        }
    }
}

/* Record this rank's failure where the peers look for it. */
void cg_intra_report(cg_intra_t *group, uint64_t epoch)
{
    if (group->ctl[group->rank]->failed_epoch == 0) {
        /* 0: the next host barrier's (before, 1: a host barrier that every peer had passed
         * then counted a failure of this rank's later call against its own call) */
        __atomic_store_n(&group->ctl[group->rank]->failed_epoch, epoch ? epoch : group->host_epoch + 1,
                         __ATOMIC_RELEASE);
    }
    group->failed = 1;
    if (group->sync == CG_SYNC_DEVICE) {
        cg_intra_release_waits(group);
    }
}

/* Has peer p reported a failure? */
static int cg_intra_peer_reported(const cg_intra_t *group, int p)
{
    return __atomic_load_n(&group->ctl[p]->failed_epoch, __ATOMIC_ACQUIRE) != 0;
}

int cg_intra_peer_dead(const cg_intra_t *group, int p)
{
    return group->pids[p] != 0 && !cg_process_alive(group->pids[p]);
}

/* A peer reported a failure after it completed this call (done: its stamp of the last call
 * it completed, mine: this call's): said once per group at verbose level 3. */
static int cg_intra_failure_later(cg_intra_t *group, int p, uint64_t done, uint64_t mine)
{
    if (done < mine) {
        return 0;
    }
    if (!group->told_later_failure) {
        group->told_later_failure = 1;
        cg_detail(CG_SUB_IPC, "local rank %d failed a later call after it completed this one: "
                  "this call goes on without it", p);
    }
    return 1;
}

/* Has a peer reported a failure that this call may still depend on? Not one that completed
 * the call first and failed a later one: this rank's call completes without it. ll: an LL
 * call (ctl ll_done: every line of it sent); else device barriers (ctl dev_done: its stream
 * ran to this call's last device barrier, every flag this call waits for written). */
static int cg_intra_peer_failed_in(cg_intra_t *group, int ll)
{
    const uint64_t mine = ll ? group->ll_calls : group->dev_epoch;

    for (int p = 0; p < group->size; p++) {
        const volatile uint64_t *done = ll ? &group->ctl[p]->ll_done : &group->ctl[p]->dev_done;
        if (p != group->rank && cg_intra_peer_reported(group, p) &&
            !cg_intra_failure_later(group, p, __atomic_load_n(done, __ATOMIC_ACQUIRE), mine)) {
            return 1;
        }
    }
    return 0;
}

int cg_intra_peer_failed_ll(cg_intra_t *group)
{
    return cg_intra_peer_failed_in(group, 1);
}

/* Has a peer reported a failure at host barrier epoch or before? One that reported later
 * passed that barrier first. */
static int cg_intra_peer_failed_by(const cg_intra_t *group, uint64_t epoch)
{
    for (int p = 0; p < group->size; p++) {
        if (p != group->rank && cg_intra_peer_reported(group, p) &&
            __atomic_load_n(&group->ctl[p]->failed_epoch, __ATOMIC_ACQUIRE) <= epoch) {
            return 1;
        }
    }
    return 0;
}

void cg_intra_flag_watch(void *arg, const uint64_t *flag)
{
    cg_intra_t     *group = arg;
    const ptrdiff_t peer  = flag - cg_intra_flags(group, group->rank);

    /* only the peer waited for: another that failed at a later call (its part of this one
     * done) must not fail this one */
    if (group->watch_released || peer < 0 || peer >= group->size || peer == group->rank) {
        return;
    }
    if (cg_intra_peer_reported(group, (int)peer) || cg_intra_peer_dead(group, (int)peer)) {
        group->watch_released = 1;
        group->failed         = 1;
        cg_intra_release_waits(group);
    }
}

/* Between polls: is any peer dead, or are we past the timeout? */
cg_status_t cg_intra_watch(cg_intra_t *group, double *t0)
{
    double now = cg_time_now();

    if (*t0 == 0) {
        *t0 = now;
    }
    for (int p = 0; p < group->size; p++) {
        if (p != group->rank && cg_intra_peer_dead(group, p)) {
            cg_error(CG_SUB_IPC, "local rank %d (pid %d) died during a collective", p, group->pids[p]);
            return CG_ERR_PEER_DEAD;
        }
    }
    if (group->timeout_s > 0 && now - *t0 > group->timeout_s) {
        cg_error(CG_SUB_IPC, "a collective waited more than %.0f s for its local peers "
                 "(coll_gpu_timeout)", group->timeout_s);
        return CG_ERR_TIMEOUT;
    }
    return CG_OK;
}

void cg_intra_inband_begin(cg_intra_t *group, const cg_ll_watch_t *watch)
{
    group->inband           = watch;
    group->inband_parity    = group->parity;
    group->inband_publishes = group->publishes;
}

cg_status_t cg_intra_inband_end(cg_intra_t *group, cg_status_t status)
{
    if (status == CG_OK && group->inband != NULL) {
        /* a plan that never reached a host barrier would leave a missing rank waiting in
         * the collective underneath: none does, and this one then agrees here */
        status = cg_intra_host_barrier(group, CG_OK);
    }
    if (status == CG_ERR_PEER_NOT_FAST) {
        group->parity    = group->inband_parity;
        group->publishes = group->inband_publishes;
        cg_intra_unpin(group);
    }
    group->inband = NULL;
    return status;
}

/* Is peer p, whose epoch is still below this barrier's, not on the call (in-band
 * agreement)? A rank that announced other kinds is not; one that announced a later call
 * skipped this one unless its epoch came meanwhile (it stores its epoch before it can
 * leave the call). */
static int cg_intra_inband_missing(const cg_intra_t *group, const cg_ll_watch_t *watch, int p,
                                   uint64_t epoch)
{
    uint64_t later;

    if (cg_board_watch(watch->board, watch, &later)) {
        return 1;
    }
    return ((later >> group->comm_ranks[p]) & 1) &&
           __atomic_load_n(&group->ctl[p]->epoch, __ATOMIC_ACQUIRE) < epoch;
}

/* Has peer p, whose epoch seen is at least this barrier's, arrived at it? Epochs count from
 * the announced calls (cg_intra_ll_tick: 2^24 per call), and a rank that skipped a call can
 * be at a later one already. In a first barrier run in band, an epoch of a later call is an
 * arrival only from a rank that announced this call with the kinds of the ranks on it (it
 * was on the call, passed this barrier and went on: one_shot ends with no barrier); from
 * any other, *missing is set. Other barriers: every rank is on the call, so any epoch at
 * least this one is an arrival. */
static int cg_intra_arrived(const cg_intra_t *group, const cg_ll_watch_t *watch, int p,
                            uint64_t epoch, uint64_t seen, int *missing)
{
    int kinds;

    if (seen < epoch) {
        return 0;
    }
    if (watch == NULL || seen >> 24 == epoch >> 24) {
        return 1;
    }
    if (cg_board_peer(watch->board, group->comm_ranks[p], watch->seq, &kinds) &&
        kinds == watch->fast_kinds) {
        return 1;
    }
    *missing = 1;
    return 0;
}

cg_status_t cg_intra_host_barrier(cg_intra_t *group, cg_status_t mine)
{
    const cg_ll_watch_t *watch = group->inband; /* the call's first barrier only */
    cg_status_t          status;
    double               t0 = 0;
    uint64_t             epoch;

    if (mine == CG_ERR_PEER_NOT_FAST) { /* the call was given up in band: no failure */
        return mine;
    }
    epoch = ++group->host_epoch;
    if (mine != CG_OK) {
        cg_intra_report(group, epoch);
    }
    group->inband = NULL;
    cg_count(CG_CNT_HOST_WAITS, 1);
    __atomic_store_n(&group->ctl[group->rank]->epoch, epoch, __ATOMIC_RELEASE);
    for (int p = 0; p < group->size; p++) {
        cg_pace_t pace    = {0};
        int       missing = 0;
        while (p != group->rank &&
               !cg_intra_arrived(group, watch, p, epoch,
                                 __atomic_load_n(&group->ctl[p]->epoch, __ATOMIC_ACQUIRE), &missing)) {
            const int check = !missing && cg_pace(&pace);
            if (check && watch != NULL) {
                missing = cg_intra_inband_missing(group, watch, p, epoch);
            }
            if (missing) {
                cg_count(CG_CNT_LL_MISSED, 1); /* this rank's failure: reported above */
                return mine != CG_OK ? mine : CG_ERR_PEER_NOT_FAST;
            }
            if (!check) {
                continue;
            }
            if ((status = cg_intra_watch(group, &t0)) != CG_OK) {
                cg_intra_report(group, epoch);
                return status;
            }
            /* a peer that failed may have left the call: never wait for it (one that
             * failed after this barrier, at a later call, passed it: not this call's) */
            if (cg_intra_peer_failed_by(group, epoch)) {
                group->failed = 1;
                return mine != CG_OK ? mine : CG_ERR_PEER;
            }
        }
    }
    if (mine != CG_OK) {
        return mine;
    }
    /* every peer arrived: one that failed since, at a later barrier, failed after it */
    if (cg_intra_peer_failed_by(group, epoch)) {
        group->failed = 1;
        return CG_ERR_PEER;
    }
    return CG_OK;
}

cg_status_t cg_intra_barrier(cg_intra_t *group, cg_status_t mine)
{
    cg_dev_t   *dev = group->dev;
    uint64_t    epoch;
    cg_status_t status = CG_OK;

    if (mine == CG_ERR_PEER_NOT_FAST) { /* given up in band (cg_intra_inband_begin) */
        return mine;
    }
    if (group->sync == CG_SYNC_HOST) {
        /* what this rank queued ends before the peers hear of it: a wait for the stream on
         * any layer (the host layer's is synchronous, but counts the wait a GPU makes); a
         * failure's too: its copies may still read and write the peers' buffers, which
         * their owners may free once the barrier has told them of the failure */
        status = dev->ops->stream_sync(dev, group->stream);
        return cg_intra_host_barrier(group, mine != CG_OK ? mine : status);
    }
    /* device: the peers notice a failure when they wait for their streams (finish) */
    if (mine != CG_OK) {
        cg_intra_report(group, group->host_epoch + 1);
        return mine;
    }
    if (group->inband != NULL) {
        /* the call's first barrier, run before the agreement: flags on the streams carry
         * no memory kinds, so the ranks meet on the host first (the board watched, as in
         * any first barrier) and only then on the device */
        status = cg_intra_host_barrier(group, CG_OK);
        if (status != CG_OK) {
            return status;
        }
    }
    if (!group->holds_peer_wait) { /* ends with the call (cg_intra_finish_stream) */
        cg_dev_peer_wait_begin(dev);
        group->holds_peer_wait = 1;
    }
    epoch = ++group->dev_epoch;
    for (int p = 0; p < group->size && status == CG_OK; p++) {
        if (p != group->rank) {
            status = dev->ops->flag_write(dev, &cg_intra_flags(group, p)[group->rank], epoch, group->stream);
        }
    }
    for (int p = 0; p < group->size && status == CG_OK; p++) {
        if (p != group->rank) {
            status = dev->ops->flag_wait(dev, &cg_intra_flags(group, group->rank)[p], epoch, group->stream);
        }
    }
    if (status != CG_OK) {
        cg_intra_report(group, group->host_epoch + 1);
    }
    return status;
}

/* The call is over: the peers' buffers it mapped stay cached, unpinned. */
void cg_intra_unpin(cg_intra_t *group)
{
    for (int i = 0; i < group->num_pins; i++) {
        cg_ipc_release(group->pins[i], 0);
    }
    group->num_pins = 0;
}

cg_status_t cg_intra_finish(cg_intra_t *group, cg_status_t mine)
{
    int         drained = 0;
    cg_status_t status  = cg_intra_finish_stream(group, mine, &drained);

    if (drained) { /* else the stream may still use them: the group's release decides */
        cg_intra_unpin(group);
    }
    return status;
}

cg_status_t cg_intra_close(cg_intra_t *group, cg_status_t mine)
{
    cg_status_t status = cg_intra_barrier(group, mine);

    if (status == CG_OK && group->sync == CG_SYNC_HOST) {
        cg_intra_unpin(group); /* the barrier waited for the stream: nothing queued since */
        return CG_OK;
    }
    return cg_intra_finish(group, status);
}

void cg_intra_peer_wait_done(cg_intra_t *group)
{
    if (group->holds_peer_wait) {
        group->holds_peer_wait = 0;
        cg_dev_peer_wait_end(group->dev);
    }
}

static cg_status_t cg_intra_finish_wait(cg_intra_t *group, cg_status_t mine, int *drained);

/* Seconds cg_intra_drain waits before it leaves a stream that does not drain. */
#define CG_INTRA_DRAIN_TIMEOUT 60.0

int cg_intra_drain(cg_intra_t *group)
{
    cg_dev_t   *dev    = group->dev;
    cg_pace_t   pace   = {0};
    double      t0     = 0;
    int         done   = 0;
    cg_status_t status;

    if (group->sync != CG_SYNC_DEVICE || !dev->caps.async) {
        (void)dev->ops->stream_sync(dev, group->stream); /* nothing on it waits for peers */
        return 1;
    }
    status = dev->ops->event_record(dev, group->event, group->stream);
    while (status == CG_OK && !done) {
        status = dev->ops->event_query(dev, group->event, &done);
        if (done || status != CG_OK || !cg_pace(&pace)) {
            continue;
        }
        cg_intra_release_waits(group); /* again: a peer's late flag write lowered one */
        t0 = t0 ? t0 : cg_time_now();
        if (cg_time_now() - t0 > CG_INTRA_DRAIN_TIMEOUT) {
            cg_error(CG_SUB_IPC, "the stream of a failed collective did not drain in %.0f s",
                     CG_INTRA_DRAIN_TIMEOUT);
            return 0;
        }
    }
    return 1; /* drained, or the device failed: nothing of the stream runs any more */
}

/* The call's device work, flag waits included, has ended: its bracket too. A failure
 * releases the flag waits and drains the stream first (cg_intra_drain: the call's bracket
 * can end now rather than hold every free of the process until the group's release, and
 * nothing the call queued still touches the peers' buffers when it returns). */
static cg_status_t cg_intra_finish_stream(cg_intra_t *group, cg_status_t mine, int *drained)
{
    cg_status_t status = cg_intra_finish_wait(group, mine, drained);

    if (status == CG_OK) { /* this call's flags all written: a failure of this rank from now
                            * on is later (cg_intra_peer_failed_in) */
        __atomic_store_n(&group->ctl[group->rank]->dev_done, group->dev_epoch, __ATOMIC_RELEASE);
    }
    if (*drained) {
        cg_intra_peer_wait_done(group);
    }
    return status;
}

static cg_status_t cg_intra_finish_wait(cg_intra_t *group, cg_status_t mine, int *drained)
{
    cg_dev_t   *dev = group->dev;
    cg_status_t status;
    cg_pace_t   pace  = {0};
    double      t0    = 0;
    int         done  = 0;

    if (mine == CG_ERR_PEER_NOT_FAST) { /* given up in band: what it queued on its own */
        (void)dev->ops->stream_sync(dev, group->stream); /* memory ends here, no failure */
        *drained = 1;
        return mine;
    }
    if (mine != CG_OK) {
        cg_intra_report(group, group->host_epoch + 1);
        *drained = cg_intra_drain(group);
        return mine;
    }
    if (group->sync == CG_SYNC_HOST || !dev->caps.async) {
        status   = dev->ops->stream_sync(dev, group->stream);
        *drained = 1;
        if (status != CG_OK) {
            cg_intra_report(group, group->host_epoch + 1);
        } else if (group->watch_released) { /* a flag wait ended by a peer's failure */
            group->failed = 1;
            status        = CG_ERR_PEER;
        }
        return status;
    }
    /* The stream may wait for peers' flags: poll it, and give up when a peer failed
     * (its flags will never come; the stream stays blocked and the group is retired). */
    cg_count(CG_CNT_HOST_WAITS, 1);
    status = dev->ops->event_record(dev, group->event, group->stream);
    while (status == CG_OK && !done) {
        status = dev->ops->event_query(dev, group->event, &done);
        if (done || status != CG_OK || !cg_pace(&pace)) {
            continue;
        }
        if (cg_intra_peer_failed_in(group, 0)) {
            group->failed = 1;
            cg_intra_release_waits(group);
            /* the released stream runs what it queued, which may read and write peers'
             * buffers mapped for this call: they are unpinned (and may be unmapped) only
             * once it has drained */
            *drained = cg_intra_drain(group);
            return CG_ERR_PEER;
        }
        status = cg_intra_watch(group, &t0);
    }
    *drained = done;
    if (status != CG_OK) {
        cg_intra_report(group, group->host_epoch + 1);
        *drained = cg_intra_drain(group);
    }
    return status;
}

/* Bytes written into a scratch area of the group (counted: the copies zero copy avoids). */
static void cg_intra_count_scratch(const cg_intra_t *group, const void *dst, size_t bytes)
{
    for (int p = 0; p < group->size; p++) {
        const char *area = group->scratch[p];
        if (area != NULL && (const char *)dst >= area &&
            (const char *)dst < area + group->scratch_bytes) {
            cg_count(CG_CNT_SCRATCH_BYTES, bytes);
            return;
        }
    }
}

/* The widest word that the source, every destination and the length are aligned to: the
 * kernel copies whole words per thread, not bytes, when buffers are not 16-byte aligned
 * (as a pointer into an array of floats gives), and its vector path takes 8-byte words. */
static cg_dtype_t cg_intra_copy_word(char *const dsts[], int n, const void *src, size_t bytes)
{
    uintptr_t bits = (uintptr_t)src | (uintptr_t)bytes;

    for (int i = 0; i < n; i++) {
        bits |= (uintptr_t)dsts[i];
    }
    return (bits & 7) == 0 ? CG_DT_UINT64
         : (bits & 3) == 0 ? CG_DT_UINT32
         : (bits & 1) == 0 ? CG_DT_UINT16 : CG_DT_UINT8;
}

cg_status_t cg_intra_copy_multi(cg_intra_t *group, char *const dsts[], int n, const void *src,
                                size_t bytes)
{
    const cg_dtype_t word = cg_intra_copy_word(dsts, n, src, bytes);
    cg_reduce_args_t args = {.dtype = word, .op = CG_OP_BOR, .count = bytes / cg_dtype_size(word),
                             .nsrc = 1, .ndst = n};
    cg_status_t      status = CG_OK;

    /* one destination: the copy engine unless the kernel was asked for (coll_gpu_copy_method
     * kernel; auto's timing covers several destinations only) */
    if (group->copy == CG_COPY_ENGINE || (n == 1 && group->copy_asked != CG_COPY_KERNEL)) {
        for (int i = 0; i < n && status == CG_OK; i++) {
            status = cg_intra_copy(group, dsts[i], src, bytes, group->stream);
        }
        return status;
    }
    /* nsrc == 1: the reduction kernel is a broadcast copy (no op is applied). */
    args.srcs[0] = src;
    for (int i = 0; i < n; i++) {
        args.dsts[i] = dsts[i];
        cg_intra_count_scratch(group, dsts[i], bytes);
    }
    return n > 0 ? group->dev->ops->reduce(group->dev, &args, group->stream) : CG_OK;
}

cg_status_t cg_intra_copy_typed(cg_intra_t *group, void *dst, const void *src, size_t count,
                                cg_dtype_t dtype)
{
    return cg_dev_copy_typed(group->dev, dst, src, count, dtype, group->stream);
}

cg_status_t cg_intra_copy(cg_intra_t *group, void *dst, const void *src, size_t bytes,
                          cg_dev_stream_t *stream)
{
    cg_intra_count_scratch(group, dst, bytes);
    return group->dev->ops->copy(group->dev, dst, src, bytes, stream);
}
