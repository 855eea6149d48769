/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The worker addresses of a context spanning nodes: every rank's, for each inter-node
 * lane, exchanged once when the context is made. Each slot holds an 8-byte length and the
 * address, and is as long as the longest address any rank has (told in the setup's
 * exchange of results), not the longest UCX may make: a lane keeps size slots, and the
 * exchange moves them all, for every communicator spanning nodes.
 */
#include "coll/cg_comm_int.h"

#include <string.h>

uint32_t cg_comm_addr_bytes(const cg_comm_t *comm, int lanes)
{
    const void *addr;
    size_t      len, longest = 0;

    for (int m = 0; m < lanes && comm->lane[m] != NULL; m++) {
        if (cg_ucx_address(comm->lane[m]->ucx, &addr, &len) == CG_OK) {
            longest = CG_MAX(longest, len);
        }
    }
    return (uint32_t)longest;
}

cg_status_t cg_comm_exchange_addresses(cg_comm_t *comm, size_t longest, int *ok)
{
    const size_t stride = CG_ALIGN_UP(longest + sizeof(uint64_t), sizeof(uint64_t));
    char         mine[CG_UCX_ADDR_MAX + sizeof(uint64_t)];
    size_t       len  = 0;
    const void  *addr = NULL;
    cg_status_t  status;
    int          got = longest <= CG_UCX_ADDR_MAX; /* the same on every rank (results) */

    for (int m = 0; m < comm->num_lanes && got; m++) {
        if (cg_inter_addresses(comm->lane[m], stride) == NULL) {
            cg_warn(CG_SUB_UCX, "no memory for the worker addresses (%zu bytes): staged path",
                    (size_t)comm->config.size * stride);
            got = 0;
        }
    }
    status = cg_comm_vote(comm, &got); /* a rank without the memory would miss the exchanges */
    *ok &= got;
    cg_detail(CG_SUB_UCX, "worker addresses of %d lanes: slots of %zu bytes", comm->num_lanes,
              stride);
    for (int m = 0; m < comm->num_lanes && status == CG_OK && got; m++) {
        if (cg_ucx_address(comm->lane[m]->ucx, &addr, &len) != CG_OK || len > longest) {
            len = 0; /* cannot be (told before): an empty address, refused at first use */
        }
        memset(mine, 0, stride);
        memcpy(mine, &(uint64_t){len}, sizeof(uint64_t));
        if (len > 0) {
            memcpy(mine + sizeof(uint64_t), addr, len);
        }
        status = comm->oob.allgather(comm->oob.ctx, mine, comm->lane[m]->addrs, stride);
    }
    return status;
}
