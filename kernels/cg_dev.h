/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll/gpu device layer: one operations table, two implementations.
 *
 *   cuda  - CUDA device memory, kernels for reductions, CUDA IPC, stream-ordered flags.
 *   host  - plain memory treated as device memory, CPU copies and reductions, POSIX shared
 *           memory standing in for IPC. It lets every algorithm run under mpirun on a
 *           machine without a GPU (tests, CI, debugging).
 *
 * The algorithms in core/ are written once against cg_dev_ops_t. All operations that take a
 * stream are ordered on it; on the host layer they complete before returning.
 */
#ifndef CG_DEV_H
#define CG_DEV_H

#include "base/cg_base.h"
#include "kernels/cg_reduce_ops.h"

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest number of sources or destinations of one fused reduction (local ranks). */
#define CG_DEV_MAX_FANIN 32
#define CG_IPC_HANDLE_BYTES 128

typedef enum {
    CG_DEV_KIND_HOST = 0,
    CG_DEV_KIND_CUDA = 1
} cg_dev_kind_t;

typedef enum {
    CG_MEM_HOST    = 0, /* pageable or page-locked host memory */
    CG_MEM_DEVICE  = 1, /* device memory of the layer (CUDA device memory, or anything on host) */
    CG_MEM_MANAGED = 2  /* CUDA managed memory: host-accessible, passed through as host memory */
} cg_mem_kind_t;

typedef struct {
    cg_mem_kind_t kind;
    int           device;    /* device ordinal; -1 for host memory */
    uintptr_t     base;      /* start of the allocation that holds the pointer; 0 if unknown */
    size_t        size;      /* size of that allocation; 0 if unknown */
    uint64_t      buffer_id; /* the driver's unique id of that allocation; 0 if unknown */
    int           foreign;   /* device memory that copies reach but the layer's kernels do
                                not: another GPU's, or another context's on this GPU (set by
                                an open layer's mem_query) */
} cg_mem_attr_t;

/* How an exported allocation is shared. */
typedef enum {
    CG_IPC_SHARE_HANDLE = 0, /* the layer's own handle (legacy CUDA IPC, a shared-memory name) */
    CG_IPC_SHARE_FD     = 1  /* a file descriptor of the exporter (cuMemCreate memory made
                                with a POSIX file-descriptor handle type): opaque holds its
                                cg_fd_ref_t, open until ipc_export_done */
} cg_ipc_share_t;

/* A shareable handle of one allocation. The first fields identify the allocation, so that
 * an importer can cache its mapping and notice when the memory was freed and reused
 * (same address, another buffer id); opaque is what the layer needs to map it. */
typedef struct {
    uint64_t buffer_id; /* unique id of the allocation (the driver's buffer id, an inode) */
    uint64_t base;      /* the exporter's address of the allocation */
    uint64_t size;      /* bytes of the allocation */
    uint64_t offset;    /* offset of the exported pointer inside the allocation */
    uint32_t share;     /* cg_ipc_share_t */
    uint8_t  opaque[CG_IPC_HANDLE_BYTES];
} cg_ipc_handle_t;

/* One fused reduction: every dsts[d][i] = srcs[0][i] op srcs[1][i] op ... (in that order),
 * for i < count elements of dtype. Destinations may alias sources element for element. */
typedef struct {
    cg_dtype_t  dtype;
    cg_op_t     op;
    size_t      count;
    int         nsrc;
    int         ndst;
    const void *srcs[CG_DEV_MAX_FANIN];
    void       *dsts[CG_DEV_MAX_FANIN];
} cg_reduce_args_t;

/*
 * One small collective in one device operation, synchronised in the data (the LL protocol):
 * the payload travels in 8-byte lines of 4 bytes of data and the call's 4-byte flag, so a
 * reader waits on the data itself, never on a separate barrier. Each rank owns an inbox
 * (in its scratch, mapped by its node's peers) of two parities x size slots; rank r writes
 * into slot r of the inboxes it sends to, for the call's parity. A flag with CG_LL_ABORT set
 * ends the wait for its slot without data: the host writes them when a peer will never send
 * (it passed host memory, found in band): the call then writes nothing and the caller runs
 * its fallback.
 */
typedef enum {
    CG_LL_ALLREDUCE = 0,  /* src: count elements to every inbox; dst = reduction, rank order */
    CG_LL_BCAST,          /* the root's src (count elements) to every inbox; dst = it */
    CG_LL_ALLGATHER,      /* src (count elements) to every inbox; dst block p = rank p's */
    CG_LL_REDUCE_SCATTER  /* block p of src (counts[p] elements at displs[p]) to rank p; dst =
                             reduction of what every rank sent this one */
} cg_ll_coll_t;

#define CG_LL_ABORT 0x80000000u

typedef struct {
    cg_ll_coll_t  coll;
    int           size, rank, root;
    uint32_t      flag;        /* this call's flag: nonzero, below CG_LL_ABORT, never the
                                  flag of the previous call of the same parity */
    unsigned      parity;      /* which half of the inboxes */
    char         *inbox[CG_DEV_MAX_FANIN]; /* every rank's inbox as mapped here (own too) */
    size_t        slot_bytes;  /* bytes of one slot (lines of 8 bytes; payload: half) */
    const void   *src;
    void         *dst;
    size_t        count;       /* elements: allreduce, bcast, allgather (one block) */
    const size_t *counts;      /* reduce_scatter: elements of every rank's block */
    const size_t *displs;      /* reduce_scatter: element offset of every block in src */
    cg_dtype_t    dtype;       /* CG_DT_NONE: bytes (count are bytes) */
    cg_op_t       op;
    const uint64_t *cancel;    /* this rank's cancel word (device memory; NULL: none): once
                                  the host sets it to flag, the call ends without writing a
                                  result (a peer will not take part: see ll_peek) */
    int           app_ordered; /* the caller ordered the call after the application's work
                                  already (the host waited), or the group found that work
                                  done (cg_dev_ll_app_query): no app_wait, not after_app */
    int           after_app;   /* set by the group: queued behind the application's work on
                                  the legacy default stream, on that stream itself
                                  (cg_dev_ll_after_app): no app_wait before it */
    int           launch_only; /* set by the group: this rank shares its GPU with another
                                  and no MPS was seen, so they may take turns on it:
                                  launched, never run by a server that stays */
} cg_ll_args_t;

/* Slot `from` of `owner`'s inbox for this call's half, as mapped in this process (device
 * memory: the host reaches it through the layer only). */
static inline char *cg_ll_slot_at(const cg_ll_args_t *args, int owner, int from)
{
    return args->inbox[owner] +
           ((size_t)args->parity * (size_t)args->size + (size_t)from) * args->slot_bytes;
}

/* Bytes of payload an LL slot of slot_bytes carries. */
static inline size_t cg_ll_capacity(size_t slot_bytes)
{
    return slot_bytes / 2;
}

/* Bytes this rank sends rank `to` in an LL call, starting at src + *offset. */
static inline size_t cg_ll_send_bytes(const cg_ll_args_t *args, int to, size_t *offset)
{
    const size_t elem = args->dtype == CG_DT_NONE ? 1 : cg_dtype_size(args->dtype);

    *offset = 0;
    switch (args->coll) {
    case CG_LL_BCAST: /* the root's own buffer holds the data already */
        return args->rank == args->root && to != args->root ? args->count * elem : 0;
    case CG_LL_REDUCE_SCATTER:
        *offset = args->displs[to] * elem;
        return args->counts[to] * elem;
    default:
        return args->count * elem;
    }
}

/* Bytes this rank receives from rank `from` in an LL call. */
static inline size_t cg_ll_recv_bytes(const cg_ll_args_t *args, int from)
{
    const size_t elem = args->dtype == CG_DT_NONE ? 1 : cg_dtype_size(args->dtype);

    switch (args->coll) {
    case CG_LL_BCAST:
        return from == args->root && args->rank != args->root ? args->count * elem : 0;
    case CG_LL_REDUCE_SCATTER:
        return args->counts[args->rank] * elem;
    default:
        return args->count * elem;
    }
}

/* Lines a slot carrying `bytes` holds: at least one, with no data. Every rank writes every
 * peer at least one line per call and waits for one line of every peer, so a rank that
 * finished call k has seen every peer start k (and so finish k - 1): the parity of k - 1 is
 * free for its call k + 1. Without the empty lines (bcast's other ranks, empty
 * reduce_scatter blocks) a rank could run two calls ahead and overwrite lines a slow peer
 * has not read yet. */
CG_HD size_t cg_ll_slot_lines(size_t bytes)
{
    return bytes == 0 ? 1 : (bytes + 3) / 4;
}

typedef struct cg_dev        cg_dev_t;
typedef struct cg_dev_stream cg_dev_stream_t;
typedef struct cg_dev_event  cg_dev_event_t;

typedef struct {
    unsigned ipc_user_buffers : 1; /* user buffers may be exportable to peers (zero copy) */
    unsigned device_flags     : 1; /* flag_write/flag_wait are stream ordered on the device */
    unsigned async            : 1; /* stream operations return before completing */
    unsigned host_access      : 1; /* the CPU may read and write device memory directly
                                      (the lenient host layer only: never on a GPU) */
    unsigned mps              : 1; /* contexts on the device are shared through MPS
                                      (kernels of several processes run at once); the host
                                      layer plays it unless it plays time slicing */
    unsigned time_sliced      : 1; /* processes sharing the device take turns on it (a GPU
                                      without MPS): a kernel that waits for another
                                      process's kernel waits for a time slice */
} cg_dev_caps_t;

typedef struct cg_dev_ops {
    const char *name;
    void (*close)(cg_dev_t *dev);
    /* Was the device reset under the layer (cg_dev_reset_check)? NULL: the layer learns it
     * otherwise (the host layer, from the simulated GPU at the reset itself). */
    int (*reset_check)(cg_dev_t *dev);

    cg_status_t (*mem_query)(cg_dev_t *dev, const void *ptr, cg_mem_attr_t *attr);
    cg_status_t (*mem_alloc)(cg_dev_t *dev, size_t size, void **ptr);
    void        (*mem_free)(cg_dev_t *dev, void *ptr);
    cg_status_t (*host_alloc)(cg_dev_t *dev, size_t size, void **ptr); /* page-locked */
    void        (*host_free)(cg_dev_t *dev, void *ptr);

    cg_status_t (*stream_create)(cg_dev_t *dev, cg_dev_stream_t **stream);
    /* A handle of the application's legacy default stream: what is queued on it runs after
     * the application's work there and on every blocking stream (as after app_wait, with no
     * event), and stream_sync waits for it. Only where one thread calls (dev->app_launch):
     * another thread's work queued behind it would wait for it. stream_destroy releases
     * the handle, not the stream. */
    cg_status_t (*app_stream_create)(cg_dev_t *dev, cg_dev_stream_t **stream);
    void        (*stream_destroy)(cg_dev_t *dev, cg_dev_stream_t *stream);
    cg_status_t (*stream_sync)(cg_dev_t *dev, cg_dev_stream_t *stream);
    cg_status_t (*event_create)(cg_dev_t *dev, cg_dev_event_t **event);
    void        (*event_destroy)(cg_dev_t *dev, cg_dev_event_t *event);
    cg_status_t (*event_record)(cg_dev_t *dev, cg_dev_event_t *event, cg_dev_stream_t *stream);
    cg_status_t (*event_query)(cg_dev_t *dev, cg_dev_event_t *event, int *done);

    /* Copy bytes between any two of: device memory, host memory, imported peer memory. */
    cg_status_t (*copy)(cg_dev_t *dev, void *dst, const void *src, size_t bytes,
                        cg_dev_stream_t *stream);
    /* Copy rows pieces of width bytes, the n-th from src + n * spitch to dst + n * dpitch
     * (pitches at least width), as one operation (cudaMemcpy2DAsync): a strided layout's
     * pieces without the bytes between them. */
    cg_status_t (*copy_2d)(cg_dev_t *dev, void *dst, size_t dpitch, const void *src,
                           size_t spitch, size_t width, size_t rows, cg_dev_stream_t *stream);
    /* Set bytes of device memory to one byte value (one operation, however large). */
    cg_status_t (*fill)(cg_dev_t *dev, void *dst, int byte, size_t bytes, cg_dev_stream_t *stream);
    cg_status_t (*reduce)(cg_dev_t *dev, const cg_reduce_args_t *args, cg_dev_stream_t *stream);

    /* Share memory with processes on the same node. export describes the allocation that
     * holds [ptr, ptr + size): memory from mem_alloc always, user memory where the layer
     * can (CUDA: cudaMalloc memory; host: simulated device memory), otherwise
     * CG_ERR_UNSUPPORTED. import maps a peer's allocation and returns the local address of
     * its start; CG_ERR_ALREADY_MAPPED when this process still maps an allocation of that
     * peer over the same range (legacy CUDA IPC): close the stale mapping and retry. close
     * unmaps what import returned. export_done, once every peer has imported a fresh
     * export or given up on it, lets go of what the export holds (the descriptor of
     * CG_IPC_SHARE_FD memory; nothing for the others): never for a handle republished
     * from a table, whose descriptor is long closed (peers that hold the handle in their
     * tables never import it again). */
    cg_status_t (*ipc_export)(cg_dev_t *dev, const void *ptr, size_t size, cg_ipc_handle_t *handle);
    cg_status_t (*ipc_import)(cg_dev_t *dev, const cg_ipc_handle_t *handle, void **base);
    void        (*ipc_close)(cg_dev_t *dev, void *base);
    void        (*ipc_export_done)(cg_dev_t *dev, const cg_ipc_handle_t *handle);

    /* 64-bit flags in shared device memory: write after the work queued before on the
     * stream; make later work on the stream wait until *flag >= value. */
    cg_status_t (*flag_write)(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                              cg_dev_stream_t *stream);
    cg_status_t (*flag_wait)(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                             cg_dev_stream_t *stream);
    /* Set *flag to value now, from the host, ordered with no stream: releases stream waits
     * that a failed peer would leave blocked for ever. */
    cg_status_t (*flag_release)(cg_dev_t *dev, uint64_t *flag, uint64_t value);
    /* Optional (NULL on a GPU, whose flag waits are the device's while the host goes on):
     * a layer whose flag_wait blocks the calling thread calls watch(arg, flag) between
     * polls of a wait on the stream for flag, to do what the host does meanwhile on a GPU
     * (release the waits of a failed peer's flags with flag_release). */
    void        (*flag_watch)(cg_dev_t *dev, cg_dev_stream_t *stream,
                              void (*watch)(void *arg, const uint64_t *flag), void *arg);

    /* LL: queue the collective (the lines to the peers now, the wait and the result in
     * stream order); ll_test: has the call queued last on the stream ended (*done 1: with
     * its result written; 2: given up, no result; 0: not yet)? On a GPU the kernel's last
     * store is a word in page-locked host memory, read with no driver call (the stream's
     * error state asked now and then); the host layer polls the stream. A device error is
     * returned. ll_abort writes abort lines into this rank's inbox slots (all but its own)
     * from the host, outside every stream, so that the queued wait ends. ll_peek reads one
     * 64-bit word of device memory now, from the host, outside every stream (a line of
     * this rank's inbox while the call queued on stream waits; the call may end meanwhile,
     * as on a GPU, and clear the lines it read); the call's cancel word is set with
     * flag_release. */
    cg_status_t (*ll_run)(cg_dev_t *dev, const cg_ll_args_t *args, cg_dev_stream_t *stream);
    cg_status_t (*ll_test)(cg_dev_t *dev, cg_dev_stream_t *stream, int *done);
    cg_status_t (*ll_abort)(cg_dev_t *dev, const cg_ll_args_t *args);
    cg_status_t (*ll_peek)(cg_dev_t *dev, cg_dev_stream_t *stream, const uint64_t *word,
                           uint64_t *value);

    /* Make the layer's device current on the calling thread for good (a helper thread:
     * what it calls besides this table, UCX's CUDA transports, finds the device current). */
    cg_status_t (*thread_bind)(cg_dev_t *dev);

    /* Order the call after the work the application queued on the device before it, on the
     * legacy default stream and every blocking stream ordered with it (what a CUDA-aware
     * MPI's copies on the default stream would wait for): the layer's own streams are
     * non-blocking and would not. stream: the wait is stream-ordered on it (no host wait);
     * NULL: the host waits. Work on the application's non-blocking streams is its to
     * synchronise, as with any CUDA-aware MPI. */
    cg_status_t (*app_wait)(cg_dev_t *dev, cg_dev_stream_t *stream);
    /* Is that work (what app_wait orders after) done now? Learnt without a host wait: an
     * event recorded on the legacy default stream and queried once. *done 0 when it is
     * not, or not yet known to be: stream then waits for it, stream-ordered, as app_wait
     * (the same event: no second record), and the caller counts that wait. */
    cg_status_t (*app_done)(cg_dev_t *dev, cg_dev_stream_t *stream, int *done);
    /* app_wait for memory of another device or context (a cg_mem_attr_t's foreign): the
     * host waits for the work queued before the call on the legacy default stream of the
     * context that holds ptr (its device's primary one for memory of no context), which the
     * layer's streams, of another context, would not order after. */
    cg_status_t (*app_wait_foreign)(cg_dev_t *dev, const void *ptr);
} cg_dev_ops_t;

struct cg_dev {
    const cg_dev_ops_t *ops;
    cg_dev_kind_t       kind;
    cg_dev_caps_t       caps;
    int                 ordinal;      /* CUDA device in use; 0 on the host layer */
    char                pci_bus_id[32];
    void               *impl;         /* implementation state */
    int                 fail_countdown; /* testing: the n-th copy or reduction from now fails
                                           (0: none); see cg_dev_fail_injected */
    int                 fail_sticky;  /* testing: from that failure on, every copy and
                                         reduction fails (a GPU's sticky error) */
    int                 app_ready;    /* the application makes its buffers ready before each
                                         call (coll_gpu_app_wait none): no app_wait */
    int                 app_launch;   /* LL calls and blocking staged copies are queued on
                                         the application's legacy default stream itself
                                         (coll_gpu_app_wait launch, auto; one thread) */
    int                 ll_persist;   /* LL calls the application ordered (app_ready),
                                         the caller did (app_ordered), or whose
                                         application work was found done (app_done) go to a
                                         server that stays on the device, unless this rank
                                         shares its GPU and no MPS was seen (launch_only)
                                         (coll_gpu_ll_persist; kernels/dev_ll_server.h) */
    double              ll_persist_idle_s; /* a server leaves after this long without a call */
    double              ll_persist_life_s; /* and this long after it started at the latest,
                                         between two calls, even while calls keep coming
                                         (the next ring starts another: CG_DEV_LL_PERSIST_LIFE_S) */
    struct cg_dev_frees *frees;       /* frees held back while device work waits for peers
                                         (cg_dev_frees_enable); NULL: memory goes at once */
    int                 abandoned;    /* device work that never ends was left
                                         (cg_dev_abandon): nothing is freed any more */
    int                 lost;         /* the application reset the device (cg_dev_lost) */
};

/* Did the application reset the device under the layer (cudaDeviceReset, as programs
 * derived from CUDA's samples do before MPI_Finalize)? Its context went, and with it the
 * layer's memory, page-locked words, streams, events, mappings and the kernels that
 * stayed. From then on no operation reaches the device or that memory: those that would
 * fail (CG_ERR_DEVICE, quietly), and frees, closes of mappings, the ends of streams and
 * events and the layer's close let go of their records only. */
static inline int cg_dev_lost(const cg_dev_t *dev)
{
    return __atomic_load_n(&dev->lost, __ATOMIC_ACQUIRE);
}

/* Was device work that never ends left (cg_dev_abandon)? */
static inline int cg_dev_abandoned(const cg_dev_t *dev)
{
    return __atomic_load_n(&dev->abandoned, __ATOMIC_ACQUIRE);
}

/* Order the call after the application's device work (the app_wait op), unless the
 * application asserted that its buffers are ready when it calls (dev->app_ready). */
static inline cg_status_t cg_dev_app_wait(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    if (dev->app_ready) {
        return CG_OK;
    }
    cg_count(CG_CNT_APP_WAITS, 1);
    return dev->ops->app_wait(dev, stream);
}

/* Order the call after the application's work on foreign memory at ptr (the
 * app_wait_foreign op), unless the application asserted its buffers ready. */
static inline cg_status_t cg_dev_app_wait_foreign(cg_dev_t *dev, const void *ptr)
{
    if (dev->app_ready) {
        return CG_OK;
    }
    cg_count(CG_CNT_APP_WAITS, 1);
    return dev->ops->app_wait_foreign(dev, ptr);
}

/* Is the application's work before the call done (the app_done op, no host wait)? A miss
 * orders stream after that work, as cg_dev_app_wait would, and counts as that wait. */
static inline cg_status_t cg_dev_app_done(cg_dev_t *dev, cg_dev_stream_t *stream, int *done)
{
    cg_status_t status;

    cg_count(CG_CNT_APP_QUERIES, 1);
    status = dev->ops->app_done(dev, stream, done);
    if (status == CG_OK && !*done) {
        cg_count(CG_CNT_APP_WAITS, 1);
    }
    return status;
}

/* Does an LL call go on the application's legacy default stream (cg_ll_args_t after_app),
 * ordered after its work there and on the blocking streams as an event recorded there
 * would be, with no event? Its completion is still this layer's word (ll_test). */
static inline int cg_dev_ll_after_app(const cg_dev_t *dev)
{
    return dev->app_launch && !dev->app_ready;
}

/* A server's life: a device-wide wait of the application (cudaDeviceSynchronize, cudaFree;
 * another thread's under MPI_THREAD_MULTIPLE) waits this long at most for it, and a restart
 * every 10 ms of steady calls costs one launch. */
#define CG_DEV_LL_PERSIST_LIFE_S 0.01

/* Does an LL call first ask whether the application's work before it is done (app_done),
 * so that a server may run it (dev->ll_persist)? Not when the application asserted its
 * buffers ready (app_ready) or the caller ordered the call (app_ordered). */
static inline int cg_dev_ll_app_query(const cg_dev_t *dev, const cg_ll_args_t *args)
{
    return dev->ll_persist && !args->launch_only && !dev->app_ready && !args->app_ordered;
}

/* Does this LL call go to the stream's server (dev->ll_persist)? Only a call ordered after
 * the application's work before it is queued: a server runs beside every stream, ordered
 * with none; and never on a rank that shares its GPU with no MPS seen (launch_only): a
 * kernel that stays would hold the GPU from the other. */
static inline int cg_dev_ll_served(const cg_dev_t *dev, const cg_ll_args_t *args)
{
    return dev->ll_persist && !args->launch_only && !args->after_app &&
           (dev->app_ready || args->app_ordered);
}

/* Testing (coll_gpu_debug_fail): does this copy or reduction fail as if the device had
 * failed? Every layer asks before it queues one. A sticky failure (fail_sticky 1 when it
 * fires, 2 from then on) fails every later one too, as a GPU's context after a fault. */
static inline int cg_dev_fail_injected(cg_dev_t *dev)
{
    if (__atomic_load_n(&dev->fail_sticky, __ATOMIC_RELAXED) == 2) {
        return 1;
    }
    if (__atomic_load_n(&dev->fail_countdown, __ATOMIC_RELAXED) <= 0 ||
        __atomic_sub_fetch(&dev->fail_countdown, 1, __ATOMIC_RELAXED) != 0) {
        return 0;
    }
    if (__atomic_load_n(&dev->fail_sticky, __ATOMIC_RELAXED) == 1) {
        __atomic_store_n(&dev->fail_sticky, 2, __ATOMIC_RELAXED);
    }
    cg_error(CG_SUB_DEV, "injected device failure (coll_gpu_debug_fail)");
    return 1;
}

typedef struct {
    /* host layer: world ranks whose buffers are classified as host memory (testing of
     * mixed memory kinds); NULL for none */
    const int *host_buffer_ranks;
    int        num_host_buffer_ranks;
    int        world_rank;
    int        lenient; /* testing: ignore the simulated GPU (every host buffer plays device
                           memory) */
    int        time_sliced; /* testing: play a GPU shared without MPS (caps.time_sliced) */
    size_t     pinned_max;  /* testing: page-locked allocations larger than this fail, as
                               on a node short of memory it can lock (0: no limit) */
    int        blocking_waits; /* testing: flag waits block the calling thread (the stream
                                  watch runs), instead of staying queued as on a GPU */
    double     op_delay_s;  /* testing: each queued copy, fill and reduction takes this
                               long (a long kernel), while the host goes on */
    int        query_miss;  /* testing: app_done finds the application's work not done at
                               every query_miss-th query (0: never) even when it is, as a
                               GPU's first query of a fresh event may */
    int        no_p2p;      /* testing: every import of a peer's memory fails, as between GPUs
                               without peer-to-peer access (CG_ERR_UNSUPPORTED) */
    int        server_deaf; /* testing: LL servers never read the calls posted to them, as a
                               kernel whose reading of them is broken */
} cg_dev_host_config_t;

/* Open the host layer (never fails for lack of hardware): strict when the process has
 * loaded the simulated GPU (kernels/sim/cg_sim.h), lenient otherwise. */
cg_status_t cg_dev_host_open(const cg_dev_host_config_t *config, cg_dev_t **dev_out);
int         cg_dev_host_strict(const cg_dev_t *dev);
/* Is a CUDA driver installed? Loads it without initialising it (MPI_Init may call this:
 * it starts nothing on the GPU). Quiet: reports why not in reason. */
cg_status_t cg_dev_cuda_driver_present(char *reason, size_t reason_len);
/* Initialise the driver and count GPUs (tools, and the layer's open). */
cg_status_t cg_dev_cuda_probe(char *reason, size_t reason_len);
/* After cg_dev_cuda_probe: 1 when contexts on device ordinal are shared through MPS, 0 when
 * not, -1 when the driver cannot say. */
int         cg_dev_cuda_mps(int ordinal);
/* Classify a pointer with the CUDA driver (no context needed). Before the application has
 * initialised CUDA every pointer is host memory, and CUDA is not started for it. A failed
 * query is CG_ERR_DEVICE, never "host". */
cg_status_t cg_dev_cuda_mem_query(const void *ptr, cg_mem_attr_t *attr);
/* Open the CUDA layer on device ordinal (-1: the calling thread's current device). */
cg_status_t cg_dev_cuda_open(int ordinal, cg_dev_t **dev_out);
/* Load every kernel of the layer now. With lazy loading (CUDA_MODULE_LOADING=LAZY, the
 * default since CUDA 12.2) a kernel is loaded at its first launch, and loading may
 * synchronise the context: under MPI_THREAD_MULTIPLE, a first launch on one thread would
 * wait for an LL kernel of another thread, which waits for a peer that may be stuck the
 * same way. A layer without CUDA: nothing to do. */
cg_status_t cg_dev_cuda_preload(cg_dev_t *dev);
int         cg_dev_cuda_built(void);

/* Closes the layer; frees held back (cg_dev_frees_enable) go first. */
void cg_dev_close(cg_dev_t *dev);
/* Ask whether the device was reset under the layer (the CUDA layer asks the driver whether
 * the primary context it holds is still the one it retained); 1 when it was, and the layer
 * is marked lost (cg_dev_lost). The component asks before it lets device resources go: at
 * a communicator's teardown and at its close. NULL: 0. */
int  cg_dev_reset_check(cg_dev_t *dev);
/* Mark the layer lost (logged once). */
void cg_dev_mark_lost(cg_dev_t *dev);

/* ---- frees held back while device work waits for peers ----------------------------------
 * cudaFree and cudaFreeHost wait for all of the device's work, another thread's LL kernel or
 * stream wait on a peer's flag included, and that work waits for peers that may be blocked
 * the same way (a thread of each of two processes freeing while the other's call waits for
 * it): under MPI_THREAD_MULTIPLE, a free could then never return. With frees enabled (one
 * call, at open, before any other thread uses the layer), device work that waits for peers
 * is bracketed by cg_dev_peer_wait_begin/end, and cg_dev_mem_release/cg_dev_host_release
 * free at once only while no such work is in flight in the process; otherwise the pointer
 * is kept, and freed by the end that leaves none in flight (or at close). Without frees
 * enabled (one thread calls at a time: its calls end their device work before returning),
 * both free at once and the brackets cost nothing. Allocations are not held back (one must
 * succeed or fail when asked): NVIDIA's programming guide lists device allocation among
 * the operations that serialise streams, and the kit's multi-threaded runs on a GPU show
 * whether cudaMalloc waits for a running kernel. */
cg_status_t cg_dev_frees_enable(cg_dev_t *dev);
void        cg_dev_peer_wait_begin(cg_dev_t *dev);
void        cg_dev_peer_wait_end(cg_dev_t *dev);
void        cg_dev_mem_release(cg_dev_t *dev, void *ptr);  /* ops->mem_free, held back */
void        cg_dev_host_release(cg_dev_t *dev, void *ptr); /* ops->host_free, held back */
/* At the layer's close (cg_dev_close): what was held goes; the holding ends. */
void        cg_dev_frees_close(cg_dev_t *dev);
/* Device work that will never end was left running (a failed call's kernel or stream
 * wait): every free would wait for it for ever (cudaFree waits for the whole device), so
 * from now on cg_dev_mem_release, cg_dev_host_release and the close free nothing, peers'
 * mappings are not closed, and no new local group is made (dev->abandoned). Logged once. */
void        cg_dev_abandon(cg_dev_t *dev);

/* Convenience: synchronous copy through a temporary use of stream. */
cg_status_t cg_dev_copy_sync(cg_dev_t *dev, void *dst, const void *src, size_t bytes,
                             cg_dev_stream_t *stream);

/* Copy count elements of a predefined type on stream; types with padding (the pairs) are
 * stored field by field, never writing the destination's padding (user memory). */
cg_status_t cg_dev_copy_typed(cg_dev_t *dev, void *dst, const void *src, size_t count,
                              cg_dtype_t dtype, cg_dev_stream_t *stream);
/* ops->ipc_export_done of both layers: closes the descriptor of a CG_IPC_SHARE_FD export
 * (here, not in dev_common.c: the CUDA layer sits below it). */
static inline void cg_dev_ipc_export_done(cg_dev_t *dev, const cg_ipc_handle_t *handle)
{
    cg_fd_ref_t ref;

    (void)dev;
    if (handle->share == CG_IPC_SHARE_FD) {
        memcpy(&ref, handle->opaque, sizeof(ref));
        cg_fd_share_release(&ref);
    }
}

/* Whether device memory is foreign to a layer open on device dev_ordinal in context
 * dev_context (a cg_mem_attr_t's foreign; both layers decide here): memory of another
 * device, or bound to another context. Memory bound to no context (mem_context 0: the
 * driver reports a NULL context for stream-ordered pool allocations and cuMemCreate
 * mappings, which belong to the device) is the layer's to use. */
static inline int cg_dev_mem_is_foreign(int mem_device, uintptr_t mem_context, int dev_ordinal,
                                        uintptr_t dev_context)
{
    return mem_device != dev_ordinal || (mem_context != 0 && mem_context != dev_context);
}

/* Reference reduction on the CPU (also the host layer's kernel). */
void cg_reduce_host(const cg_reduce_args_t *args);

#ifdef __cplusplus
}
#endif
#endif /* CG_DEV_H */
