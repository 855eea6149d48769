/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The LL collective of the host device layer (see cg_ll_args_t in cg_dev.h), run by the CPU
 * as the CUDA kernel runs it on a GPU: the lines go to the peers' inboxes at once; the wait
 * for the peers' lines and the result are the stream's pending work, done when the host
 * polls the stream, so that the caller can watch other things (the in-band agreement)
 * while it waits, as it watches a GPU.
 */
#include "kernels/dev_host_int.h"

#include <stdlib.h>
#include <string.h>

#define CG_LL_DECODE_SMALL 256 /* bytes per peer decoded on the stack */

static size_t cg_ll_lines(size_t bytes)
{
    return (bytes + 3) / 4;
}

/* Slot `from` of `owner`'s inbox for this call's parity, as the device sees it. */
static cg_status_t cg_ll_slot(cg_dev_t *dev, const cg_ll_args_t *args, int owner, int from, size_t lines,
                              uint64_t **slot)
{
    char *at = args->inbox[owner] + ((size_t)args->parity * (size_t)args->size + (size_t)from) *
                                        args->slot_bytes;

    return cg_host_resolve(dev, at, CG_MAX(lines, (size_t)1) * sizeof(uint64_t), (void **)slot);
}

cg_status_t cg_host_ll_push(cg_dev_t *dev, const cg_ll_args_t *args)
{
    const char *src = NULL;
    cg_status_t status = CG_OK;

    for (int to = 0; to < args->size && status == CG_OK; to++) {
        size_t    offset, bytes = cg_ll_send_bytes(args, to, &offset);
        size_t    lines = cg_ll_slot_lines(bytes);
        uint64_t *slot;
        if (bytes > cg_ll_capacity(args->slot_bytes)) {
            return CG_ERR_INVALID_PARAM;
        }
        if (src == NULL && bytes > 0) { /* the whole input as the device sees it */
            size_t total = 0, o;
            for (int t = 0; t < args->size; t++) {
                size_t b = cg_ll_send_bytes(args, t, &o);
                total    = CG_MAX(total, o + b);
            }
            status = cg_host_resolve(dev, args->src, total, (void **)&src);
            if (status != CG_OK) {
                return status;
            }
        }
        status = cg_ll_slot(dev, args, to, args->rank, lines, &slot);
        for (size_t i = 0; status == CG_OK && i < lines; i++) {
            uint32_t data = 0;
            if (bytes > 0) { /* else an empty line: this rank has started the call */
                memcpy(&data, src + offset + 4 * i, CG_MIN((size_t)4, bytes - 4 * i));
            }
            __atomic_store_n(&slot[i], ((uint64_t)args->flag << 32) | data, __ATOMIC_RELEASE);
        }
    }
    return status;
}

/* Is slot `from` complete (*aborted: with an abort line)? The last line first: one load
 * while the peer has not written it. */
static int cg_ll_slot_ready(const uint64_t *slot, size_t lines, uint32_t flag, int *aborted)
{
    for (size_t k = 0; k < lines; k++) {
        size_t   i = lines - 1 - k;
        uint32_t f = (uint32_t)(__atomic_load_n(&slot[i], __ATOMIC_ACQUIRE) >> 32);
        if (f == (flag | CG_LL_ABORT)) {
            *aborted = 1;
        } else if (f != flag) {
            return 0;
        }
    }
    return 1;
}

/* Every expected slot is complete: decode them and write the result. */
static cg_status_t cg_ll_finish(cg_dev_t *dev, const cg_ll_args_t *args,
                                uint64_t *const slots[])
{
    const size_t     elem = args->dtype == CG_DT_NONE ? 1 : cg_dtype_size(args->dtype);
    char            *decoded[CG_DEV_MAX_FANIN] = {NULL};
    uint32_t         small[CG_DEV_MAX_FANIN][CG_LL_DECODE_SMALL / 4]; /* no malloc when small */
    size_t           out_bytes = cg_ll_recv_bytes(args, args->coll == CG_LL_BCAST ? args->root : 0);
    cg_reduce_args_t reduce = {.dtype = args->dtype, .op = args->op, .nsrc = 0, .ndst = 1};
    cg_status_t      status = CG_OK;
    void            *dst;

    if (args->coll == CG_LL_ALLGATHER) {
        out_bytes *= (size_t)args->size;
    }
    if (out_bytes == 0) {
        return CG_OK;
    }
    status = cg_host_resolve(dev, args->dst, out_bytes, &dst);
    for (int p = 0; p < args->size && status == CG_OK; p++) {
        size_t bytes = cg_ll_recv_bytes(args, p);
        if (bytes == 0) {
            continue;
        }
        decoded[p] = bytes <= CG_LL_DECODE_SMALL ? (char *)small[p] : malloc(CG_ALIGN_UP(bytes, 4));
        if (decoded[p] == NULL) {
            status = CG_ERR_NO_MEMORY;
            break;
        }
        for (size_t i = 0; i < cg_ll_lines(bytes); i++) {
            uint32_t data = (uint32_t)slots[p][i];
            memcpy(decoded[p] + 4 * i, &data, 4);
        }
    }
    if (status == CG_OK) {
        switch (args->coll) {
        case CG_LL_BCAST:
            memcpy(dst, decoded[args->root], out_bytes);
            break;
        case CG_LL_ALLGATHER:
            for (int p = 0; p < args->size; p++) {
                memcpy((char *)dst + (size_t)p * out_bytes / args->size, decoded[p],
                       out_bytes / args->size);
            }
            break;
        default: /* reductions: every rank's contribution in rank order */
            reduce.count = out_bytes / elem;
            for (int p = 0; p < args->size; p++) {
                reduce.srcs[reduce.nsrc++] = decoded[p];
            }
            reduce.dsts[0] = dst;
            cg_reduce_host(&reduce);
            break;
        }
    }
    for (int p = 0; p < args->size; p++) {
        if (decoded[p] != (char *)small[p]) {
            free(decoded[p]);
        }
    }
    return status;
}

/* Has the host cancelled the call (cancel word = flag)? It ends with no result, and no
 * error: the caller knows why (a peer is not on the call). */
static int cg_ll_cancelled(cg_dev_t *dev, const cg_ll_args_t *args, uint64_t **cancel)
{
    if (args->cancel == NULL) {
        return 0;
    }
    if (*cancel == NULL &&
        cg_host_resolve(dev, args->cancel, sizeof(uint64_t), (void **)cancel) != CG_OK) {
        *cancel = NULL;
        return 0;
    }
    return __atomic_load_n(*cancel, __ATOMIC_ACQUIRE) == args->flag;
}

cg_status_t cg_host_ll_poll(cg_dev_t *dev, const cg_ll_args_t *args, uint64_t *slots[], int *done)
{
    int         aborted = 0;
    cg_status_t status;

    *done = 0;
    for (int p = 0; p < args->size; p++) { /* every peer: at least its empty line */
        size_t lines = cg_ll_slot_lines(cg_ll_recv_bytes(args, p));
        if (slots[p] == NULL &&
            (status = cg_ll_slot(dev, args, args->rank, p, lines, &slots[p])) != CG_OK) {
            *done = 1;
            return status;
        }
        if (!cg_ll_slot_ready(slots[p], lines, args->flag, &aborted)) {
            *done = cg_ll_cancelled(dev, args, &slots[CG_DEV_MAX_FANIN]);
            return CG_OK; /* not yet (or never: cancelled) */
        }
    }
    *done = 1;
    return aborted ? CG_ERR_MISMATCH : cg_ll_finish(dev, args, slots);
}

cg_status_t cg_host_ll_abort(cg_dev_t *dev, const cg_ll_args_t *args)
{
    const uint64_t line = (uint64_t)(args->flag | CG_LL_ABORT) << 32;
    cg_status_t    status = CG_OK;

    for (int p = 0; p < args->size && status == CG_OK; p++) {
        size_t    lines = cg_ll_slot_lines(cg_ll_recv_bytes(args, p));
        uint64_t *slot;
        if (p == args->rank) {
            continue;
        }
        status = cg_ll_slot(dev, args, args->rank, p, lines, &slot);
        for (size_t i = 0; status == CG_OK && i < lines; i++) {
            __atomic_store_n(&slot[i], line, __ATOMIC_RELEASE);
        }
    }
    return status;
}
