/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Hierarchical collectives across nodes: an intra-node phase on each node's local group and
 * an inter-node phase over UCX between one rank per node. Rails: the ranks with the same
 * local index on every node form a group, so every GPU drives its own NIC.
 */
#ifndef CG_HIER_H
#define CG_HIER_H

#include "coll/allgather/allgather.h"
#include "coll/cg_comm_int.h"

#define CG_HIER_MAX_CHUNKS 1024

/* Phases of a hierarchical collective, overlapped chunk by chunk (hier_pipe.c): pre and
 * post are the intra-node phases of chunk i, run by the calling thread in the same order on
 * every rank of a node (status: the rank's status so far, carried through the phases'
 * barriers); mid is the inter-node phase, run by a lane thread on its lane's transport while
 * the caller works on other chunks. Any of the three may be NULL. Chunks between their pre
 * and their post use work slot i % cg_hier_pipe_window(). */
typedef struct {
    int chunks;
    int max_lanes; /* 0: every lane; 1: mids strictly in order, one at a time */
    cg_status_t (*pre)(void *ctx, int chunk, cg_status_t status);
    cg_status_t (*mid)(void *ctx, int chunk, cg_inter_t *lane);
    cg_status_t (*post)(void *ctx, int chunk, cg_status_t status);
    void *ctx;
} cg_pipe_job_t;

cg_status_t cg_hier_pipe_run(cg_comm_t *c, const cg_pipe_job_t *job);
/* Device scratch of every lane for received blocks, allocated before the lanes run (an
 * allocation on a lane thread could wait for the caller's stream). */
cg_status_t cg_hier_lanes_reserve(cg_comm_t *c, size_t bytes);
/* Chunks in flight (work slots) of a job with max_lanes. */
int         cg_hier_pipe_window(const cg_comm_t *c, int max_lanes);
void        cg_hier_pipe_destroy(cg_hier_pipe_t *pipe);

/* The hierarchical algorithms. chunks: pieces the message is cut into so that the phases
 * overlap (1: one after the other); the same on every rank.
 * CG_ALG_HIER_RING: intra reduce-scatter, ring allreduce on each rail over 1/L of the data,
 * intra allgather (equal ranks per node). CG_ALG_HIER_RD: intra allreduce, recursive
 * doubling on each rail over all of it (small messages, equal ranks per node).
 * CG_ALG_HIER_LEADER: intra allreduce, node leaders exchange, intra bcast (any layout). */
cg_status_t cg_hier_allreduce(cg_comm_t *c, cg_alg_t alg, const void *sbuf, void *rbuf,
                              size_t count, cg_dtype_t dtype, cg_op_t op, int chunks);
/* CG_ALG_HIER_TREE: binomial tree between one rank per node (the root's local index), then
 * intra bcast (any layout). CG_ALG_HIER_RING: intra bcast on the root's node, each rail
 * relays 1/L of the message down a pipelined chain of nodes, intra allgather of the slices
 * (equal ranks per node). */
cg_status_t cg_hier_bcast(cg_comm_t *c, cg_alg_t alg, void *buf, size_t bytes, int root,
                          int chunks);
/* Ring allgather on each rail, then intra allgather of the rail's blocks (equal ranks). */
cg_status_t cg_hier_allgather(cg_comm_t *c, const void *sbuf, void *rbuf, size_t bytes,
                              int chunks);
/* CG_ALG_HIER_LEADER for allgather and reduce-scatter (hier_leader.c): through one leader
 * per node, any layout. */
cg_status_t cg_hier_allgather_leader(cg_comm_t *c, const void *sbuf, void *rbuf, size_t bytes);
cg_status_t cg_hier_reduce_scatter_leader(cg_comm_t *c, const void *sbuf, void *rbuf,
                                          const size_t *counts, cg_dtype_t dtype, cg_op_t op);
/* Copy this rank's input (sbuf, when not in place) to dst on the inter-node stream. */
cg_status_t cg_hier_place(cg_comm_t *c, const void *sbuf, void *dst, size_t bytes);
/* Intra reduce-scatter of each rail's blocks, then ring reduce-scatter on the rail. */
cg_status_t cg_hier_reduce_scatter(cg_comm_t *c, const void *sbuf, void *rbuf,
                                   const size_t *counts, cg_dtype_t dtype, cg_op_t op,
                                   int chunks);
/* The rail of local index local: node n's rank with that index, for every node. */
cg_status_t cg_hier_rail(const cg_comm_t *c, int local, cg_inter_group_t *rail);
/* At most the number of pieces of len units that leaves none smaller than unit (no empty
 * chunks, each costing its phases' barriers). */
static inline int cg_hier_chunks_cap(int chunks, size_t len, size_t unit)
{
    size_t most = unit > 0 ? len / unit : len;
    return (int)CG_MAX((size_t)1, CG_MIN((size_t)CG_MAX(chunks, 1), most));
}

/* Piece i of k of len units (the same cut on every rank): its offset and length. */
static inline cg_seg_t cg_hier_piece(size_t len, int k, int i, size_t align)
{
    size_t piece = CG_ALIGN_UP((len + (size_t)k - 1) / (size_t)k, align);
    size_t off   = CG_MIN(len, (size_t)i * piece);
    return (cg_seg_t){off, CG_MIN(len - off, piece)};
}

#endif
