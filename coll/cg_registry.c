/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The algorithm registry: one row per collective and algorithm (see cg_coll.h). The only
 * place that lists what exists; everything else reads it.
 */
#include "coll/allgather/allgather.h"
#include "coll/allreduce/allreduce.h"
#include "coll/bcast/bcast.h"
#include "coll/cg_comm_int.h"
#include "coll/reduce_scatter/reduce_scatter.h"

#include <pthread.h>
#include <stddef.h>

#define ONE_NODE CG_NEEDS_ONE_NODE
#define NODES    CG_NEEDS_NODES
#define UNIFORM  CG_NEEDS_UNIFORM
#define LL_FIT   CG_NEEDS_LL_FIT

#define LL_ROW(_coll, _run, _summary)                                                       \
    {_coll, CG_ALG_LL, "ll", CG_SCOPE_INTRA, ONE_NODE | LL_FIT, cg_cost_ll, _run, _summary,     \
     CG_TRAIT_STREAM_ORDERED}

#define STAGED_ROW(_coll)                                                                   \
    {_coll, CG_ALG_STAGED, "staged", CG_SCOPE_STAGED, 0, cg_cost_staged, NULL,               \
     "copy to host memory, the collective of the layer underneath, copy back (any input)"}

static const cg_alg_info_t cg_alg_rows[] = {
    /* ---- allreduce ------------------------------------------------------------------- */
    STAGED_ROW(CG_COLL_ALLREDUCE),
    LL_ROW(CG_COLL_ALLREDUCE, cg_allreduce_ll_run,
           "every input to every peer in one device operation, flags in the data (small)"),
    {CG_COLL_ALLREDUCE, CG_ALG_ONE_SHOT, "one_shot", CG_SCOPE_INTRA, ONE_NODE, cg_cost_one_shot,
     cg_allreduce_one_shot_run,
     "every rank reduces every peer's input (one step: small messages)", CG_TRAIT_STREAM_ORDERED},
    {CG_COLL_ALLREDUCE, CG_ALG_TWO_SHOT, "two_shot", CG_SCOPE_INTRA, ONE_NODE, cg_cost_two_shot,
     cg_allreduce_two_shot_run,
     "rank r reduces block r from every input and writes it into every output (large)"},
    {CG_COLL_ALLREDUCE, CG_ALG_RING, "ring", CG_SCOPE_INTRA, ONE_NODE, cg_cost_ring,
     cg_allreduce_ring_run, "ring along the node's links (GPUs linked in pairs)"},
    {CG_COLL_ALLREDUCE, CG_ALG_HIER_RING, "hier_ring", CG_SCOPE_HIER, NODES | UNIFORM,
     cg_cost_hier_ring, cg_allreduce_hier_ring_run,
     "intra reduce-scatter, ring allreduce of 1/L on every rail, intra allgather, "
     "overlapped chunk by chunk (large)", CG_TRAIT_PIPELINED},
    {CG_COLL_ALLREDUCE, CG_ALG_HIER_RD, "hier_rd", CG_SCOPE_HIER, NODES | UNIFORM,
     cg_cost_hier_rd, cg_allreduce_hier_rd_run,
     "intra allreduce, recursive doubling on every rail (small)"},
    {CG_COLL_ALLREDUCE, CG_ALG_HIER_LEADER, "hier_leader", CG_SCOPE_HIER, NODES,
     cg_cost_hier_leader, cg_allreduce_hier_leader_run,
     "intra allreduce, node leaders exchange, intra bcast (any layout)"},
    /* ---- bcast ----------------------------------------------------------------------- */
    STAGED_ROW(CG_COLL_BCAST),
    LL_ROW(CG_COLL_BCAST, cg_bcast_ll_run,
           "the root's buffer to every peer in one device operation, flags in the data (small)"),
    {CG_COLL_BCAST, CG_ALG_DIRECT, "direct", CG_SCOPE_INTRA, ONE_NODE, cg_cost_direct,
     cg_bcast_direct_run, "the root writes its buffer into every peer's buffer"},
    {CG_COLL_BCAST, CG_ALG_SCATTER_ALLGATHER, "scatter_allgather", CG_SCOPE_INTRA, ONE_NODE,
     cg_cost_scatter_allgather, cg_bcast_scatter_allgather_run,
     "the root hands rank r part r, the ranks share the parts (large, GPUs with own links)"},
    {CG_COLL_BCAST, CG_ALG_HIER_RING, "hier_ring", CG_SCOPE_HIER, NODES | UNIFORM,
     cg_cost_hier_ring, cg_bcast_hier_ring_run,
     "the root's node scatters each chunk to its rails, every rail relays its part down a "
     "chain of nodes, every node shares the parts (large)", CG_TRAIT_PIPELINED},
    {CG_COLL_BCAST, CG_ALG_HIER_TREE, "hier_tree", CG_SCOPE_HIER, NODES, cg_cost_hier_tree,
     cg_bcast_hier_tree_run, "binomial tree between nodes, then intra bcast (any layout)"},
    /* ---- allgather ------------------------------------------------------------------- */
    STAGED_ROW(CG_COLL_ALLGATHER),
    LL_ROW(CG_COLL_ALLGATHER, cg_allgather_ll_run,
           "every block to every peer in one device operation, flags in the data (small)"),
    {CG_COLL_ALLGATHER, CG_ALG_DIRECT, "direct", CG_SCOPE_INTRA, ONE_NODE, cg_cost_direct,
     cg_allgather_direct_run, "each rank writes its block into every peer's output"},
    {CG_COLL_ALLGATHER, CG_ALG_HIER_RING, "hier_ring", CG_SCOPE_HIER, NODES | UNIFORM,
     cg_cost_hier_ring, cg_allgather_hier_ring_run,
     "ring on every rail, intra allgather of the rail's blocks, overlapped chunk by chunk",
     CG_TRAIT_PIPELINED},
    {CG_COLL_ALLGATHER, CG_ALG_HIER_LEADER, "hier_leader", CG_SCOPE_HIER, NODES,
     cg_cost_hier_leader, cg_allgather_hier_leader_run,
     "the node's blocks to its leader, ring between leaders, bcast inside (any layout)"},
    /* ---- reduce_scatter and reduce_scatter_block ------------------------------------- */
    STAGED_ROW(CG_COLL_REDUCE_SCATTER),
    LL_ROW(CG_COLL_REDUCE_SCATTER, cg_reduce_scatter_ll_run,
           "block p of every input to rank p in one device operation, flags in the data "
           "(small)"),
    {CG_COLL_REDUCE_SCATTER, CG_ALG_DIRECT, "direct", CG_SCOPE_INTRA, ONE_NODE, cg_cost_direct,
     cg_reduce_scatter_direct_run, "rank r reduces its block from every peer's input"},
    {CG_COLL_REDUCE_SCATTER, CG_ALG_HIER_RING, "hier_ring", CG_SCOPE_HIER, NODES | UNIFORM,
     cg_cost_hier_ring, cg_reduce_scatter_hier_ring_run,
     "intra reduce-scatter of every rail's blocks, ring on every rail, overlapped chunk by "
     "chunk", CG_TRAIT_PIPELINED},
    {CG_COLL_REDUCE_SCATTER, CG_ALG_HIER_LEADER, "hier_leader", CG_SCOPE_HIER, NODES,
     cg_cost_hier_leader, cg_reduce_scatter_hier_leader_run,
     "intra reduce to the leader, ring between leaders, intra scatter (any layout)"},
    STAGED_ROW(CG_COLL_REDUCE_SCATTER_BLOCK),
    LL_ROW(CG_COLL_REDUCE_SCATTER_BLOCK, cg_reduce_scatter_ll_run,
           "block p of every input to rank p in one device operation, flags in the data "
           "(small)"),
    {CG_COLL_REDUCE_SCATTER_BLOCK, CG_ALG_DIRECT, "direct", CG_SCOPE_INTRA, ONE_NODE,
     cg_cost_direct, cg_reduce_scatter_direct_run,
     "rank r reduces its block from every peer's input"},
    {CG_COLL_REDUCE_SCATTER_BLOCK, CG_ALG_HIER_RING, "hier_ring", CG_SCOPE_HIER,
     NODES | UNIFORM, cg_cost_hier_ring, cg_reduce_scatter_hier_ring_run,
     "intra reduce-scatter of every rail's blocks, ring on every rail, overlapped chunk by "
     "chunk", CG_TRAIT_PIPELINED},
    {CG_COLL_REDUCE_SCATTER_BLOCK, CG_ALG_HIER_LEADER, "hier_leader", CG_SCOPE_HIER, NODES,
     cg_cost_hier_leader, cg_reduce_scatter_hier_leader_run,
     "intra reduce to the leader, ring between leaders, intra scatter (any layout)"},
};

static const char *const cg_coll_names[CG_COLL_COUNT] = {
    [CG_COLL_ALLREDUCE]            = "allreduce",
    [CG_COLL_BCAST]                = "bcast",
    [CG_COLL_ALLGATHER]            = "allgather",
    [CG_COLL_REDUCE_SCATTER]       = "reduce_scatter",
    [CG_COLL_REDUCE_SCATTER_BLOCK] = "reduce_scatter_block",
};

const cg_alg_info_t *cg_alg_table(int *count)
{
    *count = (int)CG_ARRAY_SIZE(cg_alg_rows);
    return cg_alg_rows;
}

/* Row of (coll, alg) + 1, 0: none; built at the first lookup (every call looks up its row:
 * one load instead of a walk of the table). */
static unsigned char cg_alg_index[CG_COLL_COUNT][CG_ALG_COUNT];
static pthread_once_t cg_alg_index_once = PTHREAD_ONCE_INIT;

static void cg_alg_index_build(void)
{
    for (size_t i = 0; i < CG_ARRAY_SIZE(cg_alg_rows); i++) {
        cg_alg_index[cg_alg_rows[i].coll][cg_alg_rows[i].alg] = (unsigned char)(i + 1);
    }
}

const cg_alg_info_t *cg_alg_info(cg_coll_t coll, cg_alg_t alg)
{
    if (coll < 0 || coll >= CG_COLL_COUNT || alg < 0 || alg >= CG_ALG_COUNT) {
        return NULL;
    }
    pthread_once(&cg_alg_index_once, cg_alg_index_build);
    return cg_alg_index[coll][alg] ? &cg_alg_rows[cg_alg_index[coll][alg] - 1] : NULL;
}

const char *cg_coll_name(cg_coll_t coll)
{
    return (coll >= 0 && coll < CG_COLL_COUNT) ? cg_coll_names[coll] : "unknown";
}

const char *cg_alg_name(cg_alg_t alg)
{
    if (alg == CG_ALG_AUTO) {
        return "auto";
    }
    for (size_t i = 0; i < CG_ARRAY_SIZE(cg_alg_rows); i++) {
        if (cg_alg_rows[i].alg == alg) {
            return cg_alg_rows[i].name;
        }
    }
    return "unknown";
}

int cg_alg_valid(cg_coll_t coll, cg_alg_t alg)
{
    return (coll >= 0 && coll < CG_COLL_COUNT) && (alg == CG_ALG_AUTO || cg_alg_info(coll, alg));
}

/* The cost model's prediction for an algorithm: its row's cost function. */
double cg_cost_predict_chunked(const cg_cost_params_t *p, cg_alg_t alg, cg_coll_t coll, double S,
                               int nodes, int local, size_t *chunk_bytes)
{
    const cg_alg_info_t *info = cg_alg_info(coll, alg);

    if (chunk_bytes != NULL) {
        *chunk_bytes = 0;
    }
    if (info == NULL || info->cost == NULL) {
        return 0.0;
    }
    return info->cost(p, coll, S, nodes, local, chunk_bytes);
}

double cg_cost_predict(const cg_cost_params_t *p, cg_alg_t alg, cg_coll_t coll, double S,
                       int nodes, int local)
{
    return cg_cost_predict_chunked(p, alg, coll, S, nodes, local, NULL);
}
