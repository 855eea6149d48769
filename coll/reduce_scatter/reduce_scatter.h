/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Reduce-scatter algorithms (reduce_scatter and reduce_scatter_block), one file each
 * (reduce_scatter_<name>.c): the run functions of their registry rows. */
#ifndef CG_REDUCE_SCATTER_H
#define CG_REDUCE_SCATTER_H

#include "coll/cg_comm_int.h"

cg_status_t cg_reduce_scatter_ll_run(cg_comm_t *comm, const cg_plan_t *plan,
                                     const cg_call_t *call);
cg_status_t cg_reduce_scatter_direct_run(cg_comm_t *comm, const cg_plan_t *plan,
                                         const cg_call_t *call);
cg_status_t cg_reduce_scatter_hier_ring_run(cg_comm_t *comm, const cg_plan_t *plan,
                                            const cg_call_t *call);
cg_status_t cg_reduce_scatter_hier_leader_run(cg_comm_t *comm, const cg_plan_t *plan,
                                              const cg_call_t *call);

#endif
