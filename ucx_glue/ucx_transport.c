/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* UCP context, worker, endpoints and tagged operations. */
#include "ucx_glue/cg_ucx.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

/* One endpoint per peer worker for the life of the worker, shared by every communicator
 * over that peer: UCX pairs the endpoints of two workers, so a second endpoint to the same
 * peer, closed when its communicator is freed, could take down transfers of another
 * communicator (canceled requests), and closing endpoints while peers do the same can wait
 * for ever. Endpoints close when the worker does. */
struct cg_ucx_ep {
    ucp_ep_h          ep;
    ucs_status_t      failed; /* set by the error handler */
    unsigned          users;  /* communicators holding it */
    int               retired; /* failed and out of the list: its last user closes it */
    size_t            address_len;
    void             *address; /* the peer worker's address: the cache key */
    struct cg_ucx_ep *next;
};

struct cg_ucx {
    cg_ucx_t      *parent;  /* a lane: another worker on the parent's context */
    int            thread_multi;
    ucp_context_h  context;
    ucp_worker_h   worker;
    ucp_address_t *address;
    size_t         address_len;
    uint64_t       memory_types;
    char           description[160];
    pthread_mutex_t ep_lock;
    cg_ucx_ep_t   *eps;     /* the endpoint cache */
};

static cg_ucx_counters_t cg_ucx_count; /* atomics */

void cg_ucx_counters(cg_ucx_counters_t *counters)
{
    counters->workers           = __atomic_load_n(&cg_ucx_count.workers, __ATOMIC_RELAXED);
    counters->endpoints         = __atomic_load_n(&cg_ucx_count.endpoints, __ATOMIC_RELAXED);
    counters->endpoints_created = __atomic_load_n(&cg_ucx_count.endpoints_created, __ATOMIC_RELAXED);
}

/* UCX's view of a failed operation. A peer that UCX cannot reach (timeout, reset,
 * unreachable) or a canceled request is a transport error here: whether the peer died is
 * for the caller to find out (inter_transport.c checks the pids it knows); a canceled
 * request never means that the peer is gone. */
static cg_status_t cg_ucx_status(ucs_status_t status)
{
    switch (status) {
    case UCS_OK:            return CG_OK;
    case UCS_ERR_NO_MEMORY: return CG_ERR_NO_MEMORY;
    default:                return CG_ERR_TRANSPORT;
    }
}

cg_status_t cg_ucx_create(const cg_ucx_config_t *config, cg_ucx_t **ucx_out)
{
    ucp_params_t        params = {0};
    ucp_worker_params_t wparams = {0};
    ucp_context_attr_t  attr = {0};
    ucp_config_t       *ucp_config;
    ucs_status_t        status;
    cg_ucx_t           *ucx = calloc(1, sizeof(*ucx));

    if (ucx == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    pthread_mutex_init(&ucx->ep_lock, NULL);
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
    ucx->thread_multi          = config->thread_multi;
    status            = ucp_init(&params, ucp_config, &ucx->context);
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
    status              = ucp_worker_create(ucx->context, &wparams, &ucx->worker);
    if (status != UCS_OK) {
        cg_error(CG_SUB_UCX, "ucp_worker_create failed: %s", ucs_status_string(status));
        goto err_context;
    }
    status = ucp_worker_get_address(ucx->worker, &ucx->address, &ucx->address_len);
    if (status != UCS_OK) {
        cg_error(CG_SUB_UCX, "ucp_worker_get_address failed: %s", ucs_status_string(status));
        goto err_worker;
    }
    attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
    if (ucp_context_query(ucx->context, &attr) == UCS_OK) {
        ucx->memory_types = attr.memory_types;
    }
    snprintf(ucx->description, sizeof(ucx->description), "UCX %s, devices %s, memory types %#lx%s",
             ucp_get_version_string(), (config->net_devices && config->net_devices[0]) ?
             config->net_devices : "(UCX's choice)", (unsigned long)ucx->memory_types,
             cg_ucx_supports_cuda(ucx) ? " (CUDA: direct)" : " (host only: device data is staged)");
    cg_detail(CG_SUB_UCX, "%s", ucx->description);
    __atomic_add_fetch(&cg_ucx_count.workers, 1, __ATOMIC_RELAXED);
    *ucx_out = ucx;
    return CG_OK;

err_worker:
    ucp_worker_destroy(ucx->worker);
err_context:
    ucp_cleanup(ucx->context);
err:
    free(ucx);
    return CG_ERR_TRANSPORT;
}

cg_status_t cg_ucx_create_lane(cg_ucx_t *parent, cg_ucx_t **lane_out)
{
    ucp_worker_params_t wparams = {0};
    ucs_status_t        status;
    cg_ucx_t           *ucx = calloc(1, sizeof(*ucx));

    if (ucx == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    *ucx        = *parent;
    ucx->parent = parent;
    ucx->eps    = NULL;
    pthread_mutex_init(&ucx->ep_lock, NULL);
    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = parent->thread_multi ? UCS_THREAD_MODE_MULTI : UCS_THREAD_MODE_SERIALIZED;
    status              = ucp_worker_create(parent->context, &wparams, &ucx->worker);
    if (status != UCS_OK) {
        cg_error(CG_SUB_UCX, "ucp_worker_create (lane) failed: %s", ucs_status_string(status));
        free(ucx);
        return CG_ERR_TRANSPORT;
    }
    status = ucp_worker_get_address(ucx->worker, &ucx->address, &ucx->address_len);
    if (status != UCS_OK) {
        cg_error(CG_SUB_UCX, "ucp_worker_get_address (lane) failed: %s", ucs_status_string(status));
        ucp_worker_destroy(ucx->worker);
        free(ucx);
        return CG_ERR_TRANSPORT;
    }
    __atomic_add_fetch(&cg_ucx_count.workers, 1, __ATOMIC_RELAXED);
    *lane_out = ucx;
    return CG_OK;
}

static void cg_ucx_ep_close(cg_ucx_t *ucx, cg_ucx_ep_t *endpoint, int force);

void cg_ucx_destroy(cg_ucx_t *ucx)
{
    if (ucx == NULL) {
        return;
    }
    /* the end of the process: every communicator is gone, peers close theirs too; nothing
     * is in flight (every collective flushed before it returned): no handshake to wait for */
    while (ucx->eps != NULL) {
        cg_ucx_ep_t *endpoint = ucx->eps;
        ucx->eps         = endpoint->next;
        cg_ucx_ep_close(ucx, endpoint, 1);
    }
    pthread_mutex_destroy(&ucx->ep_lock);
    ucp_worker_release_address(ucx->worker, ucx->address);
    ucp_worker_destroy(ucx->worker);
    __atomic_sub_fetch(&cg_ucx_count.workers, 1, __ATOMIC_RELAXED);
    if (ucx->parent == NULL) {
        ucp_cleanup(ucx->context);
    }
    free(ucx);
}

int cg_ucx_supports_cuda(const cg_ucx_t *ucx)
{
    return (ucx->memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;
}

const char *cg_ucx_describe(const cg_ucx_t *ucx)
{
    return ucx->description;
}

cg_status_t cg_ucx_address(cg_ucx_t *ucx, const void **addr, size_t *len)
{
    *addr = ucx->address;
    *len  = ucx->address_len;
    return CG_OK;
}

static void cg_ucx_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    cg_ucx_ep_t *endpoint = arg;

    (void)ep;
    endpoint->failed = status;
    /* a warning: the operations on it fail and report the error where it matters (after
     * a failed collective, peers closing their side also end up here) */
    cg_warn(CG_SUB_UCX, "connection to a peer failed: %s", ucs_status_string(status));
}

static cg_status_t cg_ucx_ep_open(cg_ucx_t *ucx, const void *peer_addr, size_t addr_len,
                                  int same_host, cg_ucx_ep_t **ep_out)
{
    ucp_ep_params_t params = {0};
    ucs_status_t    status;
    cg_ucx_ep_t    *endpoint = calloc(1, sizeof(*endpoint));

    if (endpoint == NULL || (endpoint->address = malloc(addr_len)) == NULL) {
        free(endpoint);
        return CG_ERR_NO_MEMORY;
    }
    memcpy(endpoint->address, peer_addr, addr_len);
    endpoint->address_len         = addr_len;
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address         = peer_addr;
    params.err_mode        = same_host ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb  = cg_ucx_ep_error;
    params.err_handler.arg = endpoint;
    status                 = ucp_ep_create(ucx->worker, &params, &endpoint->ep);
    if (status != UCS_OK) {
        cg_error(CG_SUB_UCX, "ucp_ep_create failed: %s", ucs_status_string(status));
        free(endpoint->address);
        free(endpoint);
        return cg_ucx_status(status);
    }
    __atomic_add_fetch(&cg_ucx_count.endpoints, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&cg_ucx_count.endpoints_created, 1, __ATOMIC_RELAXED);
    *ep_out = endpoint;
    return CG_OK;
}

cg_status_t cg_ucx_ep_create(cg_ucx_t *ucx, const void *peer_addr, size_t addr_len, int same_host,
                             cg_ucx_ep_t **ep_out)
{
    cg_ucx_ep_t **link, *stale = NULL;
    cg_status_t   status = CG_OK;

    pthread_mutex_lock(&ucx->ep_lock);
    for (link = &ucx->eps; *link != NULL; link = &(*link)->next) {
        cg_ucx_ep_t *endpoint = *link;
        if (endpoint->address_len == addr_len && memcmp(endpoint->address, peer_addr, addr_len) == 0) {
            if (endpoint->failed == UCS_OK) {
                endpoint->users++;
                *ep_out = endpoint;
                pthread_mutex_unlock(&ucx->ep_lock);
                return CG_OK;
            }
            /* the connection failed earlier: a new communicator gets a new one; the old
             * one closes now, or when the last communicator still holding it lets go */
            *link             = endpoint->next;
            endpoint->retired = 1;
            stale             = endpoint->users == 0 ? endpoint : NULL;
            break;
        }
    }
    status = cg_ucx_ep_open(ucx, peer_addr, addr_len, same_host, ep_out);
    if (status == CG_OK) {
        (*ep_out)->users = 1;
        (*ep_out)->next  = ucx->eps;
        ucx->eps           = *ep_out;
    }
    pthread_mutex_unlock(&ucx->ep_lock);
    if (stale != NULL) {
        cg_ucx_ep_close(ucx, stale, 1);
    }
    return status;
}

/* Progress until req completes or seconds pass; release it either way (UCX frees a
 * request released early when it completes). */
static ucs_status_t cg_ucx_wait_bounded(cg_ucx_t *ucx, ucs_status_ptr_t req, double seconds)
{
    ucs_status_t status;
    double       t0   = cg_time_now();
    cg_pace_t    pace = {0};

    if (!UCS_PTR_IS_PTR(req)) {
        return UCS_PTR_STATUS(req);
    }
    while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS &&
           cg_time_now() - t0 < seconds) {
        if (!ucp_worker_progress(ucx->worker)) {
            (void)cg_pace(&pace);
        }
    }
    ucp_request_free(req);
    return status;
}

static void cg_ucx_ep_close(cg_ucx_t *ucx, cg_ucx_ep_t *endpoint, int force)
{
    ucp_request_param_t params = {0};

    if (endpoint->failed != UCS_OK || force) {
        params.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        params.flags        = UCP_EP_CLOSE_FLAG_FORCE;
    }
    __atomic_sub_fetch(&cg_ucx_count.endpoints, 1, __ATOMIC_RELAXED);
    if (cg_ucx_wait_bounded(ucx, ucp_ep_close_nbx(endpoint->ep, &params), 2.0) == UCS_INPROGRESS) {
        /* UCX may still report an error on it to its handler, whose argument is this
         * record: it stays (a few bytes, on a path that is failing already) */
        cg_debug(CG_SUB_UCX, "an endpoint did not close within 2 s: left to UCX");
        return;
    }
    free(endpoint->address);
    free(endpoint);
}

void cg_ucx_ep_release(cg_ucx_t *ucx, cg_ucx_ep_t *endpoint)
{
    int last;

    if (endpoint == NULL) {
        return;
    }
    pthread_mutex_lock(&ucx->ep_lock);
    if (endpoint->users > 0) {
        endpoint->users--; /* stays open for the next communicator over this peer */
    }
    last = endpoint->retired && endpoint->users == 0;
    pthread_mutex_unlock(&ucx->ep_lock);
    if (last) { /* replaced after a failure while this communicator held it */
        cg_ucx_ep_close(ucx, endpoint, 1);
    }
}

void cg_ucx_cancel(cg_ucx_t *ucx, void *req)
{
    if (req == NULL) {
        return;
    }
    ucp_request_cancel(ucx->worker, req);
    (void)cg_ucx_wait_bounded(ucx, req, 1.0);
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

cg_status_t cg_ucx_flush_start(cg_ucx_t *ucx, void **req)
{
    ucp_request_param_t params = {0};

    return cg_ucx_started(ucp_worker_flush_nbx(ucx->worker, &params), "ucp_worker_flush_nbx",
                          req);
}

cg_status_t cg_ucx_isend(cg_ucx_t *ucx, cg_ucx_ep_t *endpoint, const void *buf, size_t len, uint64_t tag,
                         int device, void **req)
{
    ucp_request_param_t params = {0};

    (void)ucx;
    if (endpoint->failed != UCS_OK) {
        return cg_ucx_status(endpoint->failed);
    }
    params.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
    params.memory_type  = device ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST;
    return cg_ucx_started(ucp_tag_send_nbx(endpoint->ep, buf, len, tag, &params), "ucp_tag_send_nbx", req);
}

cg_status_t cg_ucx_irecv(cg_ucx_t *ucx, void *buf, size_t len, uint64_t tag, uint64_t mask,
                         int device, void **req)
{
    ucp_request_param_t params = {0};

    params.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
    params.memory_type  = device ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST;
    return cg_ucx_started(ucp_tag_recv_nbx(ucx->worker, buf, len, tag, mask, &params),
                          "ucp_tag_recv_nbx", req);
}

cg_status_t cg_ucx_test(cg_ucx_t *ucx, void *req, int *done)
{
    ucs_status_t status;

    *done = 0;
    if (req == NULL) {
        *done = 1;
        return CG_OK;
    }
    (void)ucx;
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

unsigned cg_ucx_progress(cg_ucx_t *ucx)
{
    return ucp_worker_progress(ucx->worker);
}

void cg_ucx_release(cg_ucx_t *ucx, void *req)
{
    (void)ucx;
    if (req != NULL) {
        ucp_request_free(req);
    }
}

int cg_ucx_probe(cg_ucx_t *ucx, uint64_t tag, uint64_t mask, int remove, uint64_t *word)
{
    static uint64_t     spare; /* a sink when there is no memory (its value then unread) */
    ucp_request_param_t params = {0};
    ucp_tag_recv_info_t info;
    ucp_tag_message_h   msg;
    uint64_t           *sink;
    ucs_status_t        status;

    ucp_worker_progress(ucx->worker);
    msg = ucp_tag_probe_nb(ucx->worker, tag, mask, remove, &info);
    if (msg == NULL) {
        return 0;
    }
    if (word != NULL) {
        *word = 0;
    }
    if (remove) { /* a removed message must still be received: into the heap, where a
                     completion later than the bound below may still write */
        sink   = calloc(1, sizeof(*sink));
        status = cg_ucx_wait_bounded(
            ucx, ucp_tag_msg_recv_nbx(ucx->worker, sink != NULL ? sink : &spare,
                                      CG_MIN(info.length, sizeof(*sink)), msg, &params),
            1.0);
        if (status == UCS_INPROGRESS) {
            return 1; /* sink left to the receive (8 bytes) */
        }
        if (word != NULL && sink != NULL) {
            memcpy(word, sink, sizeof(*word));
        }
        free(sink);
    }
    return 1;
}
