/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Base services and the planner's tables: status strings, log configuration, size parsing,
 * algorithm names and validity, and the staged fallback of the planner. */
#include "base/cg_base.h"
#include "coll/cg_coll.h"
#include "ucx_glue/cg_ucx.h"

#include "tests/unit/unit.h"

#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

START_TEST(test_status_strings)
{
    for (int s = CG_ERR_PEER_DEAD; s <= CG_OK; s++) {
        ck_assert_str_ne(cg_status_string((cg_status_t)s), "unknown status");
    }
    ck_assert_str_eq(cg_status_string((cg_status_t)-999), "unknown status");
}
END_TEST

START_TEST(test_log_subsystems)
{
    int ok;
    ck_assert_uint_eq(cg_log_subsys_parse("all", &ok), CG_SUB_ALL);
    ck_assert(ok);
    ck_assert_uint_eq(cg_log_subsys_parse("coll,plan", &ok), CG_SUB_COLL | CG_SUB_PLAN);
    ck_assert_uint_eq(cg_log_subsys_parse("^ucx", &ok), CG_SUB_ALL & ~CG_SUB_UCX);
    ck_assert(ok);
    cg_log_subsys_parse("coll,bogus", &ok);
    ck_assert(!ok);
    ck_assert_int_eq(cg_log_configure(3, "bogus"), CG_ERR_INVALID_PARAM);
    ck_assert_int_eq(cg_log_level, 3);
    ck_assert_int_eq(cg_log_configure(2, "dev"), CG_OK);
    ck_assert(cg_log_enabled(CG_LOG_CALL, CG_SUB_DEV));
    ck_assert(!cg_log_enabled(CG_LOG_CALL, CG_SUB_COLL));
    ck_assert(cg_log_enabled(CG_LOG_ERROR, CG_SUB_COLL)); /* errors always */
    ck_assert(!cg_log_enabled(CG_LOG_DETAIL, CG_SUB_DEV));
    cg_log_configure(0, "all");
}
END_TEST

START_TEST(test_size_parse)
{
    size_t v = 0;
    ck_assert_int_eq(cg_size_parse("4096", &v), CG_OK);
    ck_assert_uint_eq(v, 4096);
    ck_assert_int_eq(cg_size_parse("64k", &v), CG_OK);
    ck_assert_uint_eq(v, 65536);
    ck_assert_int_eq(cg_size_parse("8MiB", &v), CG_OK);
    ck_assert_uint_eq(v, 8u << 20);
    ck_assert_int_eq(cg_size_parse("1G", &v), CG_OK);
    ck_assert_uint_eq(v, 1u << 30);
    ck_assert_int_eq(cg_size_parse("12x", &v), CG_ERR_INVALID_PARAM);
    ck_assert_int_eq(cg_size_parse("-1", &v), CG_ERR_INVALID_PARAM);
    ck_assert_int_eq(cg_size_parse("", &v), CG_ERR_INVALID_PARAM);
}
END_TEST

/* The registry: every collective has a staged row first; every row has a name, a summary,
 * a cost function and (but staged) a run function; names are one per algorithm id; rows
 * say what they need consistently with their scope. */
START_TEST(test_algorithm_tables)
{
    const cg_alg_info_t *rows;
    int                  n, staged_first[CG_COLL_COUNT] = {0};

    rows = cg_alg_table(&n);
    ck_assert_int_gt(n, CG_COLL_COUNT);
    for (int i = 0; i < n; i++) {
        const cg_alg_info_t *r = &rows[i];
        if (i == 0 || rows[i - 1].coll != r->coll) {
            staged_first[r->coll] = (r->alg == CG_ALG_STAGED);
        }
        ck_assert_ptr_eq(cg_alg_info(r->coll, r->alg), r);
        ck_assert_str_eq(cg_alg_name(r->alg), r->name);
        ck_assert_ptr_nonnull(r->summary);
        ck_assert_ptr_nonnull(r->cost);
        ck_assert_int_eq(r->run == NULL, r->scope == CG_SCOPE_STAGED);
        ck_assert_int_eq(!!(r->needs & CG_NEEDS_NODES), r->scope == CG_SCOPE_HIER);
        ck_assert_int_eq(!!(r->needs & CG_NEEDS_ONE_NODE), r->scope == CG_SCOPE_INTRA);
        ck_assert(cg_alg_valid(r->coll, r->alg));
    }
    for (int c = 0; c < CG_COLL_COUNT; c++) {
        ck_assert(staged_first[c]);
        ck_assert(cg_alg_valid((cg_coll_t)c, CG_ALG_AUTO));
    }
    ck_assert_str_eq(cg_alg_name(CG_ALG_AUTO), "auto");
    ck_assert_str_eq(cg_coll_name(CG_COLL_REDUCE_SCATTER_BLOCK), "reduce_scatter_block");
    ck_assert(!cg_alg_valid(CG_COLL_COUNT, CG_ALG_AUTO));
    ck_assert(!cg_alg_valid(CG_COLL_BCAST, CG_ALG_ONE_SHOT));
}
END_TEST

START_TEST(test_planner_prefilter)
{
    cg_planner_config_t config;
    cg_plan_t           plan;
    cg_call_t           call = {.coll = CG_COLL_ALLREDUCE, .count = 10, .bytes = 40,
                                .dtype = CG_DT_INT32, .op = CG_OP_SUM, .comm_size = 4};

    cg_planner_config_default(&config);
    ck_assert(cg_plan_prefilter(&config, &call, &plan));
    call.op = CG_OP_NONE;
    ck_assert(!cg_plan_prefilter(&config, &call, &plan));
    ck_assert_str_eq(plan.reason, "user-defined op");
    call.op    = CG_OP_MINLOC;
    ck_assert(!cg_plan_prefilter(&config, &call, &plan));
    call.op    = CG_OP_SUM;
    call.dtype = CG_DT_NONE;
    ck_assert(!cg_plan_prefilter(&config, &call, &plan));
    call.dtype = CG_DT_INT32;
    call.count = call.bytes = 0;
    ck_assert(!cg_plan_prefilter(&config, &call, &plan));
    call.count = 10, call.bytes = 40;
    config.forced[CG_COLL_ALLREDUCE] = CG_ALG_STAGED;
    ck_assert(!cg_plan_prefilter(&config, &call, &plan));
    ck_assert_str_eq(plan.reason, "forced");
    /* bcast and allgather take any dense bytes */
    call = (cg_call_t){.coll = CG_COLL_BCAST, .count = 3, .bytes = 24, .dtype = CG_DT_NONE,
                       .op = CG_OP_NONE, .comm_size = 2};
    ck_assert(cg_plan_prefilter(&config, &call, &plan));
}
END_TEST

START_TEST(test_planner_shapes)
{
    cg_planner_config_t config;
    cg_plan_t           plan;
    cg_shape_t          one_node = {.size = 4, .num_nodes = 1, .local_size = 4, .max_local = 4, .intra_ok = 1};
    cg_shape_t          two_nodes = {.size = 4, .num_nodes = 2, .local_size = 2, .max_local = 2, .intra_ok = 1};
    cg_call_t           call = {.coll = CG_COLL_ALLREDUCE, .count = 16, .bytes = 64,
                                .dtype = CG_DT_FLOAT, .op = CG_OP_SUM, .comm_size = 4};

    cg_planner_config_default(&config);
    cg_plan_select(&config, &call, &one_node, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_ONE_SHOT);
    call.count = 1 << 20, call.bytes = 4u << 20;
    cg_plan_select(&config, &call, &one_node, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_TWO_SHOT);
    config.one_shot_max = 8u << 20;
    cg_plan_select(&config, &call, &one_node, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_ONE_SHOT);
    cg_plan_select(&config, &call, &two_nodes, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_STAGED);
    one_node.intra_ok = 0;
    cg_plan_select(&config, &call, &one_node, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_STAGED);
    ck_assert_str_eq(plan.reason, "local group not connected");
    one_node.intra_ok = 1;
    config.forced[CG_COLL_ALLREDUCE] = CG_ALG_TWO_SHOT;
    cg_plan_select(&config, &call, &one_node, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_TWO_SHOT);
    ck_assert_str_eq(plan.reason, "forced");
    config.forced[CG_COLL_ALLREDUCE] = CG_ALG_DIRECT; /* not an allreduce algorithm */
    cg_plan_select(&config, &call, &one_node, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_STAGED);
    call.coll = CG_COLL_ALLGATHER;
    cg_plan_select(&config, &call, &one_node, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_DIRECT);
}
END_TEST

/* This process's pid namespace, as the names carry it. */
static unsigned long test_pid_namespace(void)
{
    char          link[64] = "";
    unsigned long ns       = 0;

    if (readlink("/proc/self/ns/pid", link, sizeof(link) - 1) > 0) {
        sscanf(link, "pid:[%lu]", &ns);
    }
    return ns;
}

/* Names left behind by a dead process with this pid (first two serials): creation takes
 * the next free name and leaves the others alone. */
START_TEST(test_shm_name_taken)
{
    char  taken[2][64], name[64];
    void *p = NULL;

    for (int i = 0; i < 2; i++) {
        snprintf(taken[i], sizeof(taken[i]), "/cg-gpu-%d-%lu-%d-%d", (int)getuid(),
                 test_pid_namespace(), (int)getpid(), i);
        int fd = shm_open(taken[i], O_CREAT | O_EXCL | O_RDWR, 0600);
        ck_assert_int_ge(fd, 0);
        close(fd);
    }
    ck_assert_int_eq(cg_shm_create(4096, name, &p), CG_OK);
    ck_assert_str_ne(name, taken[0]);
    ck_assert_str_ne(name, taken[1]);
    ((volatile char *)p)[0] = 1;
    cg_shm_detach(p, 4096);
    cg_shm_unlink(name);
    for (int i = 0; i < 2; i++) {
        int fd = shm_open(taken[i], O_RDWR, 0600); /* still there */
        ck_assert_int_ge(fd, 0);
        close(fd);
        shm_unlink(taken[i]);
    }
}
END_TEST

/* A segment whose owner died (a killed run) is removed by the next process; one of a live
 * process is left alone. */
START_TEST(test_shm_reclaim_dead)
{
    char  dead[64], alive[64];
    pid_t child = fork();
    int   fd;

    ck_assert_int_ge(child, 0);
    if (child == 0) {
        _exit(0);
    }
    ck_assert_int_eq(waitpid(child, NULL, 0), child);
    snprintf(dead, sizeof(dead), "/cg-gpu-%d-%lu-%d-7", (int)getuid(), test_pid_namespace(), (int)child);
    snprintf(alive, sizeof(alive), "/cg-gpu-%d-%lu-%d-999", (int)getuid(), test_pid_namespace(),
             (int)getpid());
    ck_assert_int_ge(fd = shm_open(dead, O_CREAT | O_RDWR, 0600), 0);
    close(fd);
    ck_assert_int_ge(fd = shm_open(alive, O_CREAT | O_RDWR, 0600), 0);
    close(fd);
    ck_assert_int_ge(cg_shm_reclaim_dead(), 1);
    ck_assert_int_lt(shm_open(dead, O_RDWR, 0600), 0);
    ck_assert_int_ge(fd = shm_open(alive, O_RDWR, 0600), 0);
    close(fd);
    shm_unlink(alive);
}
END_TEST

static int test_releases;

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
    /* the releases come from UCX's memory hooks where the build has UCX: an unrelated munmap
     * keeps an entry, a munmap of the buffer's own page forgets it */
    if (cg_ucx_watch_releases(test_count_release, NULL) == CG_OK) {
        pages = mmap(NULL, 2 * (size_t)psize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
        ck_assert_ptr_ne(pages, MAP_FAILED);
        cg_host_cache_insert(buf, 64, cg_host_cache_ticket());
        cg_host_cache_insert(pages + psize, 64, cg_host_cache_ticket());
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

/* Waits spin for their configured time, then yield at every poll; by default (0) they
 * yield after CG_PACE_SPIN polls. The check every CG_PACE_CHECK polls either way. */
START_TEST(test_pace_spin)
{
    cg_pace_t pace = {0};
    int       checks = 0;

    cg_pace_configure(0);
    for (int i = 0; i < CG_PACE_SPIN; i++) {
        checks += cg_pace(&pace);
    }
    ck_assert_int_eq(pace.yielding, 0);
    (void)cg_pace(&pace);
    ck_assert_int_eq(pace.yielding, 1);

    cg_pace_configure(60e6); /* a minute: nothing below yields */
    pace = (cg_pace_t){0};
    for (int i = 0; i < 100 * CG_PACE_CHECK; i++) {
        checks += cg_pace(&pace);
    }
    ck_assert_int_eq(pace.yielding, 0);
    ck_assert_int_eq(checks, 100);

    cg_pace_configure(1); /* a microsecond: over once the clock has been read twice */
    pace = (cg_pace_t){0};
    for (int i = 0; i < 2 * CG_PACE_SPIN; i++) {
        (void)cg_pace(&pace);
    }
    usleep(2000);
    for (int i = 0; i < CG_PACE_SPIN; i++) {
        (void)cg_pace(&pace);
    }
    ck_assert_int_eq(pace.yielding, 1);
    cg_pace_configure(0);
}
END_TEST

CG_UNIT_MAIN("base", 120, test_status_strings, test_log_subsystems, test_size_parse, test_algorithm_tables,
             test_planner_prefilter, test_planner_shapes, test_shm_name_taken, test_shm_reclaim_dead,
             test_host_cache, test_host_cache_threads, test_host_cache_pair, test_host_cache_known_pair,
             test_host_cache_release_race,
             test_pace_spin)
