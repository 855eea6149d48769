/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Hierarchical reduce-scatter hier_ring (equal ranks per node): the node reduces the pieces
 * of each rail's blocks inside (local rank l those of rail l, packed into a work slot), the
 * rail ring reduce-scatters them across the nodes, and each rank keeps its own; the phases
 * of consecutive chunks overlap (hier_pipe.c). */
#include "coll/hier/hier.h"
#include "coll/reduce_scatter/reduce_scatter.h"

#include <stdlib.h>

typedef struct {
    cg_comm_t        *comm;
    const char       *in;
    char             *rbuf;
    const size_t     *counts;
    const size_t     *displ;  /* of every rank's block, elements */
    size_t            largest;
    int               chunks;
    cg_dtype_t        dtype;
    cg_op_t           op;
    cg_inter_group_t *rail;
    int               window;
    char             *slot[CG_MAX_LANES + 1]; /* chunk i: slot i % window */
    size_t           *offs;        /* mid's: the rail's pieces packed in chunk i's slot, at
                                      offs + (i % window) * 2N, lens after */
    cg_seg_t         *segs;        /* pre's: [local l][node n] */
} cg_hier_rs_t;

/* Piece i of rank r's block, in elements from the block's start. */
static cg_seg_t cg_hier_rs_piece(const cg_hier_rs_t *a, int r, int i)
{
    const size_t elem  = cg_dtype_size(a->dtype);
    cg_seg_t     piece = cg_hier_piece(a->largest, a->chunks, i, elem < 256 ? 256 / elem : 1);
    size_t       off   = CG_MIN(a->counts[r], piece.off);
    return (cg_seg_t){off, CG_MIN(a->counts[r] - off, piece.len)};
}

/* Where the pieces of this rank's rail sit in the slot of chunk i (packed, node order). */
static size_t cg_hier_rs_pack(const cg_hier_rs_t *a, int i, size_t *offs, size_t *lens)
{
    size_t packed = 0;

    for (int n = 0; n < a->rail->n; n++) {
        offs[n] = packed;
        lens[n] = cg_hier_rs_piece(a, a->rail->ranks[n], i).len;
        packed += lens[n];
    }
    return packed;
}

static cg_status_t cg_hier_rs_pre(void *ctx, int i, cg_status_t status)
{
    cg_hier_rs_t *a = ctx;
    cg_comm_t    *comm = a->comm;
    const int     N = comm->num_nodes;

    /* local rank l reduces, over the node, piece i of the blocks of rail l */
    for (int l = 0; l < comm->local_size; l++) {
        for (int n = 0; n < N; n++) {
            int      r = cg_comm_member(comm, n, l);
            cg_seg_t p = cg_hier_rs_piece(a, r, i);
            a->segs[(size_t)l * N + n] = (cg_seg_t){a->displ[r] + p.off, p.len};
        }
    }
    return cg_reduce_scatter_segments(comm->intra, a->in, a->slot[i % a->window], a->segs, N, 0,
                                      a->dtype, a->op, status);
}

static cg_status_t cg_hier_rs_mid(void *ctx, int i, cg_inter_t *lane)
{
    cg_hier_rs_t *a    = ctx;
    size_t       *offs = a->offs + (size_t)(i % a->window) * 2 * a->rail->n;
    size_t       *lens = offs + a->rail->n;

    cg_hier_rs_pack(a, i, offs, lens);
    cg_inter_begin(lane);
    return cg_inter_reduce_scatter_ring(lane, a->rail, a->slot[i % a->window], offs, lens,
                                        a->dtype, a->op);
}

static cg_status_t cg_hier_rs_post(void *ctx, int i, cg_status_t status)
{
    cg_hier_rs_t *a    = ctx;
    cg_comm_t    *comm    = a->comm;
    const size_t  elem = cg_dtype_size(a->dtype);
    size_t        packed = 0;
    cg_seg_t      mine = cg_hier_rs_piece(a, comm->config.rank, i);

    /* the rail's pieces before this node's */
    for (int n = 0; n < comm->my_node; n++) {
        packed += cg_hier_rs_piece(a, a->rail->ranks[n], i).len;
    }
    if (status == CG_OK && mine.len > 0) {
        status = cg_intra_copy_typed(comm->intra, a->rbuf + mine.off * elem,
                                     a->slot[i % a->window] + packed * elem, mine.len, a->dtype);
    }
    return cg_intra_finish(comm->intra, status);
}

/* One rank per node: pack the rail's blocks, ring, keep this rank's. */
static cg_status_t cg_hier_rs_single(cg_hier_rs_t *a)
{
    cg_comm_t       *comm    = a->comm;
    cg_dev_stream_t *s    = comm->inter->stream;
    const size_t     elem = cg_dtype_size(a->dtype);
    cg_status_t      status = CG_OK;

    size_t          *offs = a->offs, *lens = a->offs + comm->num_nodes;

    cg_hier_rs_pack(a, 0, offs, lens);
    for (int n = 0; status == CG_OK && n < comm->num_nodes; n++) {
        status = comm->dev->ops->copy(comm->dev, a->slot[0] + offs[n] * elem,
                                   a->in + a->displ[a->rail->ranks[n]] * elem, lens[n] * elem, s);
    }
    status = (status == CG_OK) ? comm->dev->ops->stream_sync(comm->dev, s) : status;
    if (status == CG_OK) {
        status = cg_inter_reduce_scatter_ring(comm->inter, a->rail, a->slot[0], offs, lens, a->dtype,
                                              a->op);
    }
    if (status == CG_OK && lens[comm->my_node] > 0) { /* this rank's block, fully reduced */
        status = cg_dev_copy_typed(comm->dev, a->rbuf, a->slot[0] + offs[comm->my_node] * elem,
                                   lens[comm->my_node], a->dtype, s);
        status = (status == CG_OK) ? comm->dev->ops->stream_sync(comm->dev, s) : status;
    }
    return status;
}

static cg_status_t cg_hier_reduce_scatter(cg_comm_t *comm, const void *sbuf, void *rbuf,
                                          const size_t *counts, cg_dtype_t dtype, cg_op_t op,
                                          int chunks)
{
    const int        N = comm->num_nodes, L = comm->local_size;
    const size_t     elem = cg_dtype_size(dtype);
    cg_inter_group_t g = {0};
    size_t          *displ = NULL, slot_bytes = 0;
    cg_hier_rs_t     a = {comm, sbuf ? sbuf : rbuf, rbuf, counts, NULL, 0, L > 1 ? CG_MAX(chunks, 1) : 1,
                          dtype, op, &g, cg_hier_pipe_window(comm, 0), {NULL}, NULL, NULL};
    cg_pipe_job_t    job = {a.chunks, 0, cg_hier_rs_pre, cg_hier_rs_mid, cg_hier_rs_post, &a};
    void            *work = NULL;
    cg_status_t      status;

    status = cg_hier_rail(comm, comm->local_rank, &g);
    if (status == CG_OK && ((displ = calloc((size_t)comm->config.size + 1, sizeof(size_t))) == NULL ||
                            (a.offs = malloc((size_t)a.window * 2 * N * sizeof(size_t))) == NULL ||
                            (a.segs = malloc((size_t)N * (size_t)L * sizeof(cg_seg_t))) == NULL)) {
        status = CG_ERR_NO_MEMORY;
    }
    for (int r = 0; status == CG_OK && r < comm->config.size; r++) {
        displ[r + 1] = displ[r] + counts[r];
        a.largest    = CG_MAX(a.largest, counts[r]);
    }
    if (status == CG_OK) {
        a.displ    = displ;
        a.chunks   = cg_hier_chunks_cap(a.chunks, a.largest, elem < 256 ? 256 / elem : 1);
        job.chunks = a.chunks;
        for (int l = 0; l < L; l++) { /* the largest slot: chunk 0 of any rail */
            size_t packed = 0;
            for (int n = 0; n < N; n++) {
                packed += cg_hier_rs_piece(&a, cg_comm_member(comm, n, l), 0).len;
            }
            slot_bytes = CG_MAX(slot_bytes, CG_ALIGN_UP(packed * elem, 256));
        }
        status = cg_comm_work(comm, CG_MAX((size_t)a.window * slot_bytes, (size_t)256), &work);
        if (status == CG_OK) { /* a ring block of a chunk is at most its slot */
            status = cg_hier_lanes_reserve(comm, slot_bytes);
        }
    }
    if (status == CG_OK) {
        for (int w = 0; w < a.window; w++) {
            a.slot[w] = (char *)work + (size_t)w * slot_bytes;
        }
        status    = (L > 1) ? cg_hier_pipe_run(comm, &job) : cg_hier_rs_single(&a);
    } else if (L > 1) { /* the node's other ranks learn of the failure at the barrier */
        status = cg_intra_close(comm->intra, status);
    }
    free(g.ranks), free(displ), free(a.offs), free(a.segs);
    return status;
}

cg_status_t cg_reduce_scatter_hier_ring_run(cg_comm_t *comm, const cg_plan_t *plan,
                                            const cg_call_t *call)
{
    return cg_hier_reduce_scatter(comm, call->sbuf, call->rbuf, call->counts, call->dtype, call->op,
                                  cg_hier_plan_chunks(plan, (double)call->bytes));
}
