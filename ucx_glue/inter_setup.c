/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* A transport between nodes (cg_inter_t): its setup, its staging chunks and device memory
 * for received blocks, kept from one communicator to the next, and its end. The exchanges
 * themselves: inter_transport.c. */
#include "ucx_glue/cg_ucx.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- buffers kept from one communicator to the next ---------------------------------------
 * A communicator's transport holds page-locked staging chunks with their events and device
 * memory for received blocks; allocating them (cudaHostAlloc, cudaMalloc) costs more than
 * the rest of a communicator's setup. Freed transports leave them here for the next ones. */
#define CG_INTER_KEPT_MAX 16

typedef struct {
    cg_dev_t       *dev;
    int             device; /* 1: device memory for received blocks; 0: staging chunks */
    size_t          bytes;
    void           *memory;
    int             nevents;
    cg_dev_event_t *events[2 * CG_INTER_MAX_DEPTH];
} cg_inter_kept_t;

static pthread_mutex_t cg_inter_kept_lock = PTHREAD_MUTEX_INITIALIZER;
static cg_inter_kept_t cg_inter_kept[CG_INTER_KEPT_MAX];
static int             cg_inter_nkept;

static void cg_inter_kept_free(cg_inter_kept_t *kept)
{
    for (int i = 0; i < kept->nevents; i++) {
        kept->dev->ops->event_destroy(kept->dev, kept->events[i]);
    }
    if (kept->device) {
        cg_dev_mem_release(kept->dev, kept->memory);
    } else {
        cg_dev_host_release(kept->dev, kept->memory);
    }
}

/* Keep memory for a later transport (or free it when there is no room). */
static void cg_inter_keep(const cg_inter_kept_t *kept)
{
    cg_inter_kept_t spill = *kept;

    pthread_mutex_lock(&cg_inter_kept_lock);
    if (cg_inter_nkept < CG_INTER_KEPT_MAX) {
        cg_inter_kept[cg_inter_nkept++] = *kept;
        spill.memory                  = NULL;
    }
    pthread_mutex_unlock(&cg_inter_kept_lock);
    if (spill.memory != NULL) {
        cg_inter_kept_free(&spill);
    }
}

/* Take kept memory of dev: staging chunks of exactly bytes, or device memory of at least
 * bytes. 0: none. */
static int cg_inter_take(cg_dev_t *dev, int device, size_t bytes, cg_inter_kept_t *out)
{
    int found = 0;

    pthread_mutex_lock(&cg_inter_kept_lock);
    for (int i = 0; i < cg_inter_nkept && !found; i++) {
        cg_inter_kept_t *kept = &cg_inter_kept[i];
        if (kept->dev == dev && kept->device == device &&
            (device ? kept->bytes >= bytes : kept->bytes == bytes)) {
            *out  = *kept;
            *kept = cg_inter_kept[--cg_inter_nkept];
            found = 1;
        }
    }
    pthread_mutex_unlock(&cg_inter_kept_lock);
    return found;
}

void cg_inter_release_kept(void)
{
    pthread_mutex_lock(&cg_inter_kept_lock);
    while (cg_inter_nkept > 0) {
        cg_inter_kept_free(&cg_inter_kept[--cg_inter_nkept]);
    }
    pthread_mutex_unlock(&cg_inter_kept_lock);
}

/* ---- tag ids held by live communicators ---------------------------------------------------
 * Ids of the PMIx kind are hashed into the tags' 23 bits (cg_inter_tag_id): two live
 * communicators may get one tag id, and their messages would meet (a receive of one matching
 * a send of the other; a setup's cg_inter_forget removing the other's). Each holds its id
 * here while it lives; a process holding both would see them meet, so it refuses the second.
 * Agreed ids are unique among live communicators: not held. */
static pthread_mutex_t cg_inter_claims_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t       *cg_inter_claims; /* tag ids */
static int             cg_inter_num_claims, cg_inter_max_claims;

cg_status_t cg_inter_tag_claim(uint32_t comm_id)
{
    const uint32_t tag_id = cg_inter_tag_id(comm_id);
    cg_status_t    status = CG_OK;

    if (comm_id < CG_INTER_AGREED_IDS) {
        return CG_OK;
    }
    pthread_mutex_lock(&cg_inter_claims_lock);
    for (int i = 0; i < cg_inter_num_claims && status == CG_OK; i++) {
        status = cg_inter_claims[i] == tag_id ? CG_ERR_UNSUPPORTED : CG_OK;
    }
    if (status == CG_OK && cg_inter_num_claims == cg_inter_max_claims) {
        const int grown = CG_MAX(16, 2 * cg_inter_max_claims);
        uint32_t *claims = realloc(cg_inter_claims, (size_t)grown * sizeof(*claims));
        status = claims != NULL ? CG_OK : CG_ERR_NO_MEMORY;
        if (claims != NULL) {
            cg_inter_claims     = claims;
            cg_inter_max_claims = grown;
        }
    }
    if (status == CG_OK) {
        cg_inter_claims[cg_inter_num_claims++] = tag_id;
    }
    pthread_mutex_unlock(&cg_inter_claims_lock);
    return status;
}

void cg_inter_tag_release(uint32_t comm_id)
{
    const uint32_t tag_id = cg_inter_tag_id(comm_id);

    pthread_mutex_lock(&cg_inter_claims_lock);
    for (int i = 0; i < cg_inter_num_claims && comm_id >= CG_INTER_AGREED_IDS; i++) {
        if (cg_inter_claims[i] == tag_id) {
            cg_inter_claims[i] = cg_inter_claims[--cg_inter_num_claims];
            break;
        }
    }
    if (cg_inter_num_claims == 0) {
        free(cg_inter_claims);
        cg_inter_claims     = NULL;
        cg_inter_max_claims = 0;
    }
    pthread_mutex_unlock(&cg_inter_claims_lock);
}

/* The page-locked chunks and their events (kept from a freed transport when one fits). */
cg_status_t cg_inter_stage(cg_inter_t *inter)
{
    const size_t    bytes = 2 * (size_t)inter->config.depth * inter->config.chunk_bytes;
    cg_dev_t       *dev   = inter->dev;
    cg_inter_kept_t kept;
    cg_status_t     status = CG_OK;

    inter->staged = 1;
    if (inter->pinned != NULL) {
        return CG_OK;
    }
    if (cg_inter_take(dev, 0, bytes, &kept)) {
        inter->pinned = kept.memory;
        memcpy(inter->events, kept.events, sizeof(kept.events[0]) * (size_t)kept.nevents);
    } else {
        status = dev->ops->host_alloc(dev, bytes, (void **)&inter->pinned);
    }
    for (int i = 0; status == CG_OK && i < 2 * inter->config.depth; i++) {
        if (inter->events[i] == NULL) {
            status = dev->ops->event_create(dev, &inter->events[i]);
        }
    }
    return status;
}

cg_status_t cg_inter_create(cg_ucx_t *ucx, cg_dev_t *dev, int rank, int size, uint32_t comm_id,
                            const cg_inter_config_t *config, cg_inter_t **inter_out)
{
    cg_inter_t *inter = calloc(1, sizeof(*inter));
    cg_status_t status;

    if (inter == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    inter->ucx          = ucx;
    inter->dev          = dev;
    inter->rank         = rank;
    inter->size         = size;
    inter->tag_id       = cg_inter_tag_id(comm_id);
    inter->failed_call  = UINT64_MAX;
    inter->config       = *config;
    inter->config.depth = CG_MAX(1, CG_MIN(config->depth, CG_INTER_MAX_DEPTH));
    inter->config.chunk_bytes = CG_MAX(config->chunk_bytes, (size_t)4096);
    (void)cg_inter_forget(ucx, comm_id); /* before the setup's exchange of results */
    inter->eps          = calloc((size_t)size, sizeof(*inter->eps));
    inter->pids         = calloc((size_t)size, sizeof(*inter->pids));
    inter->config.pids  = NULL;
    if (inter->eps == NULL || inter->pids == NULL) {
        status = CG_ERR_NO_MEMORY;
        goto err;
    }
    if (config->pids != NULL) {
        memcpy(inter->pids, config->pids, (size_t)size * sizeof(*inter->pids));
    }
    inter->ucx_device = (dev->kind == CG_DEV_KIND_CUDA) && cg_ucx_supports_cuda(ucx);
    /* UCX reads device memory itself only when it supports CUDA memory (and the memory
     * is CUDA's); otherwise device data goes through page-locked host chunks, unless the
     * CPU may touch device memory (the lenient host layer) */
    inter->staged     = config->staging == CG_INTER_STAGING_ALWAYS ||
                    (config->staging == CG_INTER_STAGING_AUTO && !inter->ucx_device &&
                     !dev->caps.host_access);
    status = dev->ops->stream_create(dev, &inter->stream);
    if (status != CG_OK) {
        inter->stream = NULL;
        goto err;
    }
    if (inter->staged && (status = cg_inter_stage(inter)) != CG_OK) {
        goto err;
    }
    cg_detail(CG_SUB_UCX, "inter-node transport: %s, %s", cg_ucx_describe(ucx),
              inter->staged ? "staged through page-locked chunks" : "direct");
    *inter_out = inter;
    return CG_OK;

err:
    cg_inter_destroy(inter);
    return status;
}

char *cg_inter_addresses(cg_inter_t *inter, size_t stride)
{
    free(inter->addrs);
    inter->addr_stride = stride;
    inter->addrs       = malloc((size_t)inter->size * stride);
    return inter->addrs;
}

void cg_inter_destroy(cg_inter_t *inter)
{
    cg_dev_t *dev;

    if (inter == NULL) {
        return;
    }
    dev = inter->dev;
    /* Messages of this communicator still waiting (aborts; data a failed call left
     * unreceived) stay: the next communicator of its id removes them at its setup
     * (cg_inter_forget). Here they could already be a live communicator's, when this is a
     * kept context whose id Open MPI gave to a new one. */
    for (int r = 0; inter->eps != NULL && r < inter->size; r++) {
        cg_ucx_ep_release(inter->ucx, inter->eps[r]);
    }
    if (inter->pinned != NULL && !inter->failed) { /* chunks and events for the next one */
        cg_inter_kept_t kept = {dev, 0, 2 * (size_t)inter->config.depth * inter->config.chunk_bytes,
                                inter->pinned, 2 * inter->config.depth, {NULL}};
        memcpy(kept.events, inter->events, sizeof(kept.events[0]) * (size_t)kept.nevents);
        /* those go with the chunks; any beyond (taken with chunks of a deeper transport,
         * of the same bytes) are destroyed below */
        memset(inter->events, 0, sizeof(kept.events[0]) * (size_t)kept.nevents);
        inter->pinned = NULL;
        cg_inter_keep(&kept);
    }
    for (int i = 0; i < 2 * CG_INTER_MAX_DEPTH; i++) {
        if (inter->events[i] != NULL) {
            dev->ops->event_destroy(dev, inter->events[i]);
        }
    }
    if (inter->pinned != NULL) {
        cg_dev_host_release(dev, inter->pinned);
    }
    if (inter->tmp != NULL && !inter->failed) {
        cg_inter_kept_t kept = {dev, 1, inter->tmp_bytes, inter->tmp, 0, {NULL}};
        cg_inter_keep(&kept);
    } else if (inter->tmp != NULL) {
        cg_dev_mem_release(dev, inter->tmp);
    }
    if (inter->stream != NULL) {
        dev->ops->stream_destroy(dev, inter->stream);
    }
    free(inter->eps);
    free(inter->pids);
    free(inter->addrs);
    free(inter);
}

cg_status_t cg_inter_tmp(cg_inter_t *inter, size_t bytes, void **tmp)
{
    cg_status_t status;

    if (bytes > inter->tmp_bytes) {
        cg_inter_kept_t kept;
        if (inter->tmp != NULL) {
            cg_dev_mem_release(inter->dev, inter->tmp);
            inter->tmp       = NULL;
            inter->tmp_bytes = 0;
        }
        if (cg_inter_take(inter->dev, 1, bytes, &kept)) {
            inter->tmp       = kept.memory;
            inter->tmp_bytes = kept.bytes;
            *tmp             = inter->tmp;
            return CG_OK;
        }
        status = inter->dev->ops->mem_alloc(inter->dev, bytes, &inter->tmp);
        if (status != CG_OK) {
            inter->tmp = NULL;
            return status;
        }
        inter->tmp_bytes = bytes;
    }
    *tmp = inter->tmp;
    return CG_OK;
}
