/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The LL collective on a local group (cg_ll_args_t in kernels/cg_dev.h): one device
 * operation, synchronised in the data, for small messages of the four collectives.
 * A call's flag comes from ll_calls, which every rank advances for every LL call it runs
 * with no watch and for every call announced on the board (cg_intra_ll_tick), whoever then
 * runs it: the flags stay the same on every rank even when some ranks were not on a call.
 * The inbox half comes from ll_epoch, the calls completed, which every rank completes or
 * nobody does: a rank writes call k + 1's lines into the half its peers read for call k - 1,
 * which they finished before they could send it theirs for k. A call that was cancelled
 * (a rank not on it) leaves lines of its own flag in the half, which no later call reads.
 *
 * Flags repeat every ll_period calls (2^31 - 1: a line carries 31 bits). A line survives
 * until a later call of its half writes that far, so after enough calls of fewer lines an
 * old line could carry the flag of a new call of the same half and be read as its data.
 * Each rank therefore clears a half of its own inbox once more than a quarter of a period
 * has passed since it last did, right after completing a call that read it
 * (cg_intra_ll_clear). A line a call reads was then written after that clearing, less than
 * a period of calls ago, unless no call of that half completed for three quarters of a
 * period. The wrap is tested with a short period (coll_gpu_debug_ll_flag_period).
 */
#include "coll/intra/intra.h"


size_t cg_intra_ll_capacity(const cg_intra_t *group)
{
    return group->dev->ops->ll_run != NULL ? cg_ll_capacity(group->ll_slot_bytes) : 0;
}

/* Is a rank not on this call run before the agreement? One that announced other kinds is
 * not; one already past the call was on it exactly when its first line for it came (its
 * lines were written before it could finish the call, and with the inbox half unchanged
 * until this rank finishes too, nothing overwrote them but a later call that this one's
 * failure let it start). But this rank's kernel may end while the host looks and clear the
 * lines it read: a line found cleared can mean the call ended with its result, which the
 * caller asks the kernel after cancelling (cg_intra_ll_wait). */
static cg_status_t cg_intra_ll_missing(cg_intra_t *group, const cg_ll_args_t *args,
                                       const cg_ll_watch_t *watch, int *missing)
{
    uint64_t    later, line;
    cg_status_t status = CG_OK;

    *missing = cg_board_watch(watch->board, watch, &later);
    for (int p = 0; p < group->size && !*missing && later != 0 && status == CG_OK; p++) {
        if (p == group->rank || !(later & (1ull << group->comm_ranks[p]))) {
            continue;
        }
        status = group->dev->ops->ll_peek(
            group->dev, group->stream, (const uint64_t *)cg_ll_slot_at(args, group->rank, p), &line);
        *missing = status == CG_OK && (uint32_t)(line >> 32) != args->flag;
    }
    return status;
}

/* The cancel word back to 0 once the cancelled kernel ended: flags repeat (every 2^31 - 1
 * calls), and a word left at this call's flag would end that later call's waits at once,
 * with no result written and the call reported done. */
static cg_status_t cg_intra_ll_uncancel(cg_intra_t *group, const cg_ll_args_t *args)
{
    return group->dev->ops->flag_release(group->dev, (uint64_t *)args->cancel, 0);
}

/* Give the call up: abort lines into this rank's inbox (and the call's flag into its cancel
 * word) end the kernel's waits, then the host waits for it, so that nothing of the call is
 * left running, on the application's default stream least of all (after_app). When the
 * lines cannot be written the kernel may still wait: the host does not wait with it. */
static void cg_intra_ll_end_kernel(cg_intra_t *group, const cg_ll_args_t *args)
{
    cg_dev_t   *dev    = group->dev;
    cg_status_t status = dev->ops->ll_abort(dev, args);

    if (status == CG_OK && args->cancel != NULL) {
        status = dev->ops->flag_release(dev, (uint64_t *)args->cancel, args->flag);
    }
    if (status == CG_OK) {
        status = dev->ops->stream_sync(dev, group->stream);
    }
    if (status == CG_OK && args->cancel != NULL) {
        (void)cg_intra_ll_uncancel(group, args);
    }
    group->ll_kernel_left = status != CG_OK; /* it may still wait for peers */
}

/* Wait for the call's end (ll_test: on a GPU a word the kernel stores last, read with no
 * driver call), watching for peers that failed or died: their lines never come, so
 * this rank's own inbox gets abort lines, which end the device's wait. With a watch, also
 * for a rank not on the call: the cancel word ends the device's wait, and the call goes
 * staged (CG_ERR_PEER_NOT_FAST). Any other failure while the kernel runs ends it too. */
static cg_status_t cg_intra_ll_wait(cg_intra_t *group, const cg_ll_args_t *args,
                                    const cg_ll_watch_t *watch)
{
    cg_dev_t   *dev = group->dev;
    cg_status_t status = CG_OK;
    cg_pace_t   pace  = {0};
    double      t0    = 0;
    int         done  = 0, missing = 0;

    cg_count(CG_CNT_HOST_WAITS, 1);
    while (status == CG_OK && !done) {
        status = dev->ops->ll_test(dev, group->stream, &done);
        if (done || status != CG_OK) {
            continue;
        }
        if (!cg_pace(&pace)) {
            continue;
        }
        if (watch != NULL && (status = cg_intra_ll_missing(group, args, watch, &missing)) == CG_OK &&
            missing) {
            status = dev->ops->flag_release(dev, (uint64_t *)args->cancel, args->flag);
            if (status == CG_OK && (status = dev->ops->stream_sync(dev, group->stream)) == CG_OK &&
                (status = cg_intra_ll_uncancel(group, args)) == CG_OK &&
                (status = dev->ops->ll_test(dev, group->stream, &done)) == CG_OK) {
                if (done == 1) { /* it had ended with its result: every rank was on it */
                    continue;
                }
                cg_count(CG_CNT_LL_MISSED, 1);
                return CG_ERR_PEER_NOT_FAST;
            }
        }
        if (status == CG_OK && (cg_intra_peer_failed_ll(group) || (status = cg_intra_watch(group, &t0)) != CG_OK)) {
            cg_intra_ll_end_kernel(group, args);
            /* told to the peers too (a timeout, a dead peer): their later calls see the
             * group retired instead of starting LL calls that this rank cancels */
            cg_intra_report(group, 0);
            return status != CG_OK ? status : CG_ERR_PEER;
        }
    }
    if (status != CG_OK) { /* a peek, a cancel or a wait of the device layer failed */
        cg_intra_ll_end_kernel(group, args);
    }
    return status;
}

/* After this rank completed a call (epoch not yet advanced): clear the half it read when
 * more than a quarter of a period passed since it last did. No peer writes into that half
 * until this rank has sent its lines for the next call (the peers write it next for the call
 * after, which they start only after completing the next one), and the clearing ends
 * before this rank's next call is queued: the host waits for it, once a quarter period. */
static cg_status_t cg_intra_ll_clear(cg_intra_t *group, const cg_ll_args_t *args)
{
    const unsigned half  = args->parity;
    const size_t   bytes = (size_t)group->size * group->ll_slot_bytes;
    cg_dev_t      *dev   = group->dev;
    cg_status_t    status;

    if (group->ll_calls - group->ll_cleared[half] < CG_MAX(group->ll_period / 4, 1u)) {
        return CG_OK;
    }
    status = dev->ops->fill(dev, cg_ll_slot_at(args, group->rank, 0), 0, bytes, group->stream);
    if (status == CG_OK) {
        cg_count(CG_CNT_HOST_WAITS, 1);
        status = dev->ops->stream_sync(dev, group->stream);
    }
    if (status == CG_OK) {
        group->ll_cleared[half] = group->ll_calls;
    }
    return status;
}

cg_status_t cg_intra_ll_skip(cg_intra_t *group, cg_status_t mine)
{
    group->ll_calls++; /* as the peers count the call */
    cg_intra_report(group, 0);
    return mine;
}

void cg_intra_ll_tick(cg_intra_t *group)
{
    group->ll_calls++;
    /* host barriers count from here (cg_intra_inband_begin): the same on every rank, and
     * past any barrier of the calls before (fewer than 2^24 each) */
    group->host_epoch = CG_MAX(group->host_epoch, group->ll_calls << 24);
}

/* The call, from its flag to its end (cg_intra_ll: bracketed as device work that waits for
 * peers, cg_dev_peer_wait_begin). */
static cg_status_t cg_intra_ll_call(cg_intra_t *group, cg_ll_args_t *args,
                                    const cg_ll_watch_t *watch)
{
    cg_dev_t   *dev = group->dev;
    cg_status_t status = CG_OK;

    if (watch == NULL) {
        group->ll_calls++;
    }
    args->size       = group->size;
    args->rank       = group->rank;
    args->flag       = (uint32_t)(group->ll_calls % group->ll_period) + 1;
    args->parity     = (unsigned)(group->ll_epoch & 1);
    args->slot_bytes = group->ll_slot_bytes;
    args->cancel     = watch != NULL ? (const uint64_t *)(group->scratch[group->rank] + CG_INTRA_LL_CANCEL)
                                     : NULL;
    for (int p = 0; p < group->size; p++) {
        args->inbox[p] = group->scratch[p] + CG_INTRA_FLAG_BYTES;
    }
    /* With a server: the application's work done, the server may run the call; not done,
     * the group's stream waits for it (never the legacy stream, where a launch would make
     * the next call's query wait for this call's kernel). Without: after that work, on the
     * legacy stream itself or by the event, unless the caller ordered the call. */
    args->after_app   = 0;
    args->launch_only = cg_intra_ll_launch_only(dev); /* per call: a communicator after
                                                          this one may learn it */
    if (cg_dev_ll_app_query(dev, args)) {
        int done = 0;
        status            = cg_dev_app_done(dev, group->stream, &done);
        args->app_ordered = status == CG_OK && done;
    } else if (!args->app_ordered) {
        args->after_app = cg_dev_ll_after_app(dev);
        if (!args->after_app) {
            status = cg_dev_app_wait(dev, group->stream); /* no host wait */
        }
    }
    if (status == CG_OK) {
        status = dev->ops->ll_run(dev, args, group->stream);
    }
    if (status != CG_OK) { /* the peers wait for lines that will not come: tell them */
        cg_intra_report(group, 0);
        return status;
    }
    status = cg_intra_ll_wait(group, args, watch);
    if (status == CG_OK && (status = cg_intra_ll_clear(group, args)) != CG_OK) {
        cg_intra_report(group, 0); /* the device failed: the group cannot go on */
        return status;
    }
    if (status == CG_OK) {
        group->ll_epoch++;
        /* every line of this call sent: a failure of this rank from now on is later */
        __atomic_store_n(&group->ctl[group->rank]->ll_done, group->ll_calls, __ATOMIC_RELEASE);
    } else if (status != CG_ERR_PEER_NOT_FAST && !group->failed) {
        cg_intra_report(group, 0);
    }
    return status;
}

cg_status_t cg_intra_ll(cg_intra_t *group, cg_ll_args_t *args, const cg_ll_watch_t *watch)
{
    cg_status_t status;

    cg_dev_peer_wait_begin(group->dev);
    group->ll_kernel_left = 0;
    status = cg_intra_ll_call(group, args, watch);
    if (group->ll_kernel_left && !group->holds_peer_wait) {
        group->holds_peer_wait = 1; /* the kernel may still wait: the group's release ends it */
    } else {
        cg_dev_peer_wait_end(group->dev);
    }
    return status;
}
