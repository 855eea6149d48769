/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Allgather algorithms, one file each (allgather_<name>.c): the run functions of their
 * registry rows. */
#ifndef CG_ALLGATHER_H
#define CG_ALLGATHER_H

#include "coll/cg_comm_int.h"

cg_status_t cg_allgather_ll_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);
cg_status_t cg_allgather_direct_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);
cg_status_t cg_allgather_hier_ring_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call);
cg_status_t cg_allgather_hier_leader_run(cg_comm_t *comm, const cg_plan_t *plan,
                                         const cg_call_t *call);

#endif
