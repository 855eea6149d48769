/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Hierarchical allgather and reduce-scatter on the rails (equal ranks per node). Each
 * rank's block is cut into pieces; piece i of every block forms chunk i, and the phases of
 * consecutive chunks overlap (hier_pipe.c).
 *   allgather       rail ring of the chunk across the nodes, then the node shares the
 *                   rail's pieces inside
 *   reduce_scatter  the node reduces the pieces of each rail's blocks inside (local rank l
 *                   those of rail l, packed into a work slot), the rail ring reduce-scatters
 *                   them across the nodes, and each rank keeps its own
 */
#include "coll/allgather/allgather.h"
#include "coll/hier/hier.h"
#include "coll/reduce_scatter/reduce_scatter.h"

#include <stdlib.h>

/* ---- allgather ------------------------------------------------------------------------ */
typedef struct {
    cg_comm_t        *c;
    char             *rbuf;
    size_t            bytes;  /* per rank */
    int               chunks;
    cg_inter_group_t *rail;
    int               window;
    size_t           *offs;        /* mid's: chunk i's at offs + (i % window) * 2N, lens after */
    cg_seg_t         *segs;        /* post's, [local l][node n] */
} cg_hier_ag_t;

static cg_status_t cg_hier_ag_mid(void *ctx, int i, cg_inter_t *lane)
{
    cg_hier_ag_t *a     = ctx;
    const int     N     = a->rail->n;
    cg_seg_t      piece = cg_hier_piece(a->bytes, a->chunks, i, 256);
    size_t       *offs  = a->offs + (size_t)(i % a->window) * 2 * N, *lens = offs + N;

    for (int n = 0; n < N; n++) {
        offs[n] = (size_t)a->rail->ranks[n] * a->bytes + piece.off;
        lens[n] = piece.len;
    }
    cg_inter_begin(lane);
    return piece.len > 0 ? cg_inter_allgather_ring(lane, a->rail, a->rbuf, offs, lens) : CG_OK;
}

static cg_status_t cg_hier_ag_post(void *ctx, int i, cg_status_t status)
{
    cg_hier_ag_t *a     = ctx;
    cg_comm_t    *c     = a->c;
    const int     N     = c->num_nodes;
    cg_seg_t      piece = cg_hier_piece(a->bytes, a->chunks, i, 256);

    for (int l = 0; l < c->local_size; l++) { /* local rank l brings its rail's pieces */
        for (int n = 0; n < N; n++) {
            a->segs[(size_t)l * N + n] =
                (cg_seg_t){(size_t)cg_comm_member(c, n, l) * a->bytes + piece.off, piece.len};
        }
    }
    return cg_allgather_segments(c->intra, a->rbuf, a->segs, N, status);
}

cg_status_t cg_hier_allgather(cg_comm_t *c, const void *sbuf, void *rbuf, size_t bytes,
                              int chunks)
{
    const int        N = c->num_nodes, L = c->local_size;
    cg_inter_group_t g = {0};
    cg_hier_ag_t     a = {c, rbuf, bytes, cg_hier_chunks_cap(chunks, bytes, 256), &g,
                          cg_hier_pipe_window(c, 0), NULL,
                          NULL};
    cg_pipe_job_t    job = {a.chunks, 0, NULL, cg_hier_ag_mid, L > 1 ? cg_hier_ag_post : NULL, &a};
    cg_status_t      status;

    status = cg_hier_rail(c, c->local_rank, &g);
    if (status == CG_OK &&
        ((a.offs = malloc((size_t)a.window * 2 * (size_t)N * sizeof(size_t))) == NULL ||
         (a.segs = malloc((size_t)N * (size_t)L * sizeof(cg_seg_t))) == NULL)) {
        status = CG_ERR_NO_MEMORY;
    }
    if (status == CG_OK) {
        status = cg_hier_place(c, sbuf, (char *)rbuf + (size_t)c->config.rank * bytes, bytes);
    }
    if (status == CG_OK) {
        status = cg_hier_pipe_run(c, &job);
    } else if (L > 1) { /* the node's other ranks learn of the failure at the barrier */
        status = cg_intra_finish(c->intra, cg_intra_barrier(c->intra, status));
    }
    free(g.ranks), free(a.offs), free(a.segs);
    return status;
}

/* ---- reduce-scatter ------------------------------------------------------------------- */
typedef struct {
    cg_comm_t        *c;
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
    cg_comm_t    *c = a->c;
    const int     N = c->num_nodes;

    /* local rank l reduces, over the node, piece i of the blocks of rail l */
    for (int l = 0; l < c->local_size; l++) {
        for (int n = 0; n < N; n++) {
            int      r = cg_comm_member(c, n, l);
            cg_seg_t p = cg_hier_rs_piece(a, r, i);
            a->segs[(size_t)l * N + n] = (cg_seg_t){a->displ[r] + p.off, p.len};
        }
    }
    return cg_reduce_scatter_segments(c->intra, a->in, a->slot[i % a->window], a->segs, N, 0,
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
    cg_comm_t    *c    = a->c;
    const size_t  elem = cg_dtype_size(a->dtype);
    size_t        packed = 0;
    cg_seg_t      mine = cg_hier_rs_piece(a, c->config.rank, i);

    /* the rail's pieces before this node's */
    for (int n = 0; n < c->my_node; n++) {
        packed += cg_hier_rs_piece(a, a->rail->ranks[n], i).len;
    }
    if (status == CG_OK && mine.len > 0) {
        status = cg_intra_copy_typed(c->intra, a->rbuf + mine.off * elem,
                                     a->slot[i % a->window] + packed * elem, mine.len, a->dtype);
    }
    return cg_intra_finish(c->intra, status);
}

/* One rank per node: pack the rail's blocks, ring, keep this rank's. */
static cg_status_t cg_hier_rs_single(cg_hier_rs_t *a)
{
    cg_comm_t       *c    = a->c;
    cg_dev_stream_t *s    = c->inter->stream;
    const size_t     elem = cg_dtype_size(a->dtype);
    cg_status_t      status = CG_OK;

    size_t          *offs = a->offs, *lens = a->offs + c->num_nodes;

    cg_hier_rs_pack(a, 0, offs, lens);
    for (int n = 0; status == CG_OK && n < c->num_nodes; n++) {
        status = c->dev->ops->copy(c->dev, a->slot[0] + offs[n] * elem,
                                   a->in + a->displ[a->rail->ranks[n]] * elem, lens[n] * elem, s);
    }
    status = (status == CG_OK) ? c->dev->ops->stream_sync(c->dev, s) : status;
    if (status == CG_OK) {
        status = cg_inter_reduce_scatter_ring(c->inter, a->rail, a->slot[0], offs, lens, a->dtype,
                                              a->op);
    }
    if (status == CG_OK && lens[c->my_node] > 0) { /* this rank's block, fully reduced */
        status = cg_dev_copy_typed(c->dev, a->rbuf, a->slot[0] + offs[c->my_node] * elem,
                                   lens[c->my_node], a->dtype, s);
        status = (status == CG_OK) ? c->dev->ops->stream_sync(c->dev, s) : status;
    }
    return status;
}

cg_status_t cg_hier_reduce_scatter(cg_comm_t *c, const void *sbuf, void *rbuf,
                                   const size_t *counts, cg_dtype_t dtype, cg_op_t op,
                                   int chunks)
{
    const int        N = c->num_nodes, L = c->local_size;
    const size_t     elem = cg_dtype_size(dtype);
    cg_inter_group_t g = {0};
    size_t          *displ = NULL, slot_bytes = 0;
    cg_hier_rs_t     a = {c, sbuf ? sbuf : rbuf, rbuf, counts, NULL, 0, L > 1 ? CG_MAX(chunks, 1) : 1,
                          dtype, op, &g, cg_hier_pipe_window(c, 0), {NULL}, NULL, NULL};
    cg_pipe_job_t    job = {a.chunks, 0, cg_hier_rs_pre, cg_hier_rs_mid, cg_hier_rs_post, &a};
    void            *work = NULL;
    cg_status_t      status;

    status = cg_hier_rail(c, c->local_rank, &g);
    if (status == CG_OK && ((displ = calloc((size_t)c->config.size + 1, sizeof(size_t))) == NULL ||
                            (a.offs = malloc((size_t)a.window * 2 * N * sizeof(size_t))) == NULL ||
                            (a.segs = malloc((size_t)N * (size_t)L * sizeof(cg_seg_t))) == NULL)) {
        status = CG_ERR_NO_MEMORY;
    }
    for (int r = 0; status == CG_OK && r < c->config.size; r++) {
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
                packed += cg_hier_rs_piece(&a, cg_comm_member(c, n, l), 0).len;
            }
            slot_bytes = CG_MAX(slot_bytes, CG_ALIGN_UP(packed * elem, 256));
        }
        status = cg_comm_work(c, CG_MAX((size_t)a.window * slot_bytes, (size_t)256), &work);
        if (status == CG_OK) { /* a ring block of a chunk is at most its slot */
            status = cg_hier_lanes_reserve(c, slot_bytes);
        }
    }
    if (status == CG_OK) {
        for (int w = 0; w < a.window; w++) {
            a.slot[w] = (char *)work + (size_t)w * slot_bytes;
        }
        status    = (L > 1) ? cg_hier_pipe_run(c, &job) : cg_hier_rs_single(&a);
    } else if (L > 1) { /* the node's other ranks learn of the failure at the barrier */
        status = cg_intra_finish(c->intra, cg_intra_barrier(c->intra, status));
    }
    free(g.ranks), free(displ), free(a.offs), free(a.segs);
    return status;
}
