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
#include <stdio.h>
#include <stdlib.h>
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
    /* too large: an error, not a size wrapped to a small one */
    ck_assert_int_eq(cg_size_parse("17179869184G", &v), CG_ERR_INVALID_PARAM);
    ck_assert_int_eq(cg_size_parse("99999999999999999999999", &v), CG_ERR_INVALID_PARAM);
    ck_assert_int_eq(cg_size_parse("18014398509481984K", &v), CG_ERR_INVALID_PARAM);
    ck_assert_int_eq(cg_size_parse("17179869183G", &v), CG_OK); /* the largest */
    ck_assert_uint_eq(v, (size_t)17179869183u << 30);
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

/* MPI progress from waits: every CG_PACE_PROGRESS polls while spinning, every poll once
 * yielding; never nested (a wait inside progress does not progress, and says so), never on
 * a thread that said cg_pace_no_progress; nothing once unset. */
static int test_progress_calls, test_progress_nested_seen;

static void test_progress_count(void)
{
    cg_pace_t inner = {0};

    test_progress_calls++;
    test_progress_nested_seen += cg_pace_progressing();
    for (int i = 0; i < 4 * CG_PACE_PROGRESS; i++) {
        (void)cg_pace(&inner); /* would recurse without the guard */
    }
}

static void *test_progress_helper(void *arg)
{
    cg_pace_t pace = {0};

    (void)arg;
    cg_pace_no_progress();
    for (int i = 0; i < 4 * CG_PACE_SPIN; i++) {
        (void)cg_pace(&pace);
    }
    return NULL;
}

START_TEST(test_pace_progress)
{
    cg_pace_t pace = {0};
    pthread_t helper;

    cg_pace_configure(60e6); /* no yielding: one progress per CG_PACE_PROGRESS polls */
    cg_pace_set_progress(test_progress_count);
    for (int i = 0; i < 10 * CG_PACE_PROGRESS; i++) {
        (void)cg_pace(&pace);
    }
    ck_assert_int_eq(test_progress_calls, 10);
    ck_assert_int_eq(test_progress_nested_seen, 10);
    ck_assert_int_eq(cg_pace_progressing(), 0);

    cg_pace_configure(0); /* yielding after CG_PACE_SPIN polls: then at every poll */
    pace                = (cg_pace_t){0};
    test_progress_calls = 0;
    for (int i = 0; i < CG_PACE_SPIN + 5; i++) {
        (void)cg_pace(&pace);
    }
    ck_assert_int_eq(test_progress_calls, CG_PACE_SPIN / CG_PACE_PROGRESS + 5);

    test_progress_calls = 0;
    ck_assert_int_eq(pthread_create(&helper, NULL, test_progress_helper, NULL), 0);
    ck_assert_int_eq(pthread_join(helper, NULL), 0);
    ck_assert_int_eq(test_progress_calls, 0);

    cg_pace_set_progress(NULL);
    pace = (cg_pace_t){0};
    for (int i = 0; i < 4 * CG_PACE_SPIN; i++) {
        (void)cg_pace(&pace);
    }
    ck_assert_int_eq(test_progress_calls, 0);
}
END_TEST

/* A rules file that opens but cannot be read (a directory) is an error, not no rules. */
START_TEST(test_rules_unreadable)
{
    cg_rules_t *rules = NULL;
    char        error[256] = "";

    ck_assert_int_eq(cg_rules_load(".", &rules, error, sizeof(error)), CG_ERR_IO);
    ck_assert_ptr_null(rules);
    ck_assert_ptr_nonnull(strstr(error, "cannot read"));
}
END_TEST

/* Communicator ids in the inter-node tags (24 bits): agreed context ids as they are, ids that
 * differ only above 16 bits apart (they shared a tag at 16 bits), Open MPI 5's hashed ids
 * (top bit set) never equal to an agreed one. */
START_TEST(test_inter_tag_ids)
{
    ck_assert_uint_eq(cg_inter_tag_id(0), 0);
    ck_assert_uint_eq(cg_inter_tag_id(5), 5);
    ck_assert_uint_eq(cg_inter_tag_id(0x10005), 0x10005);
    ck_assert_uint_ne(cg_inter_tag_id(0x10005), cg_inter_tag_id(5));
    for (uint32_t id = 0x80000000u; id < 0x80000000u + 4096; id++) {
        const uint32_t tag = cg_inter_tag_id(id);
        ck_assert_uint_lt(tag, 1u << 24);
        ck_assert_uint_ge(tag, 1u << 23);
        ck_assert_uint_ne(tag, cg_inter_tag_id(id + 1));
    }
}
END_TEST

/* A live communicator holds its tag id: a second hashed id with the same tags is refused
 * while the first lives (their messages would meet), taken once it is released; agreed ids
 * are never refused. */
START_TEST(test_inter_tag_claims)
{
    uint8_t *seen  = calloc((1u << 24) / 8, 1);
    uint32_t first = 0, second = 0;

    ck_assert_ptr_nonnull(seen);
    for (uint32_t id = 0x80000000u; second == 0; id++) { /* a collision: ~2^12 ids in */
        const uint32_t tag = cg_inter_tag_id(id);
        if (seen[tag / 8] & (1u << (tag % 8))) {
            second = id;
        }
        seen[tag / 8] |= (uint8_t)(1u << (tag % 8));
    }
    for (uint32_t id = 0x80000000u; first == 0; id++) {
        first = cg_inter_tag_id(id) == cg_inter_tag_id(second) ? id : 0;
    }
    free(seen);
    ck_assert_uint_ne(first, second);
    ck_assert_int_eq(cg_inter_tag_claim(first), CG_OK);
    ck_assert_int_eq(cg_inter_tag_claim(second), CG_ERR_UNSUPPORTED);
    ck_assert_int_eq(cg_inter_tag_claim(first), CG_ERR_UNSUPPORTED);
    for (uint32_t id = 0x90000000u; id < 0x90000000u + 100; id++) { /* the table grows */
        ck_assert_int_eq(cg_inter_tag_claim(id), cg_inter_tag_id(id) == cg_inter_tag_id(first)
                                                     ? CG_ERR_UNSUPPORTED : CG_OK);
    }
    ck_assert_int_eq(cg_inter_tag_claim(second), CG_ERR_UNSUPPORTED);
    cg_inter_tag_release(first);
    ck_assert_int_eq(cg_inter_tag_claim(second), CG_OK);
    cg_inter_tag_release(second);
    for (uint32_t id = 0x90000000u; id < 0x90000000u + 100; id++) {
        cg_inter_tag_release(id);
    }
    ck_assert_int_eq(cg_inter_tag_claim(first), CG_OK);
    cg_inter_tag_release(first);
    ck_assert_int_eq(cg_inter_tag_claim(5), CG_OK); /* agreed ids */
    ck_assert_int_eq(cg_inter_tag_claim(5), CG_OK);
    cg_inter_tag_release(5);
}
END_TEST

/* Two processes' allgather for the board test: a shared page with a slot per rank and a
 * round counter per rank (each round waits until both wrote theirs). */
typedef struct {
    volatile int  round[2];
    unsigned char data[2][512];
} test_oob_page_t;

typedef struct {
    test_oob_page_t *page;
    int              rank, done;
} test_oob_t;

static cg_status_t test_oob_allgather(void *ctx, const void *send, void *recv, size_t bytes)
{
    test_oob_t *oob = ctx;

    ck_assert_uint_le(bytes, sizeof(oob->page->data[0]));
    memcpy(oob->page->data[oob->rank], send, bytes);
    __atomic_store_n(&oob->page->round[oob->rank], ++oob->done, __ATOMIC_RELEASE);
    while (__atomic_load_n(&oob->page->round[1 - oob->rank], __ATOMIC_ACQUIRE) < oob->done) {
        usleep(100);
    }
    memcpy(recv, oob->page->data[0], bytes);
    memcpy((char *)recv + bytes, oob->page->data[1], bytes);
    /* both read before either writes the next round's data */
    __atomic_store_n(&oob->page->round[oob->rank], ++oob->done, __ATOMIC_RELEASE);
    while (__atomic_load_n(&oob->page->round[1 - oob->rank], __ATOMIC_ACQUIRE) < oob->done) {
        usleep(100);
    }
    return CG_OK;
}

/* Two processes on one board, this one its rank 0 and a child its rank 1, with a shared word
 * go; both have announced call first. */
typedef struct {
    test_oob_page_t *page;
    volatile int    *go;
    pid_t            child;
    test_oob_t       oob;
    cg_oob_t         ops;
    cg_board_t      *board;
} test_board_pair_t;

static void test_board_pair_start(test_board_pair_t *pair, uint64_t first)
{
    pair->page = mmap(NULL, sizeof(*pair->page), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pair->go   = (volatile int *)mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert(pair->page != MAP_FAILED && pair->go != MAP_FAILED);
    memset(pair->page, 0, sizeof(*pair->page));
    *pair->go   = 0;
    pair->child = fork();
    ck_assert_int_ge(pair->child, 0);
    pair->oob   = (test_oob_t){pair->page, pair->child == 0 ? 1 : 0, 0};
    pair->ops   = (cg_oob_t){test_oob_allgather, &pair->oob};
    pair->board = NULL;
    ck_assert_int_eq(cg_board_create(&pair->ops, pair->oob.rank, 2, 0, &pair->board), CG_OK);
    ck_assert_int_eq(cg_board_announce(pair->board, first, 2, 0), CG_OK);
}

/* The child leaves with exit_status; the parent gets its wait status. */
static int test_board_pair_end(test_board_pair_t *pair, int exit_status)
{
    int waited = 0;

    cg_board_destroy(pair->board);
    if (pair->oob.rank == 1) {
        _exit(exit_status);
    }
    ck_assert_int_eq(waitpid(pair->child, &waited, 0), pair->child);
    munmap(pair->page, sizeof(*pair->page)), munmap((void *)pair->go, 4096);
    return waited;
}

/* A rank that runs more than a board's slots ahead (calls that do not need the others) waits
 * before it overwrites a slot that a slow peer may still read for its call: the peer finds
 * the runner's kinds for that call, not a later call's (which it would take for a rank that
 * was not on it). The runner is told to go as far as 70 calls past the peer; the peer checks
 * its slot of the first call after the runner has had time to overwrite it (a runner too
 * slow to get there only lets the test pass: no false failure). */
START_TEST(test_board_runner_waits)
{
    const uint64_t    first = 1000;
    test_board_pair_t pair;
    int               status = 0, kinds = 0;

    test_board_pair_start(&pair, first);
    if (pair.oob.rank == 0) { /* the runner */
        __atomic_store_n(pair.go, 1, __ATOMIC_RELEASE);
        for (uint64_t seq = first + 1; seq <= first + 70; seq++) {
            ck_assert_int_eq(cg_board_announce(pair.board, seq, CG_BOARD_KIND_HOST, 0), CG_OK);
        }
        while (__atomic_load_n(pair.go, __ATOMIC_ACQUIRE) != 2) {
            usleep(100);
        }
    } else { /* the slow peer, still at its first call */
        while (__atomic_load_n(pair.go, __ATOMIC_ACQUIRE) != 1) {
            usleep(100);
        }
        usleep(200000);
        status = !(cg_board_peer(pair.board, 0, first, &kinds) && kinds == 2);
        /* lets the runner go on */
        ck_assert_int_eq(cg_board_announce(pair.board, first + 1, 2, 0), CG_OK);
        for (uint64_t seq = first + 2; seq <= first + 70; seq++) {
            ck_assert_int_eq(cg_board_announce(pair.board, seq, CG_BOARD_KIND_HOST, 0), CG_OK);
        }
        __atomic_store_n(pair.go, 2, __ATOMIC_RELEASE);
    }
    status = test_board_pair_end(&pair, status);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the runner overwrote the slow peer's slot of its call");
}
END_TEST

/* With coll_gpu_timeout, a runner whose peer (alive) stays at its first call waits that
 * long at the call that would overwrite the peer's slot (64 calls later), then fails it
 * without announcing; every call before it announces at once. */
START_TEST(test_board_runner_timeout)
{
    const uint64_t    first = 1000;
    uint64_t          seq   = first;
    test_board_pair_t pair;
    cg_status_t       status = CG_OK;

    test_board_pair_start(&pair, first);
    if (pair.oob.rank == 0) { /* the runner */
        for (seq = first + 1; seq <= first + 70 && status == CG_OK; seq++) {
            status = cg_board_announce(pair.board, seq, CG_BOARD_KIND_HOST, 0.2);
        }
        __atomic_store_n(pair.go, 1, __ATOMIC_RELEASE);
    } else { /* stays at its first call, alive, until the runner is done */
        while (__atomic_load_n(pair.go, __ATOMIC_ACQUIRE) != 1) {
            usleep(1000);
        }
    }
    (void)test_board_pair_end(&pair, 0);
    ck_assert_int_eq(status, CG_ERR_TIMEOUT);
    ck_assert_msg(seq - 1 == first + 64, "timed out at call %llu", /* the peer's slot */
                  (unsigned long long)(seq - 1 - first));
}
END_TEST

/* A pid is watched only inside this process's pid namespace (pids of another may name
 * live processes here); without namespaces to compare, only a pid alive now. */
START_TEST(test_process_watchable)
{
    const unsigned long ns = cg_process_pid_namespace();

    ck_assert_uint_eq(ns, test_pid_namespace());
    if (ns != 0) { /* a /proc to read it from */
        ck_assert_int_eq(cg_process_watchable((int)getpid(), ns), (int)getpid());
        ck_assert_int_eq(cg_process_watchable(1, ns + 1), 0); /* pid 1 lives here: not it */
    }
    ck_assert_int_eq(cg_process_watchable(0, ns), 0);
    ck_assert_int_eq(cg_process_watchable((int)getpid(), 0), (int)getpid()); /* a guess */
}
END_TEST

CG_UNIT_MAIN("base", 120, test_status_strings, test_log_subsystems, test_size_parse, test_algorithm_tables,
             test_planner_prefilter, test_planner_shapes, test_shm_name_taken, test_shm_reclaim_dead,
             test_pace_spin, test_pace_progress, test_rules_unreadable, test_inter_tag_ids,
             test_inter_tag_claims, test_board_runner_waits, test_board_runner_timeout,
             test_process_watchable)
