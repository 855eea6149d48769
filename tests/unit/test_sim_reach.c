/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * What the strict host layer's device work may reach, as on a GPU without peer access and
 * without access to pageable memory: a copy reaches device memory of either simulated
 * device and any host memory; a kernel (reduction, fill, flag operation, LL lines) reaches
 * its own device's memory and page-locked host memory only. Another device's memory or
 * pageable host memory is an illegal address: the stream reports the error, writes
 * nothing, and works again after the synchronisation that reported it. And a stream's wait
 * for the application's work orders that stream only.
 */
#include "kernels/cg_dev.h"
#include "kernels/dev_host_int.h"
#include "kernels/sim/cg_sim.h"

#include "tests/unit/unit.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COUNT 7

typedef struct {
    cg_dev_t        *dev;
    cg_dev_ops_t     ops;
    cg_dev_stream_t *stream;
    float           *device;   /* this device's memory: 2 * COUNT */
    float           *pinned;   /* page-locked host memory: COUNT */
    float           *pageable; /* malloc: COUNT */
    float           *other;    /* the second device's memory: COUNT */
    uint64_t        *flag;     /* page-locked */
} reach_t;

static void reach_open(reach_t *reach)
{
    memset(reach, 0, sizeof(*reach));
    ck_assert_int_eq(cg_dev_host_open(NULL, &reach->dev), CG_OK);
    ck_assert(cg_dev_host_strict(reach->dev));
    reach->ops = *reach->dev->ops;
    ck_assert_int_eq(reach->ops.stream_create(reach->dev, &reach->stream), CG_OK);
    ck_assert_int_eq(reach->ops.mem_alloc(reach->dev, 2 * COUNT * sizeof(float),
                                          (void **)&reach->device), CG_OK);
    ck_assert_int_eq(reach->ops.host_alloc(reach->dev, COUNT * sizeof(float),
                                           (void **)&reach->pinned), CG_OK);
    ck_assert_int_eq(reach->ops.host_alloc(reach->dev, sizeof(uint64_t), (void **)&reach->flag),
                     CG_OK);
    ck_assert_ptr_nonnull(reach->pageable = malloc(COUNT * sizeof(float)));
    ck_assert_int_eq(cg_sim_malloc((void **)&reach->other, COUNT * sizeof(float),
                                   CG_SIM_ALLOC_OTHER_DEVICE), CG_SIM_OK);
    *reach->flag = 0;
}

static void reach_close(reach_t *reach)
{
    ck_assert_int_eq(cg_sim_free(reach->other), CG_SIM_OK);
    free(reach->pageable);
    reach->ops.host_free(reach->dev, reach->flag);
    reach->ops.host_free(reach->dev, reach->pinned);
    reach->ops.mem_free(reach->dev, reach->device);
    reach->ops.stream_destroy(reach->dev, reach->stream);
    cg_dev_close(reach->dev);
}

/* The status of work queued (queued: what queueing it returned) once the stream is
 * synchronised. */
static cg_status_t reach_synced(reach_t *reach, cg_status_t queued)
{
    cg_status_t synced = reach->ops.stream_sync(reach->dev, reach->stream);

    return queued != CG_OK ? queued : synced;
}

/* dst = a + b over COUNT floats, queued and synchronised: its status. */
static cg_status_t reach_reduce(reach_t *reach, void *dst, const void *a, const void *b)
{
    cg_reduce_args_t args = {.dtype = CG_DT_FLOAT, .op = CG_OP_SUM, .count = COUNT,
                             .nsrc = 2, .ndst = 1, .srcs = {a, b}, .dsts = {dst}};

    return reach_synced(reach, reach->ops.reduce(reach->dev, &args, reach->stream));
}

/* The device's first COUNT floats, copied back. */
static void reach_read(reach_t *reach, float *out)
{
    ck_assert_int_eq(reach->ops.copy(reach->dev, out, reach->device, COUNT * sizeof(float),
                                     reach->stream), CG_OK);
    ck_assert_int_eq(reach->ops.stream_sync(reach->dev, reach->stream), CG_OK);
}

START_TEST(test_copies_reach_everything)
{
    reach_t reach;
    float   in[COUNT], out[COUNT];

    reach_open(&reach);
    for (int i = 0; i < COUNT; i++) {
        in[i] = (float)(rand() % 1000) - 500.0f;
    }
    /* pageable -> other device -> this device -> page-locked -> pageable */
    memcpy(reach.pageable, in, sizeof(in));
    ck_assert_int_eq(reach.ops.copy(reach.dev, reach.other, reach.pageable, sizeof(in),
                                    reach.stream), CG_OK);
    ck_assert_int_eq(reach.ops.copy(reach.dev, reach.device, reach.other, sizeof(in),
                                    reach.stream), CG_OK);
    ck_assert_int_eq(reach.ops.copy(reach.dev, reach.pinned, reach.device, sizeof(in),
                                    reach.stream), CG_OK);
    ck_assert_int_eq(reach.ops.stream_sync(reach.dev, reach.stream), CG_OK);
    memset(out, 0xff, sizeof(out));
    ck_assert_int_eq(reach.ops.copy(reach.dev, out, reach.pinned, sizeof(in), reach.stream),
                     CG_OK);
    ck_assert_int_eq(reach.ops.stream_sync(reach.dev, reach.stream), CG_OK);
    ck_assert_mem_eq(out, in, sizeof(in));
    reach_close(&reach);
}
END_TEST

/* The simulated GPU's page-locked allocations, whole pages (as the driver pins them), and
 * nothing around them or after they went. */
START_TEST(test_host_query_bounds)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char        *pinned = NULL;
    char         pageable[64];

    ck_assert_int_eq(cg_sim_host_alloc((void **)&pinned, 100), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_host_query(pinned, 100), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_host_query(pinned + page - 8, 8), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_host_query(pinned + page - 8, 9), CG_SIM_ERR_INVALID);
    ck_assert_int_eq(cg_sim_host_query(pinned - 8, 16), CG_SIM_ERR_INVALID);
    ck_assert_int_eq(cg_sim_host_query(pinned, SIZE_MAX), CG_SIM_ERR_INVALID);
    ck_assert_int_eq(cg_sim_host_query(pageable, sizeof(pageable)), CG_SIM_ERR_INVALID);
    ck_assert_int_eq(cg_sim_host_free(pinned), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_host_query(pinned, 8), CG_SIM_ERR_INVALID);
}
END_TEST

START_TEST(test_kernels_reach_device_and_pinned)
{
    reach_t reach;
    float   a[COUNT], b[COUNT], out[COUNT];

    reach_open(&reach);
    for (int i = 0; i < COUNT; i++) {
        a[i] = (float)(rand() % 1000) - 500.0f;
        b[i] = (float)(rand() % 1000) - 500.0f;
    }
    memcpy(reach.pinned, b, sizeof(b));
    ck_assert_int_eq(reach.ops.copy(reach.dev, reach.device + COUNT, a, sizeof(a), reach.stream),
                     CG_OK);
    ck_assert_int_eq(reach.ops.fill(reach.dev, reach.device, 0xff, sizeof(a), reach.stream), CG_OK);
    ck_assert_int_eq(reach_reduce(&reach, reach.device, reach.device + COUNT, reach.pinned), CG_OK);
    reach_read(&reach, out);
    for (int i = 0; i < COUNT; i++) {
        ck_assert_float_eq(out[i], a[i] + b[i]);
    }
    /* into page-locked memory, and flags there */
    ck_assert_int_eq(reach_reduce(&reach, reach.pinned, reach.device + COUNT, reach.device), CG_OK);
    for (int i = 0; i < COUNT; i++) {
        ck_assert_float_eq(reach.pinned[i], a[i] + a[i] + b[i]);
    }
    ck_assert_int_eq(reach.ops.flag_write(reach.dev, reach.flag, 5, reach.stream), CG_OK);
    ck_assert_int_eq(reach.ops.flag_wait(reach.dev, reach.flag, 5, reach.stream), CG_OK);
    ck_assert_int_eq(reach.ops.fill(reach.dev, reach.pinned, 0, sizeof(a), reach.stream), CG_OK);
    ck_assert_int_eq(reach.ops.stream_sync(reach.dev, reach.stream), CG_OK);
    ck_assert(*reach.flag == 5);
    ck_assert_float_eq(reach.pinned[COUNT - 1], 0.0f);
    reach_close(&reach);
}
END_TEST

START_TEST(test_kernels_fault_elsewhere)
{
    reach_t reach;
    float   a[COUNT], out[COUNT];

    reach_open(&reach);
    for (int i = 0; i < COUNT; i++) {
        a[i] = (float)(rand() % 1000) - 500.0f;
    }
    memcpy(reach.pageable, a, sizeof(a));
    ck_assert_int_eq(reach.ops.copy(reach.dev, reach.device, a, sizeof(a), reach.stream), CG_OK);
    ck_assert_int_eq(reach.ops.copy(reach.dev, reach.device + COUNT, a, sizeof(a), reach.stream),
                     CG_OK);
    ck_assert_int_eq(reach.ops.copy(reach.dev, reach.other, a, sizeof(a), reach.stream), CG_OK);
    ck_assert_int_eq(reach.ops.stream_sync(reach.dev, reach.stream), CG_OK);

    /* reductions that read or write pageable or another device's memory */
    ck_assert_int_eq(reach_reduce(&reach, reach.device, reach.device + COUNT, reach.pageable),
                     CG_ERR_DEVICE);
    ck_assert_int_eq(reach_reduce(&reach, reach.device, reach.other, reach.device + COUNT),
                     CG_ERR_DEVICE);
    ck_assert_int_eq(reach_reduce(&reach, reach.pageable, reach.device, reach.device + COUNT),
                     CG_ERR_DEVICE);
    ck_assert_int_eq(reach_reduce(&reach, reach.other, reach.device, reach.device + COUNT),
                     CG_ERR_DEVICE);
    ck_assert_mem_eq(reach.pageable, a, sizeof(a)); /* nothing written */
    /* fills and flags: refused when queued (as cudaMemsetAsync refuses pageable memory)
     * or reported by the synchronisation */
    ck_assert_int_eq(reach_synced(&reach, reach.ops.fill(reach.dev, reach.pageable, 0,
                                                         sizeof(a), reach.stream)),
                     CG_ERR_DEVICE);
    ck_assert_mem_eq(reach.pageable, a, sizeof(a));
    ck_assert_int_eq(reach_synced(&reach, reach.ops.flag_write(reach.dev,
                                                               (uint64_t *)reach.pageable, 1,
                                                               reach.stream)),
                     CG_ERR_DEVICE);
    ck_assert_int_eq(reach_synced(&reach, reach.ops.flag_write(reach.dev, (uint64_t *)reach.other,
                                                               1, reach.stream)),
                     CG_ERR_DEVICE);
    ck_assert_int_eq(reach_synced(&reach, reach.ops.flag_wait(reach.dev, (uint64_t *)reach.other,
                                                              1, reach.stream)),
                     CG_ERR_DEVICE);
    ck_assert_mem_eq(reach.pageable, a, sizeof(a));

    /* the stream works again: this device's memory unchanged by the failed reductions */
    reach_read(&reach, out);
    ck_assert_mem_eq(out, a, sizeof(a));
    /* a release from the host is a copy (the CUDA layer's side stream): it reaches both */
    ck_assert_int_eq(reach.ops.flag_release(reach.dev, (uint64_t *)reach.pageable, 3), CG_OK);
    ck_assert(*(uint64_t *)reach.pageable == 3);
    ck_assert_int_eq(reach.ops.flag_release(reach.dev, (uint64_t *)reach.other, 4), CG_OK);
    reach_close(&reach);
}
END_TEST

#define LL_SLOT  256
#define LL_RANKS 2
#define LL_INBOX (2 * LL_RANKS * LL_SLOT)

/* Rank 0's arguments of an LL allreduce of COUNT floats between two ranks, with *inbox
 * (freed by the caller) allocated and zeroed; the stream synchronised. */
static cg_ll_args_t reach_ll_args(reach_t *reach, char **inbox)
{
    cg_ll_args_t args = {.coll = CG_LL_ALLREDUCE, .size = LL_RANKS, .rank = 0, .flag = 1,
                         .parity = 1, .slot_bytes = LL_SLOT, .count = COUNT,
                         .dtype = CG_DT_FLOAT, .op = CG_OP_SUM, .app_ordered = 1};

    ck_assert_int_eq(reach->ops.mem_alloc(reach->dev, LL_RANKS * LL_INBOX, (void **)inbox), CG_OK);
    ck_assert_int_eq(reach->ops.fill(reach->dev, *inbox, 0, LL_RANKS * LL_INBOX, reach->stream),
                     CG_OK);
    ck_assert_int_eq(reach->ops.stream_sync(reach->dev, reach->stream), CG_OK);
    for (int p = 0; p < LL_RANKS; p++) {
        args.inbox[p] = *inbox + (size_t)p * LL_INBOX;
    }
    return args;
}

/* An LL call whose input is pageable memory fails when it queues (its lines go to the
 * peers at once), with nothing sent. */
START_TEST(test_ll_input_pageable)
{
    reach_t      reach;
    char        *inbox = NULL;
    uint64_t     line  = 0;
    cg_ll_args_t args;

    reach_open(&reach);
    args     = reach_ll_args(&reach, &inbox);
    args.src = reach.pageable;
    args.dst = reach.device;
    ck_assert_int_eq(reach.ops.ll_run(reach.dev, &args, reach.stream), CG_ERR_DEVICE);
    for (int p = 0; p < LL_RANKS; p++) { /* no line in either inbox */
        ck_assert_int_eq(reach.ops.ll_peek(reach.dev, reach.stream,
                                           (const uint64_t *)cg_ll_slot_at(&args, p, 0), &line),
                         CG_OK);
        ck_assert(line == 0);
    }
    cg_dev_mem_release(reach.dev, inbox);
    reach_close(&reach);
}
END_TEST

/* An LL call whose cancel word a kernel cannot reach (pageable memory) ends with the
 * illegal address while it waits for a peer, at its first look, rather than waiting on. */
START_TEST(test_ll_cancel_pageable)
{
    reach_t      reach;
    char        *inbox = NULL;
    uint64_t     cancel = 0;
    int          done = 0;
    cg_status_t  status = CG_OK;
    cg_ll_args_t args;

    reach_open(&reach);
    ck_assert_int_eq(reach.ops.fill(reach.dev, reach.device, 0, 2 * COUNT * sizeof(float),
                                    reach.stream), CG_OK);
    args        = reach_ll_args(&reach, &inbox);
    args.src    = reach.device;
    args.dst    = reach.device + COUNT;
    args.cancel = &cancel; /* rank 1 never comes */
    ck_assert_int_eq(reach.ops.ll_run(reach.dev, &args, reach.stream), CG_OK);
    for (int polls = 0; polls < 100 && status == CG_OK && !done; polls++) {
        status = reach.ops.ll_test(reach.dev, reach.stream, &done);
    }
    ck_assert_int_eq(status, CG_ERR_DEVICE);
    cg_dev_mem_release(reach.dev, inbox);
    reach_close(&reach);
}
END_TEST

/* A stream's wait for the application's work (app_wait with a stream) orders only that
 * stream: stream A, held by a flag wait, reaches it late; a copy on stream B, which skipped
 * its own wait, reads the bytes from before, as on a GPU; A's copy behind the wait reads
 * the application's. The host's wait (no stream) runs the application's work at once. */
START_TEST(test_app_wait_orders_its_stream)
{
    reach_t          reach;
    cg_dev_stream_t *other = NULL;
    float            before[COUNT], app[COUNT], out_a[COUNT], out_b[COUNT];

    reach_open(&reach);
    ck_assert_int_eq(reach.ops.stream_create(reach.dev, &other), CG_OK);
    for (int i = 0; i < COUNT; i++) {
        before[i] = (float)(rand() % 1000) - 500.0f;
        app[i]    = before[i] + 1000.0f;
    }
    ck_assert_int_eq(reach.ops.copy(reach.dev, reach.device, before, sizeof(before),
                                    reach.stream), CG_OK);
    ck_assert_int_eq(reach.ops.stream_sync(reach.dev, reach.stream), CG_OK);
    ck_assert_int_eq(cg_sim_memcpy_async(reach.device, app, sizeof(app)), CG_SIM_OK);

    ck_assert_int_eq(reach.ops.flag_wait(reach.dev, reach.flag, 1, reach.stream), CG_OK);
    ck_assert_int_eq(reach.ops.app_wait(reach.dev, reach.stream), CG_OK);
    ck_assert_int_eq(reach.ops.copy(reach.dev, out_a, reach.device, sizeof(out_a), reach.stream),
                     CG_OK);
    ck_assert_int_eq(reach.ops.copy(reach.dev, out_b, reach.device, sizeof(out_b), other), CG_OK);
    ck_assert_int_eq(reach.ops.stream_sync(reach.dev, other), CG_OK);
    ck_assert_mem_eq(out_b, before, sizeof(before));
    ck_assert(!cg_sim_stream_idle()); /* the application's work waits for stream A */

    ck_assert_int_eq(reach.ops.flag_release(reach.dev, reach.flag, 1), CG_OK);
    ck_assert_int_eq(reach.ops.stream_sync(reach.dev, reach.stream), CG_OK);
    ck_assert_mem_eq(out_a, app, sizeof(app));
    ck_assert(cg_sim_stream_idle());

    /* the host's wait: now */
    ck_assert_int_eq(cg_sim_memcpy_async(reach.device, before, sizeof(before)), CG_SIM_OK);
    ck_assert_int_eq(reach.ops.app_wait(reach.dev, NULL), CG_OK);
    ck_assert(cg_sim_stream_idle());
    ck_assert_int_eq(reach.ops.copy(reach.dev, out_b, reach.device, sizeof(out_b), other), CG_OK);
    ck_assert_int_eq(reach.ops.stream_sync(reach.dev, other), CG_OK);
    ck_assert_mem_eq(out_b, before, sizeof(before));
    reach.ops.stream_destroy(reach.dev, other);
    reach_close(&reach);
}
END_TEST

CG_UNIT_MAIN("sim_reach", 60, test_copies_reach_everything, test_host_query_bounds,
             test_kernels_reach_device_and_pinned, test_kernels_fault_elsewhere,
             test_ll_input_pageable, test_ll_cancel_pageable, test_app_wait_orders_its_stream)
