/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll/gpu: the Open MPI boundary. Component, module and one entry point per intercepted
 * collective. This is the only folder that includes Open MPI's internal headers.
 */
#ifndef MCA_COLL_GPU_H
#define MCA_COLL_GPU_H

#include "ompi_coll_gpu/coll_gpu_compat.h"

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"

#include "base/cg_base.h"
#include "coll/cg_coll.h"
#include "kernels/cg_dev.h"

BEGIN_C_DECLS

/* coll_gpu_device */
enum { MCA_COLL_GPU_DEVICE_AUTO = 0, MCA_COLL_GPU_DEVICE_CUDA = 1, MCA_COLL_GPU_DEVICE_HOST = 2 };
/* coll_gpu_app_wait */
enum { MCA_COLL_GPU_APP_WAIT_DEFAULT_STREAM = 0, MCA_COLL_GPU_APP_WAIT_NONE = 1, MCA_COLL_GPU_APP_WAIT_LAUNCH = 2,
       MCA_COLL_GPU_APP_WAIT_AUTO = 3 };
/* coll_gpu_buffer_check */
enum { MCA_COLL_GPU_CHECK_AUTO = 0, MCA_COLL_GPU_CHECK_AGREE = 1, MCA_COLL_GPU_CHECK_LOCAL = 2 };
#define MCA_COLL_GPU_SLOW_ALL (-2) /* coll_gpu_debug_host_slow "all:MS": every rank */
/* Results of routing besides success and errors. They travel with the errors that the
 * layer underneath returns (Open MPI's negative codes, or MPI error classes: small
 * positive numbers), so they lie far above every MPI error class. */
/* mca_coll_gpu_route_agree: this rank has host buffers only and announced it (in band) */
#define MCA_COLL_GPU_AGREED_HOST 0x40000001
/* mca_coll_gpu_route_agree: announced on the board; this rank runs the call's LL at once,
 * the agreement riding on its lines */
#define MCA_COLL_GPU_AGREED_IN_BAND 0x40000002
/* mca_coll_gpu_host_direct, mca_coll_gpu_rs_route: host buffers, straight to the layer
 * underneath (no descriptor) */
#define MCA_COLL_GPU_ROUTED_UNDER 0x40000003

/* Memory kinds of the buffers of one call on one rank, as a bit mask; NOFAST: this rank
 * cannot take the fast path for this call (layout, foreign device, ...); RETIRED: this
 * rank's fast path on the communicator failed earlier and is not used again. */
enum {
    MCA_COLL_GPU_KIND_HOST    = 1,
    MCA_COLL_GPU_KIND_DEVICE  = 2,
    MCA_COLL_GPU_KIND_NOFAST  = 4,
    MCA_COLL_GPU_KIND_RETIRED = 8,
    MCA_COLL_GPU_KIND_BROKEN  = 16, /* device memory, but the device layer cannot open */
    /* agreed, not a buffer's kind: this rank does not assert host memory only on the
     * communicator (mpi_assert_memory_alloc_kinds); clear after an agreement: every rank
     * did */
    MCA_COLL_GPU_KIND_UNASSERTED = 32,
    MCA_COLL_GPU_KIND_UNKNOWN    = -1 /* not asked yet (mca_coll_gpu_stage_in) */
};

/* Layout of a call's buffers on one rank (mca_coll_gpu_route). */
enum {
    MCA_COLL_GPU_LAYOUT_NOFAST = 1, /* no fast path can take this layout */
    MCA_COLL_GPU_LAYOUT_GAPS   = 2  /* not one dense block of bytes per buffer */
};

/* How one call runs. */
enum {
    MCA_COLL_GPU_PATH_UNDER  = 0, /* the layer underneath, buffers untouched */
    MCA_COLL_GPU_PATH_STAGED = 1, /* through host memory */
    MCA_COLL_GPU_PATH_FAST   = 2, /* a device algorithm of the planner */
    MCA_COLL_GPU_PATH_LOCAL  = 3  /* one rank: a device copy (or nothing, in place) */
};

typedef struct {
    cg_plan_t     plan;
    int           path;
    int           kinds;
    int           skind, rkind; /* the input's and output's kinds (the entry point's) */
    cg_mem_attr_t sattr, rattr; /* and the device layer's answers (the publish's) */
    cg_ll_watch_t watch; /* FAST with watch.board set: an LL call run before the ranks
                            agreed on the kinds (mca_coll_gpu_route_board) */
} mca_coll_gpu_route_t;

typedef struct mca_coll_gpu_component_t {
    mca_coll_gpu_base_component_t super;

    /* MCA parameters */
    int   priority;
    int   verbose;
    char *verbose_subsys;
    char *verbose_file;
    int   device_mode;
    int   node_size;
    int   buffer_check;
    int   algorithm[CG_COLL_COUNT];
    char *debug_host_buffer_ranks;
    int   debug_host_lenient;
    size_t debug_host_pinned_max;
    int    debug_host_blocking_waits;
    char  *debug_host_slow;      /* "RANK:MS" or "all:MS": that world rank's device work (or
                                    every rank's) takes MS each */
    int    debug_host_slow_rank; /* -1: none; MCA_COLL_GPU_SLOW_ALL: every rank */
    double debug_host_slow_ms;   /* 0: no delay, but still never inside the queueing call */
    int   debug_host_time_sliced;
    int   debug_host_query_miss; /* testing: every N-th query of the application's work misses */
    int   debug_host_server_deaf; /* testing: LL servers never read the calls posted to them */
    int   debug_host_no_p2p; /* testing: peers' memory cannot be mapped (GPUs without P2P) */
    int   debug_ll_flag_period; /* testing: LL calls before the flags repeat (0: all) */
    int   debug_comm_ids;       /* testing: N ids of the PMIx kind for every communicator */
    char *debug_library_version; /* testing: the runtime's MPI_Get_library_version text */
    char *debug_fail;       /* "RANK:CALL": that world rank's CALL-th fast-path call fails */
    int   debug_fail_rank;
    long  debug_fail_call;
    int   debug_fail_sticky; /* RANK:CALL:sticky */
    long  fast_calls;       /* fast-path calls of this process (for debug_fail) */
    size_t staging_cache_max;
    size_t scratch_size;
    int    intra_sync;
    int    copy_method;
    int    app_wait;
    int    ll_persist;         /* LL calls to a server that stays on the device */
    int    ll_persist_idle_us; /* the server leaves after this long without a call */
    int    timeout;
    int    spin_us;
    char  *topo_file;
    char  *rules_file;
    cg_rules_t *rules;
    double net_bw;
    double net_latency;
    double copy_latency;
    size_t ucx_chunk_size;
    int    ucx_depth;
    int    hier_lanes;
    int    context_keep;
    int    host_cache;
    int    ucx_staging;
    int    thread_multi;
    int    thread_single;   /* MPI_THREAD_SINGLE provided (read in init_query: a later
                               MPI_T_init_thread resets Open MPI's own variable) */
    cg_planner_config_t planner;

    /* state */
    cg_dev_t *dev;          /* opened at the first device-buffer call */
    int       dev_failed;   /* opening failed once: never try again */
    int       host_cache_state; /* 0 not tried, 1 in use, -1 unavailable (coll_gpu_call.c) */
    int       active_kind;  /* CG_DEV_KIND_* chosen at init */
    int       no_device;    /* coll_gpu_device=auto with no CUDA here: every buffer is host
                             * memory, the rank only joins its peers' agreements (a job over
                             * GPU and CPU nodes: they run them, and it must too) */
    int      *host_buffer_ranks;
    int       num_host_buffer_ranks;
    /* the algorithm (or "underlying") of each collective's last call: MPI_T pvars */
    const char *volatile last_alg[CG_COLL_COUNT];
} mca_coll_gpu_component_t;

MCA_COLL_GPU_DECLSPEC extern mca_coll_gpu_component_t mca_coll_gpu_component;

/* Every collective the component intercepts, by its slot name in the coll module
 * (coll_<name>): the five with fast paths, the other blocking collectives (staged), and the
 * nonblocking and persistent forms of all of them (staged). Barrier, the neighborhood
 * collectives and reduce_local are left to the layer underneath. */
#define MCA_COLL_GPU_FAST_COLLS(X)                                                         \
    X(allreduce) X(bcast) X(allgather) X(reduce_scatter) X(reduce_scatter_block)
#define MCA_COLL_GPU_STAGED_COLLS(X)                                                       \
    X(allgatherv) X(alltoall) X(alltoallv) X(alltoallw) X(exscan) X(gather) X(gatherv)    \
    X(reduce) X(scan) X(scatter) X(scatterv)
#define MCA_COLL_GPU_NONBLOCKING_COLLS(X)                                                  \
    X(iallreduce) X(ibcast) X(iallgather) X(ireduce_scatter) X(ireduce_scatter_block)     \
    X(iallgatherv) X(ialltoall) X(ialltoallv) X(ialltoallw) X(iexscan) X(igather)         \
    X(igatherv) X(ireduce) X(iscan) X(iscatter) X(iscatterv)
#define MCA_COLL_GPU_PERSISTENT_COLLS(X)                                                   \
    X(allreduce_init) X(bcast_init) X(allgather_init) X(reduce_scatter_init)              \
    X(reduce_scatter_block_init) X(allgatherv_init) X(alltoall_init) X(alltoallv_init)    \
    X(alltoallw_init) X(exscan_init) X(gather_init) X(gatherv_init) X(reduce_init)        \
    X(scan_init) X(scatter_init) X(scatterv_init)
#define MCA_COLL_GPU_INTERCEPTED(X)                                                        \
    MCA_COLL_GPU_FAST_COLLS(X) MCA_COLL_GPU_STAGED_COLLS(X)                               \
    MCA_COLL_GPU_NONBLOCKING_COLLS(X) MCA_COLL_GPU_PERSISTENT_COLLS(X)

/* The layer underneath, saved at enable: function and module of every intercepted slot
 * (NULL when the layer underneath has none: the component then leaves that slot alone). */
typedef struct {
#define MCA_COLL_GPU_UNDER_FIELD(_name)                                                    \
    mca_coll_base_module_##_name##_fn_t _name;                                             \
    mca_coll_base_module_t             *_name##_module;
    MCA_COLL_GPU_INTERCEPTED(MCA_COLL_GPU_UNDER_FIELD)
#undef MCA_COLL_GPU_UNDER_FIELD
} mca_coll_gpu_underlying_t;

typedef struct mca_coll_gpu_module_t {
    mca_coll_gpu_base_module_t super;
    mca_coll_gpu_underlying_t  under;
    struct ompi_communicator_t *comm;   /* the module's communicator (set at enable) */
    cg_dev_stream_t           *stream;  /* for staging copies; created at first use */
    cg_dev_stream_t           *app_stream; /* the application's default stream, for the
                                              copies of blocking staged calls where one
                                              thread calls (cg_dev_ll_after_app) */
    cg_comm_t                 *core;    /* fast-path context; created at first use */
    int                        core_failed;
    int                        nested;  /* > 0 while this module is in a blocking call of its
                                           layer underneath: a collective that layer makes on
                                           the same communicator (host buffers: only those go
                                           underneath) comes back to the entry points and
                                           goes straight down, unclassified and uncounted */
    size_t                    *counts;  /* reduce_scatter counts, comm size entries */
    uint64_t                   seq;     /* calls that needed an agreement (the same on every
                                           rank) */
    cg_board_t                *board;   /* the node's announcement board; NULL: none yet */
    int                        board_failed; /* or none wanted: the communicator spans nodes */
    int                        host_asserted; /* this rank's info asserts host memory only */
    int                        host_only; /* every rank asserted it (learnt at the first
                                             agreement): no agreement any more */
    cg_plan_memo_t             plans[CG_COLL_COUNT]; /* the last plan of each collective */
} mca_coll_gpu_module_t;

/* A communicator inside one node gets its announcement board (coll_gpu_buffer_check=auto)
 * at its MCA_COLL_GPU_BOARD_AFTER-th call that needs an agreement: making and freeing a
 * board costs about what that many agreements through the layer underneath cost. */
#define MCA_COLL_GPU_BOARD_AFTER 8

OBJ_CLASS_DECLARATION(mca_coll_gpu_module_t);

/* Call the layer underneath's _coll (counted: coll_gpu_mpi_underlying):
 * MCA_COLL_GPU_UNDER(module, allreduce, sbuf, rbuf, count, dtype, op, comm). */
#define MCA_COLL_GPU_UNDER(_m, _coll, ...)                                                  \
    (cg_count_caller(CG_CNT_MPI_UNDER, 1), (_m)->nested++,                                  \
     mca_coll_gpu_under_returned((_m), (_m)->under._coll(__VA_ARGS__, (_m)->under._coll##_module)))

/* A collective the layer underneath makes inside one of ours (see nested): straight down,
 * MCA_COLL_GPU_NESTED(module, allreduce, sbuf, rbuf, count, dtype, op, comm). */
#define MCA_COLL_GPU_NESTED(_m, _coll, ...) ((_m)->under._coll(__VA_ARGS__, (_m)->under._coll##_module))

static inline int mca_coll_gpu_under_returned(mca_coll_gpu_module_t *m, int rc)
{
    m->nested--;
    return rc;
}

/* component / module */
/* The device layer once opened (NULL before): published by mca_coll_gpu_device_open with a
 * release store after its fields are set, read with an acquire load by every thread that
 * does not hold the open lock. */
static inline cg_dev_t *mca_coll_gpu_dev(void)
{
    return __atomic_load_n(&mca_coll_gpu_component.dev, __ATOMIC_ACQUIRE);
}
int mca_coll_gpu_register_params(void);
/* The values of the parameters that every rank must set alike (scope ALL_EQ, less those
 * the setup resolves: scratch size, node size, chunk sizes, forced algorithms, the model's
 * inputs...), as one number that a communicator's setup compares between its ranks. */
uint64_t mca_coll_gpu_params_digest(void);
int mca_coll_gpu_register_pvars(void);
int mca_coll_gpu_init_query(bool enable_progress_threads, bool enable_mpi_threads);
mca_coll_base_module_t *mca_coll_gpu_comm_query(struct ompi_communicator_t *comm, int *priority);
int mca_coll_gpu_status_to_mpi(cg_status_t status);
void mca_coll_gpu_show_help(const char *topic, ...);

/* messages (coll_gpu_messages.c): job-wide problems once per job, a communicator's once per
 * communicator (its rank 0); coll_gpu_device=cuda without CUDA stops the job */
void mca_coll_gpu_show_help_once(const char *topic, ...);
void mca_coll_gpu_show_help_comm(struct ompi_communicator_t *comm, const char *topic, ...);
void mca_coll_gpu_cuda_required(const char *reason);
void mca_coll_gpu_banner(const char *layer);
void mca_coll_gpu_check_param_names(void);
void mca_coll_gpu_add_help_dirs(void); /* where help-coll-gpu.txt is (coll_gpu_component.c) */
/* coll_gpu_version.c: OMPI_SUCCESS, or OMPI_ERROR (said once) when the Open MPI that runs
 * lays out its structures otherwise than the one built against: the component declines. */
int mca_coll_gpu_runtime_check(void);

/* per-call helpers (coll_gpu_call.c) */
cg_dev_t *mca_coll_gpu_device(void);
/* MCA_COLL_GPU_KIND_* of one buffer, with the device layer's answer in *attr (zeros when
 * nothing was asked, or the query failed): a fast path's zero-copy publish uses it instead
 * of asking again. */
int  mca_coll_gpu_buffer_query(const void *buf, size_t bytes, cg_mem_attr_t *attr);
/* Does the device allocation that attr describes hold [buf, buf + bytes)? */
static inline int mca_coll_gpu_attr_holds(const cg_mem_attr_t *attr, const void *buf,
                                          size_t bytes)
{
    const uintptr_t at = (uintptr_t)buf;

    return attr->kind == CG_MEM_DEVICE && attr->size > 0 && at >= attr->base &&
           at - attr->base < attr->size && bytes <= attr->size - (at - attr->base);
}
/* The second buffer of a call: when [buf, buf + bytes) lies in the device allocation that
 * the first one's query found (known, of kind known_kind), the same answer with no query
 * (a caching allocator's blocks share one allocation); else mca_coll_gpu_buffer_query. */
int  mca_coll_gpu_buffer_query_near(const void *buf, size_t bytes, const cg_mem_attr_t *known,
                                    int known_kind, cg_mem_attr_t *attr);
/* The kind of a layout's data: span bytes from data (its first byte), dense or not; known:
 * as mca_coll_gpu_buffer_query_near (NULL: none). A layout with gaps is asked at its first
 * and, when that is host memory, its last byte (the host-memory cache learns those bytes
 * only, not the span, which may lie over several allocations): host first, device last is
 * DEVICE | NOFAST, staged piece by piece (attr: the first byte's). */
int  mca_coll_gpu_layout_query(const void *data, size_t span, int dense, const cg_mem_attr_t *known,
                               int known_kind, cg_mem_attr_t *attr);
void mca_coll_gpu_host_cache_stop(void);
/* Host buffers on a communicator whose every rank asserted host memory, or announced on a
 * node's board: MCA_COLL_GPU_ROUTED_UNDER when the call goes straight underneath before a
 * descriptor is made (counted; a logged call takes the whole route, for its line),
 * OMPI_SUCCESS when it takes the route, or an error (an announcement that timed out). */
int  mca_coll_gpu_host_direct(struct mca_coll_gpu_module_t *m, int kinds, cg_coll_t coll);
/* Does the value of mpi_assert_memory_alloc_kinds (MPI 4.1) list host memory kinds only
 * (system, mpi, cuda:host, cuda:managed)? */
int  mca_coll_gpu_kinds_host_only(const char *kinds);
int  mca_coll_gpu_agree_kinds(struct mca_coll_gpu_module_t *m, struct ompi_communicator_t *comm,
                              int local_kinds, int *all_kinds);
/* The fast-path context of the communicator, created collectively at the first call that
 * needs it (every rank gets there: the ranks agreed on the route first). NULL when it
 * could not be created, on every rank. */
cg_comm_t *mca_coll_gpu_context(struct mca_coll_gpu_module_t *m, struct ompi_communicator_t *comm);
/* A fast path ended: an error becomes an MPI error (the communicator's fast paths retire). */
/* A device operation of a call failed: if the application reset the device under the
 * component (cudaDeviceReset while MPI still used it), say so, once, as an error. */
void mca_coll_gpu_reset_explain(void);
int  mca_coll_gpu_fast_done(struct ompi_communicator_t *comm, const cg_call_t *call,
                            cg_status_t status);
/* Run the FAST path of a route (call->watch from it); an MPI status, or
 * MCA_COLL_GPU_FAST_MISSED: an LL call run before the agreement lacked a local rank, nothing
 * was written (allgather: at most blocks of ranks on the call), run the staged path. */
#define MCA_COLL_GPU_FAST_MISSED 0x40000004 /* above the MPI error classes, as the others */
int  mca_coll_gpu_fast_run(struct mca_coll_gpu_module_t *m, struct ompi_communicator_t *comm,
                           const mca_coll_gpu_route_t *route, cg_call_t *call);
/* The call descriptor of an entry point: buffers (MPI_IN_PLACE: sbuf NULL), count as
 * size_t, the device type and op of a reduction (CG_DT_NONE / CG_OP_NONE otherwise). */
void mca_coll_gpu_call_init(cg_call_t *call, cg_coll_t coll, const void *sbuf, void *rbuf,
                            size_t count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                            struct ompi_communicator_t *comm);
/* layout: MCA_COLL_GPU_LAYOUT_* of this rank's buffers. */
int  mca_coll_gpu_route(struct mca_coll_gpu_module_t *m, struct ompi_communicator_t *comm,
                        const cg_call_t *call, int local_kinds, int layout,
                        mca_coll_gpu_route_t *route);
/* Bytes of data (not extent) in count elements of dtype. */
size_t mca_coll_gpu_data_bytes(struct ompi_datatype_t *dtype, size_t count);
/* The LOCAL path: bytes from src to dst on the device (src MPI_IN_PLACE: nothing), after the
 * application's work on buffers of another GPU or context (route's sattr, rattr). */
int  mca_coll_gpu_local_copy(struct mca_coll_gpu_module_t *m,
                             const mca_coll_gpu_route_t *route, void *dst, const void *src,
                             size_t bytes);
const char *mca_coll_gpu_route_alg(const mca_coll_gpu_route_t *route);
/* The one log line of a call (coll_gpu_verbose 2). */
void mca_coll_gpu_log_call(const cg_call_t *call, struct ompi_communicator_t *comm,
                           struct ompi_datatype_t *dtype, struct ompi_op_t *op, int kinds,
                           const mca_coll_gpu_route_t *route);
cg_dtype_t mca_coll_gpu_dtype_map(struct ompi_datatype_t *dtype);
cg_op_t    mca_coll_gpu_op_map(struct ompi_op_t *op);
int mca_coll_gpu_dtype_is_dense(struct ompi_datatype_t *dtype, size_t count);

/* The pieces of a buffer's layout (coll_gpu_pieces.c): runs of rows pieces of width
 * bytes, pitch apart, the first offset bytes from the buffer pointer; in the arena at
 * host_offset, host_pitch apart where the runs are rebased (compact staging), else as in
 * the buffer. */
typedef struct {
    ptrdiff_t offset;
    size_t    width, pitch, rows;
    ptrdiff_t host_offset;
    size_t    host_pitch;
} mca_coll_gpu_run_t;

typedef struct {
    mca_coll_gpu_run_t *runs;
    size_t              count, capacity;
    size_t              bytes;   /* in all its pieces */
    int                 no_join; /* set before adding: separate pieces stay separate copies
                                    (they may lie in different allocations) */
    int                 rebased; /* host_offset and host_pitch place them in the arena */
} mca_coll_gpu_runs_t;

/* Add the pieces of count elements of dtype laid out from offset bytes past the buffer. */
int  mca_coll_gpu_runs_add(mca_coll_gpu_runs_t *runs, struct ompi_datatype_t *dtype,
                           size_t count, ptrdiff_t offset);
void mca_coll_gpu_runs_free(mca_coll_gpu_runs_t *runs);
/* Copy the pieces between the buffer at user_base and the arena at host_base (to_host: to
 * the arena; queued on stream); zero them in the arena. */
int  mca_coll_gpu_runs_copy(cg_dev_t *dev, const mca_coll_gpu_runs_t *runs, char *host_base,
                            char *user_base, int to_host, cg_dev_stream_t *stream);
void mca_coll_gpu_runs_zero(const mca_coll_gpu_runs_t *runs, char *host_base);

/* Compact staging of a layout mostly of gaps, as of a type over several allocations given
 * with MPI_BOTTOM (coll_gpu_compact.c): its pieces staged close together, and the layer
 * underneath given type, an equivalent of the application's (same count, same type
 * signature) whose displacements point into them. */
typedef struct {
    ptrdiff_t lo, hi; /* bytes of one element's blocks near each other, from the buffer */
    ptrdiff_t at;     /* their place in the element's compact copy */
} mca_coll_gpu_cluster_t;

typedef struct {
    struct ompi_datatype_t *type; /* NULL: the layout is staged as it lies */
    mca_coll_gpu_cluster_t *clusters;
    size_t                  nclusters;
    ptrdiff_t               extent; /* of type: one element's compact copy */
    size_t                  end;    /* first byte past the compact copy of the first element */
} mca_coll_gpu_compact_t;

/* A plan for count elements of dtype (plan->type NULL where it would gain nothing or
 * cannot describe them); freed with mca_coll_gpu_compact_free. */
void   mca_coll_gpu_compact_plan(struct ompi_datatype_t *dtype, size_t count,
                                 mca_coll_gpu_compact_t *plan);
size_t mca_coll_gpu_compact_span(const mca_coll_gpu_compact_t *plan, size_t count);
/* The pieces of count elements of dtype, rebased into the compact copy. */
int    mca_coll_gpu_compact_runs(const mca_coll_gpu_compact_t *plan,
                                 struct ompi_datatype_t *dtype, size_t count,
                                 mca_coll_gpu_runs_t *runs);
void   mca_coll_gpu_compact_free(mca_coll_gpu_compact_t *plan);

/* staging (coll_gpu_staged.c) */
typedef struct {
    void     *user;   /* buffer as the application passed it */
    void     *host;   /* buffer to pass to the layer underneath */
    char     *host_span;
    ptrdiff_t gap;
    size_t    span;
    int       staged; /* the user buffer is device memory and was staged */
    uintptr_t foreign_base; /* of another device or context: its allocation's start, which
                               a persistent request's starts wait for again
                               (mca_coll_gpu_stage_wait_foreign); 0 otherwise */
    mca_coll_gpu_runs_t runs; /* its pieces, copied one by one (count 0: the whole span);
                                 the staging frees them */
    struct ompi_datatype_t *type; /* staged compactly: the type to pass underneath with
                                     host (a reference the staging releases); else NULL */
} mca_coll_gpu_stage_t;

/* The type to pass underneath with a staged buffer b of the application's dtype. */
#define MCA_COLL_GPU_STAGED_TYPE(b, dtype) ((b)->type != NULL ? (b)->type : (dtype))

typedef struct {
    mca_coll_gpu_module_t *module;
    void                  *arena;
    size_t                 arena_size;
    size_t                 arena_used;
    int                    broken; /* no device layer, or no stream (after a GPU fault):
                                      device data cannot be copied; the call runs with
                                      zeros and returns an error */
    int                    pageable; /* the arena is ordinary host memory (page-locked
                                        memory ran out): slower copies, same results */
    int                    lost;   /* a device copy or wait of this staging failed (after
                                      a GPU fault every one does): the call still takes part
                                      in the collective underneath, with zeros for this
                                      rank's data, and returns this error */
    cg_dev_stream_t       *stream; /* where its copies go and what staging_sync waits for */
    mca_coll_gpu_stage_t  *placed[2]; /* the buffers given a place in the arena */
    int                    nplaced;
} mca_coll_gpu_staging_t;

/* Arena bytes for a staged buffer of span bytes (mca_coll_gpu_stage_device's alignment, and
 * room to move it so that no two of a call's buffers are passed underneath as one pointer). */
#define MCA_COLL_GPU_STAGE_ALIGN       64
#define MCA_COLL_GPU_STAGE_BYTES(span) (CG_ALIGN_UP((size_t)(span), MCA_COLL_GPU_STAGE_ALIGN) + \
                                        MCA_COLL_GPU_STAGE_ALIGN)
/* A staging arena of total_bytes for one call of m, whose buffers hold data_bytes of data
 * (a span far larger, as of a datatype over several allocations, gets ordinary memory whose
 * pages are taken as touched, not page-locked memory for all of it). blocking: a blocking call, ordered
 * here after the application's queued device work: its copies go on the application's
 * default stream itself where one thread calls (cg_dev_ll_after_app: no event), else on
 * the module's stream after mca_coll_gpu_app_wait. Not blocking (a request): the module's
 * stream; the caller orders it (mca_coll_gpu_app_wait) when its copies start. */
int  mca_coll_gpu_staging_begin(mca_coll_gpu_staging_t *st, mca_coll_gpu_module_t *m,
                                size_t total_bytes, size_t data_bytes, int blocking);
/* Order the staging copies of m's requests (nonblocking, persistent) after the
 * application's queued device work (a wait on the module's staging stream, which every
 * staged call synchronises after its copies; on the host when that stream cannot be made);
 * blocking calls are ordered by mca_coll_gpu_staging_begin. */
void mca_coll_gpu_app_wait(mca_coll_gpu_module_t *m);
/* The allocation's start of a buffer of another device or context (a cg_mem_attr_t's
 * foreign), or 0. */
#define MCA_COLL_GPU_FOREIGN_BASE(attr) \
    ((attr)->kind == CG_MEM_DEVICE && (attr)->foreign ? (attr)->base : (uintptr_t)0)
/* The host waits for the work the application queued before the call on the default
 * stream of the context that holds foreign_base (0: nothing to wait for), which the
 * layer's own wait (its device's) does not order after; an MPI error when that fails. */
int  mca_coll_gpu_app_wait_foreign(uintptr_t foreign_base);
/* The same before a staged buffer's copies; a failure loses the staging (zeros, an error),
 * as a failed copy does. Every staging of such a buffer waits, and a persistent request's
 * starts again. */
void mca_coll_gpu_stage_wait_foreign(mca_coll_gpu_staging_t *st, uintptr_t foreign_base);
/* Stage count elements of dtype at user when they are device memory. reads: the call
 * reads them (copied in now); writes: the call writes them (mca_coll_gpu_stage_out). A
 * layout with gaps is copied piece by piece where it is written, and any layout where its
 * span leaves its first byte's allocation. kind and attr: what mca_coll_gpu_buffer_query
 * said of user's data for this call at the entry point (no second memory query, a driver
 * call on a GPU), or MCA_COLL_GPU_KIND_UNKNOWN (attr NULL): ask. plan: NULL, or where it has
 * a type, device data is staged compactly (the call passes the buffer's b->type). */
int  mca_coll_gpu_stage_in(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b, void *user,
                           struct ompi_datatype_t *dtype, size_t count, int reads, int writes,
                           int kind, const cg_mem_attr_t *attr,
                           const mca_coll_gpu_compact_t *plan);
/* A device buffer of count elements of dtype staged compactly by plan (which has a type);
 * copy_in: its data copied to the arena now. */
int  mca_coll_gpu_stage_compact(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b, void *user,
                                struct ompi_datatype_t *dtype, size_t count,
                                const mca_coll_gpu_compact_t *plan, int copy_in);
/* Arena bytes to stage count elements of dtype (by plan where it has a type). */
size_t mca_coll_gpu_stage_bytes(struct ompi_datatype_t *dtype, size_t count,
                                const mca_coll_gpu_compact_t *plan);
/* A buffer known to be device memory: span bytes from user + gap (any layout: a type map,
 * blocks at displacements) get a place in the arena; copy_in copies them there now. runs:
 * the layout's pieces, taken over (emptied), copied one by one; NULL or none: the whole
 * span is copied, in and out. */
int  mca_coll_gpu_stage_device(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b, void *user,
                               ptrdiff_t gap, size_t span, mca_coll_gpu_runs_t *runs,
                               int copy_in);
/* The pieces a device buffer is staged by (its runs), listed by list(arg, runs) where it is
 * written with gaps (gaps_written) or its span [data, data + span) leaves its first byte's
 * allocation (attr; then no copy joins two pieces). Returns 1 when they could not be
 * listed: the span is then copied whole (none listed), and read first when written, for
 * its gaps to survive. */
int  mca_coll_gpu_stage_pieces(mca_coll_gpu_runs_t *runs, const cg_mem_attr_t *attr,
                               const void *data, size_t span, int gaps_written,
                               int (*list)(const void *arg, mca_coll_gpu_runs_t *runs),
                               const void *arg);
/* Copy a staged buffer's device bytes into its place in the arena (queued on the stream). */
int  mca_coll_gpu_stage_copy_in(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b);
int  mca_coll_gpu_stage_out(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b);
int  mca_coll_gpu_staging_sync(mca_coll_gpu_staging_t *st);
/* Is the staging's arena page-locked memory of a device that was reset since (cg_dev_lost:
 * the CPU must not touch it)? */
int mca_coll_gpu_staging_gone(const mca_coll_gpu_staging_t *st);
/* Ends the staging; returns rc, or an error when the staging was broken. */
int  mca_coll_gpu_staging_end(mca_coll_gpu_staging_t *st, int rc);
size_t mca_coll_gpu_span(struct ompi_datatype_t *dtype, size_t count, ptrdiff_t *gap);
/* Where the data of count elements of dtype at buf begins (buf plus the type's true lower
 * bound: MPI_BOTTOM with absolute addresses, a negative lower bound), *span its bytes: where
 * the memory kind is asked. MPI_IN_PLACE stays as it is. */
static inline const void *mca_coll_gpu_data_start(const void *buf, struct ompi_datatype_t *dtype,
                                                  size_t count, size_t *span)
{
    ptrdiff_t gap;

    *span = mca_coll_gpu_span(dtype, count, &gap);
    return buf == MPI_IN_PLACE ? buf : (const void *)((uintptr_t)buf + (uintptr_t)gap);
}
void mca_coll_gpu_staging_cache_release(void);

/* entry points */
int mca_coll_gpu_allreduce(const void *sbuf, void *rbuf, mca_coll_gpu_count_t count,
                           struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_gpu_bcast(void *buf, mca_coll_gpu_count_t count, struct ompi_datatype_t *dtype,
                       int root, struct ompi_communicator_t *comm,
                       mca_coll_base_module_t *module);
int mca_coll_gpu_allgather(const void *sbuf, mca_coll_gpu_count_t scount,
                           struct ompi_datatype_t *sdtype, void *rbuf,
                           mca_coll_gpu_count_t rcount, struct ompi_datatype_t *rdtype,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_gpu_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                                struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                struct ompi_communicator_t *comm,
                                mca_coll_base_module_t *module);
int mca_coll_gpu_reduce_scatter_block(const void *sbuf, void *rbuf, mca_coll_gpu_count_t rcount,
                                      struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                      struct ompi_communicator_t *comm,
                                      mca_coll_base_module_t *module);

END_C_DECLS
#endif /* MCA_COLL_GPU_H */
