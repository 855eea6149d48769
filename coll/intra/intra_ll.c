/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The LL collective on a local group (cg_ll_args_t in kernels/cg_dev.h): one device
 * operation, synchronised in the data, for small messages of the four collectives. Every
 * rank of the group runs every LL call (the ranks agreed on the call before), so the calls'
 * flags and parities advance in step: a rank writes call k + 1's lines into the parity its
 * peers read for call k - 1, which they finished before they could send it theirs for k.
 */
#include "coll/intra/intra.h"


size_t cg_intra_ll_capacity(const cg_intra_t *group)
{
    return group->dev->ops->ll_run != NULL ? cg_ll_capacity(group->ll_slot_bytes) : 0;
}

/* Wait for the stream, watching for peers that failed or died: their lines never come, so
 * this rank's own inbox gets abort lines, which end the device's wait. */
static cg_status_t cg_intra_ll_wait(cg_intra_t *group, const cg_ll_args_t *args)
{
    cg_dev_t   *dev = group->dev;
    cg_status_t status;
    cg_pace_t   pace  = {0};
    double      t0    = 0;
    int         done  = 0;

    cg_count(CG_CNT_HOST_WAITS, 1);
    status = dev->ops->event_record(dev, group->event, group->stream);
    while (status == CG_OK && !done) {
        status = dev->ops->event_query(dev, group->event, &done);
        if (done || status != CG_OK) {
            continue;
        }
        if (!cg_pace(&pace)) {
            continue;
        }
        if (cg_intra_peer_failed(group) || (status = cg_intra_watch(group, &t0)) != CG_OK) {
            (void)dev->ops->ll_abort(dev, args);
            (void)dev->ops->stream_sync(dev, group->stream);
            group->failed = 1;
            return status != CG_OK ? status : CG_ERR_PEER;
        }
    }
    return status;
}

cg_status_t cg_intra_ll(cg_intra_t *group, cg_ll_args_t *args)
{
    cg_dev_t   *dev = group->dev;
    cg_status_t status;

    group->ll_epoch++;
    args->size       = group->size;
    args->rank       = group->rank;
    args->flag       = (uint32_t)(group->ll_epoch % (CG_LL_ABORT - 1)) + 1;
    args->parity     = (unsigned)(group->ll_epoch & 1);
    args->slot_bytes = group->ll_slot_bytes;
    for (int p = 0; p < group->size; p++) {
        args->inbox[p] = group->scratch[p] + CG_INTRA_FLAG_BYTES;
    }
    status = dev->ops->app_wait(dev, group->stream); /* stream-ordered: no host wait */
    if (status == CG_OK) {
        status = dev->ops->ll_run(dev, args, group->stream);
    }
    if (status != CG_OK) { /* the peers wait for lines that will not come: tell them */
        cg_intra_report(group, 0);
        return status;
    }
    status = cg_intra_ll_wait(group, args);
    if (status != CG_OK && !group->failed) {
        cg_intra_report(group, 0);
    }
    return status;
}
