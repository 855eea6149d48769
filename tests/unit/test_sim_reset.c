/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * A reset of the simulated GPU (cg_sim_device_reset, as cudaDeviceReset) and the strict
 * host layer under it: every allocation, mapping and page-locked allocation is revoked
 * (the CPU faults at a stale pointer, which is no device memory any more), the hooks run
 * first while memory is still there; the layer's LL servers (one waiting for a peer that
 * never comes, one idle) leave at the reset, the layer is lost (its operations fail, its
 * frees, stream ends and close touch nothing that went), and nothing faults.
 */
#include "kernels/cg_dev.h"
#include "kernels/dev_host_int.h"
#include "kernels/sim/cg_sim.h"

#include "tests/unit/unit.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void cpu_write(void *ptr)
{
    *(volatile uint64_t *)ptr = 1;
}

typedef struct {
    void    *device;
    uint64_t seen; /* what the hook read through the device's view */
    int      calls;
} hook_state_t;

static void hook_read(void *arg)
{
    hook_state_t   *state = arg;
    const uint64_t *view  = cg_sim_access(state->device, sizeof(uint64_t));

    state->calls++;
    state->seen = view != NULL ? *view : 0;
}

START_TEST(test_reset_revokes)
{
    const uint64_t value = 0x5eed;
    hook_state_t   state = {0}, other = {0};
    cg_sim_attr_t  attr;
    uint64_t      *pinned = NULL;
    void          *pool = NULL, *stale_view;
    int            resets;

    ck_assert_int_eq(cg_sim_malloc(&state.device, 4096, CG_SIM_ALLOC_DEFAULT), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_malloc(&pool, 100, CG_SIM_ALLOC_POOL), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_memcpy(state.device, &value, sizeof(value)), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_host_alloc((void **)&pinned, sizeof(*pinned)), CG_SIM_OK);
    *pinned = 7; /* the CPU may touch page-locked memory */
    ck_assert_int_eq(cg_unit_die_signal(cpu_write, pinned), 0);
    ck_assert_int_eq(cg_sim_host_free(pinned), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_host_free(pinned), CG_SIM_ERR_INVALID); /* freed */
    ck_assert_int_eq(cg_sim_host_alloc((void **)&pinned, sizeof(*pinned)), CG_SIM_OK);
    stale_view = cg_sim_access(state.device, sizeof(uint64_t));
    ck_assert_ptr_nonnull(stale_view);
    /* queued on the default stream: dropped, never run */
    ck_assert_int_eq(cg_sim_memset_async(state.device, 0xff, 8), CG_SIM_OK);

    ck_assert_int_eq(cg_sim_reset_hook(hook_read, &state, 1), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_reset_hook(hook_read, &other, 1), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_reset_hook(hook_read, &other, 0), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_reset_hook(hook_read, &other, 0), CG_SIM_ERR_INVALID);
    resets = cg_sim_device_reset();
    ck_assert_int_ge(resets, 1);
    ck_assert_int_eq(state.calls, 1);
    ck_assert(state.seen == value); /* the hook ran while memory was there (and before the
                                       queued set, which never ran) */
    ck_assert_int_eq(other.calls, 0);
    ck_assert(cg_sim_stream_idle());

    /* every address stays inaccessible: the device pointer, the device's view, the
     * page-locked word; none is device memory any more, nor can be freed */
    ck_assert_int_eq(cg_unit_die_signal(cpu_write, state.device), SIGSEGV);
    ck_assert_int_eq(cg_unit_die_signal(cpu_write, stale_view), SIGSEGV);
    ck_assert_int_eq(cg_unit_die_signal(cpu_write, pinned), SIGSEGV);
    ck_assert_int_eq(cg_sim_query(state.device, &attr), CG_SIM_ERR_INVALID);
    ck_assert_int_eq(cg_sim_query(pool, &attr), CG_SIM_ERR_INVALID);
    ck_assert_ptr_null(cg_sim_access(state.device, 1));
    ck_assert_int_eq(cg_sim_free(state.device), CG_SIM_ERR_INVALID);
    ck_assert_int_eq(cg_sim_host_free(pinned), CG_SIM_ERR_INVALID);

    /* the device works again, at other addresses */
    void *fresh = NULL;
    ck_assert_int_eq(cg_sim_malloc(&fresh, 4096, CG_SIM_ALLOC_DEFAULT), CG_SIM_OK);
    ck_assert_ptr_ne(fresh, state.device);
    ck_assert_int_eq(cg_sim_memcpy(fresh, &value, sizeof(value)), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_reset_hook(hook_read, &state, 0), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_device_reset(), resets + 1);
    ck_assert_int_eq(state.calls, 1); /* removed */
}
END_TEST

/* ---- the strict host layer under a reset ----------------------------------------------- */
#define SLOT  256
#define COUNT 5
#define RANKS 2
#define INBOX (2 * RANKS * SLOT)

typedef struct {
    cg_dev_t        *dev;
    cg_dev_stream_t *stream[RANKS];
    char            *inbox;
    float           *buf[RANKS];
} layer_t;

static cg_ll_args_t layer_args(const layer_t *layer, int rank, unsigned call)
{
    cg_ll_args_t args = {.coll = CG_LL_ALLREDUCE, .size = RANKS, .rank = rank, .flag = call,
                         .parity = call & 1, .slot_bytes = SLOT, .src = layer->buf[rank],
                         .dst = layer->buf[rank] + COUNT, .count = COUNT, .dtype = CG_DT_FLOAT,
                         .op = CG_OP_SUM, .app_ordered = 1};

    for (int p = 0; p < RANKS; p++) {
        args.inbox[p] = layer->inbox + (size_t)p * INBOX;
    }
    return args;
}

/* Poll rank's call until it ends, with its result. */
static void layer_wait(layer_t *layer, int rank)
{
    int done = 0;

    for (long polls = 0; done == 0; polls++) {
        ck_assert_int_eq(layer->dev->ops->ll_test(layer->dev, layer->stream[rank], &done), CG_OK);
        ck_assert_msg(polls < 100000000L, "an LL call never ended");
        if (polls > 1000) {
            usleep(10);
        }
    }
    ck_assert_int_eq(done, 1);
}

/* Two streams with servers that stay (no idle end, no end of life within the test): one
 * call of both ranks served and checked, then rank 0 alone rings a second, whose server
 * waits for rank 1's lines; the reset comes while it waits, and while rank 1's server is
 * idle. */
START_TEST(test_reset_layer)
{
    cg_dev_ops_t   ops;
    layer_t        layer = {0};
    float          in[RANKS][COUNT], out[COUNT], *later = NULL;
    cg_ll_args_t   args;
    cg_dev_event_t *event = NULL;
    int            done = 0;

    ck_assert_int_eq(cg_dev_host_open(NULL, &layer.dev), CG_OK);
    ck_assert(cg_dev_host_strict(layer.dev));
    layer.dev->ll_persist        = 1;
    layer.dev->ll_persist_idle_s = 100;
    layer.dev->ll_persist_life_s = 100;
    ops                          = *layer.dev->ops;
    ck_assert_int_eq(ops.mem_alloc(layer.dev, RANKS * INBOX, (void **)&layer.inbox), CG_OK);
    for (int r = 0; r < RANKS; r++) {
        ck_assert_int_eq(ops.stream_create(layer.dev, &layer.stream[r]), CG_OK);
        ck_assert_int_eq(ops.mem_alloc(layer.dev, 2 * COUNT * sizeof(float),
                                       (void **)&layer.buf[r]), CG_OK);
        for (int i = 0; i < COUNT; i++) {
            in[r][i] = (float)(rand() % 1000) - 500.0f;
        }
        ck_assert_int_eq(ops.copy(layer.dev, layer.buf[r], in[r], sizeof(in[r]), layer.stream[r]), CG_OK);
    }
    ck_assert_int_eq(ops.fill(layer.dev, layer.inbox, 0, RANKS * INBOX, layer.stream[0]), CG_OK);
    for (int r = 0; r < RANKS; r++) {
        ck_assert_int_eq(ops.stream_sync(layer.dev, layer.stream[r]), CG_OK);
    }
    for (int r = 0; r < RANKS; r++) {
        args = layer_args(&layer, r, 1);
        ck_assert_int_eq(ops.ll_run(layer.dev, &args, layer.stream[r]), CG_OK);
    }
    for (int r = 0; r < RANKS; r++) {
        layer_wait(&layer, r);
        ck_assert_int_eq(ops.copy(layer.dev, out, layer.buf[r] + COUNT, sizeof(out), layer.stream[r]), CG_OK);
        ck_assert_int_eq(ops.stream_sync(layer.dev, layer.stream[r]), CG_OK);
        for (int i = 0; i < COUNT; i++) {
            ck_assert_float_eq(out[i], in[0][i] + in[1][i]);
        }
    }
    args = layer_args(&layer, 0, 2);
    ck_assert_int_eq(ops.ll_run(layer.dev, &args, layer.stream[0]), CG_OK);
    ck_assert_int_eq(ops.ll_test(layer.dev, layer.stream[0], &done), CG_OK);
    ck_assert_int_eq(done, 0); /* waits for rank 1 */
    ck_assert(cg_host_server_alive(layer.stream[0]));
    ck_assert(cg_host_server_alive(layer.stream[1]));
    ck_assert_int_eq(ops.event_create(layer.dev, &event), CG_OK);
    ck_assert(!cg_dev_lost(layer.dev));

    ck_assert_int_ge(cg_sim_device_reset(), 1);

    /* the servers left (their words may no longer be read), the layer is lost */
    ck_assert_int_eq(__atomic_load_n(&cg_host_impl(layer.dev)->servers, __ATOMIC_ACQUIRE), 0);
    ck_assert(cg_dev_lost(layer.dev));
    ck_assert_int_eq(cg_dev_reset_check(layer.dev), 1);
    ck_assert_int_eq(ops.ll_test(layer.dev, layer.stream[0], &done), CG_ERR_DEVICE);
    ck_assert_int_eq(ops.ll_run(layer.dev, &args, layer.stream[1]), CG_ERR_DEVICE);
    ck_assert_int_eq(ops.copy(layer.dev, out, layer.buf[0], sizeof(out), layer.stream[0]), CG_ERR_DEVICE);
    ck_assert_int_eq(ops.fill(layer.dev, layer.buf[0], 0, 4, layer.stream[0]), CG_ERR_DEVICE);
    ck_assert_int_eq(ops.stream_sync(layer.dev, layer.stream[0]), CG_ERR_DEVICE);
    ck_assert_int_eq(ops.mem_alloc(layer.dev, 64, (void **)&later), CG_ERR_DEVICE);
    ck_assert_int_eq(ops.host_alloc(layer.dev, 64, (void **)&later), CG_ERR_DEVICE);

    /* the ends touch nothing that went: no fault, no wait */
    ops.event_destroy(layer.dev, event);
    for (int r = 0; r < RANKS; r++) {
        ops.stream_destroy(layer.dev, layer.stream[r]);
        cg_dev_mem_release(layer.dev, layer.buf[r]);
    }
    cg_dev_mem_release(layer.dev, layer.inbox);
    cg_dev_close(layer.dev);
}
END_TEST

CG_UNIT_MAIN("sim_reset", 60, test_reset_revokes, test_reset_layer)
