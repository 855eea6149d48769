/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Intra-node reduce-scatter. */
#ifndef CG_REDUCE_SCATTER_H
#define CG_REDUCE_SCATTER_H

#include "coll/allgather/allgather.h"
#include "coll/intra/intra.h"

/* Every rank reduces its segments of the input (offsets and lengths in elements; rank p's
 * k-th is segs[p * nseg + k]) from every rank's input and stores them one after the other
 * in out. Zero copy when every input can be shared and out does not overlap the input
 * (in_place 0); otherwise in rounds through the scratch halves, which allows out to be the
 * start of in (MPI's in-place reduce-scatter). status: this rank's status so far. */
cg_status_t cg_reduce_scatter_segments(cg_intra_t *g, const void *in, void *out,
                                       const cg_seg_t *segs, int nseg, int in_place,
                                       cg_dtype_t dtype, cg_op_t op, cg_status_t status);
/* MPI_Reduce_scatter: counts[r] elements go to rank r, blocks in rank order. sbuf NULL:
 * in place (input in rbuf, result at its start). */
cg_status_t cg_reduce_scatter_direct(cg_intra_t *g, const void *sbuf, void *rbuf,
                                     const size_t *counts, cg_dtype_t dtype, cg_op_t op);

#endif
