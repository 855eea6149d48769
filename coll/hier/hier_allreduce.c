/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Hierarchical allreduce: intra-node phase, inter-node phase on rails or leaders. */
#include "coll/allgather/allgather.h"
#include "coll/allreduce/allreduce.h"
#include "coll/bcast/bcast.h"
#include "coll/hier/hier.h"
#include "coll/reduce_scatter/reduce_scatter.h"

#include <stdlib.h>

cg_status_t cg_hier_rail(const cg_comm_t *c, int local, cg_inter_group_t *g)
{
    g->n     = c->num_nodes;
    g->me    = c->my_node;
    g->ranks = malloc((size_t)c->num_nodes * sizeof(int));
    if (g->ranks == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    for (int n = 0; n < c->num_nodes; n++) {
        g->ranks[n] = cg_comm_member(c, n, local);
    }
    return CG_OK;
}

cg_status_t cg_hier_place(cg_comm_t *c, const void *sbuf, void *dst, size_t bytes)
{
    cg_status_t status;

    if (sbuf == NULL || bytes == 0) {
        return CG_OK;
    }
    status = c->dev->ops->copy(c->dev, dst, sbuf, bytes, c->inter->stream);
    return status == CG_OK ? c->dev->ops->stream_sync(c->dev, c->inter->stream) : status;
}

/* hier_ring: chunk i of the message is cut into L blocks; local rank l reduces block l over
 * the node into a work slot, its rail allreduces it across the nodes, and the node shares
 * the blocks of the chunk. */
typedef struct {
    cg_comm_t        *c;
    const char       *in;
    char             *rbuf;
    size_t            count;
    int               chunks;
    cg_dtype_t        dtype;
    cg_op_t           op;
    cg_inter_group_t *rail;
    int               window;
    char             *slot[CG_MAX_LANES + 1]; /* chunk i: slot i % window */
} cg_hier_ar_t;

/* The L blocks of chunk i, in elements from the start of the message. */
static void cg_hier_ar_blocks(const cg_hier_ar_t *a, int i, cg_seg_t *segs)
{
    const int    L     = a->c->local_size;
    const size_t elem  = cg_dtype_size(a->dtype);
    const size_t align = elem < 256 ? 256 / elem : 1;
    cg_seg_t     chunk = cg_hier_piece(a->count, a->chunks, i, align);

    for (int l = 0; l < L; l++) {
        cg_seg_t b = cg_hier_piece(chunk.len, L, l, align);
        segs[l]    = (cg_seg_t){chunk.off + b.off, b.len};
    }
}

static cg_status_t cg_hier_ar_pre(void *ctx, int i, cg_status_t status)
{
    cg_hier_ar_t *a = ctx;
    cg_seg_t      segs[CG_INTRA_MAX];

    cg_hier_ar_blocks(a, i, segs);
    return cg_reduce_scatter_segments(a->c->intra, a->in, a->slot[i % a->window], segs, 1, 0,
                                      a->dtype, a->op, status);
}

static cg_status_t cg_hier_ar_mid(void *ctx, int i, cg_inter_t *lane)
{
    cg_hier_ar_t *a = ctx;
    cg_seg_t      segs[CG_INTRA_MAX];
    size_t        len;

    cg_hier_ar_blocks(a, i, segs);
    len = segs[a->c->local_rank].len;
    cg_inter_begin(lane); /* each chunk's exchanges have tags of their own */
    return len > 0 ? cg_inter_allreduce_ring(lane, a->rail, a->slot[i % a->window], len,
                                             a->dtype, a->op)
                   : CG_OK;
}

static cg_status_t cg_hier_ar_post(void *ctx, int i, cg_status_t status)
{
    cg_hier_ar_t *a    = ctx;
    const size_t  elem = cg_dtype_size(a->dtype);
    cg_seg_t      segs[CG_INTRA_MAX], mine;

    cg_hier_ar_blocks(a, i, segs);
    mine = segs[a->c->local_rank];
    if (status == CG_OK) {
        status = cg_intra_copy_typed(a->c->intra, a->rbuf + mine.off * elem,
                                     a->slot[i % a->window], mine.len, a->dtype);
    }
    for (int l = 0; l < a->c->local_size; l++) {
        segs[l].off *= elem;
        segs[l].len *= elem;
    }
    return cg_allgather_segments(a->c->intra, a->rbuf, segs, 1, status);
}

/* Rails over 1/L of the data each: the network carries the least. */
static cg_status_t cg_hier_allreduce_ring(cg_comm_t *c, const void *sbuf, void *rbuf,
                                          size_t count, cg_dtype_t dtype, cg_op_t op,
                                          cg_inter_group_t *rail, int chunks)
{
    const size_t  elem = cg_dtype_size(dtype);
    const size_t  align = elem < 256 ? 256 / elem : 1;
    cg_hier_ar_t  a = {c, sbuf ? sbuf : rbuf, rbuf, count,
                       cg_hier_chunks_cap(chunks, count, align * (size_t)c->local_size), dtype, op, rail,
                       cg_hier_pipe_window(c, 0), {NULL}};
    cg_pipe_job_t job = {a.chunks, 0, cg_hier_ar_pre, cg_hier_ar_mid, cg_hier_ar_post, &a};
    cg_seg_t      segs[CG_INTRA_MAX];
    size_t        slot_bytes;
    void         *work;
    cg_status_t   status;

    if (c->local_size == 1) {
        status = cg_hier_place(c, sbuf, rbuf, count * elem);
        return status == CG_OK ? cg_inter_allreduce_ring(c->inter, rail, rbuf, count, dtype, op)
                               : status;
    }
    cg_hier_ar_blocks(&a, 0, segs); /* chunk 0 and block 0 are the largest */
    slot_bytes = CG_ALIGN_UP(CG_MAX(segs[0].len * elem, (size_t)1), 256);
    status     = cg_comm_work(c, (size_t)a.window * slot_bytes, &work);
    if (status == CG_OK) { /* a ring block of a chunk is at most its slot */
        status = cg_hier_lanes_reserve(c, slot_bytes);
    }
    if (status != CG_OK) { /* the phases still run: the failure reaches the node's ranks */
        status = cg_reduce_scatter_segments(c->intra, a.in, NULL, segs, 1, 0, dtype, op, status);
        return cg_allgather_segments(c->intra, rbuf, segs, 1, status);
    }
    for (int w = 0; w < a.window; w++) {
        a.slot[w] = (char *)work + (size_t)w * slot_bytes;
    }
    return cg_hier_pipe_run(c, &job);
}

cg_status_t cg_hier_allreduce(cg_comm_t *c, cg_alg_t alg, const void *sbuf, void *rbuf,
                              size_t count, cg_dtype_t dtype, cg_op_t op, int chunks)
{
    const size_t     bytes = count * cg_dtype_size(dtype);
    const int        small = bytes <= c->config.one_shot_max;
    cg_inter_group_t group = {0};
    cg_status_t      status;

    /* the rail of local rank 0 is the leaders' group */
    status = cg_hier_rail(c, alg == CG_ALG_HIER_LEADER ? 0 : c->local_rank, &group);
    if (status != CG_OK) { /* the node's other ranks learn of it at the barrier */
        return c->local_size > 1 ? cg_intra_finish(c->intra, cg_intra_barrier(c->intra, status))
                                 : status;
    }
    switch (alg) {
    case CG_ALG_HIER_RING:
        status = cg_hier_allreduce_ring(c, sbuf, rbuf, count, dtype, op, &group, chunks);
        break;
    case CG_ALG_HIER_RD:
    case CG_ALG_HIER_LEADER:
        /* every rank of the node gets the node's sum (the same bits everywhere) */
        if (c->local_size > 1) {
            status = small ? cg_allreduce_one_shot(c->intra, sbuf, rbuf, count, dtype, op)
                           : cg_allreduce_two_shot(c->intra, sbuf, rbuf, count, dtype, op);
        } else {
            status = cg_hier_place(c, sbuf, rbuf, bytes);
        }
        if (status == CG_OK && (alg == CG_ALG_HIER_RD || c->local_rank == 0)) {
            status = small ? cg_inter_allreduce_rd(c->inter, &group, rbuf, count, dtype, op)
                           : cg_inter_allreduce_ring(c->inter, &group, rbuf, count, dtype, op);
        }
        if (alg == CG_ALG_HIER_LEADER && c->local_size > 1) {
            status = (status == CG_OK) ? cg_bcast_direct(c->intra, rbuf, bytes, 0)
                                       : cg_intra_finish(c->intra, cg_intra_barrier(c->intra, status));
        }
        break;
    default:
        status = CG_ERR_UNSUPPORTED;
    }
    free(group.ranks);
    return status;
}
