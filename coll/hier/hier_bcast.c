/*
 * Hierarchical bcast.
 *   hier_tree  one rank per node (the root's local index) forms a binomial tree across the
 *              nodes, then every node broadcasts inside. Any layout; small messages.
 *   hier_ring  the root's node shares the message inside; the message is cut into L slices
 *              and rail l relays slice l from node to node down a chain, piece by piece, so
 *              that every link carries 1/L of the message at once; each node then shares
 *              the slices inside, piece by piece as they arrive (overlapped with the chain).
 *              Equal ranks per node; large messages.
 */
#include "coll/allgather/allgather.h"
#include "coll/bcast/bcast.h"
#include "coll/hier/hier.h"

#include <stdlib.h>

#define CG_HIER_BCAST_STEP 1024 /* tag steps of the chain: 1024 + piece (mod 4096) */

static cg_status_t cg_hier_bcast_tree(cg_comm_t *c, void *buf, size_t bytes, int rnode,
                                      int rlocal)
{
    cg_inter_group_t g = {0};
    cg_status_t      status;

    /* one rank per node: the one with the root's local index (wrapped on smaller nodes) */
    status = cg_hier_rail(c, rlocal, &g);
    if (status == CG_OK && g.ranks[c->my_node] == c->config.rank) {
        status = cg_inter_bcast_binomial(c->inter, &g, buf, bytes, rnode);
    }
    free(g.ranks);
    if (c->local_size > 1) {
        status = (status == CG_OK) ? cg_bcast_direct(c->intra, buf, bytes, rlocal % c->local_size)
                                   : cg_intra_finish(c->intra, cg_intra_barrier(c->intra, status));
    }
    return status;
}

typedef struct {
    cg_comm_t *c;
    char      *buf;
    size_t     bytes;
    int        pieces; /* of each slice */
    int        pos;    /* this node's place in the chain (0: the root's node) */
    int        prev, next; /* comm ranks on this rail; -1: none */
} cg_hier_chain_t;

/* Piece i of slice l, in bytes from the start of the message. */
static cg_seg_t cg_hier_chain_piece(const cg_hier_chain_t *h, int l, int i)
{
    cg_seg_t slice = cg_hier_piece(h->bytes, h->c->local_size, l, 256);
    cg_seg_t piece = cg_hier_piece(slice.len, h->pieces, i, 256);
    return (cg_seg_t){slice.off + piece.off, piece.len};
}

/* Step i: pass piece i-1 on, receive piece i from the previous node of the chain. A piece
 * is received at step i and passed on at step i+1: its tag names the piece. */
static cg_status_t cg_hier_chain_mid(void *ctx, int i)
{
    cg_hier_chain_t *h  = ctx;
    const int        me = h->c->local_rank;
    cg_seg_t         out = {0, 0}, in = {0, 0};
    int              dst = -1, src = -1;

    if (i > 0 && h->next >= 0) {
        out = cg_hier_chain_piece(h, me, i - 1);
        dst = out.len > 0 ? h->next : -1;
    }
    if (i < h->pieces && h->prev >= 0) {
        in  = cg_hier_chain_piece(h, me, i);
        src = in.len > 0 ? h->prev : -1;
    }
    if (dst < 0 && src < 0) {
        return CG_OK;
    }
    return cg_inter_exchange(h->c->inter, dst, h->buf + out.off, out.len,
                             CG_HIER_BCAST_STEP + (unsigned)(i - 1), src, h->buf + in.off, in.len,
                             CG_HIER_BCAST_STEP + (unsigned)i);
}

/* Piece i of every slice has arrived on this node: share it (not on the root's node, which
 * has the whole message already). */
static cg_status_t cg_hier_chain_post(void *ctx, int i, cg_status_t status)
{
    cg_hier_chain_t *h = ctx;
    cg_seg_t         segs[CG_INTRA_MAX];

    if (h->pos == 0 || h->c->local_size == 1 || i >= h->pieces) {
        return status;
    }
    for (int l = 0; l < h->c->local_size; l++) {
        segs[l] = cg_hier_chain_piece(h, l, i);
    }
    return cg_allgather_segments(h->c->intra, h->buf, segs, 1, status);
}

static cg_status_t cg_hier_bcast_ring(cg_comm_t *c, void *buf, size_t bytes, int rnode,
                                      int rlocal, int chunks)
{
    const int       N = c->num_nodes;
    cg_hier_chain_t h = {c, buf, bytes, CG_MAX(chunks, 1), (c->my_node - rnode + N) % N, -1, -1};
    /* pieces + 1 steps: the last one passes the last piece on */
    cg_pipe_job_t   job = {h.pieces + 1, NULL, cg_hier_chain_mid, cg_hier_chain_post, &h};
    cg_status_t     status = CG_OK;

    if (h.pos > 0) {
        h.prev = cg_comm_member(c, (c->my_node - 1 + N) % N, c->local_rank);
    }
    if (h.pos < N - 1) {
        h.next = cg_comm_member(c, (c->my_node + 1) % N, c->local_rank);
    }
    if (h.pos == 0 && c->local_size > 1) {
        status  = cg_bcast_direct(c->intra, buf, bytes, rlocal);
        job.post = NULL; /* the root's node only sends */
    }
    if (status != CG_OK) {
        return status; /* the whole node failed together: its rails send nothing */
    }
    return cg_hier_pipe_run(c, &job);
}

cg_status_t cg_hier_bcast(cg_comm_t *c, cg_alg_t alg, void *buf, size_t bytes, int root,
                          int chunks)
{
    const int rnode  = c->node_of[root];
    int       rlocal = 0;

    for (int l = 0; l < c->node_size[rnode]; l++) {
        rlocal = (cg_comm_member(c, rnode, l) == root) ? l : rlocal;
    }
    return alg == CG_ALG_HIER_RING ? cg_hier_bcast_ring(c, buf, bytes, rnode, rlocal, chunks)
                                   : cg_hier_bcast_tree(c, buf, bytes, rnode, rlocal);
}
