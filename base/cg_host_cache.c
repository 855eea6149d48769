/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The host-memory cache: buffers a memory query found to be host memory, so that the next
 * collective on the same buffer skips the query (a cuPointerGetAttributes on a GPU) and a
 * host-buffer call costs what the collective underneath costs.
 *
 * Sound only while every release of address space is reported before it happens (munmap,
 * mremap, madvise, brk, shmdt: cg_host_cache_forget), because a released range may come back
 * as device memory. The owner enables the cache once such a source is installed (UCX's
 * memory events). A release forgets every entry (one generation number): releases are rare
 * next to collectives, and a forgotten buffer costs one query. An entry records the range
 * the call used, [ptr, ptr + bytes): a later call hits when its range lies inside.
 *
 * Threads: each slot is a sequence lock; a reader that overlaps a writer misses, a writer
 * that finds the slot taken gives up. An entry is stamped with the generation read before
 * its query, so a release during the query leaves it stale. (A buffer released by one
 * thread while another passes it to a collective is the application's error: the cache may
 * then keep it a few calls longer.)
 */
#include "base/cg_base.h"

#define CG_HOST_CACHE_SLOTS 64 /* the slot: 6 bits of a hash of the address */

typedef struct {
    uint64_t  seq; /* odd while written */
    uintptr_t start;
    uintptr_t end;
    uint64_t  gen;
} __attribute__((aligned(32))) cg_host_cache_slot_t;

static cg_host_cache_slot_t cg_host_cache_slots[CG_HOST_CACHE_SLOTS];
static uint64_t             cg_host_cache_gen = 1; /* 0: an empty slot's */
static int                  cg_host_cache_on;

/* An entry is found by the address a call passed (the start of its range), so the whole
 * address picks the slot: two small buffers next to each other (the 8-byte input and output
 * of a norm on the stack) must not share one and push each other out at every call. */
static cg_host_cache_slot_t *cg_host_cache_slot(uintptr_t addr)
{
    return &cg_host_cache_slots[((uint64_t)addr * 0x9e3779b97f4a7c15ull) >> 58]; /* 64 */
}

void cg_host_cache_enable(int on)
{
    __atomic_add_fetch(&cg_host_cache_gen, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&cg_host_cache_on, on != 0, __ATOMIC_RELEASE);
}

uint64_t cg_host_cache_generation(void)
{
    return __atomic_load_n(&cg_host_cache_gen, __ATOMIC_ACQUIRE);
}

void cg_host_cache_forget(void)
{
    __atomic_add_fetch(&cg_host_cache_gen, 1, __ATOMIC_RELEASE);
}

int cg_host_cache_lookup(const void *ptr, size_t bytes)
{
    const uintptr_t       addr = (uintptr_t)ptr;
    cg_host_cache_slot_t *slot;
    uintptr_t             start, end;
    uint64_t              seq, gen;

    if (!__atomic_load_n(&cg_host_cache_on, __ATOMIC_RELAXED)) {
        return 0;
    }
    slot = cg_host_cache_slot(addr);
    seq  = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
    if (seq & 1) {
        return 0;
    }
    start = __atomic_load_n(&slot->start, __ATOMIC_RELAXED);
    end   = __atomic_load_n(&slot->end, __ATOMIC_RELAXED);
    gen   = __atomic_load_n(&slot->gen, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&slot->seq, __ATOMIC_RELAXED) != seq ||
        gen != __atomic_load_n(&cg_host_cache_gen, __ATOMIC_ACQUIRE)) {
        return 0;
    }
    return addr >= start && addr < end && bytes <= end - addr;
}

void cg_host_cache_insert(const void *ptr, size_t bytes, uint64_t gen)
{
    const uintptr_t       addr = (uintptr_t)ptr;
    cg_host_cache_slot_t *slot = cg_host_cache_slot(addr);
    uint64_t              seq  = __atomic_load_n(&slot->seq, __ATOMIC_RELAXED);

    if (!__atomic_load_n(&cg_host_cache_on, __ATOMIC_RELAXED) || bytes == 0 ||
        addr + bytes < addr || (seq & 1) ||
        !__atomic_compare_exchange_n(&slot->seq, &seq, seq + 1, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED)) {
        return;
    }
    __atomic_store_n(&slot->start, addr, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->end, addr + bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->gen, gen, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->seq, seq + 2, __ATOMIC_RELEASE);
}
