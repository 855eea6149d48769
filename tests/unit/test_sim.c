/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The simulated GPU and the strict host device layer: device memory faults when the CPU
 * touches it (death tests in a child process), copies and reductions reach it through the
 * layer, pool memory cannot be exported, IPC between processes reproduces legacy CUDA IPC's
 * "already mapped" for the same allocation and for memory freed and allocated again at
 * the same address, and a range that overruns an allocation is an illegal address.
 */
#include "kernels/cg_dev.h"
#include "kernels/sim/cg_sim.h"

#include "tests/unit/unit.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void cpu_read(void *ptr)
{
    volatile int value = *(volatile int *)ptr;
    (void)value;
}

static void cpu_write(void *ptr)
{
    memset(ptr, 1, 16);
}

START_TEST(test_cpu_cannot_touch)
{
    void *dev = NULL;
    int   host[4] = {1, 2, 3, 4}, back[4] = {0};

    ck_assert_int_eq(cg_sim_malloc(&dev, 1000, CG_SIM_ALLOC_DEFAULT), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_memcpy(dev, host, sizeof(host)), CG_SIM_OK);
    ck_assert_int_eq(cg_unit_die_signal(cpu_read, dev), SIGSEGV);
    ck_assert_int_eq(cg_unit_die_signal(cpu_write, (char *)dev + 100), SIGSEGV);
    /* the device's view holds the data; the copy back too */
    ck_assert_int_eq(((int *)cg_sim_access(dev, sizeof(host)))[2], 3);
    ck_assert_int_eq(cg_sim_memcpy(back, dev, sizeof(back)), CG_SIM_OK);
    ck_assert_int_eq(memcmp(back, host, sizeof(host)), 0);
    /* host memory is not device memory; an overrun is an illegal address */
    cg_sim_attr_t attr;
    ck_assert_int_eq(cg_sim_query(host, &attr), CG_SIM_ERR_INVALID);
    ck_assert_int_eq(cg_sim_query((char *)dev + 999, &attr), CG_SIM_OK);
    ck_assert_uint_eq(attr.base, (uintptr_t)dev);
    ck_assert_ptr_null(cg_sim_access((char *)dev + 8, 1u << 20));
    ck_assert_int_eq(cg_sim_memcpy(back, (char *)dev + 4090, 16), CG_SIM_ERR_INVALID);
    ck_assert_int_eq(cg_sim_free(dev), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_free(host), CG_SIM_ERR_INVALID);
}
END_TEST

START_TEST(test_pool_not_exportable)
{
    void               *pool = NULL, *plain = NULL;
    cg_sim_ipc_handle_t handle;

    ck_assert_int_eq(cg_sim_malloc(&pool, 64, CG_SIM_ALLOC_POOL), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_malloc(&plain, 64, CG_SIM_ALLOC_DEFAULT), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_ipc_get_handle(&handle, pool), CG_SIM_ERR_NOT_SHAREABLE);
    ck_assert_int_eq(cg_sim_ipc_get_handle(&handle, (char *)plain + 8), CG_SIM_ERR_INVALID);
    ck_assert_int_eq(cg_sim_ipc_get_handle(&handle, plain), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_ipc_open(&pool, &handle), CG_SIM_ERR_INVALID); /* own handle */
    cg_sim_free(pool);
    cg_sim_free(plain);
}
END_TEST

/* Parent exports, child imports: the same allocation twice is "already mapped"; after the
 * parent freed it and allocated again at the same address, the new allocation is "already
 * mapped" while the old mapping stays open, and opens once it is closed. */
START_TEST(test_ipc_already_mapped)
{
    int                 to_child[2], to_parent[2], status = 0;
    cg_sim_ipc_handle_t first, second;
    void               *buf = NULL, *again = NULL;
    int                 value = 42;
    char                go;
    pid_t               pid;

    ck_assert_int_eq(pipe(to_child), 0);
    ck_assert_int_eq(pipe(to_parent), 0);
    ck_assert_int_eq(cg_sim_malloc(&buf, 4096, 0), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_memcpy(buf, &value, sizeof(value)), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_ipc_get_handle(&first, buf), CG_SIM_OK);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        void *mapped = NULL, *twice = NULL;
        int   got = 0, fails = 0;
        close(to_parent[0]); /* each side keeps its ends only: a side that died is an */
        close(to_child[1]);  /* end of file for the other, not a read that waits for ever */
        fails += cg_sim_ipc_open(&mapped, &first) != CG_SIM_OK;
        fails += cg_sim_memcpy(&got, mapped, sizeof(got)) != CG_SIM_OK || got != 42;
        fails += cg_sim_ipc_open(&twice, &first) != CG_SIM_ERR_ALREADY_MAPPED;
        fails += write(to_parent[1], "m", 1) != 1;         /* mapped: parent frees */
        fails += read(to_child[0], &second, sizeof(second)) != (ssize_t)sizeof(second);
        if (second.base == first.base) {                   /* same address, new buffer */
            fails += cg_sim_ipc_open(&twice, &second) != CG_SIM_ERR_ALREADY_MAPPED;
        }
        fails += cg_sim_ipc_close(mapped) != CG_SIM_OK;
        fails += cg_sim_ipc_open(&twice, &second) != CG_SIM_OK;
        fails += cg_sim_memcpy(&got, twice, sizeof(got)) != CG_SIM_OK || got != 7;
        _exit(fails);
    }
    close(to_parent[1]);
    close(to_child[0]);
    ck_assert_int_eq(read(to_parent[0], &go, 1), 1);
    ck_assert_int_eq(cg_sim_free(buf), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_malloc(&again, 4096, 0), CG_SIM_OK);
    value = 7;
    ck_assert_int_eq(cg_sim_memcpy(again, &value, sizeof(value)), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_ipc_get_handle(&second, again), CG_SIM_OK);
    ck_assert_uint_ne(second.buffer_id, first.buffer_id);
    ck_assert_int_eq(write(to_child[1], &second, sizeof(second)), (ssize_t)sizeof(second));
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    close(to_parent[0]);
    close(to_child[1]);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    cg_sim_free(again);
}
END_TEST

/* The strict host device layer: classification, copies, reductions and flags through the
 * simulator, IPC failure modes as statuses. */
START_TEST(test_strict_layer)
{
    cg_dev_t        *dev;
    cg_dev_stream_t *stream;
    cg_mem_attr_t    attr;
    cg_ipc_handle_t  handle;
    int              host_in[8], host_out[8] = {0};
    void            *a = NULL, *b = NULL, *pool = NULL;

    ck_assert_int_eq(cg_dev_host_open(NULL, &dev), CG_OK);
    ck_assert(cg_dev_host_strict(dev));
    ck_assert(!dev->caps.host_access);
    ck_assert_int_eq(dev->ops->stream_create(dev, &stream), CG_OK);
    ck_assert_int_eq(dev->ops->mem_alloc(dev, 4096, &a), CG_OK);
    ck_assert_int_eq(cg_sim_malloc(&b, sizeof(host_in), 0), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_malloc(&pool, 64, CG_SIM_ALLOC_POOL), CG_SIM_OK);
    ck_assert_int_eq(dev->ops->mem_query(dev, host_in, &attr), CG_OK);
    ck_assert_int_eq(attr.kind, CG_MEM_HOST);
    ck_assert_int_eq(dev->ops->mem_query(dev, (char *)b + 4, &attr), CG_OK);
    ck_assert_int_eq(attr.kind, CG_MEM_DEVICE);
    ck_assert_uint_eq(attr.base, (uintptr_t)b);
    ck_assert_int_eq(attr.foreign, 0);
    /* pool memory has no context (as the driver reports it): still the device's own, which
     * the layer's kernels may use (the first GPU run sent it all staged) */
    ck_assert_int_eq(dev->ops->mem_query(dev, pool, &attr), CG_OK);
    ck_assert_int_eq(attr.kind, CG_MEM_DEVICE);
    ck_assert_int_eq(attr.foreign, 0);
    /* the rule both layers apply: another device, or another context, is foreign */
    ck_assert(!cg_dev_mem_is_foreign(0, 0, 0, 7));
    ck_assert(!cg_dev_mem_is_foreign(0, 7, 0, 7));
    ck_assert(cg_dev_mem_is_foreign(0, 8, 0, 7));
    ck_assert(cg_dev_mem_is_foreign(1, 0, 0, 7));
    ck_assert(cg_dev_mem_is_foreign(1, 7, 0, 7));
    for (int i = 0; i < 8; i++) {
        host_in[i] = i + 1;
    }
    /* host -> device, device -> device, reduce two device buffers, device -> host */
    ck_assert_int_eq(dev->ops->copy(dev, b, host_in, sizeof(host_in), stream), CG_OK);
    ck_assert_int_eq(dev->ops->copy(dev, a, b, sizeof(host_in), stream), CG_OK);
    cg_reduce_args_t args = {.dtype = CG_DT_INT32, .op = CG_OP_SUM, .count = 8, .nsrc = 2,
                             .ndst = 1};
    args.srcs[0] = a;
    args.srcs[1] = b;
    args.dsts[0] = a;
    ck_assert_int_eq(dev->ops->reduce(dev, &args, stream), CG_OK);
    ck_assert_int_eq(dev->ops->copy(dev, host_out, a, sizeof(host_out), stream), CG_OK);
    for (int i = 0; i < 8; i++) {
        ck_assert_int_eq(host_out[i], 2 * (i + 1));
    }
    /* an overrun of the allocation is an error, not a silent host access */
    ck_assert_int_eq(dev->ops->copy(dev, host_out, (char *)b + 16, sizeof(host_in), stream),
                     CG_ERR_DEVICE);
    /* flags in device memory */
    ck_assert_int_eq(dev->ops->flag_write(dev, (uint64_t *)a, 5, stream), CG_OK);
    ck_assert_int_eq(dev->ops->flag_wait(dev, (uint64_t *)a, 5, stream), CG_OK);
    /* the application's default-stream work: not done while queued (app_done: an LL server
     * may not run the call yet), and then waited for on the stream, as app_wait would */
    {
        int      done = -1;
        uint64_t word = 1;
        ck_assert_int_eq(dev->ops->app_done(dev, stream, &done), CG_OK);
        ck_assert_int_eq(done, 1);
        ck_assert_int_eq(cg_sim_memset_async(b, 0, 8), CG_SIM_OK);
        ck_assert_int_eq(dev->ops->app_done(dev, stream, &done), CG_OK);
        ck_assert_int_eq(done, 0);
        ck_assert_int_eq(dev->ops->copy(dev, &word, b, 8, stream), CG_OK); /* after the wait */
        ck_assert_int_eq(dev->ops->stream_sync(dev, stream), CG_OK);
        ck_assert_uint_eq(word, 0);
        ck_assert_int_eq(dev->ops->app_done(dev, stream, &done), CG_OK);
        ck_assert_int_eq(done, 1);
    }
    /* export: device memory yes (at an offset), pool memory and host memory no */
    ck_assert_int_eq(dev->ops->ipc_export(dev, (char *)b + 8, 16, &handle), CG_OK);
    ck_assert_uint_eq(handle.base, (uintptr_t)b);
    ck_assert_uint_eq(handle.offset, 8);
    ck_assert_int_eq(dev->ops->ipc_export(dev, pool, 16, &handle), CG_ERR_UNSUPPORTED);
    ck_assert_int_eq(dev->ops->ipc_export(dev, host_in, 16, &handle), CG_ERR_UNSUPPORTED);
    dev->ops->mem_free(dev, a);
    cg_sim_free(b);
    cg_sim_free(pool);
    dev->ops->stream_destroy(dev, stream);
    cg_dev_close(dev);
}
END_TEST

/* A 2D copy (a strided layout's pieces, coll_gpu_pieces.c): only the rows are written,
 * the bytes between them keep theirs, both ways between host and device memory; a pitch
 * below the width is refused, and rows that overrun the device allocation are an illegal
 * address (cudaMemcpy2DAsync's extent is one allocation). */
START_TEST(test_copy_2d)
{
    cg_dev_t        *dev;
    cg_dev_stream_t *stream;
    char             host[96], back[96];
    void            *dev_buf = NULL;

    ck_assert_int_eq(cg_dev_host_open(NULL, &dev), CG_OK);
    ck_assert_int_eq(dev->ops->stream_create(dev, &stream), CG_OK);
    ck_assert_int_eq(dev->ops->mem_alloc(dev, sizeof(host), &dev_buf), CG_OK);
    memset(back, 'g', sizeof(back));
    ck_assert_int_eq(dev->ops->copy(dev, dev_buf, back, sizeof(back), stream), CG_OK);
    for (size_t i = 0; i < sizeof(host); i++) {
        host[i] = (char)('A' + i % 26);
    }
    /* 3 rows of 8 bytes, 32 apart, from host to device; then the whole back */
    ck_assert_int_eq(dev->ops->copy_2d(dev, (char *)dev_buf + 4, 32, host + 4, 32, 8, 3, stream),
                     CG_OK);
    ck_assert_int_eq(dev->ops->copy(dev, back, dev_buf, sizeof(back), stream), CG_OK);
    ck_assert_int_eq(dev->ops->stream_sync(dev, stream), CG_OK);
    for (size_t i = 0; i < sizeof(back); i++) {
        const int in_row = i >= 4 && (i - 4) % 32 < 8 && (i - 4) / 32 < 3;
        ck_assert_int_eq(back[i], in_row ? host[i] : 'g');
    }
    /* device to host, other pitches on each side */
    memset(back, '.', sizeof(back));
    ck_assert_int_eq(dev->ops->copy_2d(dev, back, 10, (char *)dev_buf + 4, 32, 8, 3, stream), CG_OK);
    ck_assert_int_eq(dev->ops->stream_sync(dev, stream), CG_OK);
    for (size_t row = 0; row < 3; row++) {
        ck_assert_int_eq(memcmp(back + row * 10, host + 4 + row * 32, 8), 0);
        ck_assert_int_eq(back[row * 10 + 8], '.');
    }
    ck_assert_int_eq(dev->ops->copy_2d(dev, back, 4, dev_buf, 32, 8, 2, stream),
                     CG_ERR_INVALID_PARAM);
    ck_assert_int_eq(dev->ops->copy_2d(dev, back, 8, (char *)dev_buf + 64, 32, 8, 2, stream),
                     CG_ERR_DEVICE); /* rows at 64 and 96: the second beyond its 96 bytes */
    dev->ops->mem_free(dev, dev_buf);
    dev->ops->stream_destroy(dev, stream);
    cg_dev_close(dev);
}
END_TEST

/* Flag waits stay queued on their stream, as on a GPU: the call returns at once, the work
 * queued after the wait runs only once its flag comes (by the layer's progress thread, or
 * by a poll), another stream is not held back, and an event recorded before the wait is
 * complete while the wait is not. With blocking waits (testing knob) the layer says so. */
START_TEST(test_queued_flag_wait)
{
    cg_dev_t            *dev;
    cg_dev_stream_t     *stream, *other;
    cg_dev_event_t      *before, *after;
    cg_dev_host_config_t blocking = {.blocking_waits = 1};
    int                  host_in[4] = {1, 2, 3, 4}, host_out[4] = {0}, done = 0;
    uint64_t            *flag = NULL;
    void                *data = NULL;

    ck_assert_int_eq(cg_dev_host_open(NULL, &dev), CG_OK);
    ck_assert(dev->caps.async);
    ck_assert(dev->ops->flag_watch == NULL); /* the host never blocks in a flag wait */
    ck_assert_int_eq(dev->ops->stream_create(dev, &stream), CG_OK);
    ck_assert_int_eq(dev->ops->stream_create(dev, &other), CG_OK);
    ck_assert_int_eq(dev->ops->event_create(dev, &before), CG_OK);
    ck_assert_int_eq(dev->ops->event_create(dev, &after), CG_OK);
    ck_assert_int_eq(dev->ops->mem_alloc(dev, 64, (void **)&flag), CG_OK);
    ck_assert_int_eq(dev->ops->mem_alloc(dev, sizeof(host_in), &data), CG_OK);
    ck_assert_int_eq(dev->ops->fill(dev, flag, 0, 64, other), CG_OK);
    ck_assert_int_eq(dev->ops->fill(dev, data, 0, sizeof(host_in), other), CG_OK);

    ck_assert_int_eq(dev->ops->event_record(dev, before, stream), CG_OK);
    ck_assert_int_eq(dev->ops->flag_wait(dev, flag, 7, stream), CG_OK); /* returns at once */
    ck_assert_int_eq(dev->ops->copy(dev, data, host_in, sizeof(host_in), stream), CG_OK);
    ck_assert_int_eq(dev->ops->event_record(dev, after, stream), CG_OK);
    ck_assert_int_eq(dev->ops->event_query(dev, before, &done), CG_OK);
    ck_assert_int_eq(done, 1);
    for (int look = 0; look < 3; look++) {
        ck_assert_int_eq(dev->ops->event_query(dev, after, &done), CG_OK);
        ck_assert_int_eq(done, 0);
        usleep(2000); /* the progress thread runs: the flag has not come */
    }
    /* the copy behind the wait has not run; another stream is not held back (its copy
     * overwrites the poison at once) */
    memset(host_out, 0xff, sizeof(host_out));
    ck_assert_int_eq(dev->ops->copy(dev, host_out, data, sizeof(host_out), other), CG_OK);
    ck_assert_int_eq(host_out[3], 0);
    /* the flag comes, lower than waited for first: still waiting; then high enough, with
     * no one polling the stream: the progress thread runs the copy */
    ck_assert_int_eq(dev->ops->flag_release(dev, flag, 6), CG_OK);
    usleep(2000);
    ck_assert_int_eq(dev->ops->copy(dev, host_out, data, sizeof(host_out), other), CG_OK);
    ck_assert_int_eq(host_out[3], 0);
    ck_assert_int_eq(dev->ops->flag_release(dev, flag, 7), CG_OK);
    for (int look = 0; look < 5000 && host_out[3] == 0; look++) {
        usleep(1000);
        ck_assert_int_eq(dev->ops->copy(dev, host_out, data, sizeof(host_out), other), CG_OK);
    }
    ck_assert_int_eq(host_out[3], 4);
    ck_assert_int_eq(dev->ops->event_query(dev, after, &done), CG_OK);
    ck_assert_int_eq(done, 1);
    /* a queued wait met at once runs at once, and so does what follows */
    ck_assert_int_eq(dev->ops->flag_wait(dev, flag, 7, stream), CG_OK);
    ck_assert_int_eq(dev->ops->event_record(dev, after, stream), CG_OK);
    ck_assert_int_eq(dev->ops->event_query(dev, after, &done), CG_OK);
    ck_assert_int_eq(done, 1);
    ck_assert_int_eq(dev->ops->stream_sync(dev, stream), CG_OK);
    dev->ops->event_destroy(dev, before);
    dev->ops->event_destroy(dev, after);
    dev->ops->mem_free(dev, flag);
    dev->ops->mem_free(dev, data);
    dev->ops->stream_destroy(dev, stream);
    dev->ops->stream_destroy(dev, other);
    cg_dev_close(dev);

    ck_assert_int_eq(cg_dev_host_open(&blocking, &dev), CG_OK);
    ck_assert(!dev->caps.async);
    ck_assert(dev->ops->flag_watch != NULL);
    cg_dev_close(dev);
}
END_TEST

/* coll_gpu_debug_host_slow: a copy ends op_delay_s after it starts, while the host goes on;
 * a synchronisation waits for it. */
START_TEST(test_slow_device)
{
    cg_dev_t            *dev;
    cg_dev_stream_t     *stream;
    cg_dev_event_t      *event;
    cg_dev_host_config_t slow = {.op_delay_s = 0.05};
    int                  host_in[4] = {5, 6, 7, 8}, host_out[4] = {0}, done = 0, seen;
    void                *data = NULL;
    double               t0;

    ck_assert_int_eq(cg_dev_host_open(&slow, &dev), CG_OK);
    ck_assert_int_eq(dev->ops->stream_create(dev, &stream), CG_OK);
    ck_assert_int_eq(dev->ops->event_create(dev, &event), CG_OK);
    ck_assert_int_eq(dev->ops->mem_alloc(dev, sizeof(host_in), &data), CG_OK);
    t0 = cg_time_now();
    ck_assert_int_eq(dev->ops->copy(dev, data, host_in, sizeof(host_in), stream), CG_OK);
    ck_assert_int_eq(dev->ops->copy(dev, host_out, data, sizeof(host_out), stream), CG_OK);
    ck_assert_int_eq(dev->ops->event_record(dev, event, stream), CG_OK);
    ck_assert_int_eq(dev->ops->event_query(dev, event, &done), CG_OK);
    seen = __atomic_load_n(&host_out[0], __ATOMIC_RELAXED); /* read before the wait: the bytes from before, if early enough */
    if (cg_time_now() - t0 < 0.1) { /* a loaded machine may take longer to get here */
        ck_assert_int_eq(done, 0);
        ck_assert_int_eq(seen, 0);
    }
    ck_assert_int_eq(dev->ops->stream_sync(dev, stream), CG_OK);
    ck_assert(cg_time_now() - t0 >= 0.1); /* two copies, each 50 ms at least */
    ck_assert_int_eq(host_out[0], 5);
    ck_assert_int_eq(host_out[3], 8);
    /* a free waits for the work queued on the memory, as cudaFree does (before, the
     * progress thread then wrote into the freed allocation: a crash) */
    ck_assert_int_eq(dev->ops->copy(dev, data, host_in, sizeof(host_in), stream), CG_OK);
    dev->ops->mem_free(dev, data);
    ck_assert_int_eq(dev->ops->mem_alloc(dev, sizeof(host_in), &data), CG_OK);
    /* a queued op that fails: an event before it completes with no error, one after it
     * with the error (and so does every look past it until the stream is synchronised);
     * the work behind it is dropped, as behind a GPU fault */
    ck_assert_int_eq(dev->ops->event_record(dev, event, stream), CG_OK);
    ck_assert_int_eq(dev->ops->copy(dev, host_out, (char *)data + 8, sizeof(host_in), stream), CG_OK);
    ck_assert_int_eq(dev->ops->event_query(dev, event, &done), CG_OK);
    ck_assert_int_eq(done, 1);
    ck_assert_int_eq(dev->ops->copy(dev, data, host_in, sizeof(host_in), stream), CG_OK);
    ck_assert_int_eq(dev->ops->event_record(dev, event, stream), CG_OK);
    ck_assert_int_eq(dev->ops->stream_sync(dev, stream), CG_ERR_DEVICE);
    ck_assert_int_eq(dev->ops->event_query(dev, event, &done), CG_OK); /* reported by the sync */
    ck_assert_int_eq(done, 1);
    ck_assert_int_eq(dev->ops->stream_sync(dev, stream), CG_OK);
    dev->ops->event_destroy(dev, event);
    dev->ops->mem_free(dev, data);
    dev->ops->stream_destroy(dev, stream);
    cg_dev_close(dev);
}
END_TEST

/* The per-thread hints of recent regions never outlive a region: after a free the address
 * resolves to nothing, or to the allocation that took the address since, and a lookup
 * that overruns a hinted region is refused as before. */
START_TEST(test_hints_follow_frees)
{
    void         *first, *second;
    cg_sim_attr_t attr;
    int           value = 7;

    ck_assert_int_eq(cg_sim_malloc(&first, 4096, 0), CG_SIM_OK);
    ck_assert_ptr_nonnull(cg_sim_access(first, 4096)); /* hinted */
    ck_assert_int_eq(cg_sim_query(first, &attr), CG_SIM_OK);
    ck_assert_ptr_null(cg_sim_access(first, 4097)); /* overruns: refused, hint or not */
    ck_assert_int_eq(cg_sim_free(first), CG_SIM_OK);
    ck_assert_ptr_null(cg_sim_access(first, 16));
    ck_assert_int_ne(cg_sim_query(first, &attr), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_malloc(&second, 4096, 0), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_memcpy(second, &value, sizeof(value)), CG_SIM_OK);
    if (second == first) { /* the address came back: the new allocation's view */
        ck_assert_int_eq(*(int *)cg_sim_access(first, sizeof(int)), 7);
    }
    ck_assert_int_eq(*(int *)cg_sim_access(second, sizeof(int)), 7);
    ck_assert_int_eq(cg_sim_free(second), CG_SIM_OK);
}
END_TEST

/* The default stream: queued work is invisible to the device's view and not done until the
 * stream is waited for (the component's app_wait; app_done's query says so), and a
 * synchronous copy or set runs it first. */
START_TEST(test_default_stream)
{
    void *dev = NULL;
    int   zeros[4] = {0}, host[4] = {1, 2, 3, 4}, back[4] = {0};

    ck_assert_int_eq(cg_sim_malloc(&dev, sizeof(host), CG_SIM_ALLOC_DEFAULT), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_memcpy(dev, zeros, sizeof(zeros)), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_stream_idle(), 1);
    ck_assert_int_eq(cg_sim_memcpy_async(dev, host, sizeof(host)), CG_SIM_OK);
    host[0] = 9; /* the source was taken when queued */
    ck_assert_int_eq(((int *)cg_sim_access(dev, sizeof(host)))[3], 0); /* not run yet */
    ck_assert_int_eq(cg_sim_stream_idle(), 0); /* nor done: nothing runs it by itself */
    ck_assert_int_eq(cg_sim_stream_idle(), 0);
    ck_assert_int_eq(cg_sim_stream_sync(), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_stream_idle(), 1);
    ck_assert_int_eq(((int *)cg_sim_access(dev, sizeof(host)))[0], 1);
    ck_assert_int_eq(((int *)cg_sim_access(dev, sizeof(host)))[3], 4);
    ck_assert_int_eq(cg_sim_memset_async(dev, 0, sizeof(host)), CG_SIM_OK);
    ck_assert_int_eq(((int *)cg_sim_access(dev, sizeof(host)))[3], 4);
    ck_assert_int_eq(cg_sim_memcpy(back, dev, sizeof(back)), CG_SIM_OK); /* runs it first */
    ck_assert_int_eq(memcmp(back, zeros, sizeof(zeros)), 0);
    ck_assert_int_eq(cg_sim_memcpy_async((char *)dev + 8, host, sizeof(host)), CG_SIM_ERR_INVALID);
    ck_assert_int_eq(cg_sim_free(dev), CG_SIM_OK);
}
END_TEST

/* Memory of a second GPU: foreign to the layer (device 1), its work queued on device 1's
 * default stream, which the layer's app_wait (device 0's) leaves and app_wait_foreign runs. */
START_TEST(test_other_device)
{
    cg_dev_t     *dev = NULL;
    void         *other = NULL;
    int           host[2] = {5, 6};
    cg_mem_attr_t attr;

    ck_assert_int_eq(cg_dev_host_open(NULL, &dev), CG_OK);
    ck_assert_int_eq(cg_sim_malloc(&other, sizeof(host), CG_SIM_ALLOC_OTHER_DEVICE), CG_SIM_OK);
    ck_assert_int_eq(dev->ops->mem_query(dev, other, &attr), CG_OK);
    ck_assert(attr.device == 1 && attr.foreign);
    ck_assert_int_eq(cg_sim_memset(other, 0, sizeof(host)), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_memcpy_async(other, host, sizeof(host)), CG_SIM_OK);
    ck_assert_int_eq(cg_sim_stream_idle(), 1); /* device 0's stream has nothing queued */
    ck_assert_int_eq(dev->ops->app_wait(dev, NULL), CG_OK);
    ck_assert_int_eq(((int *)cg_sim_access(other, sizeof(host)))[1], 0); /* not run */
    ck_assert_int_eq(dev->ops->app_wait_foreign(dev, other), CG_OK);
    ck_assert_int_eq(((int *)cg_sim_access(other, sizeof(host)))[1], 6);
    ck_assert_int_eq(cg_sim_device_sync(2), CG_SIM_ERR_INVALID);
    cg_sim_free(other), cg_dev_close(dev);
}
END_TEST

/* An LL call whose peer never sends, given up by the host's abort lines: the simulated
 * kernel ends as the GPU's does, without a result and without an error (its word's
 * given-up bit: ll_test 2, the stream synchronises), so that the callers take the path
 * they take on a GPU. */
START_TEST(test_ll_given_up)
{
    const size_t     slot = 256;
    cg_dev_t        *dev;
    cg_dev_stream_t *stream;
    void            *inbox = NULL, *buf = NULL;
    int              done = -1;

    ck_assert_int_eq(cg_dev_host_open(NULL, &dev), CG_OK);
    ck_assert_int_eq(dev->ops->stream_create(dev, &stream), CG_OK);
    ck_assert_int_eq(dev->ops->mem_alloc(dev, 2 * 2 * 2 * slot, &inbox), CG_OK);
    ck_assert_int_eq(dev->ops->mem_alloc(dev, 64, &buf), CG_OK);
    ck_assert_int_eq(dev->ops->fill(dev, inbox, 0, 2 * 2 * 2 * slot, stream), CG_OK);
    ck_assert_int_eq(dev->ops->fill(dev, buf, 0, 64, stream), CG_OK);
    cg_ll_args_t args = {.coll = CG_LL_ALLREDUCE, .size = 2, .rank = 0, .flag = 1,
                         .slot_bytes = slot, .src = buf, .dst = (char *)buf + 32, .count = 2,
                         .dtype = CG_DT_FLOAT, .op = CG_OP_SUM, .app_ordered = 1};
    args.inbox[0] = inbox;                          /* this rank's */
    args.inbox[1] = (char *)inbox + 2 * 2 * slot;  /* the peer's, which never runs */
    ck_assert_int_eq(dev->ops->ll_run(dev, &args, stream), CG_OK);
    ck_assert_int_eq(dev->ops->ll_test(dev, stream, &done), CG_OK);
    ck_assert_int_eq(done, 0); /* waits for the peer's lines */
    ck_assert_int_eq(dev->ops->ll_abort(dev, &args), CG_OK);
    ck_assert_int_eq(dev->ops->stream_sync(dev, stream), CG_OK);
    ck_assert_int_eq(dev->ops->ll_test(dev, stream, &done), CG_OK);
    ck_assert_int_eq(done, 2);
    dev->ops->mem_free(dev, buf);
    dev->ops->mem_free(dev, inbox);
    dev->ops->stream_destroy(dev, stream);
    cg_dev_close(dev);
}
END_TEST

/* The frees held back while device work waits for peers (kernels/dev_frees.c), on a device
 * whose operations count the frees: none while a bracket is open, all at its end or at the
 * close, at once without brackets; an end without a begin changes nothing. */
static int frees_done[2]; /* mem_free, host_free */

static void frees_mem_free(cg_dev_t *dev, void *ptr)
{
    (void)dev;
    (void)ptr;
    frees_done[0]++;
}

static void frees_host_free(cg_dev_t *dev, void *ptr)
{
    (void)dev;
    (void)ptr;
    frees_done[1]++;
}

static void frees_close(cg_dev_t *dev)
{
    (void)dev;
}

static const cg_dev_ops_t frees_ops = {.name      = "frees",
                                       .close     = frees_close,
                                       .mem_free  = frees_mem_free,
                                       .host_free = frees_host_free};

START_TEST(test_frees_held)
{
    cg_dev_t dev = {.ops = &frees_ops};
    int      a, b, c;

    cg_dev_mem_release(&dev, &a); /* not enabled: at once */
    ck_assert_int_eq(frees_done[0], 1);
    ck_assert_int_eq(cg_dev_frees_enable(&dev), CG_OK);
    cg_dev_host_release(&dev, &b); /* nothing in flight: at once */
    ck_assert_int_eq(frees_done[1], 1);
    cg_dev_peer_wait_begin(&dev);
    cg_dev_peer_wait_begin(&dev);
    cg_dev_mem_release(&dev, &a);
    cg_dev_host_release(&dev, &b);
    cg_dev_mem_release(&dev, NULL); /* nothing to free */
    ck_assert_int_eq(frees_done[0], 1);
    ck_assert_int_eq(frees_done[1], 1);
    cg_dev_peer_wait_end(&dev); /* one still in flight */
    ck_assert_int_eq(frees_done[0], 1);
    cg_dev_peer_wait_end(&dev);
    ck_assert_int_eq(frees_done[0], 2);
    ck_assert_int_eq(frees_done[1], 2);
    cg_dev_peer_wait_end(&dev); /* unbalanced: logged, nothing freed, count stays 0 */
    cg_dev_mem_release(&dev, &c);
    ck_assert_int_eq(frees_done[0], 3);
    cg_dev_peer_wait_begin(&dev); /* held at the close: freed there */
    cg_dev_mem_release(&dev, &c);
    ck_assert_int_eq(frees_done[0], 3);
    cg_dev_frees_close(&dev);
    ck_assert_int_eq(frees_done[0], 4);
    ck_assert_ptr_null(dev.frees);
}
END_TEST

/* After cg_dev_abandon nothing is freed: neither what was held, at the last end or at the
 * close, nor what comes later, held or not. */
START_TEST(test_frees_abandoned)
{
    cg_dev_t dev = {.ops = &frees_ops};
    int      a, b;

    frees_done[0] = frees_done[1] = 0;
    ck_assert_int_eq(cg_dev_frees_enable(&dev), CG_OK);
    cg_dev_peer_wait_begin(&dev);
    cg_dev_mem_release(&dev, &a); /* held */
    cg_dev_abandon(&dev);
    cg_dev_host_release(&dev, &b);
    cg_dev_peer_wait_end(&dev); /* the last end: nothing freed */
    cg_dev_mem_release(&dev, &a);
    cg_dev_frees_close(&dev);
    ck_assert_int_eq(frees_done[0], 0);
    ck_assert_int_eq(frees_done[1], 0);
    dev.abandoned = 0;
    cg_dev_mem_release(&dev, &a); /* not enabled, not abandoned: at once */
    ck_assert_int_eq(frees_done[0], 1);
}
END_TEST

CG_UNIT_MAIN("sim", 60, test_cpu_cannot_touch, test_pool_not_exportable, test_ipc_already_mapped,
             test_strict_layer, test_copy_2d, test_queued_flag_wait, test_slow_device,
             test_hints_follow_frees, test_default_stream, test_other_device, test_ll_given_up,
             test_frees_held, test_frees_abandoned)
