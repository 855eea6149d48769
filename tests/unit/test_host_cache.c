/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* The host-memory cache (base/cg_host_cache.c): ranges, releases reported by UCX, the
 * choice of slot, readers beside a writer, an insert racing a release. */
#include "base/cg_base.h"
#include "ucx_glue/cg_ucx.h"

#include "tests/unit/unit.h"

#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int test_releases;
static int test_watched; /* main watches releases through UCX's hooks (test_count_release) */

static void test_count_release(void *arg, const void *addr, size_t bytes)
{
    (void)arg;
    test_releases++;
    cg_host_cache_release(addr, bytes);
}

/* The host-memory cache: ranges inside what was inserted hit, others miss; an entry made
 * before a release (older ticket) never hits; a release forgets what it overlaps and keeps
 * the rest; UCX reports a munmap, with its range, before it happens. */
START_TEST(test_host_cache)
{
    static char buf[256];
    uint64_t    ticket;
    char       *pages, *area;
    void       *page;
    long        psize = sysconf(_SC_PAGESIZE);

    cg_host_cache_enable(0);
    cg_host_cache_insert(buf, 64, cg_host_cache_ticket());
    ck_assert_int_eq(cg_host_cache_lookup(buf, 64), 0); /* off: nothing is kept */
    cg_host_cache_enable(1);
    ticket = cg_host_cache_ticket();
    cg_host_cache_insert(buf, 64, ticket);
    ck_assert_int_eq(cg_host_cache_lookup(buf, 64), 1);
    ck_assert_int_eq(cg_host_cache_lookup(buf, 8), 1);
    ck_assert_int_eq(cg_host_cache_lookup(buf, 65), 0);
    ck_assert_int_eq(cg_host_cache_lookup(buf + 60, 8), 0);
    ck_assert_int_eq(cg_host_cache_lookup(buf + 128, 8), 0);
    cg_host_cache_forget();
    ck_assert_int_eq(cg_host_cache_lookup(buf, 64), 0);
    cg_host_cache_insert(buf, 64, ticket); /* queried before the release: stale */
    ck_assert_int_eq(cg_host_cache_lookup(buf, 64), 0);
    cg_host_cache_insert(buf, 128, cg_host_cache_ticket());
    ck_assert_int_eq(cg_host_cache_lookup(buf, 64), 1);
    for (int apart = 8; apart < 64; apart += 8) { /* neighbours (a norm's input and output) */
        cg_host_cache_insert(buf + 128, 8, cg_host_cache_ticket());
        cg_host_cache_insert(buf + 128 + apart, 8, cg_host_cache_ticket());
        ck_assert_int_eq(cg_host_cache_lookup(buf + 128, 8), 1);
        ck_assert_int_eq(cg_host_cache_lookup(buf + 128 + apart, 8), 1);
    }
    /* a release forgets the entries in the pages it overlaps (the kernel releases whole
     * pages), and no other; one of unknown size (0) forgets everything */
    area = mmap(NULL, 4 * (size_t)psize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(area, MAP_FAILED);
    cg_host_cache_forget();
    cg_host_cache_insert(area + 64, 64, cg_host_cache_ticket());        /* page 0 */
    cg_host_cache_insert(area + 2 * psize, 64, cg_host_cache_ticket()); /* page 2 */
    cg_host_cache_release(area + psize, (size_t)psize);                 /* page 1 */
    cg_host_cache_release(area + psize + 8, 16);
    ck_assert_int_eq(cg_host_cache_lookup(area + 64, 64), 1);
    ck_assert_int_eq(cg_host_cache_lookup(area + 2 * psize, 64), 1);
    cg_host_cache_release(area + psize - 1, 1); /* page 0's last byte: page 0 */
    ck_assert_int_eq(cg_host_cache_lookup(area + 64, 8), 0);
    ck_assert_int_eq(cg_host_cache_lookup(area + 2 * psize, 64), 1);
    cg_host_cache_release(area + 2 * psize + 100, SIZE_MAX); /* to the end of the address space */
    ck_assert_int_eq(cg_host_cache_lookup(area + 2 * psize, 64), 0);
    cg_host_cache_insert(area + 64, 64, cg_host_cache_ticket());
    cg_host_cache_release(area + 3 * psize, 0);
    ck_assert_int_eq(cg_host_cache_lookup(area + 64, 64), 0);
    ticket = cg_host_cache_ticket();
    cg_host_cache_release(area + 3 * psize, 8); /* elsewhere, but during the query: dropped */
    cg_host_cache_insert(area + 64, 64, ticket);
    ck_assert_int_eq(cg_host_cache_lookup(area + 64, 64), 0);
    ck_assert_int_eq(munmap(area, 4 * (size_t)psize), 0);
    /* the releases come from UCX's memory hooks where the build has UCX (which must give
     * them, else this part would pass unseen): an unrelated munmap keeps an entry, a munmap
     * of the buffer's own page forgets it */
#ifdef CG_HAVE_UCX
    ck_assert_msg(test_watched, "UCX gave no memory events");
#endif
    if (test_watched) {
        pages = mmap(NULL, 2 * (size_t)psize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
        ck_assert_ptr_ne(pages, MAP_FAILED);
        cg_host_cache_insert(buf, 64, cg_host_cache_ticket());
        cg_host_cache_insert(pages + psize, 64, cg_host_cache_ticket());
        test_releases = 0;
        page = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ck_assert_ptr_ne(page, MAP_FAILED);
        ck_assert_int_eq(munmap(page, 1 << 16), 0);
        ck_assert_int_ge(test_releases, 1);
        ck_assert_int_eq(cg_host_cache_lookup(buf, 64), 1);
        ck_assert_int_eq(cg_host_cache_lookup(pages + psize, 64), 1);
        test_releases = 0;
        ck_assert_int_eq(munmap(pages + psize, (size_t)psize), 0);
        ck_assert_int_ge(test_releases, 1);
        ck_assert_int_eq(cg_host_cache_lookup(pages + psize, 64), 0);
        ck_assert_int_eq(cg_host_cache_lookup(buf, 64), 1);
        ck_assert_int_eq(munmap(pages, (size_t)psize), 0);
        cg_ucx_unwatch_releases();
    }
    cg_host_cache_enable(0);
}
END_TEST

/* Two ranges in one slot, written over and over by one thread while another reads: a torn
 * read (one range's start with the other's end) would cover the gap between them. A and B
 * have the same two slots; a blocker X holds their first, so A and B take turns in their
 * second; G, between them, is looked up in that slot too. */
static char          test_cache_area[1 << 18] __attribute__((aligned(64)));
static char         *test_cache_ranges[3]; /* A, B, X */
static volatile int  test_cache_stop;

static int test_cache_same_slots(const void *a, const void *b)
{
    unsigned sa[2], sb[2];

    cg_host_cache_slots(a, sa);
    cg_host_cache_slots(b, sb);
    return sa[0] == sb[0] && sa[1] == sb[1];
}

/* X again before each of A and B: the newest entry, it keeps the first slot, and A and B
 * push each other out of the second (an insert replaces the older of two entries). */
static void *test_cache_writer(void *arg)
{
    (void)arg;
    while (!test_cache_stop) {
        cg_host_cache_insert(test_cache_ranges[2], 8, cg_host_cache_ticket());
        cg_host_cache_insert(test_cache_ranges[0], 64, cg_host_cache_ticket());
        cg_host_cache_insert(test_cache_ranges[2], 8, cg_host_cache_ticket());
        cg_host_cache_insert(test_cache_ranges[1], 64, cg_host_cache_ticket());
    }
    return NULL;
}

START_TEST(test_host_cache_threads)
{
    char     *a = test_cache_area, *b = NULL, *x = NULL, *gap = NULL;
    unsigned  sa[2], sg[2], sx[2];
    pthread_t writer;
    long      hits = 0;

    cg_host_cache_slots(a, sa);
    for (size_t at = 4096; at + 64 <= sizeof(test_cache_area) && b == NULL; at += 8) {
        if (test_cache_same_slots(a, test_cache_area + at)) {
            b = test_cache_area + at;
        }
    }
    ck_assert_ptr_nonnull(b);
    for (char *at = a + 64; at + 8 <= b && (gap == NULL || x == NULL); at += 8) {
        cg_host_cache_slots(at, sg);
        if (gap == NULL && (sg[0] == sa[1] || sg[1] == sa[1]) && sg[0] != sa[0] && sg[1] != sa[0]) {
            gap = at;
        } else if (x == NULL && sg[0] == sa[0] && sg[1] != sa[1]) {
            x = at;
        }
    }
    ck_assert_ptr_nonnull(gap);
    ck_assert_ptr_nonnull(x);
    cg_host_cache_slots(x, sx);
    ck_assert_uint_eq(sx[0], sa[0]);
    test_cache_ranges[0] = a, test_cache_ranges[1] = b, test_cache_ranges[2] = x;
    cg_host_cache_enable(1);
    /* a call's two buffers that share their first slot both stay (X's second is not A's) */
    cg_host_cache_insert(a, 64, cg_host_cache_ticket());
    cg_host_cache_insert(x, 8, cg_host_cache_ticket());
    ck_assert_int_eq(cg_host_cache_lookup(a, 64), 1);
    ck_assert_int_eq(cg_host_cache_lookup(x, 8), 1);
    cg_host_cache_forget();
    cg_host_cache_insert(x, 8, cg_host_cache_ticket()); /* the blocker: A and B's first slot */
    cg_host_cache_insert(a, 64, cg_host_cache_ticket());
    cg_host_cache_insert(x, 8, cg_host_cache_ticket()); /* newer than A now */
    cg_host_cache_insert(b, 64, cg_host_cache_ticket());
    ck_assert_int_eq(cg_host_cache_lookup(x, 8), 1);
    ck_assert_int_eq(cg_host_cache_lookup(b, 64), 1); /* B pushed A, the older, out */
    ck_assert_int_eq(cg_host_cache_lookup(a, 64), 0);
    test_cache_stop = 0;
    ck_assert_int_eq(pthread_create(&writer, NULL, test_cache_writer, NULL), 0);
    for (int i = 0; i < 2000000; i++) {
        ck_assert_int_eq(cg_host_cache_lookup(gap, 8), 0); /* in the gap, in their slot */
        hits += cg_host_cache_lookup(a, 64) + cg_host_cache_lookup(b, 64);
    }
    test_cache_stop = 1;
    pthread_join(writer, NULL);
    ck_assert_int_gt(hits, 0);
    cg_host_cache_enable(0);
}
END_TEST

/* A call's two buffers sharing their second slot, while older entries hold both first
 * slots: the second buffer pushes out the older entry in its first slot, not the first
 * buffer (which, taking the second slot whatever it held, it did at every call). */
START_TEST(test_host_cache_pair)
{
    char    *a = test_cache_area, *b = NULL, *l1 = NULL, *l2 = NULL;
    unsigned sa[2], sx[2];

    cg_host_cache_slots(a, sa);
    for (char *at = a + 64; at + 64 <= test_cache_area + sizeof(test_cache_area); at += 8) {
        cg_host_cache_slots(at, sx);
        if (b == NULL && sx[1] == sa[1] && sx[0] != sa[0] && sx[0] != sa[1]) {
            b = at;
        } else if (l1 == NULL && sx[0] == sa[0]) {
            l1 = at;
        }
    }
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_nonnull(l1);
    cg_host_cache_slots(b, sx);
    for (char *at = a + 64; at + 64 <= test_cache_area + sizeof(test_cache_area) && l2 == NULL; at += 8) {
        unsigned sl[2];
        cg_host_cache_slots(at, sl);
        if (sl[0] == sx[0] && at != b && at != l1) {
            l2 = at;
        }
    }
    ck_assert_ptr_nonnull(l2);
    cg_host_cache_enable(1);
    cg_host_cache_insert(l1, 8, cg_host_cache_ticket()); /* A's first slot */
    cg_host_cache_insert(l2, 8, cg_host_cache_ticket()); /* B's first slot */
    for (int call = 0; call < 3; call++) {
        if (!cg_host_cache_lookup(a, 64)) {
            ck_assert_int_eq(call, 0);
            cg_host_cache_insert(a, 64, cg_host_cache_ticket());
        }
        if (!cg_host_cache_lookup(b, 64)) {
            ck_assert_int_eq(call, 0);
            cg_host_cache_insert(b, 64, cg_host_cache_ticket());
        }
    }
    ck_assert_int_eq(cg_host_cache_lookup(l1, 8), 1); /* in A's first slot still */
    ck_assert_int_eq(cg_host_cache_lookup(l2, 8), 0); /* the older of B's two went */
    cg_host_cache_enable(0);
}
END_TEST

/* A call whose first buffer is known (an old entry) and whose second is new: the second's
 * two slots are the first's and one holding a newer entry. The hit makes the first buffer
 * the newest, so the insert pushes the other entry out, not the call's own buffer (which
 * then missed at the next call: coll_costs' rare "1 query, 1 hit" on a warm call). */
START_TEST(test_host_cache_known_pair)
{
    char    *a = test_cache_area, *b = NULL, *newer = NULL;
    unsigned sa[2], sb[2], sx[2];

    cg_host_cache_slots(a, sa);
    for (char *at = a + 64; at + 64 <= test_cache_area + sizeof(test_cache_area) && b == NULL; at += 8) {
        cg_host_cache_slots(at, sx);
        if (sx[1] == sa[0] && sx[0] != sa[1]) {
            b = at;
        }
    }
    ck_assert_ptr_nonnull(b);
    cg_host_cache_slots(b, sb);
    for (char *at = b + 64; at + 64 <= test_cache_area + sizeof(test_cache_area) && newer == NULL; at += 8) {
        cg_host_cache_slots(at, sx);
        if (sx[0] == sb[0]) {
            newer = at;
        }
    }
    ck_assert_ptr_nonnull(newer);
    cg_host_cache_enable(1);
    cg_host_cache_insert(a, 64, cg_host_cache_ticket());   /* A's first slot, B's second */
    cg_host_cache_insert(newer, 8, cg_host_cache_ticket()); /* B's first slot, newer than A */
    for (int call = 0; call < 3; call++) {
        ck_assert_int_eq(cg_host_cache_lookup(a, 64), 1);
        if (!cg_host_cache_lookup(b, 64)) {
            ck_assert_int_eq(call, 0);
            cg_host_cache_insert(b, 64, cg_host_cache_ticket());
        }
    }
    ck_assert_int_eq(cg_host_cache_lookup(newer, 8), 0); /* the entry outside the call went */
    cg_host_cache_enable(0);
}
END_TEST

/* An insert racing a release of its range: the inserting thread queries (takes its ticket)
 * and inserts over and over, noting the ticket of each insert it finished; the main thread
 * releases the range, stops the inserter, and looks: an entry may be there only when the
 * last insert took its ticket after that release (Dekker between publish and release). */
static int      test_race_pause, test_race_paused; /* atomics */
static uint64_t test_race_last_ticket;

static void *test_race_inserter(void *arg)
{
    while (!test_cache_stop) {
        if (__atomic_load_n(&test_race_pause, __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&test_race_paused, 1, __ATOMIC_RELEASE);
            while (__atomic_load_n(&test_race_pause, __ATOMIC_ACQUIRE) && !test_cache_stop) {
                sched_yield();
            }
            __atomic_store_n(&test_race_paused, 0, __ATOMIC_RELEASE);
            continue;
        }
        uint64_t ticket = cg_host_cache_ticket();
        for (volatile int query = 0; query < 100; query++) { /* the query's time: a wider race */
        }
        cg_host_cache_insert(arg, 64, ticket);
        __atomic_store_n(&test_race_last_ticket, ticket, __ATOMIC_RELEASE);
    }
    return NULL;
}

START_TEST(test_host_cache_release_race)
{
    char     *range = test_cache_area + 1024;
    pthread_t inserter;

    cg_host_cache_enable(1);
    test_cache_stop = 0, test_race_pause = 0, test_race_paused = 0;
    ck_assert_int_eq(pthread_create(&inserter, NULL, test_race_inserter, range), 0);
    for (int round = 0; round < 500; round++) { /* two hand-overs each: slow when loaded */
        uint64_t after;
        cg_host_cache_release(range + 32, 8);
        after = cg_host_cache_ticket(); /* this release counted */
        __atomic_store_n(&test_race_pause, 1, __ATOMIC_RELEASE);
        while (!__atomic_load_n(&test_race_paused, __ATOMIC_ACQUIRE)) {
            sched_yield();
        }
        if (cg_host_cache_lookup(range, 64)) {
            ck_assert_uint_ge(__atomic_load_n(&test_race_last_ticket, __ATOMIC_ACQUIRE), after);
        }
        __atomic_store_n(&test_race_pause, 0, __ATOMIC_RELEASE);
        while (__atomic_load_n(&test_race_paused, __ATOMIC_ACQUIRE)) {
            sched_yield();
        }
    }
    test_cache_stop = 1;
    pthread_join(inserter, NULL);
    cg_host_cache_enable(0);
}
END_TEST

/* UCX's memory hooks are installed here, before Check forks a child per test: UCX 1.18 (CI's
 * Open MPI 5.0 root) now and then deadlocked on ucm_set_event_handler's exclusive lock when
 * a forked child installed them (about 1 run in 10 hung in test_host_cache; none without
 * the fork). The children inherit the hooks, as an MPI process has them from its start. */
int main(void)
{
    const TTest *const tests[] = {test_host_cache, test_host_cache_threads,
                                  test_host_cache_pair, test_host_cache_known_pair,
                                  test_host_cache_release_race};

    test_watched = cg_ucx_watch_releases(test_count_release, NULL) == CG_OK;
    return cg_unit_run("host_cache", tests, (int)(sizeof(tests) / sizeof(tests[0])), 120);
}
