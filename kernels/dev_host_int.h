/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* The host device layer's shared internals (dev_host.c, dev_host_memory.c, host_ll.c). */
#ifndef CG_DEV_HOST_INT_H
#define CG_DEV_HOST_INT_H

#include "kernels/cg_dev.h"
#include "kernels/sim/cg_sim.h"

#include <pthread.h>

/* The context the host layer runs in, and that cudaMalloc-like simulated memory reports
 * (pool and cuMemCreate-like memory report none: cg_dev_mem_is_foreign). */
#define CG_HOST_PRIMARY_CONTEXT ((uintptr_t)1)

/* lenient mode: one shared-memory allocation of the layer, or a peer's mapped here */
typedef struct cg_host_region {
    void                  *ptr;
    size_t                 size;
    int                    imported;
    uint64_t               buffer_id;
    char                   name[64];
    struct cg_host_region *next;
} cg_host_region_t;

typedef struct {
    char name[64];
} cg_host_ipc_opaque_t;

typedef struct cg_host_queue  cg_host_queue_t;
typedef struct cg_host_server cg_host_server_t;

typedef struct {
    pthread_mutex_t     lock;
    cg_dev_t           *dev;
    cg_host_region_t   *regions;          /* lenient: allocations and imports */
    int                 classify_as_host; /* lenient: this rank's buffers are host memory */
    const cg_sim_api_t *sim;              /* strict: the simulated GPU; NULL: lenient */
    unsigned            peer_waits;       /* device work now waiting for peers: pending LL
                                             waits, flag waits under way (all threads) */
    size_t              pinned_max;       /* testing: host_alloc above it fails (0: none) */
    int                 blocking_waits;   /* testing: flag waits block the calling thread */
    double              op_delay_s;       /* testing: seconds each copy, fill and reduction
                                             takes (queued, never run at once) */
    int                 query_miss;       /* testing: every query_miss-th app_done misses */
    unsigned            queries;          /* app_done's queries so far (from the world
                                             rank, so that ranks miss different calls) */
    int                 server_deaf;      /* testing: LL servers never read their calls */
    int                 no_p2p;           /* testing: peers' memory cannot be mapped */
    unsigned            queued_waits;     /* of peer_waits, the flag waits queued on streams
                                             (no thread's: every free waits for them) */
    unsigned            queued_ops;       /* ops queued on any stream (frees wait for them) */
    unsigned            servers;          /* LL servers running (host_server.c; frees wait
                                             for them to leave, as for a kernel that stays) */
    /* queued streams (host_queue.c): the queues with work, and the thread that runs them */
    pthread_mutex_t     busy_lock;
    pthread_cond_t      busy_cond;
    cg_host_queue_t    *busy;
    pthread_t           progress;
    int                 progress_started; /* 1 running, -1 could not start, 0 not yet */
    int                 progress_stop;
} cg_dev_host_t;

/* Every wait of this layer for peers gives up after this many seconds. */
#define CG_HOST_FLAG_TIMEOUT 300

/* Device work that waits for peers (an LL call's pending wait, a flag wait under way)
 * starts on the calling thread (counted for the device and for the thread, whose count
 * start returns) and stops, maybe on another thread (pass the starter's count). What
 * cudaFree and cudaFreeHost do on a GPU, the strict mode's frees do here: wait for all of
 * the device's work. The work of other threads that waits for peers is waited for,
 * counted as a stall (CG_CNT_FREE_STALLS: on a GPU a free that may never return); the
 * calling thread's own cannot progress while it frees on this layer, where a GPU would
 * run it: not waited for. Bounded, as every wait of this layer (dev_host_memory.c). */
unsigned *cg_host_peer_wait_start(cg_dev_host_t *host);
/* The same, counted for owner rather than for the calling thread. */
unsigned *cg_host_peer_wait_start_for(cg_dev_host_t *host, unsigned *owner);
void      cg_host_peer_wait_stop(cg_dev_host_t *host, unsigned *owner);

/* Wait, bounded (CG_HOST_FLAG_TIMEOUT), while *count is above *floor (NULL: 0); past the
 * bound an error says "<waiter> waited N s for <what>: <then>" (dev_host_memory.c). */
void cg_host_wait_below(const unsigned *count, const unsigned *floor, const char *waiter,
                        const char *what, const char *then);

static inline cg_dev_host_t *cg_host_impl(cg_dev_t *dev)
{
    return (cg_dev_host_t *)dev->impl;
}

/* The CPU address of [ptr, ptr + bytes) as the device sees it, for a copy or for a kernel,
 * which reaches less: not another device's memory, not pageable host memory
 * (dev_host_memory.c). */
cg_status_t cg_host_resolve(cg_dev_t *dev, const void *ptr, size_t bytes, void **out);
cg_status_t cg_host_resolve_kernel(cg_dev_t *dev, const void *ptr, size_t bytes, void **out);

/* memory and IPC (dev_host_memory.c) */
cg_status_t cg_host_mem_query(cg_dev_t *dev, const void *ptr, cg_mem_attr_t *attr);
cg_status_t cg_host_mem_alloc(cg_dev_t *dev, size_t size, void **ptr);
void        cg_host_mem_free(cg_dev_t *dev, void *ptr);
cg_status_t cg_host_host_alloc(cg_dev_t *dev, size_t size, void **ptr);
void        cg_host_host_free(cg_dev_t *dev, void *ptr);
cg_status_t cg_host_ipc_export(cg_dev_t *dev, const void *ptr, size_t size, cg_ipc_handle_t *handle);
cg_status_t cg_host_ipc_import(cg_dev_t *dev, const cg_ipc_handle_t *handle, void **base);
void        cg_host_ipc_close(cg_dev_t *dev, void *base);
/* lenient mode: close every allocation and mapping (at the layer's close) */
void        cg_host_regions_free(cg_dev_host_t *host);

/* the LL collective (host_ll.c): lines now, the wait and the result when polled */
cg_status_t cg_host_ll_push(cg_dev_t *dev, const cg_ll_args_t *args);
/* An LL call's wait: slots (CG_DEV_MAX_FANIN + 1): the inbox's slots, then the cancel word,
 * as the CPU sees them, resolved at the first look (NULL entries) and kept; the lines taken
 * so far (each the moment it was seen, as a GPU thread takes its line) and how many of each
 * slot are still to come. cg_host_ll_wait_start before each call; taken is kept between
 * calls (free it when the stream goes). */
typedef struct {
    uint64_t *slots[CG_DEV_MAX_FANIN + 1];
    uint64_t *taken;       /* stride lines per peer */
    size_t    taken_bytes; /* allocated */
    size_t    stride;
    size_t    left[CG_DEV_MAX_FANIN];
    int       aborted;     /* an abort line was taken */
} cg_host_ll_wait_t;

/* The wait of the call args describes: nothing resolved or taken yet. */
cg_status_t cg_host_ll_wait_start(const cg_ll_args_t *args, cg_host_ll_wait_t *wait);

/* One look at this rank's inbox: *done 1 once every expected line came (the result is then
 * written), 2 when the call was given up with no result and no error, as the kernel gives
 * it up (its word's given-up bit): an abort line came instead of a line, or the host
 * cancelled the call. */
cg_status_t cg_host_ll_poll(cg_dev_t *dev, const cg_ll_args_t *args, cg_host_ll_wait_t *wait,
                            int *done);
cg_status_t cg_host_ll_abort(cg_dev_t *dev, const cg_ll_args_t *args);

/* ---- stream work (host_queue.c) -------------------------------------------------------- */
typedef enum {
    CG_HOST_OP_COPY,
    CG_HOST_OP_COPY_2D,
    CG_HOST_OP_FILL,
    CG_HOST_OP_REDUCE,
    CG_HOST_OP_FLAG_WRITE,
    CG_HOST_OP_FLAG_WAIT,
    CG_HOST_OP_APP_WAIT /* strict: the application's default-stream work runs when the
                           stream reaches it (a stream's wait for an event recorded there) */
} cg_host_op_kind_t;

typedef struct cg_host_op {
    cg_host_op_kind_t  kind;
    void              *dst;    /* copy, fill; the flag of a flag operation */
    const void        *src;    /* copy */
    size_t             bytes;  /* copy, fill; copy_2d: the width of a row */
    size_t             dpitch, spitch, rows; /* copy_2d */
    int                byte;   /* fill */
    uint64_t           value;  /* flag operations */
    double             since;  /* flag wait: when it was first found unmet */
    cg_reduce_args_t   reduce;
    struct cg_host_op *next;
} cg_host_op_t;

/* A copy, fill, reduction or the application's work (not a flag operation)? */
static inline int cg_host_op_is_work(const cg_host_op_t *op)
{
    return op->kind != CG_HOST_OP_FLAG_WRITE && op->kind != CG_HOST_OP_FLAG_WAIT;
}

/* Run op now, through the device's view of memory: a flag wait whose flag is below its
 * value sets *unmet (run it again later) until CG_HOST_FLAG_TIMEOUT seconds have passed. */
cg_status_t cg_host_op_run(cg_dev_t *dev, cg_host_op_t *op, int *unmet);

/* A stream's queued work: ops that wait, in stream order, behind a flag wait not met yet. */
struct cg_host_queue {
    pthread_mutex_t  lock;
    cg_host_op_t    *head, **tail;
    uint64_t         queued, ran;  /* ops submitted, and of them run (or dropped) */
    cg_status_t      failed;       /* the first error of queued work, until a poll of the
                                      whole stream has reported it */
    uint64_t         failed_at;    /* the op that failed (its place among the submitted) */
    int              busy;         /* on the layer's list of queues with work */
    cg_host_queue_t *busy_next;
};

void        cg_host_queue_init(cg_host_queue_t *queue);
/* Run op now if nothing queued is before it and it can run; else queue a copy of it, which
 * the progress thread or a poll runs in order. An error of an op run now is returned. */
cg_status_t cg_host_queue_submit(cg_dev_t *dev, cg_host_queue_t *queue, const cg_host_op_t *op);
cg_status_t cg_host_app_sync(cg_dev_t *dev);
/* The count of ops submitted so far (an event's place on the stream). */
uint64_t    cg_host_queue_mark(cg_host_queue_t *queue);
/* Run what can run; *reached when the ops before mark have run (UINT64_MAX: all). Returns
 * the error of a queued op before mark (forgotten once a poll of all has returned it). */
cg_status_t cg_host_queue_poll(cg_dev_t *dev, cg_host_queue_t *queue, uint64_t mark, int *reached);
/* The stream goes: off the progress thread's list; work still queued never runs. */
void        cg_host_queue_fini(cg_dev_t *dev, cg_host_queue_t *queue);
/* At the layer's close. */
void        cg_host_progress_stop(cg_dev_host_t *host);

/* ---- streams (dev_host.c) --------------------------------------------------------------- */
/* A stream: its work runs at once or queued (host_queue.c); an LL collective's wait is left
 * pending, done when the stream is polled (event_query) or synchronised, as a GPU would run
 * it meanwhile. Any other work on the stream finishes the pending wait first (stream
 * order), and an LL call the queued work. */
struct cg_dev_stream {
    cg_host_queue_t queue;
    int          on_app;  /* the application's default stream (app_stream_create): its
                             queued work runs before anything on this stream */
    int          pending; /* an LL collective waits for its peers' lines */
    unsigned    *pending_owner; /* the count of the thread that queued it */
    int          ll_given_up; /* the last LL call ended without a result (cancelled) */
    double       ll_started;  /* when it was queued (coll_gpu_debug_host_slow: it ends
                                 op_delay_s later at the earliest, a slow kernel) */
    cg_ll_args_t ll;
    cg_host_ll_wait_t ll_wait; /* its inbox slots and the lines taken so far */
    void        *ll_word; /* page-locked memory allocated at the first LL call and freed
                             with the stream, as the CUDA layer's completion word is
                             (cg_dev_host_release); written by the stream's LL server only */
    size_t       counts[CG_DEV_MAX_FANIN], displs[CG_DEV_MAX_FANIN];
    cg_host_server_t *server; /* its LL server (coll_gpu_ll_persist), from its first call */
    int          ll_served;   /* the last LL call was rung on the server: its end is the
                                 completion word's (ll_test), as on a GPU */
    void       (*watch)(void *arg, const uint64_t *flag); /* flag_watch: between polls */
    void        *watch_arg;
    cg_status_t  failed;  /* the pending work's error, reported at the next sync or query */
};

/* ---- the stream's pending work and the ops table's stream work (host_ops.c) ------------- */
/* The stream's LL wait is pending (1) or over (0): counted as work that waits for peers. */
void        cg_host_pending_set(cg_dev_t *dev, cg_dev_stream_t *stream, int pending);
/* One look at the stream's pending work: *done when the LL wait is over and the queued ops
 * before mark have run (UINT64_MAX: all); errors go to stream->failed. */
cg_status_t cg_host_stream_poll(cg_dev_t *dev, cg_dev_stream_t *stream, uint64_t mark, int *done);
/* Finish the stream's pending work (the LL wait, the queue; on the application's stream its
 * queued work first); the application's default-stream work (strict: nothing else runs it). */
cg_status_t cg_host_stream_drain(cg_dev_t *dev, cg_dev_stream_t *stream);
/* The application's default-stream work: run now (cg_host_app_sync, host_queue.c; strict:
 * nothing else runs it), or, for a stream-ordered wait, when stream reaches it. */
cg_status_t cg_host_app_wait(cg_dev_t *dev, cg_dev_stream_t *stream);
cg_status_t cg_host_app_done(cg_dev_t *dev, cg_dev_stream_t *stream, int *done);
cg_status_t cg_host_app_wait_foreign(cg_dev_t *dev, const void *ptr);
cg_status_t cg_host_fill(cg_dev_t *dev, void *dst, int byte, size_t bytes, cg_dev_stream_t *stream);
cg_status_t cg_host_copy(cg_dev_t *dev, void *dst, const void *src, size_t bytes,
                         cg_dev_stream_t *stream);
cg_status_t cg_host_copy_2d(cg_dev_t *dev, void *dst, size_t dpitch, const void *src,
                            size_t spitch, size_t width, size_t rows, cg_dev_stream_t *stream);
cg_status_t cg_host_reduce(cg_dev_t *dev, const cg_reduce_args_t *args, cg_dev_stream_t *stream);
cg_status_t cg_host_flag_write(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                               cg_dev_stream_t *stream);
cg_status_t cg_host_flag_wait(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                              cg_dev_stream_t *stream);
cg_status_t cg_host_flag_release(cg_dev_t *dev, uint64_t *flag, uint64_t value);
void        cg_host_flag_watch(cg_dev_t *dev, cg_dev_stream_t *stream,
                               void (*watch)(void *arg, const uint64_t *flag), void *arg);

/* The LL call launched on the stream (its end: ll_test; host_ops.c). */
cg_status_t cg_host_ll_launch(cg_dev_t *dev, cg_dev_stream_t *stream, const cg_ll_args_t *args);

/* ---- the LL server (host_server.c) -------------------------------------------------------- */
/* Post the call and ring the stream's server (started at the first call, or again). */
cg_status_t cg_host_server_run(cg_dev_t *dev, cg_dev_stream_t *stream, const cg_ll_args_t *args);
/* Is the stream's server started and not seen to leave (tests)? */
int         cg_host_server_alive(const cg_dev_stream_t *stream);
/* The end of the stream's last LL call, rung on its server: *done 0, 1 with its result, 2
 * given up; returns the server's sticky error. A call no server could read is launched
 * (ll_served 0 then), and no server runs again on the stream (cg_host_server_usable). */
cg_status_t cg_host_server_test(cg_dev_t *dev, cg_dev_stream_t *stream, int *done);
int         cg_host_server_usable(const cg_dev_stream_t *stream);
/* Wait for the rung call's end (bounded). */
cg_status_t cg_host_server_sync(cg_dev_t *dev, cg_dev_stream_t *stream);
/* Tell the stream's server to leave now (tests only: the stream's end stops it too). */
void        cg_host_server_stop(cg_dev_stream_t *stream);
/* The stream goes: its server is stopped and joined. */
void        cg_host_server_fini(cg_dev_t *dev, cg_dev_stream_t *stream);

#endif
