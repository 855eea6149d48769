/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The IPC cache with a fake device layer that counts imports and closes: an allocation is
 * mapped once; memory freed and allocated again at the same address (new buffer id) is
 * remapped and the stale mapping closed; the least recently used mapping goes when a peer
 * has too many; offsets inside an allocation land where they should.
 */
#include "coll/intra/intra.h"

#include "tests/unit/unit.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static int  fake_imports, fake_closes;
static char fake_memory[16][4096];
static int  fake_next;

static cg_status_t fake_import(cg_dev_t *dev, const cg_ipc_handle_t *h, void **base)
{
    (void)dev;
    (void)h;
    fake_imports++;
    *base = fake_memory[fake_next++ % 16];
    return CG_OK;
}

static void fake_close(cg_dev_t *dev, void *base)
{
    (void)dev;
    (void)base;
    fake_closes++;
}

static cg_dev_ops_t fake_ops = {.name = "fake", .ipc_import = fake_import, .ipc_close = fake_close};
static cg_dev_t     fake_dev = {.ops = &fake_ops};

static cg_ipc_handle_t handle(uint64_t id, uint64_t base, uint64_t size, uint64_t offset)
{
    cg_ipc_handle_t h;
    memset(&h, 0, sizeof(h));
    h.buffer_id = id;
    h.base      = base;
    h.size      = size;
    h.offset    = offset;
    return h;
}

START_TEST(test_hit_and_reuse)
{
    cg_ipc_cache_t      *c;
    cg_ipc_cache_stats_t st;
    cg_ipc_handle_t      a = handle(1, 0x10000, 4096, 0), a2 = handle(1, 0x10000, 4096, 100);
    cg_ipc_handle_t      reused = handle(2, 0x10000, 4096, 0);
    char                *p, *q;

    fake_imports = fake_closes = fake_next = 0;
    ck_assert_int_eq(cg_ipc_cache_create(&fake_dev, 2, 4, &c), CG_OK);
    ck_assert_int_eq(cg_ipc_cache_get(c, 1, &a, &p), CG_OK);
    ck_assert_int_eq(cg_ipc_cache_get(c, 1, &a2, &q), CG_OK);
    ck_assert_int_eq(fake_imports, 1); /* one mapping per allocation */
    ck_assert_ptr_eq(q, p + 100);
    /* same address, new buffer id: the old mapping must not be used */
    ck_assert_int_eq(cg_ipc_cache_get(c, 1, &reused, &q), CG_OK);
    ck_assert_int_eq(fake_imports, 2);
    ck_assert_int_eq(fake_closes, 1);
    ck_assert_ptr_ne(q, p);
    /* another peer's allocation at the same address is another mapping */
    ck_assert_int_eq(cg_ipc_cache_get(c, 0, &a, &p), CG_OK);
    ck_assert_int_eq(fake_imports, 3);
    ck_assert_int_eq(fake_closes, 1);
    cg_ipc_cache_stats(c, &st);
    ck_assert_uint_eq(st.hits, 1);
    ck_assert_uint_eq(st.misses, 3);
    cg_ipc_cache_destroy(c);
    ck_assert_int_eq(fake_closes, 3); /* everything still mapped is closed */
}
END_TEST

START_TEST(test_partial_overlap_and_lru)
{
    cg_ipc_cache_t *c;
    char           *p;

    fake_imports = fake_closes = fake_next = 0;
    ck_assert_int_eq(cg_ipc_cache_create(&fake_dev, 1, 2, &c), CG_OK);
    cg_ipc_handle_t big = handle(10, 0x100000, 0x4000, 0);
    cg_ipc_handle_t inside = handle(11, 0x102000, 0x1000, 0); /* freed, smaller one inside */
    ck_assert_int_eq(cg_ipc_cache_get(c, 0, &big, &p), CG_OK);
    ck_assert_int_eq(cg_ipc_cache_get(c, 0, &inside, &p), CG_OK);
    ck_assert_int_eq(fake_closes, 1); /* overlapping stale mapping dropped */
    cg_ipc_handle_t x = handle(12, 0x200000, 0x1000, 0), y = handle(13, 0x300000, 0x1000, 0);
    ck_assert_int_eq(cg_ipc_cache_get(c, 0, &x, &p), CG_OK); /* cache full: 11, 12 */
    ck_assert_int_eq(cg_ipc_cache_get(c, 0, &inside, &p), CG_OK); /* 11 used last */
    ck_assert_int_eq(cg_ipc_cache_get(c, 0, &y, &p), CG_OK); /* evicts 12 (LRU) */
    ck_assert_int_eq(fake_closes, 2);
    ck_assert_int_eq(cg_ipc_cache_get(c, 0, &inside, &p), CG_OK);
    ck_assert_int_eq(fake_imports, 4); /* 10, 11, 12, 13: 11 was never remapped */
    cg_ipc_cache_destroy(c);
}
END_TEST

START_TEST(test_bad_handles)
{
    cg_ipc_cache_t *c;
    char           *p;
    cg_ipc_handle_t none = handle(0, 0x1000, 16, 0), past = handle(5, 0x1000, 16, 17);

    ck_assert_int_eq(cg_ipc_cache_create(&fake_dev, 1, 2, &c), CG_OK);
    ck_assert_int_eq(cg_ipc_cache_get(c, 0, &none, &p), CG_ERR_INVALID_PARAM);
    ck_assert_int_eq(cg_ipc_cache_get(c, 0, &past, &p), CG_ERR_INVALID_PARAM);
    ck_assert_int_eq(cg_ipc_cache_get(c, 3, &past, &p), CG_ERR_INVALID_PARAM);
    cg_ipc_cache_destroy(c);
}
END_TEST

CG_UNIT_MAIN("ipc_cache", 0, test_hit_and_reuse, test_partial_overlap_and_lru, test_bad_handles)
