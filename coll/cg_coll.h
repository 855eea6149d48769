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
    CG_ALG_COUNT
} cg_alg_t;

/* Does alg run across nodes (an intra-node and an inter-node phase)? */
static inline int cg_alg_is_hier(cg_alg_t alg)
{
    return alg >= CG_ALG_HIER_RING && alg <= CG_ALG_HIER_TREE;
}

const char *cg_coll_name(cg_coll_t coll);
const char *cg_alg_name(cg_alg_t alg);
/* Is alg one of coll's algorithms (AUTO included)? */
int cg_alg_valid(cg_coll_t coll, cg_alg_t alg);
/* The algorithms of coll, AUTO first, terminated by -1. */
const cg_alg_t *cg_coll_algs(cg_coll_t coll);

/* What the planner knows of a call. Everything here is identical on every rank. */
typedef struct {
    cg_coll_t  coll;
    size_t     count;  /* elements: allreduce/bcast count; allgather per-rank count;
                          reduce_scatter total count */
    size_t     bytes;  /* payload bytes per rank of the same extent */
    cg_dtype_t dtype;  /* CG_DT_NONE: not reducible on the device */
    cg_op_t    op;     /* CG_OP_NONE: not a predefined op */
    int        comm_size;
} cg_call_t;

typedef struct {
    cg_alg_t alg;
    size_t   chunk_bytes;
    char     reason[160];
} cg_plan_t;

/* Alpha-beta cost model (cg_cost.c). */
typedef struct {
    double intra_alpha_us; /* one synchronised step inside a node */
    double intra_bw_gbs;   /* per GPU inside a node */
    double net_alpha_us;   /* one message between nodes */
    double net_bw_gbs;     /* per NIC (per rail), per direction */
    double stage_bw_gbs;   /* device <-> host staging for the network; 0: not needed */
    int    lanes;          /* network phases of chunks in flight at once (>= 1) */
    int    shared_gpu;     /* one memory for the node's ranks (a shared GPU, the host) */
} cg_cost_params_t;

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
const cg_rule_t *cg_rules_get(const cg_rules_t *rules, int i);
int              cg_rule_matches(const cg_rule_t *rule, cg_coll_t coll, size_t bytes, int nodes);

typedef struct {
    int               forced[CG_COLL_COUNT]; /* CG_ALG_AUTO or the algorithm a user forced */
    size_t            one_shot_max;          /* allreduce: largest message for one-shot (bytes) */
    const cg_rules_t *rules;                 /* NULL: none */
    double            net_alpha_us;          /* 0: the model's default */
    double            net_bw_gbs;            /* 0: the model's default */
    size_t            hier_chunk_bytes;      /* hier_ring pipeline chunk; 0: the model's */
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
    cg_topo_class_t topo_class; /* how the GPUs of this node are connected */
} cg_shape_t;

/* Cost model: defaults for a node class; predicted seconds of alg for a call of bytes
 * (nccl-tests size: the whole message, gathered or scattered) on nodes x local ranks. */
void   cg_cost_defaults(cg_cost_params_t *params, cg_topo_class_t cls, int local_size);
double cg_cost_predict(const cg_cost_params_t *params, cg_alg_t alg, cg_coll_t coll, double bytes,
                       int nodes, int local);
/* The same; for hier_ring also the chunk size it assumes (0: one chunk, no overlap). */
double cg_cost_predict_chunked(const cg_cost_params_t *params, cg_alg_t alg, cg_coll_t coll,
                               double bytes, int nodes, int local, size_t *chunk_bytes);
double cg_cost_busbw_factor(cg_coll_t coll, int nranks);

/*
 * Before a context exists: can any fast path take this call? Decided from what every rank
 * knows identically (no buffers, no topology). When not, plan says staged and why.
 */
int  cg_plan_prefilter(const cg_planner_config_t *config, const cg_call_t *call, cg_plan_t *plan);
/* With the communicator's shape: the algorithm that runs, and why. */
void cg_plan_select(const cg_planner_config_t *config, const cg_call_t *call,
                    const cg_shape_t *shape, cg_plan_t *plan);

#define CG_MAX_LANES 8

/* ---- per-communicator context -------------------------------------------------------- */
typedef struct cg_comm cg_comm_t;

/* Host-memory exchange over the communicator (the layer underneath's allgather). */
typedef struct {
    cg_status_t (*allgather)(void *ctx, const void *send, void *recv, size_t bytes);
    void *ctx;
} cg_oob_t;

typedef struct {
    int    rank;
    int    size;
    int    node_size;     /* 0: group by host name; N > 0: N consecutive ranks per node;
                             N < 0: -N nodes, ranks dealt to them in turn */
    size_t scratch_bytes; /* per rank, device memory shared with the local peers */
    int    sync;          /* 0 auto, 1 host, 2 device barriers (cg_sync_mode_t) */
    int    copy;          /* 0 auto, 1 copy engine, 2 kernel (cg_copy_method_t) */
    double timeout_s;     /* 0: wait for ever (dead peers are still detected) */
    const char *topo_file; /* hwloc XML instead of the live machine ("" or NULL: live) */
    unsigned    comm_id;   /* identifies the communicator in the inter-node tags */
    int         thread_multi;
    size_t      one_shot_max;  /* hierarchical algorithms: small messages (bytes) */
    size_t      chunk_bytes;   /* inter-node staging chunk */
    int         depth;         /* inter-node staging chunks in flight */
    int         staging;       /* 0 auto, 1 always, 2 never */
    int         lanes;         /* inter-node lanes (helper threads with a UCX worker each)
                                  that run the network phases of chunks concurrently */
} cg_comm_config_t;

/* Collective over the communicator (through oob, which the context keeps: its ctx must
 * live as long as the context). On failure every rank gets an error. */
cg_status_t cg_comm_create(cg_dev_t *dev, const cg_oob_t *oob, const cg_comm_config_t *config,
                           cg_comm_t **comm_out);
void        cg_comm_destroy(cg_comm_t *comm);
void        cg_comm_shape(const cg_comm_t *comm, cg_shape_t *shape);
/* This node's topology summary (class, ring order, rails), the same on its ranks. */
const cg_topo_summary_t *cg_comm_topo(const cg_comm_t *comm);
/* The process's topology (loaded once; NULL when it cannot be read). */
const cg_topo_t *cg_topo_process(const char *topo_file);
/* At the end of the process (after every context is gone): UCX and the topology. */
void        cg_comm_process_cleanup(void);
/* A fast path failed on this communicator: it must not be used again. */
int         cg_comm_failed(const cg_comm_t *comm);

/* Run a planned fast path. sbuf NULL: in place. Reductions take predefined types. */
cg_status_t cg_comm_allreduce(cg_comm_t *comm, const cg_plan_t *plan, const void *sbuf,
                              void *rbuf, size_t count, cg_dtype_t dtype, cg_op_t op);
cg_status_t cg_comm_reduce_scatter(cg_comm_t *comm, const cg_plan_t *plan, const void *sbuf,
                                   void *rbuf, const size_t *counts, cg_dtype_t dtype,
                                   cg_op_t op);
cg_status_t cg_comm_allgather(cg_comm_t *comm, const cg_plan_t *plan, const void *sbuf,
                              void *rbuf, size_t bytes);
cg_status_t cg_comm_bcast(cg_comm_t *comm, const cg_plan_t *plan, void *buf, size_t bytes,
                          int root);

#ifdef __cplusplus
}
#endif
#endif /* CG_COLL_H */
