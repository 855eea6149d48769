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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define CG_LL_DECODE_SMALL 8192 /* bytes of contributions decoded on the stack */

/* Slot `from` of `owner`'s inbox for this call's parity, as the kernel sees it (kernel 1)
 * or a copy from the host (kernel 0: the abort lines, a side copy in the CUDA layer). */
static cg_status_t cg_ll_slot(cg_dev_t *dev, const cg_ll_args_t *args, int owner, int from,
                              size_t lines, int kernel, uint64_t **slot)
{
    const void  *at    = cg_ll_slot_at(args, owner, from);
    const size_t bytes = CG_MAX(lines, (size_t)1) * sizeof(uint64_t);

    return kernel ? cg_host_resolve_kernel(dev, at, bytes, (void **)slot)
                  : cg_host_resolve(dev, at, bytes, (void **)slot);
}

/* Ask for every cache line of a slot in writable state at once, before the first store:
 * the lines were last read by the peer, and stores that each wait for their line in turn
 * stall once the store buffer fills (from about 256 bytes of payload). */
static void cg_ll_claim(uint64_t *slot, size_t lines)
{
    for (size_t i = 0; i < lines; i += 8) {
#if defined(__x86_64__)
        __asm__ volatile("prefetchw %0" : : "m"(slot[i]));
#else
        __builtin_prefetch(&slot[i], 1, 3);
#endif
    }
}

/* bytes of src as lines of flag into slot (an empty line when bytes is 0). Each line is
 * written by one 8-byte store, or by half of an aligned 16-byte store (two lines, each half
 * atomic on x86-64), so a reader sees a line whole or not at all, as on a GPU. */
static void cg_ll_encode(uint64_t *slot, const char *src, size_t bytes, uint32_t flag)
{
    const uint64_t high  = (uint64_t)flag << 32;
    const size_t   words = bytes / 4;
    uint32_t       data  = 0;
    size_t         i     = 0;

#if defined(__SSE2__)
    const __m128i flags = _mm_set1_epi32((int)flag);

    if (((uintptr_t)slot & 15) != 0 && words > 0) { /* one line to the 16-byte boundary */
        memcpy(&data, src, 4);
        __atomic_store_n(&slot[0], high | data, __ATOMIC_RELAXED);
        i = 1;
    }
    for (; i + 4 <= words; i += 4) { /* four words: two pairs of lines */
        __m128i four = _mm_loadu_si128((const __m128i *)(const void *)(src + 4 * i));
        _mm_store_si128((__m128i *)(void *)&slot[i], _mm_unpacklo_epi32(four, flags));
        _mm_store_si128((__m128i *)(void *)&slot[i + 2], _mm_unpackhi_epi32(four, flags));
    }
#endif
    for (; i < words; i++) {
        memcpy(&data, src + 4 * i, 4);
        __atomic_store_n(&slot[i], high | data, __ATOMIC_RELAXED);
    }
    if (bytes % 4 != 0 || bytes == 0) {
        data = 0;
        if (bytes % 4 != 0) {
            memcpy(&data, src + 4 * words, bytes % 4);
        }
        __atomic_store_n(&slot[words], high | data, __ATOMIC_RELAXED);
    }
    __atomic_thread_fence(__ATOMIC_RELEASE);
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
            status = cg_host_resolve_kernel(dev, args->src, total, (void **)&src);
            if (status != CG_OK) {
                return status;
            }
        }
        status = cg_ll_slot(dev, args, to, args->rank, lines, 1, &slot);
        if (status == CG_OK && lines > 8) {
            cg_ll_claim(slot, lines);
        }
        if (status == CG_OK) { /* bytes 0: an empty line, this rank has started the call */
            cg_ll_encode(slot, bytes > 0 ? src + offset : NULL, bytes, args->flag);
        }
    }
    return status;
}

/* Take the lines of slot that carry flag (or the abort flag: *aborted) and were not taken
 * yet, into taken, each the moment it is seen, the last line first: as a GPU's threads
 * take their lines, each on its own, never waiting for an earlier line of the slot. A line
 * left from an older call with the same flag is thus taken as data, as on a GPU (the flags'
 * wrap, intra_ll.c), not overwritten by the fresh one before the host happens to look.
 * Returns the lines still to come. */
static size_t cg_ll_slot_take(const uint64_t *slot, uint64_t *taken, size_t lines, size_t left,
                              uint32_t flag, int *aborted)
{
    for (size_t i = lines; i-- > 0 && left > 0;) {
        uint64_t line;
        uint32_t line_flag;
        if ((uint32_t)(taken[i] >> 32) != 0) {
            continue;
        }
        line      = __atomic_load_n(&slot[i], __ATOMIC_ACQUIRE);
        line_flag = (uint32_t)(line >> 32);
        if (line_flag == flag || line_flag == (flag | CG_LL_ABORT)) {
            taken[i] = line;
            *aborted |= line_flag != flag;
            left--;
        }
    }
    return left;
}

/* The payload of bytes carried by slot's lines into out (whole words, then the tail). */
static void cg_ll_decode(char *out, const uint64_t *slot, size_t bytes)
{
    const size_t words = bytes / 4;
    uint32_t     data;
    size_t       i = 0;

#if defined(__SSE2__)
    if (((uintptr_t)slot & 15) == 0) {
        for (; i + 4 <= words; i += 4) { /* the data words of four lines */
            __m128 low  = _mm_castsi128_ps(_mm_load_si128((const __m128i *)(const void *)&slot[i]));
            __m128 high = _mm_castsi128_ps(_mm_load_si128((const __m128i *)(const void *)&slot[i + 2]));
            _mm_storeu_ps((float *)(void *)(out + 4 * i), _mm_shuffle_ps(low, high, _MM_SHUFFLE(2, 0, 2, 0)));
        }
    }
#endif
    for (; i < words; i++) {
        data = (uint32_t)slot[i];
        memcpy(out + 4 * i, &data, 4);
    }
    if (bytes % 4 != 0) {
        data = (uint32_t)slot[words];
        memcpy(out + 4 * words, &data, bytes % 4);
    }
}

/* Every expected slot is complete: write the result (bcast and allgather: the lines
 * straight into the output; reductions: every contribution decoded, then reduced). */
static cg_status_t cg_ll_finish(cg_dev_t *dev, const cg_ll_args_t *args,
                                uint64_t *const slots[])
{
    const size_t     elem = args->dtype == CG_DT_NONE ? 1 : cg_dtype_size(args->dtype);
    _Alignas(16) char pool[CG_LL_DECODE_SMALL]; /* no malloc when it fits */
    char            *decoded = pool;
    size_t           out_bytes = cg_ll_recv_bytes(args, args->coll == CG_LL_BCAST ? args->root : 0);
    size_t           stride = CG_ALIGN_UP(out_bytes, 16);
    cg_reduce_args_t reduce = {.dtype = args->dtype, .op = args->op, .nsrc = 0, .ndst = 1};
    cg_status_t      status;
    char            *dst;

    if (out_bytes == 0) {
        return CG_OK;
    }
    status = cg_host_resolve_kernel(
        dev, args->dst,
        args->coll == CG_LL_ALLGATHER ? out_bytes * (size_t)args->size : out_bytes, (void **)&dst);
    if (status != CG_OK) {
        return status;
    }
    switch (args->coll) {
    case CG_LL_BCAST:
        cg_ll_decode(dst, slots[args->root], out_bytes);
        return CG_OK;
    case CG_LL_ALLGATHER:
        for (int p = 0; p < args->size; p++) {
            cg_ll_decode(dst + (size_t)p * out_bytes, slots[p], out_bytes);
        }
        return CG_OK;
    default: /* reductions: every rank's contribution in rank order */
        if (stride * (size_t)args->size > sizeof(pool) &&
            (decoded = malloc(stride * (size_t)args->size)) == NULL) {
            return CG_ERR_NO_MEMORY;
        }
        for (int p = 0; p < args->size; p++) {
            cg_ll_decode(decoded + (size_t)p * stride, slots[p], out_bytes);
            reduce.srcs[reduce.nsrc++] = decoded + (size_t)p * stride;
        }
        reduce.count   = out_bytes / elem;
        reduce.dsts[0] = dst;
        cg_reduce_host(&reduce);
        if (decoded != pool) {
            free(decoded);
        }
        return CG_OK;
    }
}

/* Has the host cancelled the call (cancel word = flag: *cancelled)? It ends with no result,
 * and no error: the caller knows why (a peer is not on the call). A word the kernel cannot
 * reach is its illegal address: the call ends with the error. */
static cg_status_t cg_ll_cancelled(cg_dev_t *dev, const cg_ll_args_t *args, uint64_t **cancel,
                                   int *cancelled)
{
    cg_status_t status = CG_OK;

    *cancelled = 0;
    if (args->cancel == NULL) {
        return CG_OK;
    }
    if (*cancel == NULL) {
        status = cg_host_resolve_kernel(dev, args->cancel, sizeof(uint64_t), (void **)cancel);
    }
    if (status != CG_OK) {
        *cancel = NULL;
        return status;
    }
    *cancelled = __atomic_load_n(*cancel, __ATOMIC_ACQUIRE) == args->flag;
    return CG_OK;
}

/* The taken lines' buffer for this call: a slot of stride lines per peer, all 0. */
cg_status_t cg_host_ll_wait_start(const cg_ll_args_t *args, cg_host_ll_wait_t *wait)
{
    size_t stride = 0, bytes;

    memset(wait->slots, 0, sizeof(wait->slots));
    wait->aborted = 0;
    for (int p = 0; p < args->size; p++) {
        wait->left[p] = cg_ll_slot_lines(cg_ll_recv_bytes(args, p));
        stride        = CG_MAX(stride, wait->left[p]);
    }
    wait->stride = CG_ALIGN_UP(stride, 2); /* 16-byte slots: decoded two lines a load */
    bytes        = wait->stride * (size_t)args->size * sizeof(uint64_t);
    if (bytes > wait->taken_bytes) {
        free(wait->taken);
        wait->taken_bytes = 0;
        if (posix_memalign((void **)&wait->taken, 64, bytes) != 0) {
            wait->taken = NULL;
            return CG_ERR_NO_MEMORY;
        }
        wait->taken_bytes = bytes;
    }
    memset(wait->taken, 0, bytes);
    return CG_OK;
}

cg_status_t cg_host_ll_poll(cg_dev_t *dev, const cg_ll_args_t *args, cg_host_ll_wait_t *wait,
                            int *done)
{
    uint64_t   *taken[CG_DEV_MAX_FANIN];
    int         waiting = 0;
    cg_status_t status;

    *done = 0;
    if (cg_dev_lost(dev)) { /* the slots kept went with the reset: ended, with the error (a
                             * drain of the stream must not wait for it) */
        *done = 1;
        return CG_ERR_DEVICE;
    }
    for (int p = 0; p < args->size; p++) { /* every peer: at least its empty line */
        size_t lines = cg_ll_slot_lines(cg_ll_recv_bytes(args, p));
        taken[p]     = wait->taken + (size_t)p * wait->stride;
        if (wait->slots[p] == NULL &&
            (status = cg_ll_slot(dev, args, args->rank, p, lines, 1, &wait->slots[p])) != CG_OK) {
            *done = 1;
            return status;
        }
        if (wait->left[p] > 0) {
            wait->left[p] = cg_ll_slot_take(wait->slots[p], taken[p], lines, wait->left[p],
                                            args->flag, &wait->aborted);
            waiting |= wait->left[p] > 0;
        }
    }
    if (waiting) { /* not yet (or never: cancelled, no result) */
        int cancelled;
        status = cg_ll_cancelled(dev, args, &wait->slots[CG_DEV_MAX_FANIN], &cancelled);
        *done  = status != CG_OK ? 1 : cancelled ? 2 : 0;
        return status;
    }
    if (wait->aborted) { /* given up (ll_body.cuh: the kernel ends normally, no result) */
        *done = 2;
        return CG_OK;
    }
    *done  = 1;
    status = cg_ll_finish(dev, args, taken);
    for (int p = 0; p < args->size && status == CG_OK; p++) { /* as the kernel (ll_consume) */
        memset(wait->slots[p], 0, cg_ll_slot_lines(cg_ll_recv_bytes(args, p)) * sizeof(uint64_t));
    }
    return status;
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
        status = cg_ll_slot(dev, args, args->rank, p, lines, 0, &slot);
        for (size_t i = 0; status == CG_OK && i < lines; i++) {
            __atomic_store_n(&slot[i], line, __ATOMIC_RELEASE);
        }
    }
    return status;
}
