/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The LL server (coll_gpu_ll_persist; kernels/dev_ll_server.h, kernels/host_server.c): the
 * protocol alone, with the server's words set by hand; then, on the strict host layer, two
 * ranks of one process, each with its stream and server, run allreduces checked against a
 * host reference while the servers stay, after each has left (started again by the next
 * ring), at the end of their life with calls coming, and while they leave at every chance
 * (rings that race a leave); a call given up ends with the given-up answer and the server
 * serves the next; a call that fails is not run again; a call no server can read runs
 * launched, and no server starts again; a stop ends a server that would stay for ever; a
 * free waits for a server to leave.
 */
#include "kernels/cg_dev.h"
#include "kernels/dev_host_int.h"
#include "kernels/dev_ll_server.h"
#include "kernels/sim/cg_sim.h"

#include "tests/unit/unit.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOT    256
#define COUNT   5
#define RANKS   2
#define INBOX   (2 * RANKS * SLOT) /* two halves of RANKS slots */

typedef struct {
    cg_dev_t        *dev;
    cg_dev_stream_t *stream[RANKS];
    char            *inbox;            /* every rank's, one after the other */
    float           *buf[RANKS];       /* COUNT inputs, then COUNT results */
    unsigned         calls;
} pair_t;

/* The simulated GPU, linked in for the strict mode (the layer finds it loaded): device
 * memory the CPU cannot touch, as a GPU's. */
static int (*volatile keep_sim)(void **, size_t, unsigned) = cg_sim_malloc;

static void pair_open(pair_t *pair, double idle_s, double life_s)
{
    memset(pair, 0, sizeof(*pair));
    ck_assert_ptr_nonnull(keep_sim);
    ck_assert_int_eq(cg_dev_host_open(NULL, &pair->dev), CG_OK);
    ck_assert(cg_dev_host_strict(pair->dev));
    pair->dev->ll_persist        = 1;
    pair->dev->ll_persist_idle_s = idle_s;
    pair->dev->ll_persist_life_s = life_s;
    ck_assert_int_eq(pair->dev->ops->mem_alloc(pair->dev, RANKS * INBOX, (void **)&pair->inbox), CG_OK);
    for (int r = 0; r < RANKS; r++) {
        ck_assert_int_eq(pair->dev->ops->stream_create(pair->dev, &pair->stream[r]), CG_OK);
        ck_assert_int_eq(pair->dev->ops->mem_alloc(pair->dev, 2 * COUNT * sizeof(float),
                                                    (void **)&pair->buf[r]), CG_OK);
    }
    ck_assert_int_eq(pair->dev->ops->fill(pair->dev, pair->inbox, 0, RANKS * INBOX, pair->stream[0]), CG_OK);
    ck_assert_int_eq(pair->dev->ops->stream_sync(pair->dev, pair->stream[0]), CG_OK);
}

static void pair_close(pair_t *pair)
{
    /* every server but the first stream's told to leave first: a free (the first stream's,
     * as it goes) waits for every server, as cudaFree waits for every kernel; the first
     * one's stop is the stream's own (a stop that failed: the first server stays its idle
     * time, past the test's limit where that is long) */
    for (int r = 1; r < RANKS; r++) {
        cg_host_server_stop(pair->stream[r]);
    }
    for (int r = 0; r < RANKS; r++) {
        pair->dev->ops->stream_destroy(pair->dev, pair->stream[r]);
    }
    for (int r = 0; r < RANKS; r++) {
        pair->dev->ops->mem_free(pair->dev, pair->buf[r]);
    }
    pair->dev->ops->mem_free(pair->dev, pair->inbox);
    cg_dev_close(pair->dev);
}

static cg_ll_args_t pair_args(const pair_t *pair, int rank)
{
    cg_ll_args_t args = {.coll = CG_LL_ALLREDUCE, .size = RANKS, .rank = rank,
                         .flag = pair->calls + 1, .parity = pair->calls & 1, .slot_bytes = SLOT,
                         .src = pair->buf[rank], .dst = pair->buf[rank] + COUNT, .count = COUNT,
                         .dtype = CG_DT_FLOAT, .op = CG_OP_SUM, .app_ordered = 1};

    for (int p = 0; p < RANKS; p++) {
        args.inbox[p] = pair->inbox + (size_t)p * INBOX;
    }
    return args;
}

/* Wait for every rank's call, polling each in turn, as each rank's process polls its own:
 * a server that left before it ran its call is started again by its rank's poll only, so
 * waiting for one rank alone could wait for ever for a peer whose server left. */
static void pair_wait(pair_t *pair)
{
    int done[RANKS] = {0}, ended = 0;

    for (long polls = 0; ended < RANKS; polls++) {
        for (int r = 0; r < RANKS; r++) {
            if (done[r] == 0) {
                ck_assert_int_eq(pair->dev->ops->ll_test(pair->dev, pair->stream[r], &done[r]), CG_OK);
                ck_assert_int_le(done[r], 1); /* not given up */
                ended += done[r] != 0;
            }
        }
        ck_assert_msg(polls < 100000000L, "an LL call never ended");
        if (polls > 1000) {
            usleep(10);
        }
    }
}

/* Fresh random inputs and poisoned outputs on every rank, then each rank's call run. */
static void pair_start(pair_t *pair, float in[RANKS][COUNT])
{
    for (int r = 0; r < RANKS; r++) {
        for (int i = 0; i < COUNT; i++) {
            in[r][i] = (float)(rand() % 1000) - 500.0f;
        }
        const float poison[COUNT] = {-1e30f, -1e30f, -1e30f, -1e30f, -1e30f};
        ck_assert_int_eq(pair->dev->ops->copy(pair->dev, pair->buf[r], in[r], sizeof(in[r]), pair->stream[r]), CG_OK);
        ck_assert_int_eq(pair->dev->ops->copy(pair->dev, pair->buf[r] + COUNT, poison, sizeof(poison), pair->stream[r]), CG_OK);
        ck_assert_int_eq(pair->dev->ops->stream_sync(pair->dev, pair->stream[r]), CG_OK);
    }
    for (int r = 0; r < RANKS; r++) {
        cg_ll_args_t args = pair_args(pair, r);
        ck_assert_int_eq(pair->dev->ops->ll_run(pair->dev, &args, pair->stream[r]), CG_OK);
    }
}

/* Every rank's output checked element by element against the sum computed here. */
static void pair_check(pair_t *pair, float in[RANKS][COUNT])
{
    float out[COUNT];

    for (int r = 0; r < RANKS; r++) {
        ck_assert_int_eq(pair->dev->ops->copy(pair->dev, out, pair->buf[r] + COUNT, sizeof(out), pair->stream[r]), CG_OK);
        ck_assert_int_eq(pair->dev->ops->stream_sync(pair->dev, pair->stream[r]), CG_OK);
        for (int i = 0; i < COUNT; i++) {
            ck_assert_float_eq(out[i], in[0][i] + in[1][i]);
        }
    }
    pair->calls++;
}

/* One allreduce of both ranks, inputs fresh and outputs poisoned, checked element by
 * element against the sum computed here. */
static void pair_call(pair_t *pair)
{
    float in[RANKS][COUNT];

    pair_start(pair, in);
    pair_wait(pair);
    pair_check(pair, in);
}

/* Calls to servers that stay: every call served, one server per stream. With a long idle
 * time a server leaves only if the test stalls for minutes: at most a few more. */
START_TEST(test_server_stays)
{
    pair_t         pair;
    const uint64_t served = cg_counters[CG_CNT_LL_SERVED], servers = cg_counters[CG_CNT_LL_SERVERS];

    pair_open(&pair, 300.0, 300.0);
    for (int k = 0; k < 100; k++) {
        pair_call(&pair);
    }
    ck_assert_uint_eq(cg_counters[CG_CNT_LL_SERVED] - served, 2 * 100);
    ck_assert_uint_ge(cg_counters[CG_CNT_LL_SERVERS] - servers, 2);
    for (int r = 0; r < RANKS; r++) {
        ck_assert(cg_host_server_alive(pair.stream[r]) || cg_counters[CG_CNT_LL_SERVERS] - servers > 2);
    }
    pair_close(&pair); /* stopped: a stop that failed would leave the servers for five
                        * minutes, past the test's limit of two */
}
END_TEST

/* After a server has left, the next ring starts another, which runs the call. */
START_TEST(test_server_again)
{
    pair_t   pair;
    uint64_t servers;

    pair_open(&pair, 0.001, CG_DEV_LL_PERSIST_LIFE_S);
    for (int k = 0; k < 20; k++) {
        for (int r = 0; r < RANKS; r++) {
            for (int waits = 0; cg_host_server_alive(pair.stream[r]); waits++) {
                ck_assert_int_lt(waits, 100000); /* ten seconds */
                usleep(100);
            }
        }
        servers = cg_counters[CG_CNT_LL_SERVERS];
        pair_call(&pair);
        ck_assert_uint_eq(cg_counters[CG_CNT_LL_SERVERS] - servers, RANKS);
    }
    pair_close(&pair);
}
END_TEST

/* Servers with calls that keep coming still leave at the end of their life (so that a
 * device-wide wait waits that long at most), and the next ring starts another. */
START_TEST(test_server_life)
{
    pair_t         pair;
    const uint64_t servers = cg_counters[CG_CNT_LL_SERVERS];
    int            calls   = 0;

    pair_open(&pair, 300.0, 0.02);
    while (cg_counters[CG_CNT_LL_SERVERS] - servers < 3 * RANKS) { /* each left twice */
        ck_assert_int_lt(calls++, 1000000);
        pair_call(&pair);
    }
    pair_close(&pair);
}
END_TEST

/* Servers that leave at every chance: rings race leaves; every call still runs once. */
START_TEST(test_server_races)
{
    pair_t         pair;
    const uint64_t served = cg_counters[CG_CNT_LL_SERVED];

    pair_open(&pair, 0.0, CG_DEV_LL_PERSIST_LIFE_S);
    for (int k = 0; k < 200; k++) {
        pair_call(&pair);
    }
    ck_assert_uint_eq(cg_counters[CG_CNT_LL_SERVED] - served, 2 * 200);
    pair_close(&pair);
}
END_TEST

/* A call the peer never joins: abort lines end it given up (stream_sync waits for the
 * served call), and the same server runs the next call with both ranks. */
START_TEST(test_server_given_up)
{
    pair_t       pair;
    cg_ll_args_t args;
    int          done = -1;

    pair_open(&pair, 300.0, 300.0);
    pair_call(&pair);
    args = pair_args(&pair, 0);
    ck_assert_int_eq(pair.dev->ops->ll_run(pair.dev, &args, pair.stream[0]), CG_OK);
    ck_assert_int_eq(pair.dev->ops->ll_test(pair.dev, pair.stream[0], &done), CG_OK);
    ck_assert_int_eq(done, 0); /* waits for rank 1's lines */
    ck_assert_int_eq(pair.dev->ops->ll_abort(pair.dev, &args), CG_OK);
    ck_assert_int_eq(pair.dev->ops->stream_sync(pair.dev, pair.stream[0]), CG_OK);
    ck_assert_int_eq(pair.dev->ops->ll_test(pair.dev, pair.stream[0], &done), CG_OK);
    ck_assert_int_eq(done, 2);
    /* rank 1 skips that call (as after a failure, the group's next call); the abort
     * lines of rank 0's inbox are cleared as the group clears them */
    ck_assert_int_eq(pair.dev->ops->fill(pair.dev, pair.inbox, 0, INBOX, pair.stream[0]), CG_OK);
    ck_assert_int_eq(pair.dev->ops->stream_sync(pair.dev, pair.stream[0]), CG_OK);
    pair.calls++;
    pair_call(&pair);
    ck_assert(cg_host_server_alive(pair.stream[0]));
    pair_close(&pair);
}
END_TEST

/* A free waits for a server to leave, as cudaFree waits for a kernel that stays. */
START_TEST(test_server_free_waits)
{
    pair_t pair;
    void  *extra = NULL;

    pair_open(&pair, 0.2, 300.0);
    pair_call(&pair);
    ck_assert_int_eq(pair.dev->ops->mem_alloc(pair.dev, 64, &extra), CG_OK);
    pair.dev->ops->mem_free(pair.dev, extra);
    for (int r = 0; r < RANKS; r++) {
        ck_assert(!cg_host_server_alive(pair.stream[r]));
    }
    pair_close(&pair);
}
END_TEST

/* The protocol alone (kernels/dev_ll_server.c), with a start that only counts and the
 * server's words set by hand: a ring starts a server only when none is there; a server that
 * left with the call not run is started again (from the calls served), once; one that left
 * after running it is not; the stop. */
static int      proto_starts;
static uint64_t proto_gen, proto_served;

static cg_status_t proto_start(cg_ll_server_t *server, uint64_t gen, uint64_t served)
{
    (void)server;
    proto_starts++;
    proto_gen    = gen;
    proto_served = served;
    return CG_OK;
}

START_TEST(test_protocol)
{
    cg_ll_server_words_t words = {0};
    uint64_t             done  = 0;
    cg_ll_server_t       server = {.words = &words, .done = &done, .start = proto_start};
    int                  ended = -1;

    proto_starts = 0;
    ck_assert_int_eq(cg_ll_server_ring(&server, 1), CG_OK); /* none yet: started */
    ck_assert_int_eq(proto_starts, 1);
    ck_assert_uint_eq(proto_gen, 1);
    ck_assert_uint_eq(proto_served, 0);
    ck_assert_uint_eq(words.bell, 1);
    ck_assert_int_eq(cg_ll_server_test(&server, &ended), CG_OK);
    ck_assert_int_eq(ended, 0);
    done = 1 << 1; /* it ran call 1 */
    ck_assert_int_eq(cg_ll_server_test(&server, &ended), CG_OK);
    ck_assert_int_eq(ended, 1);
    ck_assert_int_eq(cg_ll_server_ring(&server, 2), CG_OK); /* there: not started */
    ck_assert_int_eq(proto_starts, 1);
    words.left = 1; /* it left before its look at the bell showed call 2 */
    ck_assert_int_eq(cg_ll_server_test(&server, &ended), CG_OK);
    ck_assert_int_eq(ended, 0);
    ck_assert_int_eq(proto_starts, 2); /* started again, from call 1 served */
    ck_assert_uint_eq(proto_gen, 2);
    ck_assert_uint_eq(proto_served, 1);
    ck_assert_int_eq(cg_ll_server_test(&server, &ended), CG_OK); /* generation 2 is there */
    ck_assert_int_eq(proto_starts, 2);
    done = (2 << 1) | 1; /* it ran call 2, given up */
    ck_assert_int_eq(cg_ll_server_test(&server, &ended), CG_OK);
    ck_assert_int_eq(ended, 2);
    ck_assert_int_eq(cg_ll_server_ring(&server, 3), CG_OK);
    done       = 3 << 1; /* it ran call 3, then left */
    words.left = 2;
    ck_assert_int_eq(cg_ll_server_test(&server, &ended), CG_OK);
    ck_assert_int_eq(ended, 1);
    ck_assert_int_eq(proto_starts, 2); /* the call ended: nothing to start */
    ck_assert_int_eq(cg_ll_server_ring(&server, 4), CG_OK); /* left: started at the ring */
    ck_assert_int_eq(proto_starts, 3);
    ck_assert_uint_eq(proto_served, 3);
    ck_assert(cg_ll_server_stop(&server)); /* generation 3 may run: wait for it */
    ck_assert_uint_eq(words.bell, CG_LL_SERVER_STOP);
    words.left = 3;
    ck_assert(!cg_ll_server_stop(&server));
}
END_TEST

/* A server started after the ring that leaves without running the call cannot read the
 * calls posted to it: CG_ERR_UNSUPPORTED (the caller runs the call otherwise), and no
 * server is started again for ever. A server that was there at the ring and left without
 * seeing it is started again once, and its successor must run it. */
START_TEST(test_protocol_deaf)
{
    cg_ll_server_words_t words = {0};
    uint64_t             done  = 0;
    cg_ll_server_t       server = {.words = &words, .done = &done, .start = proto_start};
    int                  ended = -1;

    proto_starts = 0;
    ck_assert_int_eq(cg_ll_server_ring(&server, 1), CG_OK); /* started for call 1 */
    words.left = 1;                                         /* left, call 1 not run */
    ck_assert_int_eq(cg_ll_server_test(&server, &ended), CG_ERR_UNSUPPORTED);
    ck_assert_int_eq(ended, 0);
    ck_assert_int_eq(proto_starts, 1);
    done = 1 << 1; /* run otherwise */
    ck_assert_int_eq(cg_ll_server_test(&server, &ended), CG_OK);
    ck_assert_int_eq(ended, 1);
    ck_assert_int_eq(cg_ll_server_ring(&server, 2), CG_OK); /* left: started at the ring */
    ck_assert_int_eq(proto_starts, 2);
    ck_assert_int_eq(cg_ll_server_test(&server, &ended), CG_OK); /* generation 2 is there */
    ck_assert_int_eq(ended, 0);
    done = 2 << 1;
    ck_assert_int_eq(cg_ll_server_test(&server, &ended), CG_OK);
    ck_assert_int_eq(cg_ll_server_ring(&server, 3), CG_OK); /* there: not started */
    ck_assert_int_eq(proto_starts, 2);
    words.left = 2; /* it left before its look showed call 3: started again */
    ck_assert_int_eq(cg_ll_server_test(&server, &ended), CG_OK);
    ck_assert_int_eq(proto_starts, 3);
    words.left = 3; /* that one too, though started after the ring */
    ck_assert_int_eq(cg_ll_server_test(&server, &ended), CG_ERR_UNSUPPORTED);
    ck_assert_int_eq(proto_starts, 3);
}
END_TEST

/* Servers that never read the calls posted to them (the host layer's server_deaf, as a
 * kernel whose reading of them is broken): each stream's first served call runs launched
 * after its server's life, exact, and its later calls run launched with no server started;
 * nothing hangs. */
START_TEST(test_server_deaf)
{
    pair_t         pair;
    const uint64_t servers = cg_counters[CG_CNT_LL_SERVERS];

    pair_open(&pair, 300.0, 0.02);
    cg_host_impl(pair.dev)->server_deaf = 1;
    pair_call(&pair);
    ck_assert_uint_eq(cg_counters[CG_CNT_LL_SERVERS] - servers, RANKS); /* one each, once */
    for (int r = 0; r < RANKS; r++) {
        ck_assert(!cg_host_server_usable(pair.stream[r]));
        ck_assert(!cg_host_server_alive(pair.stream[r]));
    }
    for (int k = 0; k < 20; k++) {
        pair_call(&pair);
    }
    ck_assert_uint_eq(cg_counters[CG_CNT_LL_SERVERS] - servers, RANKS);
    pair_close(&pair);
}
END_TEST

/* The same found by a stream's synchronisation: rank 1's call is launched by its polls,
 * then rank 0's stream_sync finds its own server left without it, launches it and waits
 * for it (a second drain): both exact. */
START_TEST(test_server_deaf_sync)
{
    pair_t pair;
    float  in[RANKS][COUNT];
    int    done = 0;

    pair_open(&pair, 300.0, 0.02);
    cg_host_impl(pair.dev)->server_deaf = 1;
    pair_start(&pair, in);
    for (long polls = 0; cg_host_server_usable(pair.stream[1]); polls++) {
        ck_assert_int_eq(pair.dev->ops->ll_test(pair.dev, pair.stream[1], &done), CG_OK);
        ck_assert_msg(polls < 100000000L, "rank 1's call was never launched");
        usleep(polls > 1000 ? 10 : 0);
    }
    ck_assert(cg_host_server_usable(pair.stream[0]));
    ck_assert_int_eq(pair.dev->ops->stream_sync(pair.dev, pair.stream[0]), CG_OK);
    ck_assert(!cg_host_server_usable(pair.stream[0]));
    ck_assert_int_eq(pair.stream[0]->pending, 0); /* the launched call waited for too */
    ck_assert_int_eq(pair.dev->ops->ll_test(pair.dev, pair.stream[0], &done), CG_OK);
    ck_assert_int_eq(done, 1);
    ck_assert_int_eq(pair.dev->ops->stream_sync(pair.dev, pair.stream[1]), CG_OK);
    pair_check(&pair, in);
    pair_call(&pair); /* launched on both, no server */
    pair_close(&pair);
}
END_TEST

/* A call the server cannot run (rank 1's inbox overruns its allocation: an illegal address
 * on the simulated GPU): the call fails once, and no server starts again to run it twice. */
START_TEST(test_server_failed_call)
{
    pair_t         pair;
    cg_ll_args_t   args;
    cg_status_t    status = CG_OK;
    uint64_t       servers;
    int            done = 0;

    pair_open(&pair, 300.0, 300.0);
    ck_assert(cg_dev_host_strict(pair.dev)); /* else the overrun would be real (pair_open) */
    pair_call(&pair);
    servers       = cg_counters[CG_CNT_LL_SERVERS];
    args          = pair_args(&pair, 0);
    args.inbox[1] = (char *)pair.buf[1]; /* 40 bytes: the slot lies past its end */
    ck_assert_int_eq(pair.dev->ops->ll_run(pair.dev, &args, pair.stream[0]), CG_OK);
    for (long polls = 0; status == CG_OK && done == 0; polls++) {
        status = pair.dev->ops->ll_test(pair.dev, pair.stream[0], &done);
        ck_assert_msg(polls < 100000000L, "the failed call never ended");
    }
    ck_assert_int_ne(status, CG_OK);
    ck_assert_int_ne(pair.dev->ops->ll_test(pair.dev, pair.stream[0], &done), CG_OK);
    ck_assert_int_ne(pair.dev->ops->stream_sync(pair.dev, pair.stream[0]), CG_OK);
    ck_assert_uint_eq(cg_counters[CG_CNT_LL_SERVERS], servers); /* none started again */
    pair_close(&pair);
}
END_TEST

/* The posted arguments: every word comes back whole under its call's tag, and a set of
 * lines that mixes two calls (what a server reads when some lines are older than the bell)
 * is never taken for either. Tags: never 0, never the same for neighbouring calls, across
 * the wrap of 32 bits too. */
START_TEST(test_posted_lines)
{
    enum { WORDS = 27 };
    const uint64_t calls[] = {1, 2, 0xfffffffeull, 0xffffffffull, 0x100000000ull, 0x1fffffffeull,
                              UINT64_MAX - 1};
    uint64_t       block[WORDS], next[WORDS], lines[CG_LL_POST_LINES(WORDS)];
    uint64_t       seen[CG_LL_POST_LINES(WORDS)], taken[WORDS];

    for (size_t c = 0; c < sizeof(calls) / sizeof(calls[0]); c++) {
        const uint64_t call = calls[c];
        ck_assert_uint_ne(cg_ll_post_tag(call), 0);
        ck_assert_uint_ne(cg_ll_post_tag(call), cg_ll_post_tag(call + 1));
        ck_assert_uint_ne(cg_ll_post_tag(call), cg_ll_post_tag(call - 1));
        for (int w = 0; w < WORDS; w++) { /* both halves vary, the top bits included */
            block[w] = ((uint64_t)rand() << 40) ^ ((uint64_t)rand() << 20) ^ (uint64_t)rand() ^
                       (w % 3 == 0 ? UINT64_C(0xffffffff00000000) : 0);
            next[w]  = ~block[w];
        }
        memset(lines, 0, sizeof(lines));
        ck_assert(!cg_ll_server_decode(lines, taken, WORDS, call)); /* zeroed: never a call's */
        cg_ll_server_post(lines, block, WORDS, call);
        memset(taken, 0, sizeof(taken));
        ck_assert(cg_ll_server_decode(lines, taken, WORDS, call));
        ck_assert(memcmp(taken, block, sizeof(block)) == 0);
        ck_assert(!cg_ll_server_decode(lines, taken, WORDS, call + 1));
        /* the next call's lines, seen only up to line `upto` (a low half without its high
         * one included): taken only when every line is the new call's */
        memcpy(seen, lines, sizeof(seen));
        cg_ll_server_post(lines, next, WORDS, call + 1);
        for (int upto = 0; upto <= CG_LL_POST_LINES(WORDS); upto++) {
            memcpy(seen, lines, (size_t)upto * sizeof(uint64_t));
            ck_assert_int_eq(cg_ll_server_decode(seen, taken, WORDS, call + 1),
                             upto == CG_LL_POST_LINES(WORDS));
            ck_assert_int_eq(cg_ll_server_decode(seen, taken, WORDS, call), upto == 0);
            cg_ll_server_post(seen, block, WORDS, call); /* back to the old call's */
        }
        /* one old line anywhere, the rest new: never taken */
        for (int old = 0; old < CG_LL_POST_LINES(WORDS); old++) {
            uint64_t mixed[CG_LL_POST_LINES(WORDS)];
            memcpy(mixed, lines, sizeof(mixed));
            mixed[old] = cg_ll_post_line(cg_ll_post_tag(call), next[old / 2], old % 2);
            ck_assert(!cg_ll_server_decode(mixed, taken, WORDS, call + 1));
        }
        ck_assert(cg_ll_server_decode(lines, taken, WORDS, call + 1));
        ck_assert(memcmp(taken, next, sizeof(next)) == 0);
    }
}
END_TEST

CG_UNIT_MAIN("ll_server", 120, test_posted_lines, test_protocol, test_protocol_deaf,
             test_server_deaf, test_server_deaf_sync, test_server_stays, test_server_again, test_server_life,
             test_server_races, test_server_given_up, test_server_failed_call, test_server_free_waits)
