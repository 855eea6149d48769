/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Hierarchical allgather hier_ring (equal ranks per node): each rank's block is cut into
 * pieces; piece i of every block forms chunk i; the rail ring carries the chunk across the
 * nodes, then the node shares the rail's pieces inside, and the phases of consecutive
 * chunks overlap (hier_pipe.c). */
#include "coll/allgather/allgather.h"
#include "coll/hier/hier.h"

#include <stdlib.h>

typedef struct {
    cg_comm_t        *comm;
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
    cg_comm_t    *comm     = a->comm;
    const int     N     = comm->num_nodes;
    cg_seg_t      piece = cg_hier_piece(a->bytes, a->chunks, i, 256);

    for (int l = 0; l < comm->local_size; l++) { /* local rank l brings its rail's pieces */
        for (int n = 0; n < N; n++) {
            a->segs[(size_t)l * N + n] =
                (cg_seg_t){(size_t)cg_comm_member(comm, n, l) * a->bytes + piece.off, piece.len};
        }
    }
    return cg_allgather_segments(comm->intra, a->rbuf, a->segs, N, status);
}

static cg_status_t cg_hier_allgather(cg_comm_t *comm, const void *sbuf, void *rbuf, size_t bytes,
                                     int chunks)
{
    const int        N = comm->num_nodes, L = comm->local_size;
    cg_inter_group_t g = {0};
    cg_hier_ag_t     a = {comm, rbuf, bytes, cg_hier_chunks_cap(chunks, bytes, 256), &g,
                          cg_hier_pipe_window(comm, 0), NULL,
                          NULL};
    cg_pipe_job_t    job = {a.chunks, 0, NULL, cg_hier_ag_mid, L > 1 ? cg_hier_ag_post : NULL, &a};
    cg_status_t      status;

    status = cg_hier_rail(comm, comm->local_rank, &g);
    if (status == CG_OK &&
        ((a.offs = malloc((size_t)a.window * 2 * (size_t)N * sizeof(size_t))) == NULL ||
         (a.segs = malloc((size_t)N * (size_t)L * sizeof(cg_seg_t))) == NULL)) {
        status = CG_ERR_NO_MEMORY;
    }
    if (status == CG_OK) {
        status = cg_hier_place(comm, sbuf, (char *)rbuf + (size_t)comm->config.rank * bytes, bytes);
    }
    if (status == CG_OK) {
        status = cg_hier_pipe_run(comm, &job);
    } else if (L > 1) { /* the node's other ranks learn of the failure at the barrier */
        status = cg_intra_close(comm->intra, status);
    }
    free(g.ranks), free(a.offs), free(a.segs);
    return status;
}

cg_status_t cg_allgather_hier_ring_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    return cg_hier_allgather(comm, call->sbuf, call->rbuf, call->bytes,
                             cg_hier_plan_chunks(plan, cg_call_size(call)));
}
