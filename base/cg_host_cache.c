/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The host-memory cache: buffers a memory query found to be host memory, so that the next
 * collective on the same buffer skips the query (a cuPointerGetAttributes on a GPU) and a
 * host-buffer call costs what the collective underneath costs.
 *
 * Sound only while every release of address space is reported before it happens (munmap,
 * mremap, madvise, brk, shmdt: cg_host_cache_release), because a released range may come
 * back as device memory. The owner enables the cache once such a source is installed (UCX's
 * memory events). A release forgets the entries its range overlaps, and no other: the
 * releases of a running program are mostly the C library trimming its heap or returning a
 * large block, far from the buffers an application passes, and a collective underneath
 * that frees a temporary block may release address space on every call (the first version
 * forgot every entry at any release, and then missed on every such call). An entry records
 * the range the call used, [ptr, ptr + bytes): a later call hits when its range lies inside.
 *
 * Threads: each slot is a sequence lock; a reader that overlaps a writer misses, a writer
 * that finds the slot taken gives up. An insert carries the ticket (count of releases) read
 * before its query; after publishing its entry it reads the count again and takes the entry
 * back if any release came in between (it cannot know that release's range). A release
 * counts itself, then clears the overlapping entries: with a full fence on both sides, either
 * the release sees the published entry or the insert sees the count (Dekker). Enabling and
 * cg_host_cache_forget make every entry stale at once (a generation number). A release's
 * range is widened to whole pages (the kernel releases pages; the hooks pass the length
 * asked for), and a release of unknown size forgets everything. (A buffer
 * released by one thread while another passes it to a collective is the application's
 * error: the cache may then keep it a few calls longer.)
 */
#include "base/cg_base.h"

#include <unistd.h>

#define CG_HOST_CACHE_SLOTS 64

typedef struct {
    uint64_t  seq; /* odd while written */
    uintptr_t start;
    uintptr_t end;
    uint64_t  gen;
    uint64_t  stamp; /* when inserted or last hit (the inserts' count): the older of two goes */
} __attribute__((aligned(64))) cg_host_cache_slot_t;

static cg_host_cache_slot_t cg_host_cache_slots_table[CG_HOST_CACHE_SLOTS];
static uint64_t             cg_host_cache_gen = 1; /* 0: an empty slot's */
static uint64_t             cg_host_cache_releases; /* releases reported: an insert's ticket */
static uint64_t             cg_host_cache_inserts;  /* the stamps: inserts and hits */
static int                  cg_host_cache_on;
/* the kernel releases whole pages (munmap, madvise, mremap round the length up) while the
 * hooks pass the length asked for: the page size, read when enabled (not in a hook) */
static uintptr_t            cg_host_cache_page = 4096;

/* An entry is found by the address a call passed (the start of its range), so the whole
 * address picks its slots: two small buffers next to each other (the 8-byte input and output
 * of a norm on the stack) must not share one. Two candidate slots per address (bits of one
 * hash; different slots): an insert takes the first free for it, else the one holding the
 * older entry (inserted or hit longer ago), so a call's input and output, one hit or
 * inserted and the other inserted after it, never push each other out: only what the call
 * does not use goes. */
void cg_host_cache_slots(const void *ptr, unsigned slots[2])
{
    const uint64_t hash = (uint64_t)(uintptr_t)ptr * 0x9e3779b97f4a7c15ull;

    slots[0] = (unsigned)(hash >> 58);
    slots[1] = (unsigned)(hash >> 52) % CG_HOST_CACHE_SLOTS;
    if (slots[1] == slots[0]) {
        slots[1] ^= 1;
    }
}

/* A writer takes slot from an even seq to odd: 1 when it did. The fence keeps the writer's
 * stores that follow from becoming visible before the odd seq (a seqlock writer). */
static int cg_host_cache_claim(cg_host_cache_slot_t *slot, uint64_t seq)
{
    if ((seq & 1) || !__atomic_compare_exchange_n(&slot->seq, &seq, seq + 1, 0, __ATOMIC_ACQUIRE,
                                                  __ATOMIC_RELAXED)) {
        return 0;
    }
    __atomic_thread_fence(__ATOMIC_RELEASE);
    return 1;
}

/* Empties a slot claimed at seq. */
static void cg_host_cache_empty(cg_host_cache_slot_t *slot, uint64_t seq)
{
    __atomic_store_n(&slot->gen, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->seq, seq + 2, __ATOMIC_RELEASE);
}

/* What a slot holds, read under its sequence lock (start, end and seq set for CURRENT). */
typedef enum {
    CG_HOST_CACHE_WRITING, /* a writer has it (odd seq) */
    CG_HOST_CACHE_CHANGED, /* written while it was read */
    CG_HOST_CACHE_STALE,   /* empty, or of an older generation */
    CG_HOST_CACHE_CURRENT
} cg_host_cache_read_t;

static cg_host_cache_read_t cg_host_cache_read(cg_host_cache_slot_t *slot, uint64_t *seq_out,
                                               uintptr_t *start_out, uintptr_t *end_out)
{
    uintptr_t start, end;
    uint64_t  seq, gen;

    seq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
    if (seq & 1) {
        return CG_HOST_CACHE_WRITING;
    }
    start = __atomic_load_n(&slot->start, __ATOMIC_RELAXED);
    end   = __atomic_load_n(&slot->end, __ATOMIC_RELAXED);
    gen   = __atomic_load_n(&slot->gen, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&slot->seq, __ATOMIC_RELAXED) != seq) {
        return CG_HOST_CACHE_CHANGED;
    }
    if (gen != __atomic_load_n(&cg_host_cache_gen, __ATOMIC_ACQUIRE)) {
        return CG_HOST_CACHE_STALE;
    }
    *seq_out = seq, *start_out = start, *end_out = end;
    return CG_HOST_CACHE_CURRENT;
}

/* Does slot hold [addr, addr + bytes) of the current generation? start_out: its start. */
static int cg_host_cache_holds(cg_host_cache_slot_t *slot, uintptr_t addr, size_t bytes,
                               uintptr_t *start_out)
{
    uintptr_t start, end;
    uint64_t  seq;

    if (cg_host_cache_read(slot, &seq, &start, &end) != CG_HOST_CACHE_CURRENT) {
        return 0;
    }
    *start_out = start;
    return addr >= start && addr < end && bytes <= end - addr;
}

void cg_host_cache_forget(void)
{
    __atomic_add_fetch(&cg_host_cache_releases, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&cg_host_cache_gen, 1, __ATOMIC_RELEASE);
}

void cg_host_cache_enable(int on)
{
    const long page = sysconf(_SC_PAGESIZE);

    if (page > 0 && (page & (page - 1)) == 0) {
        __atomic_store_n(&cg_host_cache_page, (uintptr_t)page, __ATOMIC_RELAXED);
    }
    cg_host_cache_forget();
    __atomic_store_n(&cg_host_cache_on, on != 0, __ATOMIC_RELEASE);
}

uint64_t cg_host_cache_ticket(void)
{
    return __atomic_load_n(&cg_host_cache_releases, __ATOMIC_ACQUIRE);
}

/* Empties slot when it holds a current entry that overlaps [lo, hi). A slot being written
 * is left: an insert takes its entry back itself when a release came during it, and a clear
 * empties it anyway. */
static void cg_host_cache_clear(cg_host_cache_slot_t *slot, uintptr_t lo, uintptr_t hi)
{
    cg_host_cache_read_t read;
    uintptr_t            start, end;
    uint64_t             seq;

    for (;;) {
        read = cg_host_cache_read(slot, &seq, &start, &end);
        if (read == CG_HOST_CACHE_CHANGED) {
            continue; /* written meanwhile: read it again */
        }
        if (read != CG_HOST_CACHE_CURRENT || end <= lo || start >= hi) {
            return;
        }
        if (cg_host_cache_claim(slot, seq)) {
            cg_host_cache_empty(slot, seq);
            return;
        }
    }
}

void cg_host_cache_release(const void *addr, size_t bytes)
{
    const uintptr_t page = __atomic_load_n(&cg_host_cache_page, __ATOMIC_RELAXED);
    const uintptr_t lo   = (uintptr_t)addr & ~(page - 1);
    uintptr_t       hi   = (uintptr_t)addr + bytes;

    if (bytes == 0) { /* a release whose size nobody knows (UCM's shmdt of an unknown segment) */
        cg_host_cache_forget();
        return;
    }
    hi = hi < (uintptr_t)addr || hi > UINTPTR_MAX - page ? UINTPTR_MAX
                                                         : (hi + page - 1) & ~(page - 1);
    __atomic_add_fetch(&cg_host_cache_releases, 1, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the count before any slot is read */
    for (unsigned i = 0; i < CG_HOST_CACHE_SLOTS; i++) {
        cg_host_cache_clear(&cg_host_cache_slots_table[i], lo, hi);
    }
}

/* A hit makes its entry the newest, so that an insert of the same call (its other buffer,
 * new) pushes out an entry the call does not use rather than this one (which the next call
 * would miss). Plain loads and stores: the stamps only order entries roughly, a lost update
 * costs at most a query; nothing is written while the entry is the newest already (one
 * buffer called again and again). */
static void cg_host_cache_touch(cg_host_cache_slot_t *slot)
{
    const uint64_t newest = __atomic_load_n(&cg_host_cache_inserts, __ATOMIC_RELAXED);

    if (__atomic_load_n(&slot->stamp, __ATOMIC_RELAXED) != newest) {
        __atomic_store_n(&cg_host_cache_inserts, newest + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&slot->stamp, newest + 1, __ATOMIC_RELAXED);
    }
}

int cg_host_cache_lookup(const void *ptr, size_t bytes)
{
    const uintptr_t addr = (uintptr_t)ptr;
    uintptr_t       start;
    unsigned        slots[2];

    if (!__atomic_load_n(&cg_host_cache_on, __ATOMIC_RELAXED)) {
        return 0;
    }
    cg_host_cache_slots(ptr, slots);
    for (int i = 0; i < 2; i++) {
        cg_host_cache_slot_t *slot = &cg_host_cache_slots_table[slots[i]];
        if (cg_host_cache_holds(slot, addr, bytes, &start)) {
            cg_host_cache_touch(slot);
            return 1;
        }
    }
    return 0;
}

/* May an insert of addr write slot: empty, stale (or being written), or already addr's? */
static int cg_host_cache_free_for(cg_host_cache_slot_t *slot, uintptr_t addr)
{
    uintptr_t start = 0; /* stays 0 unless the slot holds a current entry */

    (void)cg_host_cache_holds(slot, addr, 0, &start);
    return start == 0 || start == addr;
}

void cg_host_cache_insert(const void *ptr, size_t bytes, uint64_t ticket)
{
    const uintptr_t       addr = (uintptr_t)ptr;
    cg_host_cache_slot_t *slot;
    unsigned              slots[2];
    uint64_t              seq, gen;

    if (!__atomic_load_n(&cg_host_cache_on, __ATOMIC_RELAXED) || bytes == 0 ||
        addr + bytes < addr || cg_host_cache_ticket() != ticket) {
        return; /* off, empty, or a release came during the query */
    }
    gen = __atomic_load_n(&cg_host_cache_gen, __ATOMIC_ACQUIRE);
    /* the first slot free for this address, else the one holding the older entry: a call's
     * buffers, inserted together, push out what came before them, never each other (with
     * the second slot taken whatever it held, two buffers sharing it while older entries
     * held both first slots pushed each other out at every call) */
    cg_host_cache_slots(ptr, slots);
    slot = &cg_host_cache_slots_table[slots[0]];
    if (!cg_host_cache_free_for(slot, addr)) {
        cg_host_cache_slot_t *other = &cg_host_cache_slots_table[slots[1]];
        if (cg_host_cache_free_for(other, addr) ||
            __atomic_load_n(&other->stamp, __ATOMIC_RELAXED) <
                __atomic_load_n(&slot->stamp, __ATOMIC_RELAXED)) {
            slot = other;
        }
    }
    seq = __atomic_load_n(&slot->seq, __ATOMIC_RELAXED);
    if (!cg_host_cache_claim(slot, seq)) {
        return;
    }
    __atomic_store_n(&slot->start, addr, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->end, addr + bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->gen, gen, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->stamp, __atomic_add_fetch(&cg_host_cache_inserts, 1, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&slot->seq, seq + 2, __ATOMIC_RELEASE);
    /* published; a release since the ticket may have scanned the slots before it was */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (cg_host_cache_ticket() != ticket && cg_host_cache_claim(slot, seq + 2)) {
        cg_host_cache_empty(slot, seq + 2); /* unless a writer since took it over */
    }
}
