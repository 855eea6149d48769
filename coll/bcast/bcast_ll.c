/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Bcast ll (one node, small messages): the root's buffer to every peer's LL inbox in one
 * device operation, synchronised in the data; each rank copies it out. */
#include "coll/bcast/bcast.h"

cg_status_t cg_bcast_ll_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    cg_ll_args_t args = {.coll  = CG_LL_BCAST,
                         .root  = call->root,
                         .src   = call->rbuf,
                         .dst   = call->rbuf,
                         .count = call->bytes,
                         .dtype = CG_DT_NONE,
                         .op    = CG_OP_NONE};

    (void)plan;
    return cg_intra_ll(comm->intra, &args, call->watch);
}
