/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Allgather ll (one node, small messages): every rank's block to every peer's LL inbox in one
 * device operation, synchronised in the data; each rank copies the blocks out in rank
 * order. */
#include "coll/allgather/allgather.h"

cg_status_t cg_allgather_ll_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    const char  *own  = (const char *)call->rbuf + (size_t)comm->config.rank * call->bytes;
    cg_ll_args_t args = {.coll  = CG_LL_ALLGATHER,
                         .src   = call->sbuf ? call->sbuf : own, /* in place: in the output */
                         .dst   = call->rbuf,
                         .count = call->bytes,
                         .dtype = CG_DT_NONE,
                         .op    = CG_OP_NONE};

    (void)plan;
    return cg_intra_ll(comm->intra, &args, call->watch);
}
