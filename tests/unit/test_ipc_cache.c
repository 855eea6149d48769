/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The process's IPC registry with a fake device layer that behaves like legacy CUDA IPC:
 * it counts imports and closes and refuses to open a peer's range that is still mapped
 * (already mapped). An allocation is mapped once, whatever the number of communicators
 * asking; memory freed and allocated again at the same address (new buffer id) is
 * remapped and the stale mapping closed first; "already mapped" from the driver is
 * answered by purging and retrying; a pinned mapping is never closed under its user; the
 * least recently used mapping goes when a peer has too many.
 */
#include "coll/intra/intra.h"

#include "tests/unit/unit.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_SLOTS 128

typedef struct {
    uint64_t peer, base, size;
    int      live;
} fake_mapping_t;

static int            fake_imports, fake_closes, fake_refuse_once;
static char           fake_memory[FAKE_SLOTS][256];
static fake_mapping_t fake_live[FAKE_SLOTS];

/* The fake handle carries its peer in opaque, as the driver knows the exporter. */
static cg_status_t fake_import(cg_dev_t *dev, const cg_ipc_handle_t *h, void **base)
{
    uint64_t peer;
    int      slot = -1;

    (void)dev;
    memcpy(&peer, h->opaque, sizeof(peer));
    if (fake_refuse_once) { /* the driver knows of a mapping the registry does not */
        fake_refuse_once = 0;
        return CG_ERR_ALREADY_MAPPED;
    }
    for (int i = 0; i < FAKE_SLOTS; i++) {
        fake_mapping_t *m = &fake_live[i];
        if (m->live && m->peer == peer && m->base < h->base + h->size && h->base < m->base + m->size) {
            return CG_ERR_ALREADY_MAPPED;
        }
        slot = (!m->live && slot < 0) ? i : slot;
    }
    ck_assert_int_ge(slot, 0);
    fake_live[slot] = (fake_mapping_t){peer, h->base, h->size, 1};
    fake_imports++;
    *base = fake_memory[slot];
    return CG_OK;
}

static void fake_close(cg_dev_t *dev, void *base)
{
    (void)dev;
    fake_live[((char(*)[256])base) - fake_memory].live = 0;
    fake_closes++;
}

static cg_dev_ops_t fake_ops = {.name = "fake", .ipc_import = fake_import, .ipc_close = fake_close};
static cg_dev_t     fake_dev = {.ops = &fake_ops};

static cg_ipc_handle_t handle(uint64_t peer, uint64_t id, uint64_t base, uint64_t size,
                              uint64_t offset)
{
    cg_ipc_handle_t h;
    memset(&h, 0, sizeof(h));
    h.buffer_id = id;
    h.base      = base;
    h.size      = size;
    h.offset    = offset;
    memcpy(h.opaque, &peer, sizeof(peer));
    return h;
}

static void reset(void)
{
    cg_ipc_registry_cleanup();
    fake_imports = fake_closes = fake_refuse_once = 0;
    memset(fake_live, 0, sizeof(fake_live));
}

START_TEST(test_shared_by_communicators)
{
    cg_ipc_cache_stats_t st;
    cg_ipc_mapping_t    *pin1, *pin2, *pin3;
    cg_ipc_handle_t      a = handle(7, 1, 0x10000, 4096, 0), a2 = handle(7, 1, 0x10000, 4096, 100);
    char                *p, *q, *r;

    reset();
    /* two communicators over the same processes map the same buffer in one call each */
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 7, &a, &p, &pin1), CG_OK);
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 7, &a2, &q, &pin2), CG_OK);
    ck_assert_int_eq(fake_imports, 1);
    ck_assert_ptr_eq(q, p + 100);
    /* another peer's allocation at the same address is another mapping */
    cg_ipc_handle_t other = handle(8, 1, 0x10000, 4096, 0);
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 8, &other, &r, &pin3), CG_OK);
    ck_assert_int_eq(fake_imports, 2);
    cg_ipc_release(pin1, 0);
    cg_ipc_release(pin2, 0);
    cg_ipc_release(pin3, 0);
    cg_ipc_stats(&st);
    ck_assert_uint_eq(st.hits, 1);
    ck_assert_uint_eq(st.misses, 2);
    ck_assert_uint_eq(st.mapped, 2); /* cached after the calls */
    cg_ipc_registry_cleanup();
    ck_assert_int_eq(fake_closes, 2);
}
END_TEST

START_TEST(test_freed_and_reused)
{
    cg_ipc_mapping_t *pin, *stale;
    cg_ipc_handle_t   old = handle(7, 1, 0x10000, 4096, 0), reused = handle(7, 2, 0x10000, 4096, 0);
    cg_ipc_handle_t   inside = handle(7, 3, 0x10800, 512, 0);
    char             *p, *q;

    reset();
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 7, &old, &p, &pin), CG_OK);
    cg_ipc_release(pin, 0);
    /* same address, new buffer id: the stale mapping is closed before the open */
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 7, &reused, &q, &pin), CG_OK);
    ck_assert_int_eq(fake_imports, 2);
    ck_assert_int_eq(fake_closes, 1);
    /* while a call uses a mapping it is never closed: the new range cannot open (the call
     * that asks degrades to its copy variant); once released, it can */
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 7, &inside, &q, &stale), CG_ERR_ALREADY_MAPPED);
    ck_assert_int_eq(fake_closes, 1);
    cg_ipc_release(pin, 0);
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 7, &inside, &q, &pin), CG_OK);
    ck_assert_int_eq(fake_closes, 2);
    cg_ipc_release(pin, 0);
    reset();
}
END_TEST

START_TEST(test_already_mapped_retry)
{
    cg_ipc_cache_stats_t st;
    cg_ipc_mapping_t    *pin;
    cg_ipc_handle_t      a = handle(7, 1, 0x10000, 4096, 0), b = handle(7, 2, 0x90000, 4096, 0);
    char                *p;

    reset();
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 7, &a, &p, &pin), CG_OK);
    cg_ipc_release(pin, 0);
    fake_refuse_once = 1; /* the driver says "already mapped": purge the peer, retry */
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 7, &b, &p, &pin), CG_OK);
    cg_ipc_stats(&st);
    ck_assert_uint_eq(st.retries, 1);
    ck_assert_int_eq(fake_closes, 1); /* the peer's unused mapping was purged */
    cg_ipc_release(pin, 0);
    reset();
}
END_TEST

START_TEST(test_close_now_and_lru)
{
    cg_ipc_mapping_t *pin, *keep;
    cg_ipc_handle_t   scratch = handle(9, 5, 0x500000, 4096, 0);
    char             *p;

    reset();
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 9, &scratch, &p, &pin), CG_OK);
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 9, &scratch, &p, &keep), CG_OK);
    cg_ipc_release(pin, 1); /* another user still holds it: stays */
    ck_assert_int_eq(fake_closes, 0);
    cg_ipc_release(keep, 1); /* the last one: closed now */
    ck_assert_int_eq(fake_closes, 1);
    /* 64 unpinned mappings per peer at most: the least recently used goes */
    for (uint64_t i = 0; i < 65; i++) {
        cg_ipc_handle_t h = handle(9, 100 + i, 0x1000000 + i * 0x10000, 4096, 0);
        ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 9, &h, &p, &pin), CG_OK);
        cg_ipc_release(pin, 0);
    }
    ck_assert_int_eq(fake_closes, 2);
    reset();
}
END_TEST

/* A group's table of known buffers holds its mappings: no purge and no LRU closes them
 * between calls; a stale one (the peer reused the range) is closed under the hold, and
 * its record goes with the last hold. */
START_TEST(test_held_by_known_buffers)
{
    cg_ipc_cache_stats_t st;
    cg_ipc_mapping_t    *held, *pin;
    cg_ipc_handle_t      a = handle(7, 1, 0x10000, 4096, 0), b = handle(7, 2, 0x90000, 4096, 0);
    cg_ipc_handle_t      reused = handle(7, 3, 0x10000, 8192, 0);
    char                *p;

    reset();
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 7, &a, &p, &held), CG_OK);
    cg_ipc_hold(held);
    cg_ipc_release(held, 1); /* held: stays open although its last call asked to close */
    ck_assert_int_eq(fake_closes, 0);
    ck_assert_ptr_eq(cg_ipc_local(held), p);
    fake_refuse_once = 1; /* "already mapped": the purges leave the held mapping alone */
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 7, &b, &p, &pin), CG_OK);
    cg_ipc_release(pin, 0);
    ck_assert_int_eq(fake_closes, 0);
    for (uint64_t i = 0; i < 70; i++) { /* nor does the per-peer limit */
        cg_ipc_handle_t h = handle(7, 100 + i, 0x1000000 + i * 0x10000, 4096, 0);
        ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 7, &h, &p, &pin), CG_OK);
        cg_ipc_release(pin, 0);
    }
    ck_assert_ptr_nonnull(cg_ipc_local(held));
    /* the peer freed a and allocated over its range: a is stale, closed under the hold */
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 7, &reused, &p, &pin), CG_OK);
    ck_assert_ptr_null(cg_ipc_local(held));
    cg_ipc_release(pin, 0);
    /* the new allocation is found again: the dead record is out of the registry */
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 7, &reused, &p, &pin), CG_OK);
    cg_ipc_stats(&st);
    ck_assert_uint_eq(st.hits, 1);
    cg_ipc_release(pin, 0);
    cg_ipc_unhold(held); /* the last hold: the dead record goes (valgrind: no leak) */
    reset();
}
END_TEST

START_TEST(test_bad_handles)
{
    cg_ipc_mapping_t *pin;
    char             *p;
    cg_ipc_handle_t   none = handle(1, 0, 0x1000, 16, 0), past = handle(1, 5, 0x1000, 16, 17);

    reset();
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 1, &none, &p, &pin), CG_ERR_INVALID_PARAM);
    ck_assert_int_eq(cg_ipc_acquire(&fake_dev, 1, &past, &p, &pin), CG_ERR_INVALID_PARAM);
    ck_assert_int_eq(fake_imports, 0);
}
END_TEST

CG_UNIT_MAIN("ipc_cache", 0, test_shared_by_communicators, test_freed_and_reused,
             test_already_mapped_retry, test_close_now_and_lru, test_held_by_known_buffers,
             test_bad_handles)
