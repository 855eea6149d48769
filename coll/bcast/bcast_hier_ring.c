/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Hierarchical bcast hier_ring: the message is cut into chunks and each chunk into L parts;
 * on the root's node the root hands local rank l part l, rail l relays part l from node to
 * node down a chain, and every node shares the parts inside: each GPU's links carry about
 * the message once, and the chunks keep the chain and the intra-node phases busy at the
 * same time. Equal ranks per node; large messages.
 */
#include "coll/bcast/bcast.h"
#include "coll/hier/hier.h"

#include <stdlib.h>

#define CG_HIER_BCAST_STEP 1024 /* tag steps of the chain: 1024 + piece (mod 4096) */

typedef struct {
    cg_comm_t *comm;
    char      *buf;
    size_t     bytes;
    int        chunks;
    int        pos;        /* this node's place in the chain (0: the root's node) */
    int        prev, next; /* comm ranks on this rail; -1: none */
    int        rlocal;     /* the root's local rank (on the root's node) */
} cg_hier_chain_t;

/* Chunk i cut into the L parts the rails carry, in bytes from the start of the message. */
static void cg_hier_chain_parts(const cg_hier_chain_t *h, int i, cg_seg_t *parts)
{
    cg_seg_t chunk = cg_hier_piece(h->bytes, h->chunks, i, 256);

    for (int l = 0; l < h->comm->local_size; l++) {
        cg_seg_t part = cg_hier_piece(chunk.len, h->comm->local_size, l, 256);
        parts[l]      = (cg_seg_t){chunk.off + part.off, part.len};
    }
}

/* The root's node: the root hands each local rank its part of chunk i. */
static cg_status_t cg_hier_chain_pre(void *ctx, int i, cg_status_t status)
{
    cg_hier_chain_t *h = ctx;
    cg_seg_t         parts[CG_INTRA_MAX];

    if (i >= h->chunks) {
        return status;
    }
    cg_hier_chain_parts(h, i, parts);
    return cg_scatter_segments(h->comm->intra, h->buf, parts, h->rlocal, status);
}

/* Step i: pass this rail's part of chunk i-1 on, receive its part of chunk i from the
 * previous node of the chain. A part is received at step i and passed on at step i+1: the
 * tag names the chunk. */
static cg_status_t cg_hier_chain_mid(void *ctx, int i, cg_inter_t *lane)
{
    cg_hier_chain_t *h  = ctx;
    const int        me = h->comm->local_rank;
    cg_seg_t         parts[CG_INTRA_MAX], out = {0, 0}, in = {0, 0};
    int              dst = -1, src = -1;

    if (i > 0 && h->next >= 0) {
        cg_hier_chain_parts(h, i - 1, parts);
        out = parts[me];
        dst = out.len > 0 ? h->next : -1;
    }
    if (i < h->chunks && h->prev >= 0) {
        cg_hier_chain_parts(h, i, parts);
        in  = parts[me];
        src = in.len > 0 ? h->prev : -1;
    }
    if (dst < 0 && src < 0) {
        return CG_OK;
    }
    return cg_inter_exchange(lane, dst, h->buf + out.off, out.len,
                             CG_HIER_BCAST_STEP + (unsigned)(i - 1), src, h->buf + in.off, in.len,
                             CG_HIER_BCAST_STEP + (unsigned)i);
}

/* Every part of chunk i is on this node (one per local rank): share them. */
static cg_status_t cg_hier_chain_post(void *ctx, int i, cg_status_t status)
{
    cg_hier_chain_t *h = ctx;
    cg_seg_t         parts[CG_INTRA_MAX];

    if (i >= h->chunks) {
        return status;
    }
    cg_hier_chain_parts(h, i, parts);
    return cg_allgather_segments(h->comm->intra, h->buf, parts, 1, status);
}

static cg_status_t cg_hier_bcast_ring(cg_comm_t *comm, void *buf, size_t bytes, int rnode,
                                      int rlocal, int chunks)
{
    const int       N = comm->num_nodes;
    cg_hier_chain_t h = {comm, buf, bytes, cg_hier_chunks_cap(chunks, bytes, 256 * (size_t)comm->local_size),
                         (comm->my_node - rnode + N) % N, -1, -1,
                         rlocal};
    /* chunks + 1 steps on one lane (a step passes on what the previous one received; the
     * last passes the last chunk on). The root's node scatters each chunk to its rails
     * first; every node shares the parts as they arrive. One chunk: nothing to overlap, so
     * no hand-over to the lane thread (on a node with more ranks than cores, a thread
     * woken twice per call cost 130 us at every size on the host device layer). */
    cg_pipe_job_t   job = {h.chunks + 1, 1, NULL, cg_hier_chain_mid, NULL, &h, h.chunks == 1};

    if (h.pos > 0) {
        h.prev = cg_comm_member(comm, (comm->my_node - 1 + N) % N, comm->local_rank);
    }
    if (h.pos < N - 1) {
        h.next = cg_comm_member(comm, (comm->my_node + 1) % N, comm->local_rank);
    }
    if (comm->local_size > 1) {
        job.pre  = (h.pos == 0) ? cg_hier_chain_pre : NULL;
        job.post = cg_hier_chain_post;
    }
    return cg_hier_pipe_run(comm, &job);
}

cg_status_t cg_bcast_hier_ring_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    int rnode, rlocal;

    cg_hier_root(comm, call->root, &rnode, &rlocal);
    return cg_hier_bcast_ring(comm, call->rbuf, call->bytes, rnode, rlocal,
                              cg_hier_plan_chunks(plan, (double)call->bytes));
}
