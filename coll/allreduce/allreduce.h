/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Allreduce algorithms, one file each (allreduce_<name>.c): the run functions of their
 * registry rows, and the intra-node ones as building blocks on a local group.
 */
#ifndef CG_ALLREDUCE_H
#define CG_ALLREDUCE_H

#include "coll/cg_comm_int.h"

/* one_shot: copy in, barrier, every rank reduces every peer's copy in rank order. */
cg_status_t cg_allreduce_one_shot(cg_intra_t *group, const void *sbuf, void *rbuf, size_t count,
                                  cg_dtype_t dtype, cg_op_t op);
/* two_shot: rank r reduces block r from every input and writes it into every output. */
cg_status_t cg_allreduce_two_shot(cg_intra_t *group, const void *sbuf, void *rbuf, size_t count,
                                  cg_dtype_t dtype, cg_op_t op);
/* Every rank of the node gets the node's reduction in rbuf (LL when the plan says so, else
 * one_shot or two_shot by size: the same bits everywhere); one rank on its node: a copy
 * (allreduce_hier_rd.c). */
cg_status_t cg_allreduce_node(cg_comm_t *comm, const cg_plan_t *plan, const void *sbuf, void *rbuf,
                              size_t count, cg_dtype_t dtype, cg_op_t op);

cg_status_t cg_allreduce_ll_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);
cg_status_t cg_allreduce_one_shot_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);
cg_status_t cg_allreduce_two_shot_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);
cg_status_t cg_allreduce_ring_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);
cg_status_t cg_allreduce_hier_ring_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);
cg_status_t cg_allreduce_hier_rd_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);
cg_status_t cg_allreduce_hier_leader_run(cg_comm_t *comm, const cg_plan_t *plan,
                                         const cg_call_t *call);

#endif
