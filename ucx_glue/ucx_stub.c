/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* The UCX layer of a build configured --without-ucx: no inter-node transport. */
#include "ucx_glue/cg_ucx.h"

cg_status_t cg_ucx_create(const cg_ucx_config_t *config, cg_ucx_t **ucx_out)
{
    (void)config;
    (void)ucx_out;
    return CG_ERR_UNSUPPORTED;
}

cg_status_t cg_ucx_create_lane(cg_ucx_t *parent, cg_ucx_t **lane_out)
{
    (void)parent;
    (void)lane_out;
    return CG_ERR_UNSUPPORTED;
}

void cg_ucx_destroy(cg_ucx_t *ucx)
{
    (void)ucx;
}

int cg_ucx_supports_cuda(const cg_ucx_t *ucx)
{
    (void)ucx;
    return 0;
}

const char *cg_ucx_describe(const cg_ucx_t *ucx)
{
    (void)ucx;
    return "built without UCX";
}

cg_status_t cg_ucx_address(cg_ucx_t *ucx, const void **addr, size_t *len)
{
    (void)ucx;
    (void)addr;
    (void)len;
    return CG_ERR_UNSUPPORTED;
}

cg_status_t cg_ucx_ep_create(cg_ucx_t *ucx, const void *peer_addr, size_t addr_len, int same_host,
                             cg_ucx_ep_t **ep_out)
{
    (void)ucx;
    (void)same_host;
    (void)peer_addr;
    (void)addr_len;
    (void)ep_out;
    return CG_ERR_UNSUPPORTED;
}

void cg_ucx_ep_release(cg_ucx_t *ucx, cg_ucx_ep_t *ep)
{
    (void)ucx;
    (void)ep;
}

cg_status_t cg_ucx_isend(cg_ucx_t *ucx, cg_ucx_ep_t *ep, const void *buf, size_t len,
                         uint64_t tag, int device, void **req)
{
    (void)ucx, (void)ep, (void)buf, (void)len, (void)tag, (void)device, (void)req;
    return CG_ERR_UNSUPPORTED;
}

cg_status_t cg_ucx_irecv(cg_ucx_t *ucx, void *buf, size_t len, uint64_t tag, uint64_t mask,
                         int device, void **req)
{
    (void)ucx, (void)buf, (void)len, (void)tag, (void)mask, (void)device, (void)req;
    return CG_ERR_UNSUPPORTED;
}

cg_status_t cg_ucx_test(cg_ucx_t *ucx, void *req, int *done)
{
    (void)ucx;
    (void)req;
    *done = 1;
    return CG_ERR_UNSUPPORTED;
}

unsigned cg_ucx_progress(cg_ucx_t *ucx)
{
    (void)ucx;
    return 0;
}

void cg_ucx_cancel(cg_ucx_t *ucx, void *req)
{
    (void)ucx;
    (void)req;
}

void cg_ucx_release(cg_ucx_t *ucx, void *req)
{
    (void)ucx;
    (void)req;
}

int cg_ucx_probe(cg_ucx_t *ucx, uint64_t tag, uint64_t mask, int remove, uint64_t *word)
{
    (void)ucx;
    (void)tag;
    (void)mask;
    (void)remove;
    (void)word;
    return 0;
}

cg_status_t cg_ucx_flush_start(cg_ucx_t *ucx, void **req)
{
    (void)ucx;
    *req = NULL;
    return CG_ERR_UNSUPPORTED;
}

void cg_ucx_counters(cg_ucx_counters_t *counters)
{
    *counters = (cg_ucx_counters_t){0, 0, 0};
}

cg_status_t cg_ucx_watch_releases(void (*release)(void *arg, const void *addr, size_t bytes),
                                  void *arg)
{
    (void)release;
    (void)arg;
    return CG_ERR_UNSUPPORTED;
}

void cg_ucx_unwatch_releases(void)
{
}
