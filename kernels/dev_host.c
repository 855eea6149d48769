/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Host device layer: runs every algorithm on a machine without a GPU. Two modes, chosen
 * when the layer opens:
 *   strict   the application allocates device memory from the simulated GPU (libcg_sim,
 *            kernels/sim/cg_sim.h), which the CPU cannot touch through the application's
 *            pointers. This layer reaches those bytes only through the simulator's view,
 *            in its copies, reductions and flag operations, as CUDA kernels and copy
 *            engines would; memory kinds are classified as on a GPU (host memory is host
 *            memory), and IPC has CUDA's failure modes. Chosen when the process has loaded
 *            libcg_sim: the MPI suite and the examples run this way.
 *   lenient  any host memory plays device memory (the CPU may touch it); the layer's own
 *            allocations live in POSIX shared memory so that peers can map them; user
 *            buffers cannot be shared (the copy variants run). For applications that know
 *            nothing of the simulator.
 *
 * Copies, reductions and flag operations (host_ops.c) run on the CPU (host_queue.c): at once when
 * nothing queued is before them, else in stream order behind a flag wait whose flag has not
 * come, which stays queued while the calling thread goes on, as on a GPU (the layer's
 * progress thread runs queued work; coll_gpu_debug_host_blocking_waits 1 makes flag waits
 * block the calling thread instead). The LL collective (host_ll.c) leaves its wait pending
 * on the stream, done when the stream is polled. Memory and IPC: dev_host_memory.c.
 */
#include "kernels/dev_host_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An event: the stream it was recorded on (NULL: complete), and the ops submitted there
 * before it. */
struct cg_dev_event {
    cg_dev_stream_t *stream;
    uint64_t         mark;
};

/* The status the stream's work reports (and forgets). */
static cg_status_t cg_host_stream_status(cg_dev_stream_t *stream)
{
    cg_status_t status = stream != NULL ? stream->failed : CG_OK;

    if (stream != NULL) {
        stream->failed = CG_OK;
    }
    return status;
}

static cg_status_t cg_host_stream_new(cg_dev_stream_t **stream)
{
    *stream = calloc(1, sizeof(**stream));
    if (*stream == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    cg_host_queue_init(&(*stream)->queue);
    return CG_OK;
}

static cg_status_t cg_host_stream_create(cg_dev_t *dev, cg_dev_stream_t **stream)
{
    /* after a GPU fault (coll_gpu_debug_fail sticky) or a reset, as CUDA */
    if (__atomic_load_n(&dev->fail_sticky, __ATOMIC_RELAXED) == 2 || cg_dev_lost(dev)) {
        *stream = NULL;
        return CG_ERR_DEVICE;
    }
    return cg_host_stream_new(stream);
}

static cg_status_t cg_host_app_stream_create(cg_dev_t *dev, cg_dev_stream_t **stream)
{
    cg_status_t status = cg_host_stream_new(stream); /* a handle (CUDA: cudaStreamLegacy) */

    (void)dev;
    if (status == CG_OK) {
        (*stream)->on_app = 1;
    }
    return status;
}

static void cg_host_stream_destroy(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    /* on the application's stream a handle only, as on a GPU: its work stays queued (an LL
     * wait left pending no longer counts as work that waits for peers), and what the handle
     * queued behind a flag wait or slow work runs to its end here (the handle's queue goes);
     * after a reset nothing runs (cg_dev_lost: the queue is dropped) */
    const int lost = cg_dev_lost(dev);

    if (!lost && !stream->on_app) {
        (void)cg_host_stream_drain(dev, stream);
    } else if (!lost && !stream->pending) {
        int         done = 0;
        cg_pace_t   pace = {.quiet = 1}; /* the stream's destruction */
        while (cg_host_queue_poll(dev, &stream->queue, UINT64_MAX, &done) == CG_OK && !done) {
            (void)cg_pace(&pace); /* a queued flag wait gives up on its own */
        }
    }
    cg_host_pending_set(dev, stream, 0);
    cg_host_server_fini(dev, stream);
    cg_host_queue_fini(dev, &stream->queue);
    cg_dev_host_release(dev, stream->ll_word);
    free(stream->ll_wait.taken);
    free(stream);
}

static cg_status_t cg_host_stream_sync(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    const int   served = stream->ll_served;
    cg_status_t status;

    if (cg_dev_lost(dev)) { /* the stream went with the reset, as the CUDA layer's guard */
        return CG_ERR_DEVICE;
    }
    cg_count(CG_CNT_HOST_WAITS, 1); /* what a GPU makes the host wait for */
    status = cg_host_stream_drain(dev, stream);
    if (status == CG_OK) { /* the call rung on its LL server, as the CUDA layer's sync */
        status = cg_host_server_sync(dev, stream);
    }
    if (status == CG_OK && served && !stream->ll_served) { /* no server read it: launched */
        status = cg_host_stream_drain(dev, stream);
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return status != CG_OK ? status : cg_host_stream_status(stream);
}

static cg_status_t cg_host_event_create(cg_dev_t *dev, cg_dev_event_t **event)
{
    (void)dev;
    *event = calloc(1, sizeof(**event));
    return *event ? CG_OK : CG_ERR_NO_MEMORY;
}

static void cg_host_event_destroy(cg_dev_t *dev, cg_dev_event_t *event)
{
    (void)dev;
    free(event);
}

static cg_status_t cg_host_event_record(cg_dev_t *dev, cg_dev_event_t *event,
                                        cg_dev_stream_t *stream)
{
    if (cg_dev_lost(dev)) {
        return CG_ERR_DEVICE;
    }
    event->stream = stream;
    event->mark   = stream != NULL ? cg_host_queue_mark(&stream->queue) : 0;
    return CG_OK;
}

/* One look at the stream (an event recorded on it after mark ops, an LL call queued last on
 * it): when that work is done, the status the stream's work reports. */
static cg_status_t cg_host_stream_test(cg_dev_t *dev, cg_dev_stream_t *stream, uint64_t mark,
                                       int *done)
{
    cg_status_t status;

    *done = 0;
    if (cg_dev_lost(dev)) {
        return CG_ERR_DEVICE;
    }
    status = cg_host_stream_poll(dev, stream, mark, done);

    return status == CG_OK && *done ? cg_host_stream_status(stream) : status;
}

/* As a GPU's completion word: 2 when the last LL call ended given up. */
static cg_status_t cg_host_ll_test(cg_dev_t *dev, cg_dev_stream_t *stream, int *done)
{
    cg_status_t status;

    if (stream->ll_served) { /* the word, as on a GPU */
        return cg_host_server_test(dev, stream, done);
    }
    status = cg_host_stream_test(dev, stream, UINT64_MAX, done);

    if (*done && stream->ll_given_up) {
        *done = 2;
    }
    return status;
}

static cg_status_t cg_host_event_query(cg_dev_t *dev, cg_dev_event_t *event, int *done)
{
    cg_status_t status = cg_host_stream_test(dev, event->stream, event->mark, done);

    if (*done) {
        event->stream = NULL;
    }
    return status;
}

/* ---- the LL collective -------------------------------------------------------------------- */

/* after_app: the application's queued work first, as the legacy default stream would run
 * it (the simulated GPU runs it only here: a launch that skipped it reads stale input). */
static cg_status_t cg_host_ll_run(cg_dev_t *dev, const cg_ll_args_t *args, cg_dev_stream_t *stream)
{
    const int   served = cg_dev_ll_served(dev, args) && cg_host_server_usable(stream);
    cg_status_t status = args->after_app ? cg_host_app_sync(dev) : CG_OK;

    if (status == CG_OK && !served) { /* a server runs beside the stream's work */
        status = cg_host_stream_drain(dev, stream);
    }

    if (status != CG_OK) {
        return status;
    }
    if (cg_dev_fail_injected(dev)) {
        return CG_ERR_DEVICE;
    }
    if (args->size > CG_DEV_MAX_FANIN) {
        return CG_ERR_UNSUPPORTED;
    }
    if (stream->ll_word == NULL &&
        cg_host_host_alloc(dev, sizeof(uint64_t), &stream->ll_word) != CG_OK) {
        return CG_ERR_NO_MEMORY;
    }
    cg_count(CG_CNT_DEV_OPS, 1);
    if (served) { /* its end is the server's word from now on, once rung */
        status            = cg_host_server_run(dev, stream, args);
        stream->ll_served = status == CG_OK;
        return status;
    }
    return cg_host_ll_launch(dev, stream, args);
}

static cg_status_t cg_host_ll_abort_lines(cg_dev_t *dev, const cg_ll_args_t *args)
{
    return cg_host_ll_abort(dev, args);
}

/* The simulated GPU runs the call on stream first, as a GPU runs it while the host peeks:
 * the call may end now and clear the lines it read, the peeked one included. */
static cg_status_t cg_host_ll_peek(cg_dev_t *dev, cg_dev_stream_t *stream, const uint64_t *word,
                                   uint64_t *value)
{
    uint64_t   *at;
    int         ended;
    cg_status_t status = cg_host_resolve(dev, word, sizeof(*word), (void **)&at);

    (void)cg_host_stream_poll(dev, stream, UINT64_MAX, &ended); /* its error: at the next test */
    *value = status == CG_OK ? __atomic_load_n(at, __ATOMIC_ACQUIRE) : 0;
    return status;
}

static cg_status_t cg_host_thread_bind(cg_dev_t *dev)
{
    (void)dev;
    return CG_OK;
}

/* The simulated GPU is reset (cg_sim_device_reset, as cudaDeviceReset): its device work
 * ends before memory goes, as a GPU's reset ends its kernels. The layer is marked lost (no
 * new work touches memory from now on: cg_dev_lost), the progress thread's pass under way
 * ends (it holds the list's lock while it runs queued work), and the LL servers leave (each
 * looks at the mark between two looks at its bell and while it waits for lines). Bounded,
 * as every wait of this layer. */
static void cg_host_reset_hook(void *arg)
{
    cg_dev_t      *dev  = arg;
    cg_dev_host_t *host = cg_host_impl(dev);

    cg_dev_mark_lost(dev);
    pthread_mutex_lock(&host->busy_lock);
    pthread_mutex_unlock(&host->busy_lock);
    cg_host_wait_below(&host->servers, NULL, "the device reset", "LL servers to leave",
                       "revoking their memory");
}

static void cg_host_close(cg_dev_t *dev)
{
    cg_dev_host_t *host = cg_host_impl(dev);

    if (host->sim != NULL) { /* waits for a reset's hooks that run */
        (void)host->sim->reset_hook(cg_host_reset_hook, dev, 0);
    }
    cg_host_progress_stop(host);
    cg_host_regions_free(host);
    pthread_mutex_destroy(&host->busy_lock);
    pthread_cond_destroy(&host->busy_cond);
    pthread_mutex_destroy(&host->lock);
    free(host);
    free(dev);
}

static const cg_dev_ops_t cg_dev_host_ops = {
    .name           = "host",
    .close          = cg_host_close,
    .mem_query      = cg_host_mem_query,
    .mem_alloc      = cg_host_mem_alloc,
    .mem_free       = cg_host_mem_free,
    .host_alloc     = cg_host_host_alloc,
    .host_free      = cg_host_host_free,
    .stream_create  = cg_host_stream_create,
    .app_stream_create = cg_host_app_stream_create,
    .stream_destroy = cg_host_stream_destroy,
    .stream_sync    = cg_host_stream_sync,
    .event_create   = cg_host_event_create,
    .event_destroy  = cg_host_event_destroy,
    .event_record   = cg_host_event_record,
    .event_query    = cg_host_event_query,
    .copy           = cg_host_copy,
    .copy_2d        = cg_host_copy_2d,
    .fill           = cg_host_fill,
    .reduce         = cg_host_reduce,
    .ipc_export     = cg_host_ipc_export,
    .ipc_import     = cg_host_ipc_import,
    .ipc_close      = cg_host_ipc_close,
    .ipc_export_done = cg_dev_ipc_export_done,
    .flag_write     = cg_host_flag_write,
    .flag_wait      = cg_host_flag_wait,
    .flag_release   = cg_host_flag_release,
    .flag_watch     = cg_host_flag_watch,
    .ll_run         = cg_host_ll_run,
    .ll_test        = cg_host_ll_test,
    .ll_abort       = cg_host_ll_abort_lines,
    .ll_peek        = cg_host_ll_peek,
    .thread_bind    = cg_host_thread_bind,
    .app_wait       = cg_host_app_wait,
    .app_done       = cg_host_app_done,
    .app_wait_foreign = cg_host_app_wait_foreign,
};

/* Queued streams: as a GPU's table, no flag_watch (the host does not block in flag waits). */
static cg_dev_ops_t   cg_dev_host_queued_ops;
static pthread_once_t cg_dev_host_queued_once = PTHREAD_ONCE_INIT;

static void cg_dev_host_queued_init(void)
{
    cg_dev_host_queued_ops            = cg_dev_host_ops;
    cg_dev_host_queued_ops.flag_watch = NULL;
}

/* The simulated GPU, when the application loaded it (never loads it itself). */
static const cg_sim_api_t *cg_host_find_sim(void)
{
    const cg_sim_api_t *(*get_api)(void);
    const cg_sim_api_t *api;
    void               *lib = dlopen(CG_SIM_SONAME, RTLD_NOW | RTLD_NOLOAD);

    if (lib == NULL) {
        return NULL;
    }
    *(void **)&get_api = dlsym(lib, "cg_sim_api");
    api                = get_api != NULL ? get_api() : NULL;
    if (api == NULL || api->version != CG_SIM_API_VERSION) {
        cg_warn(CG_SUB_DEV, "%s has another interface version: lenient host layer", CG_SIM_SONAME);
        api = NULL;
    }
    dlclose(lib); /* the application holds it loaded */
    return api;
}

cg_status_t cg_dev_host_open(const cg_dev_host_config_t *config, cg_dev_t **dev_out)
{
    cg_dev_t      *dev;
    cg_dev_host_t *host;

    dev = calloc(1, sizeof(*dev));
    host   = calloc(1, sizeof(*host));
    if (dev == NULL || host == NULL) {
        free(dev);
        free(host);
        return CG_ERR_NO_MEMORY;
    }
    pthread_mutex_init(&host->lock, NULL);
    pthread_mutex_init(&host->busy_lock, NULL);
    pthread_cond_init(&host->busy_cond, NULL);
    host->dev            = dev;
    host->sim            = (config != NULL && config->lenient) ? NULL : cg_host_find_sim();
    host->pinned_max     = config != NULL ? config->pinned_max : 0;
    host->blocking_waits = config != NULL && config->blocking_waits;
    host->op_delay_s     = config != NULL && !host->blocking_waits ? config->op_delay_s : 0;
    host->query_miss     = config != NULL ? CG_MAX(config->query_miss, 0) : 0;
    host->queries        = config != NULL ? (unsigned)config->world_rank : 0;
    host->server_deaf    = config != NULL && config->server_deaf;
    host->no_p2p         = config != NULL && config->no_p2p;
    pthread_once(&cg_dev_host_queued_once, cg_dev_host_queued_init);
    if (config != NULL && host->sim == NULL) {
        for (int i = 0; i < config->num_host_buffer_ranks; i++) {
            if (config->host_buffer_ranks[i] == config->world_rank) {
                host->classify_as_host = 1;
            }
        }
    }
    dev->ops                   = host->blocking_waits ? &cg_dev_host_ops : &cg_dev_host_queued_ops;
    dev->kind                  = CG_DEV_KIND_HOST;
    dev->ordinal               = 0;
    dev->caps.ipc_user_buffers = host->sim != NULL;
    dev->caps.device_flags     = 1;
    dev->caps.async            = !host->blocking_waits; /* flag waits stay queued */
    dev->caps.host_access      = host->sim == NULL;
    dev->caps.time_sliced      = config != NULL && config->time_sliced;
    dev->caps.mps              = !dev->caps.time_sliced; /* every process's work at once */
    dev->impl                  = host;
    snprintf(dev->pci_bus_id, sizeof(dev->pci_bus_id), "host");
    if (host->sim != NULL && host->sim->reset_hook(cg_host_reset_hook, dev, 1) != CG_SIM_OK) {
        cg_warn(CG_SUB_DEV, "cannot register with the simulated GPU's reset: a reset would "
                "leave the layer's device work running");
    }
    cg_detail(CG_SUB_DEV, "host device layer, %s, %s", host->sim != NULL
              ? "strict: simulated device memory that the CPU cannot touch"
              : "lenient: host memory plays device memory",
              host->blocking_waits ? "flag waits block the calling thread"
                                   : "flag waits queued on their streams");
    *dev_out = dev;
    return CG_OK;
}

int cg_dev_host_strict(const cg_dev_t *dev)
{
    return dev->kind == CG_DEV_KIND_HOST && ((const cg_dev_host_t *)dev->impl)->sim != NULL;
}
