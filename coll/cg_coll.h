/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll/gpu collectives layer: plain C, no Open MPI headers. The collectives, their
 * algorithms and the planner that picks one; the per-communicator context that the fast
 * paths run on.
 */
#ifndef CG_COLL_H
#define CG_COLL_H

#include "base/cg_base.h"
#include "kernels/cg_dev.h"
#include "topo/cg_topo.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CG_COLL_ALLREDUCE = 0,
    CG_COLL_BCAST,
    CG_COLL_ALLGATHER,
    CG_COLL_REDUCE_SCATTER,
    CG_COLL_REDUCE_SCATTER_BLOCK,
    CG_COLL_COUNT
} cg_coll_t;

/* Algorithm ids are stable: they are the values of the coll_gpu_*_algorithm parameters. */
typedef enum {
    CG_ALG_AUTO     = 0,
    CG_ALG_STAGED   = 1, /* copy to host, run the collective underneath, copy back */
    CG_ALG_ONE_SHOT = 2, /* allreduce: every rank reduces every peer's input (small) */
    CG_ALG_TWO_SHOT = 3, /* allreduce: reduce-scatter + allgather fused through IPC (large) */
    CG_ALG_DIRECT   = 4, /* reduce_scatter: own block from every peer; allgather, bcast:
                            direct peer copies */
    CG_ALG_RING     = 5, /* allreduce: ring along the node's links (GPUs linked in pairs) */
    CG_ALG_HIER_RING   = 6, /* across nodes, large messages, phases overlapped chunk by
                               chunk: intra reduce-scatter, ring on every rail over 1/L of
                               the data, intra allgather; bcast: every rail relays 1/L of
                               the message down a chain of nodes, intra allgather */
    CG_ALG_HIER_RD     = 7, /* across nodes: intra allreduce, recursive doubling on every
                               rail (small messages) */
    CG_ALG_HIER_LEADER = 8, /* across nodes, any number of ranks per node, through one
                               leader per node: allreduce: intra allreduce, leaders
                               exchange, intra bcast; allgather: intra allgather, leaders'
                               ring, intra bcast; reduce-scatter: intra reduce to the
                               leader, leaders' ring, intra scatter */
    CG_ALG_HIER_TREE   = 9, /* bcast across nodes: binomial tree between nodes, intra bcast */
    CG_ALG_SCATTER_ALLGATHER = 10, /* bcast on one node: the root hands each rank a part,
                                      the ranks share the parts (large messages, GPUs with
                                      links of their own) */
    CG_ALG_LL       = 11, /* one node, small messages: one device operation per call,
                             synchronised in the data (LL lines: data and flag together) */
    CG_ALG_COUNT
} cg_alg_t;

const char *cg_coll_name(cg_coll_t coll);
/* The name of an algorithm id ("auto" for CG_ALG_AUTO), from the registry. */
const char *cg_alg_name(cg_alg_t alg);
/* Is alg one of coll's algorithms (AUTO included)? */
int cg_alg_valid(cg_coll_t coll, cg_alg_t alg);

typedef struct cg_board    cg_board_t;    /* a node's announcement board (below) */
typedef struct cg_ll_watch cg_ll_watch_t;

/*
 * One call, as the Open MPI boundary hands it down: the planner's input and the
 * algorithms' arguments. Counts are size_t from the boundary down. Everything but the
 * buffers is identical on every rank (the MPI standard requires it).
 */
typedef struct {
    cg_coll_t     coll;
    const void   *sbuf;      /* NULL: in place (the input is in rbuf) */
    void         *rbuf;      /* bcast: the buffer */
    size_t        count;     /* elements: allreduce and bcast the message; allgather one
                                rank's block; reduce_scatter(_block) the whole input */
    const size_t *counts;    /* reduce_scatter(_block): comm_size entries, rank r's block;
                                NULL for the other collectives */
    size_t        bytes;     /* count x the element size (a reducible type's extent) */
    cg_dtype_t    dtype;     /* CG_DT_NONE: not reducible on the device (moved as bytes) */
    cg_op_t       op;        /* CG_OP_NONE: not a predefined op, or no reduction */
    int           root;      /* bcast */
    int           comm_size;
    const cg_ll_watch_t *watch; /* this rank's: an LL call run before the agreement; NULL:
                                   the ranks agreed on the call before */
    const cg_mem_attr_t *sattr, *rattr; /* this rank's: the device layer's answer for sbuf
                                           and rbuf at the entry point; NULL: not asked */
} cg_call_t;

/* nccl-tests' size of a call: the whole buffer (allgather: gathered). */
static inline double cg_call_size(const cg_call_t *call)
{
    return call->coll == CG_COLL_ALLGATHER ? (double)call->bytes * call->comm_size
                                           : (double)call->bytes;
}

struct cg_plan {
    cg_alg_t alg;
    size_t   chunk_bytes; /* hier_ring: bytes of the message per pipeline chunk; 0: one */
    int      node_ll;     /* hierarchical allreduce, hier_tree bcast: the node's phase is
                           * one LL operation */
    char     reason[160];
};

/* Alpha-beta cost model (cg_cost.c). */
typedef struct {
    double intra_alpha_us; /* one synchronised step inside a node */
    double intra_bw_gbs;   /* per GPU inside a node */
    double ll_bw_gbs;      /* LL lines (data and flags) inside a node */
    double net_alpha_us;   /* one message between nodes */
    double net_bw_gbs;     /* per NIC (per rail), per direction */
    double stage_bw_gbs;   /* device <-> host staging for the network; 0: not needed (set:
                            * every network step of device data also waits for a copy out
                            * and a copy in, copy_alpha_us each) */
    int    lanes;          /* network phases of chunks in flight at once (>= 1) */
    double ll_capacity;    /* bytes a rank may send a peer in an LL call (the node phase of
                            * a hierarchical algorithm; 0: no LL) */
    int    shared_gpu;     /* one memory for the node's ranks (a shared GPU, the host) */
    int    time_sliced;    /* the node's ranks take turns on their GPU (no MPS): an LL
                            * kernel waits a time slice for each peer's */
    double copy_alpha_us;  /* staged path: a copy between device and host, synchronised */
    double copy_bw_gbs;    /* staged path: its copies' bandwidth */
    double under_bw_gbs;   /* staged path: the collective underneath (host memory) */
    /* a node's algorithm: what one call costs besides its bytes, measured where the step
     * model (intra_alpha_us per synchronised step) does not predict it (us; 0: the steps) */
    double fixed_us[CG_COLL_COUNT][CG_ALG_COUNT];
} cg_cost_params_t;

/* ---- the algorithm registry (cg_registry.c) -----------------------------------------
 * One row per collective and algorithm: what it is, where it runs, what it needs, what it
 * costs and how it runs. The planner, the cost model, the rules file, the MCA parameter
 * enumerations, coll_gpu_info and the verbose log read names and properties from here;
 * dispatch is one indirect call through the row. Adding an algorithm: one file in its
 * collective's folder (a run function, and a cost function in cg_cost.c when it has a
 * model of its own), one row. */
typedef enum {
    CG_SCOPE_STAGED = 0, /* host memory and the layer underneath (the boundary runs it) */
    CG_SCOPE_INTRA  = 1, /* one node: the local group's device algorithms */
    CG_SCOPE_HIER   = 2  /* several nodes: intra-node phases and an inter-node phase */
} cg_scope_t;

/* What an algorithm needs of the communicator (cg_alg_info_t.needs). */
enum {
    CG_NEEDS_ONE_NODE = 1u << 0, /* every rank on one node */
    CG_NEEDS_NODES    = 1u << 1, /* several nodes and the inter-node transport (UCX) */
    CG_NEEDS_UNIFORM  = 1u << 2, /* the same number of ranks on every node */
    CG_NEEDS_LL_FIT   = 1u << 3  /* what a rank sends a peer fits the LL inbox */
};

typedef struct cg_comm cg_comm_t;
typedef struct cg_plan cg_plan_t;

/* Predicted seconds for a message of bytes (nccl-tests size) on nodes x local ranks;
 * *chunk_bytes (when not NULL): the pipeline chunk the prediction assumes (0: none). */
typedef double (*cg_alg_cost_fn_t)(const cg_cost_params_t *params, cg_coll_t coll, double bytes,
                                   int nodes, int local, size_t *chunk_bytes);
typedef cg_status_t (*cg_alg_run_fn_t)(cg_comm_t *comm, const cg_plan_t *plan,
                                       const cg_call_t *call);

/* How an algorithm behaves (cg_alg_info_t.traits). */
enum {
    CG_TRAIT_STREAM_ORDERED = 1u << 0, /* orders itself after the application's device work
                                          (a stream wait, not a host wait) */
    CG_TRAIT_PIPELINED      = 1u << 1  /* runs its phases chunk by chunk on lane threads
                                          (coll/hier/hier_pipe.c) */
};

typedef struct {
    cg_coll_t        coll;
    cg_alg_t         alg;     /* stable id: the value of coll_gpu_<coll>_algorithm */
    const char      *name;
    cg_scope_t       scope;
    unsigned         needs;   /* CG_NEEDS_* */
    cg_alg_cost_fn_t cost;
    cg_alg_run_fn_t  run;     /* NULL: staged (run by the Open MPI boundary) */
    const char      *summary; /* one line for people (coll_gpu_info, ompi_info) */
    unsigned         traits;  /* CG_TRAIT_* */
} cg_alg_info_t;

/* Every row, in order (each collective's: staged first); *count rows. */
const cg_alg_info_t *cg_alg_table(int *count);
/* coll's row of alg; NULL when alg is not one of coll's algorithms (AUTO has no row). */
const cg_alg_info_t *cg_alg_info(cg_coll_t coll, cg_alg_t alg);

/* Rules file (cg_rules.c): overrides by collective, size range and node range. */
typedef struct {
    int      coll;       /* cg_coll_t, -1: any */
    size_t   min_bytes, max_bytes;
    int      min_nodes, max_nodes;
    cg_alg_t alg;        /* CG_ALG_AUTO: leave it to the model */
    int      line;
} cg_rule_t;
typedef struct cg_rules cg_rules_t;

cg_status_t      cg_rules_load(const char *path, cg_rules_t **rules, char *error, size_t error_len);
void             cg_rules_free(cg_rules_t *rules);
int              cg_rules_count(const cg_rules_t *rules);
/* What the rules decide, as a number (0: NULL): compared between ranks, which must follow
 * the same rules (a file missing or different on some node) */
uint64_t         cg_rules_digest(const cg_rules_t *rules);
const cg_rule_t *cg_rules_get(const cg_rules_t *rules, int i);
int              cg_rule_matches(const cg_rule_t *rule, cg_coll_t coll, size_t bytes, int nodes);

typedef struct {
    int               forced[CG_COLL_COUNT]; /* CG_ALG_AUTO or the algorithm a user forced */
    size_t            one_shot_max;          /* allreduce: largest message for one-shot (bytes) */
    const cg_rules_t *rules;                 /* NULL: none */
    double            net_alpha_us;          /* 0: measured (several nodes), else the default */
    double            copy_alpha_us;         /* 0: measured (several nodes), else the default */
    double            net_bw_gbs;            /* 0: the model's default */
    size_t            hier_chunk_bytes;      /* hier_ring pipeline chunk; 0: the model's */
    int               explain;               /* 1: plan->reason says why (tools, verbose);
                                              * 0: no text is formatted (calls not logged) */
} cg_planner_config_t;

void cg_planner_config_default(cg_planner_config_t *config);

/* Shape of a communicator, identical on every rank once its context exists. */
typedef struct {
    int size;        /* ranks */
    int num_nodes;   /* nodes (real, or virtual with coll_gpu_node_size) */
    int local_size;  /* ranks on this rank's node */
    int max_local;   /* most ranks on one node */
    int intra_ok;    /* the local group is connected (IPC, control pages) */
    int inter_ok;    /* the inter-node transport is up (UCX) */
    int inter_staged;/* device data crosses the network through host memory */
    int uniform;     /* every node has the same number of ranks */
    int lanes;       /* inter-node lanes (network phases of chunks run concurrently) */
    size_t ll_capacity; /* bytes one rank may send a peer in an LL call (0: no LL) */
    cg_topo_class_t topo_class; /* how the GPUs of this node are connected */
    double copy_us;     /* several nodes: measured copy to host and back (0: not measured) */
    double under_us;    /* and one small collective underneath (0: not measured) */
    int    rules_differ; /* the ranks' rules (cg_comm_config_t rules_digest) differ: the
                            planner follows none */
    int    time_sliced;  /* ranks of some node share a GPU without MPS: they take turns on
                            it (any node's, so that every rank plans alike) */
} cg_shape_t;

/* Cost model: defaults for a node class; predicted seconds of alg for a call of bytes
 * (nccl-tests size: the whole message, gathered or scattered) on nodes x local ranks, from
 * the registry row's cost function. */
void   cg_cost_defaults(cg_cost_params_t *params, cg_topo_class_t cls, int local_size);
double cg_cost_predict(const cg_cost_params_t *params, cg_alg_t alg, cg_coll_t coll, double bytes,
                       int nodes, int local);
/* The same; also the chunk size it assumes (0: one chunk, no overlap). */
double cg_cost_predict_chunked(const cg_cost_params_t *params, cg_alg_t alg, cg_coll_t coll,
                               double bytes, int nodes, int local, size_t *chunk_bytes);
double cg_cost_busbw_factor(cg_coll_t coll, int nranks);
/* Does hierarchical alg (hier_rd, hier_leader allreduce; hier_tree bcast) run its node's
 * phase as one LL call: the message fits the inbox (params->ll_capacity) and LL is predicted
 * cheaper than the copy algorithm? The planner's node_ll and the model's cost of that phase. */
int    cg_cost_node_ll(const cg_cost_params_t *params, cg_alg_t alg, cg_coll_t coll, double bytes,
                       int local);


/*
 * Before a context exists: can any fast path take this call? Decided from what every rank
 * knows identically (no buffers, no topology). When not, plan says staged and why.
 */
int  cg_plan_prefilter(const cg_planner_config_t *config, const cg_call_t *call, cg_plan_t *plan);
/* Across nodes, before the ranks agree on their memory kinds: is the staged path (host
 * copies and the collective underneath, which a rank with host buffers pairs with by
 * calling that collective itself) predicted faster than the best hierarchical algorithm
 * plus the agreement it needs? Decided only from what every rank knows alike (the shape's
 * sizes and measurements, the call, the configuration; not the ranks' health), so that
 * every rank skips the agreement together. Never when an algorithm is forced or a rule
 * other than staged matches. */
int  cg_plan_staged_first(const cg_planner_config_t *config, const cg_call_t *call,
                          const cg_shape_t *shape);
/* With the communicator's shape: the algorithm that runs, and why. */
void cg_plan_select(const cg_planner_config_t *config, const cg_call_t *call,
                    const cg_shape_t *shape, cg_plan_t *plan);

/* The last plan of one collective: a call with the same inputs (configuration, shape, and
 * the call but its buffers) gets it without running the model again. */
typedef struct {
    int                 valid;
    cg_planner_config_t config;
    cg_shape_t          shape;
    cg_call_t           call; /* buffers and counts not compared */
    size_t              largest_block; /* reduce_scatter: all the plan reads of counts */
    cg_plan_t           plan;
} cg_plan_memo_t;

/* cg_plan_select through memo. Explained plans (verbose) are planned afresh. */
void cg_plan_select_memo(cg_plan_memo_t *memo, const cg_planner_config_t *config,
                         const cg_call_t *call, const cg_shape_t *shape, cg_plan_t *plan);

#define CG_MAX_LANES 8

/* ---- per-communicator context -------------------------------------------------------- */

/* Host-memory exchange over the communicator (the layer underneath's allgather). */
typedef struct {
    cg_status_t (*allgather)(void *ctx, const void *send, void *recv, size_t bytes);
    void *ctx;
} cg_oob_t;

/* Barriers inside a node (coll_gpu_intra_sync): host waits for flags in shared memory
 * (safe when ranks share a GPU without MPS), device stream memory operations. */
typedef enum { CG_SYNC_AUTO = 0, CG_SYNC_HOST = 1, CG_SYNC_DEVICE = 2 } cg_sync_mode_t;
/* How one source is copied to several destinations (coll_gpu_copy_method). */
typedef enum { CG_COPY_AUTO = 0, CG_COPY_ENGINE = 1, CG_COPY_KERNEL = 2 } cg_copy_method_t;
/* Device data between nodes (coll_gpu_ucx_staging): straight to UCX when it moves device
 * memory, else through page-locked host chunks; or always / never through them. */
typedef enum { CG_STAGING_AUTO = 0, CG_STAGING_ALWAYS = 1, CG_STAGING_NEVER = 2 } cg_staging_mode_t;

typedef struct {
    int    rank;
    int    size;
    int    node_size;     /* 0: group by host name; N > 0: N consecutive ranks per node;
                             N < 0: -N nodes, ranks dealt to them in turn */
    size_t scratch_bytes; /* per rank, device memory shared with the local peers */
    cg_sync_mode_t   sync;
    cg_copy_method_t copy;
    double timeout_s;     /* 0: wait for ever (dead peers are still detected) */
    const char *topo_file; /* hwloc XML instead of the live machine ("" or NULL: live) */
    int         sim_gpu;   /* testing, a topo_file on the host layer: the file's GPU this
                              rank plays, modulo their number (its node-local rank in the
                              job, so the same in every communicator; below 0: its place
                              in the communicator's node) */
    unsigned    comm_id;   /* identifies the communicator in the inter-node tags */
    int         thread_multi;
    size_t      one_shot_max;  /* hierarchical algorithms: small messages (bytes) */
    size_t      chunk_bytes;   /* inter-node staging chunk */
    int         depth;         /* inter-node staging chunks in flight */
    cg_staging_mode_t staging;
    int         lanes;         /* inter-node lanes (helper threads with a UCX worker each)
                                  that run the network phases of chunks concurrently */
    int         keep_max;      /* contexts of freed communicators kept for reuse (0: none) */
    uint64_t    rules_digest;  /* this rank's rules (cg_rules_digest): compared between ranks
                                  (cg_shape_t rules_differ) */
    uint32_t    ll_flag_period; /* testing (coll_gpu_debug_ll_flag_period): LL calls after
                                   which the flags repeat; 0: CG_INTRA_LL_PERIOD */
    uint64_t    params_digest; /* the settings every rank must make alike, as one number:
                                  compared at setup, before any rank uses a peer's memory */
} cg_comm_config_t;

/* Collective over the communicator (through oob, which the context keeps: its ctx must
 * live as long as the context). On failure every rank gets an error. */
cg_status_t cg_comm_create(cg_dev_t *dev, const cg_oob_t *oob, const cg_comm_config_t *config,
                           cg_comm_t **comm_out);
void        cg_comm_destroy(cg_comm_t *comm);
/* Kept contexts (coll/cg_comm_keep.c). acquire: collective like create; with
 * config->keep_max > 0 it first takes a kept context that every rank holds (one exchange),
 * else creates one. release: the communicator is gone: keep its context for a later
 * communicator over the same processes in the same order (at most keep_max, the oldest
 * destroyed), or destroy it. drain: destroy every kept context (before
 * cg_comm_process_cleanup). */
cg_status_t cg_comm_acquire(cg_dev_t *dev, const cg_oob_t *oob, const cg_comm_config_t *config,
                            cg_comm_t **comm_out);
void        cg_comm_release(cg_comm_t *comm, int keep_max);
void        cg_comm_keep_drain(void);
void        cg_comm_shape(const cg_comm_t *comm, cg_shape_t *shape);
/* At the end of the process (after every context is gone): UCX and the topology. */
void        cg_comm_process_cleanup(void);
/* A fast path failed on this communicator: it must not be used again. */
int         cg_comm_failed(const cg_comm_t *comm);
/* This rank's LL calls are launched, never run by a server that stays (coll_gpu_ll_persist):
 * it shares its GPU with another rank (here or in a communicator before), no MPS seen. */
int         cg_comm_ll_launch_only(const cg_comm_t *comm);

/* ---- the announcement board of a node (coll/intra/intra_board.c) ----------------------
 * How each rank of a communicator's node passes its buffers in every call, in shared
 * memory: ranks agree on the memory kinds of a call without an MPI call. kinds is the
 * caller's bit mask, CG_BOARD_KIND_HOST (1) meaning host buffers; seq counts the calls on
 * the communicator from 1, the same on every rank. */
#define CG_BOARD_KIND_HOST 1

/* An LL call run before the ranks agreed on the call's memory kinds (the agreement rides
 * on the call's own lines): every rank of a one-node communicator announced its kinds for
 * call seq on the board; those with exactly fast_kinds run the call at once, the others
 * go to the staged path or the layer underneath. A rank on the call watches the board
 * while it waits for lines that do not come (cg_board_watch). */
struct cg_ll_watch {
    const cg_board_t *board;
    uint64_t          seq;
    int               fast_kinds;
};

/* Collective over the communicator (two exchanges through oob); node_size as in
 * cg_comm_config_t. Every rank gets an error when one fails. */
cg_status_t cg_board_create(const cg_oob_t *oob, int rank, int size, int node_size,
                            cg_board_t **board);
void        cg_board_destroy(cg_board_t *board);
/* Is every rank of the communicator on this node (then the board sees them all)? */
int         cg_board_single_node(const cg_board_t *board);
/* This rank's kinds for call seq (one store; a rank 64 calls ahead of a peer on the board
 * first waits for it, so that no slot a peer may still read is overwritten: bounded by
 * timeout_s when > 0, CG_ERR_TIMEOUT and nothing announced). */
cg_status_t cg_board_announce(cg_board_t *board, uint64_t seq, int kinds, double timeout_s);
/* The OR of every local rank's kinds at seq, waiting (bounded by timeout_s when > 0; a
 * peer that died is an error). */
cg_status_t cg_board_collect(const cg_board_t *board, uint64_t seq, double timeout_s,
                             int *all_kinds);
/* For a rank on an LL call run before the agreement: 1 when a local rank announced other
 * kinds than watch->fast_kinds for the call (it is not on it: the call cannot complete);
 * else 0, with *later the mask of board ranks (communicator ranks) already past the call:
 * such a rank was on it exactly when its lines for it came (a rank finishes an LL call only
 * after every line of every rank was written). */
int         cg_board_watch(const cg_board_t *board, const cg_ll_watch_t *watch, uint64_t *later);
/* Board rank i's kinds at seq: 1 and *kinds when known, 0 while it has not announced seq
 * yet. A later seq in the slot means it was not on a fast path at seq: host memory. */
int         cg_board_peer(const cg_board_t *board, int i, uint64_t seq, int *kinds);

/* Run a planned fast path: one indirect call through the plan's registry row.
 * CG_ERR_PEER_NOT_FAST (a call with a watch only): a local rank was not on the call; take
 * the staged path, the context stays usable. */
cg_status_t cg_comm_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);
/* A call announced on the board of a one-node context: every rank counts it, whatever it
 * runs (the flags of LL calls run before the agreement; cg_ll_watch_t). */
void        cg_comm_ll_tick(cg_comm_t *comm);
/* Can plan run before the agreement on the call's memory kinds, the agreement riding on
 * its first synchronisation (call->watch set: LL lines; or the first barrier, on the host:
 * a publish of zero-copy buffers, or any barrier of a host-synchronised node; on a
 * device-synchronised node the first device barrier meets on the host first)? Every
 * one-node plan can; the same answer on every rank of the node. */
int         cg_comm_agrees_in_band(const cg_comm_t *comm, const cg_plan_t *plan, cg_coll_t coll);

#ifdef __cplusplus
}
#endif
#endif /* CG_COLL_H */
