/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* UCP context, worker, endpoints and tagged operations. */
#include "ucx_glue/cg_ucx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

struct cg_ucx {
    cg_ucx_t      *parent;  /* a lane: another worker on the parent's context */
    int            thread_multi;
    ucp_context_h  context;
    ucp_worker_h   worker;
    ucp_address_t *address;
    size_t         address_len;
    uint64_t       memory_types;
    char           description[160];
};

struct cg_ucx_ep {
    ucp_ep_h     ep;
    ucs_status_t failed; /* set by the error handler */
};

int cg_ucx_built(void)
{
    return 1;
}

static cg_status_t cg_ucx_status(ucs_status_t status)
{
    switch (status) {
    case UCS_OK:                    return CG_OK;
    case UCS_ERR_NO_MEMORY:         return CG_ERR_NO_MEMORY;
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_CANCELED:          return CG_ERR_PEER;
    default:                        return CG_ERR_TRANSPORT;
    }
}

cg_status_t cg_ucx_create(const cg_ucx_config_t *config, cg_ucx_t **ucx_out)
{
    ucp_params_t        params = {0};
    ucp_worker_params_t wparams = {0};
    ucp_context_attr_t  attr = {0};
    ucp_config_t       *ucp_config;
    ucs_status_t        status;
    cg_ucx_t           *u = calloc(1, sizeof(*u));

    if (u == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    status = ucp_config_read(NULL, NULL, &ucp_config);
    if (status != UCS_OK) {
        cg_error(CG_SUB_UCX, "ucp_config_read failed: %s", ucs_status_string(status));
        goto err;
    }
    if (config->net_devices && config->net_devices[0] && getenv("UCX_NET_DEVICES") == NULL) {
        if (ucp_config_modify(ucp_config, "NET_DEVICES", config->net_devices) != UCS_OK) {
            cg_warn(CG_SUB_UCX, "UCX refused NET_DEVICES=%s: its own choice applies",
                    config->net_devices);
        }
    }
    /* lanes: several workers on this context, driven by different threads */
    params.field_mask        = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features          = UCP_FEATURE_TAG;
    params.mt_workers_shared = 1;
    u->thread_multi          = config->thread_multi;
    status            = ucp_init(&params, ucp_config, &u->context);
    ucp_config_release(ucp_config);
    if (status != UCS_OK) {
        cg_error(CG_SUB_UCX, "ucp_init failed: %s", ucs_status_string(status));
        goto err;
    }
    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    /* serialized: a communicator's pipeline thread drives the worker while the
     * application's thread waits, never both at once */
    wparams.thread_mode = config->thread_multi ? UCS_THREAD_MODE_MULTI
                                               : UCS_THREAD_MODE_SERIALIZED;
    status              = ucp_worker_create(u->context, &wparams, &u->worker);
    if (status != UCS_OK) {
        cg_error(CG_SUB_UCX, "ucp_worker_create failed: %s", ucs_status_string(status));
        goto err_context;
    }
    status = ucp_worker_get_address(u->worker, &u->address, &u->address_len);
    if (status != UCS_OK) {
        cg_error(CG_SUB_UCX, "ucp_worker_get_address failed: %s", ucs_status_string(status));
        goto err_worker;
    }
    attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
    if (ucp_context_query(u->context, &attr) == UCS_OK) {
        u->memory_types = attr.memory_types;
    }
    snprintf(u->description, sizeof(u->description), "UCX %s, devices %s, memory types %#lx%s",
             ucp_get_version_string(), (config->net_devices && config->net_devices[0]) ?
             config->net_devices : "(UCX's choice)", (unsigned long)u->memory_types,
             cg_ucx_supports_cuda(u) ? " (CUDA: direct)" : " (host only: device data is staged)");
    cg_detail(CG_SUB_UCX, "%s", u->description);
    *ucx_out = u;
    return CG_OK;

err_worker:
    ucp_worker_destroy(u->worker);
err_context:
    ucp_cleanup(u->context);
err:
    free(u);
    return CG_ERR_TRANSPORT;
}

cg_status_t cg_ucx_create_lane(cg_ucx_t *parent, cg_ucx_t **lane_out)
{
    ucp_worker_params_t wparams = {0};
    ucs_status_t        status;
    cg_ucx_t           *u = calloc(1, sizeof(*u));

    if (u == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    *u        = *parent;
    u->parent = parent;
    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = parent->thread_multi ? UCS_THREAD_MODE_MULTI : UCS_THREAD_MODE_SERIALIZED;
    status              = ucp_worker_create(parent->context, &wparams, &u->worker);
    if (status != UCS_OK) {
        cg_error(CG_SUB_UCX, "ucp_worker_create (lane) failed: %s", ucs_status_string(status));
        free(u);
        return CG_ERR_TRANSPORT;
    }
    status = ucp_worker_get_address(u->worker, &u->address, &u->address_len);
    if (status != UCS_OK) {
        cg_error(CG_SUB_UCX, "ucp_worker_get_address (lane) failed: %s", ucs_status_string(status));
        ucp_worker_destroy(u->worker);
        free(u);
        return CG_ERR_TRANSPORT;
    }
    *lane_out = u;
    return CG_OK;
}

void cg_ucx_destroy(cg_ucx_t *u)
{
    if (u == NULL) {
        return;
    }
    ucp_worker_release_address(u->worker, u->address);
    ucp_worker_destroy(u->worker);
    if (u->parent == NULL) {
        ucp_cleanup(u->context);
    }
    free(u);
}

int cg_ucx_supports_cuda(const cg_ucx_t *u)
{
    return (u->memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;
}

const char *cg_ucx_describe(const cg_ucx_t *u)
{
    return u->description;
}

cg_status_t cg_ucx_address(cg_ucx_t *u, const void **addr, size_t *len)
{
    *addr = u->address;
    *len  = u->address_len;
    return CG_OK;
}

static void cg_ucx_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    cg_ucx_ep_t *e = arg;

    (void)ep;
    e->failed = status;
    /* a warning: the operations on it fail and report the error where it matters (after
     * a failed collective, peers closing their side also end up here) */
    cg_warn(CG_SUB_UCX, "connection to a peer failed: %s", ucs_status_string(status));
}

cg_status_t cg_ucx_ep_create(cg_ucx_t *u, const void *peer_addr, cg_ucx_ep_t **ep_out)
{
    ucp_ep_params_t params = {0};
    ucs_status_t    status;
    cg_ucx_ep_t    *e = calloc(1, sizeof(*e));

    if (e == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address         = peer_addr;
    params.err_mode        = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb  = cg_ucx_ep_error;
    params.err_handler.arg = e;
    status                 = ucp_ep_create(u->worker, &params, &e->ep);
    if (status != UCS_OK) {
        cg_error(CG_SUB_UCX, "ucp_ep_create failed: %s", ucs_status_string(status));
        free(e);
        return cg_ucx_status(status);
    }
    *ep_out = e;
    return CG_OK;
}

/* Progress until req completes or seconds pass; release it either way (UCX frees a
 * request released early when it completes). */
static ucs_status_t cg_ucx_wait_bounded(cg_ucx_t *u, ucs_status_ptr_t req, double seconds)
{
    ucs_status_t status;
    double       t0 = cg_time_now();

    if (!UCS_PTR_IS_PTR(req)) {
        return UCS_PTR_STATUS(req);
    }
    while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS &&
           cg_time_now() - t0 < seconds) {
        ucp_worker_progress(u->worker);
    }
    ucp_request_free(req);
    return status;
}

void cg_ucx_ep_destroy(cg_ucx_t *u, cg_ucx_ep_t *e, int force)
{
    ucp_request_param_t params = {0};

    if (e == NULL) {
        return;
    }
    /* Flush what is still in flight (eager data may sit in a transport's buffer), but a
     * peer that already left must not hold the teardown: force after an error. */
    if (e->failed != UCS_OK || force) {
        params.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        params.flags        = UCP_EP_CLOSE_FLAG_FORCE;
    }
    if (cg_ucx_wait_bounded(u, ucp_ep_close_nbx(e->ep, &params), 10.0) == UCS_INPROGRESS) {
        cg_warn(CG_SUB_UCX, "an endpoint did not close within 10 s: left behind");
    }
    free(e);
}

cg_status_t cg_ucx_flush(cg_ucx_t *u)
{
    ucp_request_param_t params = {0};
    ucs_status_ptr_t    req    = ucp_worker_flush_nbx(u->worker, &params);
    ucs_status_t        status;

    if (!UCS_PTR_IS_PTR(req)) {
        status = UCS_PTR_STATUS(req);
    } else {
        while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS) {
            ucp_worker_progress(u->worker);
        }
        ucp_request_free(req);
    }
    if (status != UCS_OK) {
        cg_error(CG_SUB_UCX, "flushing the worker failed: %s", ucs_status_string(status));
    }
    return cg_ucx_status(status);
}

void cg_ucx_cancel(cg_ucx_t *u, void *req)
{
    if (req == NULL) {
        return;
    }
    ucp_request_cancel(u->worker, req);
    (void)cg_ucx_wait_bounded(u, req, 1.0);
}

static cg_status_t cg_ucx_started(ucs_status_ptr_t req, const char *what, void **req_out)
{
    if (UCS_PTR_IS_ERR(req)) {
        cg_error(CG_SUB_UCX, "%s failed: %s", what, ucs_status_string(UCS_PTR_STATUS(req)));
        *req_out = NULL;
        return cg_ucx_status(UCS_PTR_STATUS(req));
    }
    *req_out = UCS_PTR_IS_PTR(req) ? req : NULL;
    return CG_OK;
}

cg_status_t cg_ucx_isend(cg_ucx_t *u, cg_ucx_ep_t *e, const void *buf, size_t len, uint64_t tag,
                         int device, void **req)
{
    ucp_request_param_t params = {0};

    (void)u;
    if (e->failed != UCS_OK) {
        return cg_ucx_status(e->failed);
    }
    params.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
    params.memory_type  = device ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST;
    return cg_ucx_started(ucp_tag_send_nbx(e->ep, buf, len, tag, &params), "ucp_tag_send_nbx", req);
}

cg_status_t cg_ucx_irecv(cg_ucx_t *u, void *buf, size_t len, uint64_t tag, uint64_t mask,
                         int device, void **req)
{
    ucp_request_param_t params = {0};

    params.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
    params.memory_type  = device ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST;
    return cg_ucx_started(ucp_tag_recv_nbx(u->worker, buf, len, tag, mask, &params),
                          "ucp_tag_recv_nbx", req);
}

cg_status_t cg_ucx_test(cg_ucx_t *u, void *req, int *done)
{
    ucs_status_t status;

    *done = 0;
    if (req == NULL) {
        *done = 1;
        return CG_OK;
    }
    ucp_worker_progress(u->worker);
    status = ucp_request_check_status(req);
    if (status == UCS_INPROGRESS) {
        return CG_OK;
    }
    ucp_request_free(req);
    *done = 1;
    if (status != UCS_OK) {
        cg_error(CG_SUB_UCX, "a transfer failed: %s", ucs_status_string(status));
        return cg_ucx_status(status);
    }
    return CG_OK;
}

void cg_ucx_progress(cg_ucx_t *u)
{
    ucp_worker_progress(u->worker);
}

void cg_ucx_release(cg_ucx_t *u, void *req)
{
    (void)u;
    if (req != NULL) {
        ucp_request_free(req);
    }
}

int cg_ucx_probe(cg_ucx_t *u, uint64_t tag, uint64_t mask, int remove)
{
    ucp_request_param_t params = {0};
    ucp_tag_recv_info_t info;
    ucp_tag_message_h   msg;
    char                sink[8];

    ucp_worker_progress(u->worker);
    msg = ucp_tag_probe_nb(u->worker, tag, mask, remove, &info);
    if (msg == NULL) {
        return 0;
    }
    if (remove) { /* a removed message must still be received */
        (void)cg_ucx_wait_bounded(
            u, ucp_tag_msg_recv_nbx(u->worker, sink, CG_MIN(info.length, sizeof(sink)), msg, &params),
            1.0);
    }
    return 1;
}
