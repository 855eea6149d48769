/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Building blocks of the hierarchical algorithms (an intra-node phase on each node's local
 * group and an inter-node phase over UCX between one rank per node): rails (the ranks with
 * the same local index on every node, so every GPU drives its own NIC), the pipeline that
 * overlaps the phases chunk by chunk (hier_pipe.c), placement and the leaders' node order
 * (hier_common.c). The algorithms themselves are in their collective's folder.
 */
#ifndef CG_HIER_H
#define CG_HIER_H

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
    int   serial; /* 1: nothing to overlap although there are several steps (a chain that
                   * carries one chunk: it is received, then passed on); the phases run one
                   * after the other, as with one chunk. Alike on every rank. */
} cg_pipe_job_t;

cg_status_t cg_hier_pipe_run(cg_comm_t *comm, const cg_pipe_job_t *job);
/* Before anything of a call of a pipelined algorithm (CG_TRAIT_PIPELINED) can fail, on
 * every rank: the communicator's first call in several chunks agrees on the lane threads
 * (an exchange over the whole communicator, which a rank whose call failed before its
 * pipeline would otherwise miss while the others wait in it). */
void        cg_hier_pipe_agree(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);
/* Device scratch of every lane for received blocks, allocated before the lanes run (an
 * allocation on a lane thread could wait for the caller's stream). */
cg_status_t cg_hier_lanes_reserve(cg_comm_t *comm, size_t bytes);
/* Chunks in flight (work slots) of a job with max_lanes. */
int         cg_hier_pipe_window(const cg_comm_t *comm, int max_lanes);
void        cg_hier_pipe_destroy(cg_hier_pipe_t *pipe);

/* Pieces a message of bytes (nccl-tests size) is cut into for the plan's chunk size (the
 * same on every rank; 1: the phases run one after the other). */
int         cg_hier_plan_chunks(const cg_plan_t *plan, double bytes);
/* The rail of local index local: node n's rank with that index, for every node. */
cg_status_t cg_hier_rail(const cg_comm_t *comm, int local, cg_inter_group_t *rail);
/* Copy this rank's input (sbuf, when not in place) to dst on the inter-node stream. */
cg_status_t cg_hier_place(cg_comm_t *comm, const void *sbuf, void *dst, size_t bytes);
/* The node of comm rank root, and its local index there. */
void        cg_hier_root(const cg_comm_t *comm, int root, int *rnode, int *rlocal);

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

/* ---- the leaders' node order (hier_leader algorithms) ---------------------------------- */
/* Node order of blocks of sizes[r] units (sizes NULL: fixed units each): rank r's block at
 * pos[r], node n's blocks at offs[n] (lens[n] units); displ[r]: rank order. identity: both
 * orders agree (every node's ranks are consecutive). */
typedef struct {
    size_t *pos, *displ, *offs, *lens;
    size_t  total;
    int     identity;
} cg_leader_order_t;

cg_status_t cg_leader_order(const cg_comm_t *comm, const size_t *sizes, size_t fixed,
                            cg_leader_order_t *order);
void        cg_leader_order_free(cg_leader_order_t *order);
/* Copy the blocks of the ranks of node n (every node but n when others; n -1 and others:
 * every rank) between rank order (user) and node order (packed), on the inter stream.
 * sizes and fixed as for cg_leader_order; unit: bytes per unit. */
cg_status_t cg_leader_pack(cg_comm_t *comm, const cg_leader_order_t *order, const size_t *sizes,
                           size_t fixed, size_t unit, int n, int others, char *user,
                           char *packed, int to_packed);

/* The phase after the leaders': run it if this rank is fine, otherwise report the failure
 * to the node (which learns of it at the phase's barrier). */
#define CG_LEADER_NODE_PHASE(_c, _status, _call)                                              \
    ((_status) == CG_OK ? (_call)                                                             \
                        : cg_intra_close((_c)->intra, (_status)))

#endif
