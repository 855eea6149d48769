/* Hierarchical bcast, allgather and reduce-scatter. */
#include "coll/allgather/allgather.h"
#include "coll/bcast/bcast.h"
#include "coll/hier/hier.h"
#include "coll/reduce_scatter/reduce_scatter.h"

#include <stdlib.h>

cg_status_t cg_hier_bcast(cg_comm_t *c, void *buf, size_t bytes, int root)
{
    const int        rnode = c->node_of[root];
    int              rlocal = 0;
    cg_inter_group_t g = {c->num_nodes, c->my_node, NULL};
    cg_status_t      status = CG_OK;

    for (int l = 0; l < c->node_size[rnode]; l++) {
        rlocal = (cg_comm_member(c, rnode, l) == root) ? l : rlocal;
    }
    g.ranks = malloc((size_t)c->num_nodes * sizeof(int));
    if (g.ranks == NULL) {
        status = CG_ERR_NO_MEMORY;
    }
    /* one rank per node: the one with the root's local index (wrapped on smaller nodes) */
    for (int n = 0; status == CG_OK && n < c->num_nodes; n++) {
        g.ranks[n] = cg_comm_member(c, n, rlocal);
    }
    if (status == CG_OK && g.ranks[c->my_node] == c->config.rank) {
        status = cg_inter_bcast_binomial(c->inter, &g, buf, bytes, rnode);
    }
    free(g.ranks);
    if (c->local_size > 1) {
        int from = rlocal % c->local_size;
        status   = (status == CG_OK) ? cg_bcast_direct(c->intra, buf, bytes, from)
                                     : cg_intra_finish(c->intra, cg_intra_barrier(c->intra, status));
    }
    return status;
}

/* Rail group and, for every node, where its member's block sits. */
static cg_status_t cg_hier_rail_blocks(cg_comm_t *c, cg_inter_group_t *g, size_t **offs,
                                       size_t **lens)
{
    g->n     = c->num_nodes;
    g->me    = c->my_node;
    g->ranks = malloc((size_t)c->num_nodes * sizeof(int));
    *offs    = malloc((size_t)c->num_nodes * sizeof(size_t));
    *lens    = malloc((size_t)c->num_nodes * sizeof(size_t));
    if (g->ranks == NULL || *offs == NULL || *lens == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    for (int n = 0; n < c->num_nodes; n++) {
        g->ranks[n] = cg_comm_member(c, n, c->local_rank);
    }
    return CG_OK;
}

cg_status_t cg_hier_allgather(cg_comm_t *c, const void *sbuf, void *rbuf, size_t bytes)
{
    const int        N = c->num_nodes, L = c->local_size;
    cg_inter_group_t g = {0};
    size_t          *offs = NULL, *lens = NULL;
    cg_seg_t        *segs = NULL;
    cg_status_t      status;

    status = cg_hier_rail_blocks(c, &g, &offs, &lens);
    if (status == CG_OK && (segs = malloc((size_t)N * (size_t)L * sizeof(*segs))) == NULL) {
        status = CG_ERR_NO_MEMORY;
    }
    for (int n = 0; status == CG_OK && n < N; n++) {
        offs[n] = (size_t)g.ranks[n] * bytes;
        lens[n] = bytes;
        for (int l = 0; l < L; l++) { /* local rank l brings its rail's blocks */
            segs[(size_t)l * N + n] = (cg_seg_t){(size_t)cg_comm_member(c, n, l) * bytes, bytes};
        }
    }
    if (status == CG_OK) {
        status = cg_hier_place(c, sbuf, (char *)rbuf + (size_t)c->config.rank * bytes, bytes);
    }
    if (status == CG_OK) {
        status = cg_inter_allgather_ring(c->inter, &g, rbuf, offs, lens);
    }
    if (L > 1) {
        status = (segs != NULL) ? cg_allgather_segments(c->intra, rbuf, segs, N, status)
                                : cg_intra_finish(c->intra, cg_intra_barrier(c->intra, status));
    }
    free(g.ranks), free(offs), free(lens), free(segs);
    return status;
}

cg_status_t cg_hier_reduce_scatter(cg_comm_t *c, const void *sbuf, void *rbuf,
                                   const size_t *counts, cg_dtype_t dtype, cg_op_t op)
{
    const int        N = c->num_nodes, L = c->local_size;
    const size_t     elem = cg_dtype_size(dtype);
    cg_inter_group_t g = {0};
    size_t          *offs = NULL, *lens = NULL, *displ = NULL, packed = 0;
    cg_seg_t        *segs = NULL;
    void            *work = NULL;
    cg_status_t      status;

    status = cg_hier_rail_blocks(c, &g, &offs, &lens);
    if (status == CG_OK && ((segs = malloc((size_t)N * (size_t)L * sizeof(*segs))) == NULL ||
                            (displ = calloc((size_t)c->config.size + 1, sizeof(size_t))) == NULL)) {
        status = CG_ERR_NO_MEMORY;
    }
    for (int r = 0; status == CG_OK && r < c->config.size; r++) {
        displ[r + 1] = displ[r] + counts[r];
    }
    /* local rank l reduces, over the node, the blocks of its rail (one per node), packed */
    for (int n = 0; status == CG_OK && n < N; n++) {
        for (int l = 0; l < L; l++) {
            int r = cg_comm_member(c, n, l);
            segs[(size_t)l * N + n] = (cg_seg_t){displ[r], counts[r]};
        }
        offs[n] = packed;
        lens[n] = counts[g.ranks[n]];
        packed += lens[n];
    }
    if (status == CG_OK) {
        status = cg_comm_work(c, CG_MAX(packed * elem, (size_t)1), &work);
    }
    if (L > 1) {
        status = cg_reduce_scatter_segments(c->intra, sbuf ? sbuf : rbuf, work, segs, N, 0, dtype,
                                            op, status);
    } else if (status == CG_OK) {
        for (int n = 0; status == CG_OK && n < N; n++) {
            status = c->dev->ops->copy(c->dev, (char *)work + offs[n] * elem,
                                       (const char *)(sbuf ? sbuf : rbuf) + segs[n].off * elem,
                                       segs[n].len * elem, c->inter->stream);
        }
        status = (status == CG_OK) ? c->dev->ops->stream_sync(c->dev, c->inter->stream) : status;
    }
    if (status == CG_OK) {
        status = cg_inter_reduce_scatter_ring(c->inter, &g, work, offs, lens, dtype, op);
    }
    if (status == CG_OK && lens[c->my_node] > 0) { /* this rank's block, fully reduced */
        cg_dev_stream_t *s = c->inter->stream;
        cg_reduce_args_t args = {.dtype = dtype, .op = CG_OP_MINLOC, .count = lens[c->my_node],
                                 .nsrc = 1, .ndst = 1};
        args.srcs[0] = (char *)work + offs[c->my_node] * elem;
        args.dsts[0] = rbuf;
        status = cg_dtype_has_padding(dtype) ? c->dev->ops->reduce(c->dev, &args, s)
                                             : c->dev->ops->copy(c->dev, rbuf, args.srcs[0],
                                                                 lens[c->my_node] * elem, s);
        status = (status == CG_OK) ? c->dev->ops->stream_sync(c->dev, s) : status;
    }
    free(g.ranks), free(offs), free(lens), free(segs), free(displ);
    return status;
}
