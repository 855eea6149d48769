/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Hierarchical allreduce hier_ring: intra reduce-scatter, ring allreduce of 1/L of the data
 * on every rail, intra allgather; the phases overlapped chunk by chunk (hier_pipe.c). The
 * network carries the least: every rail 1/L of the message. Equal ranks per node. */
#include "coll/allreduce/allreduce.h"
#include "coll/hier/hier.h"

#include <stdlib.h>

/* hier_ring: chunk i of the message is cut into L blocks; local rank l reduces block l over
 * the node into a work slot, its rail allreduces it across the nodes, and the node shares
 * the blocks of the chunk. */
typedef struct {
    cg_comm_t        *comm;
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
    const int    L     = a->comm->local_size;
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
    return cg_reduce_scatter_segments(a->comm->intra, a->in, a->slot[i % a->window], segs, 1, 0,
                                      a->dtype, a->op, status);
}

static cg_status_t cg_hier_ar_mid(void *ctx, int i, cg_inter_t *lane)
{
    cg_hier_ar_t *a = ctx;
    cg_seg_t      segs[CG_INTRA_MAX];
    size_t        len;

    cg_hier_ar_blocks(a, i, segs);
    len = segs[a->comm->local_rank].len;
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
    mine = segs[a->comm->local_rank];
    if (status == CG_OK) {
        status = cg_intra_copy_typed(a->comm->intra, a->rbuf + mine.off * elem,
                                     a->slot[i % a->window], mine.len, a->dtype);
    }
    for (int l = 0; l < a->comm->local_size; l++) {
        segs[l].off *= elem;
        segs[l].len *= elem;
    }
    return cg_allgather_segments(a->comm->intra, a->rbuf, segs, 1, status);
}

/* Rails over 1/L of the data each: the network carries the least. */
static cg_status_t cg_hier_allreduce_ring(cg_comm_t *comm, const void *sbuf, void *rbuf,
                                          size_t count, cg_dtype_t dtype, cg_op_t op,
                                          cg_inter_group_t *rail, int chunks)
{
    const size_t  elem = cg_dtype_size(dtype);
    const size_t  align = elem < 256 ? 256 / elem : 1;
    cg_hier_ar_t  a = {comm, sbuf ? sbuf : rbuf, rbuf, count,
                       cg_hier_chunks_cap(chunks, count, align * (size_t)comm->local_size), dtype, op, rail,
                       cg_hier_pipe_window(comm, 0), {NULL}};
    cg_pipe_job_t job = {a.chunks, 0, cg_hier_ar_pre, cg_hier_ar_mid, cg_hier_ar_post, &a};
    cg_seg_t      segs[CG_INTRA_MAX];
    size_t        slot_bytes;
    void         *work;
    cg_status_t   status;

    if (comm->local_size == 1) {
        status = cg_hier_place(comm, sbuf, rbuf, count * elem);
        return status == CG_OK ? cg_inter_allreduce_ring(comm->inter, rail, rbuf, count, dtype, op)
                               : status;
    }
    cg_hier_ar_blocks(&a, 0, segs); /* chunk 0 and block 0 are the largest */
    slot_bytes = CG_ALIGN_UP(CG_MAX(segs[0].len * elem, (size_t)1), 256);
    status     = cg_comm_work(comm, (size_t)a.window * slot_bytes, &work);
    if (status == CG_OK) { /* a ring block of a chunk is at most its slot */
        status = cg_hier_lanes_reserve(comm, slot_bytes);
    }
    if (status != CG_OK) { /* the phases still run: the failure reaches the node's ranks */
        status = cg_reduce_scatter_segments(comm->intra, a.in, NULL, segs, 1, 0, dtype, op, status);
        return cg_allgather_segments(comm->intra, rbuf, segs, 1, status);
    }
    for (int w = 0; w < a.window; w++) {
        a.slot[w] = (char *)work + (size_t)w * slot_bytes;
    }
    return cg_hier_pipe_run(comm, &job);
}

cg_status_t cg_allreduce_hier_ring_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    cg_inter_group_t rail = {0};
    cg_status_t      status = cg_hier_rail(comm, comm->local_rank, &rail);

    if (status != CG_OK) { /* the node's other ranks learn of it at the barrier */
        return comm->local_size > 1 ? cg_intra_close(comm->intra, status)
                                 : status;
    }
    status = cg_hier_allreduce_ring(comm, call->sbuf, call->rbuf, call->count, call->dtype,
                                    call->op, &rail, cg_hier_plan_chunks(plan, (double)call->bytes));
    free(rail.ranks);
    return status;
}
