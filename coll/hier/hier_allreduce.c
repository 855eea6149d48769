/* Hierarchical allreduce: intra-node phase, inter-node phase on rails or leaders. */
#include "coll/allgather/allgather.h"
#include "coll/allreduce/allreduce.h"
#include "coll/bcast/bcast.h"
#include "coll/hier/hier.h"
#include "coll/reduce_scatter/reduce_scatter.h"

#include <stdlib.h>

/* The rail of this rank: the rank of every node with its local index. */
static cg_status_t cg_hier_rail(const cg_comm_t *c, int local, cg_inter_group_t *g)
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

/* Rails over 1/L of the data each: the network carries the least. */
static cg_status_t cg_hier_allreduce_ring(cg_comm_t *c, const void *sbuf, void *rbuf,
                                          size_t count, cg_dtype_t dtype, cg_op_t op,
                                          cg_inter_group_t *rail)
{
    const int    L    = c->local_size;
    const size_t elem = cg_dtype_size(dtype);
    const size_t blk  = CG_ALIGN_UP((count + (size_t)L - 1) / (size_t)L, elem < 256 ? 256 / elem : 1);
    cg_seg_t     segs[CG_INTRA_MAX];
    cg_status_t  status = CG_OK;
    void        *work;

    if (L == 1) {
        status = cg_hier_place(c, sbuf, rbuf, count * elem);
        return status == CG_OK ? cg_inter_allreduce_ring(c->inter, rail, rbuf, count, dtype, op)
                               : status;
    }
    for (int l = 0; l < L; l++) {
        size_t off = CG_MIN(count, (size_t)l * blk);
        segs[l]    = (cg_seg_t){off, CG_MIN(count - off, blk)};
    }
    status = cg_comm_work(c, CG_MAX(blk * elem, (size_t)1), &work);
    status = cg_reduce_scatter_segments(c->intra, sbuf ? sbuf : rbuf, work, segs, 1, 0, dtype, op,
                                        status);
    if (status == CG_OK && segs[c->local_rank].len > 0) {
        status = cg_inter_allreduce_ring(c->inter, rail, work, segs[c->local_rank].len, dtype, op);
    }
    if (status == CG_OK) {
        status = cg_intra_copy_typed(c->intra, (char *)rbuf + segs[c->local_rank].off * elem, work,
                                     segs[c->local_rank].len, dtype);
    }
    for (int l = 0; l < L; l++) {
        segs[l].off *= elem;
        segs[l].len *= elem;
    }
    return cg_allgather_segments(c->intra, rbuf, segs, 1, status);
}

cg_status_t cg_hier_allreduce(cg_comm_t *c, cg_alg_t alg, const void *sbuf, void *rbuf,
                              size_t count, cg_dtype_t dtype, cg_op_t op)
{
    const size_t     bytes = count * cg_dtype_size(dtype);
    const int        small = bytes <= c->config.one_shot_max;
    cg_inter_group_t group = {0};
    cg_status_t      status;

    /* the rail of local rank 0 is the leaders' group */
    status = cg_hier_rail(c, alg == CG_ALG_HIER_LEADER ? 0 : c->local_rank, &group);
    if (status != CG_OK) {
        return status;
    }
    switch (alg) {
    case CG_ALG_HIER_RING:
        status = cg_hier_allreduce_ring(c, sbuf, rbuf, count, dtype, op, &group);
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
