/*
 * Hierarchical collectives across nodes: an intra-node phase on each node's local group and
 * an inter-node phase over UCX between one rank per node. Rails: the ranks with the same
 * local index on every node form a group, so every GPU drives its own NIC.
 */
#ifndef CG_HIER_H
#define CG_HIER_H

#include "coll/cg_comm_int.h"

/* CG_ALG_HIER_RING: intra reduce-scatter, ring allreduce on each rail over 1/L of the data,
 * intra allgather (equal ranks per node). CG_ALG_HIER_RD: intra allreduce, recursive
 * doubling on each rail over all of it (small messages, equal ranks per node).
 * CG_ALG_HIER_LEADER: intra allreduce, node leaders exchange, intra bcast (any layout). */
cg_status_t cg_hier_allreduce(cg_comm_t *c, cg_alg_t alg, const void *sbuf, void *rbuf,
                              size_t count, cg_dtype_t dtype, cg_op_t op);
/* Binomial tree between one rank per node (the root's local index), then intra bcast. */
cg_status_t cg_hier_bcast(cg_comm_t *c, void *buf, size_t bytes, int root);
/* Ring allgather on each rail, then intra allgather of the rail's blocks (equal ranks). */
cg_status_t cg_hier_allgather(cg_comm_t *c, const void *sbuf, void *rbuf, size_t bytes);
/* Copy this rank's input (sbuf, when not in place) to dst on the inter-node stream. */
cg_status_t cg_hier_place(cg_comm_t *c, const void *sbuf, void *dst, size_t bytes);
/* Intra reduce-scatter of each rail's blocks, then ring reduce-scatter on the rail. */
cg_status_t cg_hier_reduce_scatter(cg_comm_t *c, const void *sbuf, void *rbuf,
                                   const size_t *counts, cg_dtype_t dtype, cg_op_t op);

#endif
