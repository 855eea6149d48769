/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* The per-communicator context, for the files of coll/ (not a public interface). */
#ifndef CG_COMM_INT_H
#define CG_COMM_INT_H

#include "coll/cg_coll.h"
#include "ucx_glue/cg_ucx.h"
#include "coll/intra/intra.h"

typedef struct cg_hier_pipe cg_hier_pipe_t;

struct cg_comm {
    cg_dev_t         *dev;
    cg_comm_config_t  config;
    int               num_nodes;
    int               my_node;
    int               max_local;
    int               uniform;      /* every node has the same number of ranks */
    int              *node_of;      /* node of every rank */
    int              *node_start;   /* node n's ranks: members[node_start[n] .. + node_size[n]] */
    int              *node_size;
    int              *members;      /* comm ranks grouped by node, in rank order */
    int               local_size;
    int               local_rank;
    cg_intra_t       *intra;        /* NULL with one rank on the node */
    cg_inter_t       *inter;        /* NULL on one node, or without UCX; lane 0 */
    cg_inter_t       *lane[CG_MAX_LANES]; /* inter-node lanes: own UCX worker each */
    int               num_lanes;    /* the same on every rank */
    int               tag_claimed;  /* holds config.comm_id's tag id (cg_inter_tag_claim) */
    uint64_t          hier_calls;   /* hierarchical calls run (the same on every rank): the
                                       call an abort names (cg_inter_set_call) */
    cg_topo_summary_t topo;         /* this node's, as its first rank computed it */
    cg_topo_class_t   model_class;  /* the slowest node's class (for the planner's model) */
    int               model_staged; /* some rank stages its network data through the host */
    int               rules_differ; /* the ranks' rules differ (cg_shape_t rules_differ) */
    int               time_sliced;  /* some node's ranks take turns on their GPU (cg_shape_t) */
    /* several nodes, measured at setup (cg_comm_measure.c), the slowest rank's; 0: not */
    double            copy_us;      /* a small copy device <-> host, synchronised */
    double            under_us;     /* one small collective underneath */
    void             *work;         /* device memory for the hierarchical algorithms */
    size_t            work_bytes;
    void             *result;       /* device memory: padded types' results (cg_comm_run.c) */
    size_t            result_bytes;
    cg_hier_pipe_t   *pipe;         /* lane threads of the overlapped phases, NULL: none yet */
    int               pipe_state;   /* 0 not tried, 1 threads on every rank, -1 serial */
    cg_oob_t          oob;          /* the communicator's host exchange, for agreements */
    int              *votes;        /* room for one int per rank (agreements) */
    int               failed;
    uint64_t          uid[2];       /* the same on every rank: rank 0's process id and serial */
};


/* Its tag id given back (the communicator freed: its context destroyed or kept). */
static inline void cg_comm_unclaim(cg_comm_t *comm)
{
    if (comm->tag_claimed) {
        cg_inter_tag_release(comm->config.comm_id);
        comm->tag_claimed = 0;
    }
}

/* Comm rank of node n's local rank l (wrapped around the node's size). */
static inline int cg_comm_member(const cg_comm_t *comm, int n, int l)
{
    return comm->members[comm->node_start[n] + l % comm->node_size[n]];
}

cg_status_t cg_comm_work(cg_comm_t *comm, size_t bytes, void **work);
/* Worker addresses (cg_comm_addresses.c): this rank's longest among its first lanes (0:
 * none); then, collective, every rank's for each of the context's lanes, in slots of the
 * longest any rank has (the same on every rank); *ok 0 where some rank had no memory. */
#define CG_UCX_ADDR_MAX 4096
uint32_t    cg_comm_addr_bytes(const cg_comm_t *comm, int lanes);
cg_status_t cg_comm_exchange_addresses(cg_comm_t *comm, size_t longest, int *ok);
/* Collective: *ok becomes 1 where every rank's *ok was 1 (an exchange that failed: 0; its
 * status is returned). Inline: the context's setup and the hierarchical pipeline vote. */
static inline cg_status_t cg_comm_vote(cg_comm_t *comm, int *ok)
{
    cg_status_t status = comm->oob.allgather(comm->oob.ctx, ok, comm->votes, sizeof(int));

    for (int r = 0; status == CG_OK && r < comm->config.size; r++) {
        *ok &= comm->votes[r];
    }
    *ok &= (status == CG_OK);
    return status;
}
/* Device memory for the result of a call whose user buffer must not be written whole (the
 * padding of pair types), grown on demand; distinct from the work memory. */
cg_status_t cg_comm_result(cg_comm_t *comm, size_t bytes, void **result);
/* At setup, once every rank is connected, across nodes: measure what the planner's model
 * needs (the staged path's copies, one small collective underneath). Every rank makes the
 * same exchanges; the results are the slowest rank's, the same everywhere. all: room for
 * CG_COMM_MEASURES doubles per rank; device: 8 bytes of device memory (NULL: none, the
 * copy is not measured). */
#define CG_COMM_MEASURES 2
cg_status_t cg_comm_measure(cg_comm_t *comm, const cg_oob_t *oob, double *all, void *device);

/* The cost functions of the registry's rows (cg_cost.c): cg_alg_cost_fn_t. */
#define CG_COST_FN(_name)                                                                  \
    double cg_cost_##_name(const cg_cost_params_t *p, cg_coll_t coll, double bytes, int nodes, \
                           int local, size_t *chunk_bytes)
CG_COST_FN(staged);
CG_COST_FN(one_shot);
CG_COST_FN(two_shot);
CG_COST_FN(ring);
CG_COST_FN(direct);
CG_COST_FN(scatter_allgather);
CG_COST_FN(hier_ring);
CG_COST_FN(hier_rd);
CG_COST_FN(hier_leader);
CG_COST_FN(hier_tree);
CG_COST_FN(ll);


#endif
