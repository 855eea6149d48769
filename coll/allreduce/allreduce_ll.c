/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Allreduce ll (one node, small messages): every rank's input to every peer's LL inbox in
 * one device operation, synchronised in the data; each rank reduces the inbox in rank
 * order (the same bits everywhere) into its output. */
#include "coll/allreduce/allreduce.h"

cg_status_t cg_allreduce_ll_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    cg_ll_args_t args = {.coll  = CG_LL_ALLREDUCE,
                         .src   = call->sbuf ? call->sbuf : call->rbuf,
                         .dst   = call->rbuf,
                         .count = call->count,
                         .dtype = call->dtype,
                         .op    = call->op};

    (void)plan;
    return cg_intra_ll(comm->intra, &args, call->watch);
}
