/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Intra-node allreduce algorithms. sbuf NULL: in place (the input is in rbuf). */
#ifndef CG_ALLREDUCE_H
#define CG_ALLREDUCE_H

#include "coll/intra/intra.h"

/* Every rank reads every peer's input and reduces it (small messages): the input goes
 * through the scratch buffer, one barrier per step. */
cg_status_t cg_allreduce_one_shot(cg_intra_t *g, const void *sbuf, void *rbuf, size_t count,
                                  cg_dtype_t dtype, cg_op_t op);
/* Reduce-scatter then allgather fused: rank r reduces block r from every peer's input and
 * writes it into every peer's output (large messages). Zero copy through IPC when every
 * buffer can be shared, otherwise pipelined through the scratch halves. */
cg_status_t cg_allreduce_two_shot(cg_intra_t *g, const void *sbuf, void *rbuf, size_t count,
                                  cg_dtype_t dtype, cg_op_t op);

/* Ring along the node's ring order (GPUs linked only in pairs): reduce-scatter then
 * allgather in n-1 steps each, one block per step to the next rank. */
cg_status_t cg_allreduce_ring(cg_intra_t *g, const void *sbuf, void *rbuf, size_t count,
                              cg_dtype_t dtype, cg_op_t op);

#endif
