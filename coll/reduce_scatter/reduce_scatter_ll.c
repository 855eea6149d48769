/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Reduce-scatter ll (one node, small messages): block p of every rank's input to rank p's LL
 * inbox in one device operation, synchronised in the data; each rank reduces what it got
 * in rank order into its output. */
#include "coll/reduce_scatter/reduce_scatter.h"

cg_status_t cg_reduce_scatter_ll_run(cg_comm_t *comm, const cg_plan_t *plan,
                                     const cg_call_t *call)
{
    size_t       displs[CG_INTRA_MAX], at = 0;
    cg_ll_args_t args = {.coll   = CG_LL_REDUCE_SCATTER,
                         .src    = call->sbuf ? call->sbuf : call->rbuf,
                         .dst    = call->rbuf,
                         .counts = call->counts,
                         .displs = displs,
                         .dtype  = call->dtype,
                         .op     = call->op};

    (void)plan;
    if (call->comm_size > CG_INTRA_MAX) {
        return CG_ERR_UNSUPPORTED;
    }
    for (int p = 0; p < call->comm_size; p++) {
        displs[p] = at;
        at += call->counts[p];
    }
    return cg_intra_ll(comm->intra, &args, call->watch);
}
