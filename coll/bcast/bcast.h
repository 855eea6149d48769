/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Bcast algorithms, one file each (bcast_<name>.c): the run functions of their registry
 * rows, and direct as a building block on a local group.
 */
#ifndef CG_BCAST_H
#define CG_BCAST_H

#include "coll/cg_comm_int.h"

/* direct: the root writes its buffer into every peer's (group rank root). */
cg_status_t cg_bcast_direct(cg_intra_t *group, void *buf, size_t bytes, int root);

cg_status_t cg_bcast_ll_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);
cg_status_t cg_bcast_direct_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);
cg_status_t cg_bcast_scatter_allgather_run(cg_comm_t *comm, const cg_plan_t *plan,
                                           const cg_call_t *call);
cg_status_t cg_bcast_hier_ring_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);
cg_status_t cg_bcast_hier_tree_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);

#endif
