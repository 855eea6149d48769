/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The process's mappings of peers' allocations, shared by every communicator: legacy CUDA
 * IPC lets a process open an allocation of a peer only once (a second open, from another
 * communicator over the same processes, fails with cudaErrorAlreadyMapped), so mappings
 * must be owned by the process, not by a communicator.
 *
 * Keyed by (peer process, buffer id, base, size). An allocation is mapped once and reused
 * call after call. When a peer frees memory and allocates again at the same address, the
 * new allocation has another buffer id: mappings of that peer overlapping its range are
 * stale and closed before the new one is opened. If the driver still says "already
 * mapped", the peer's unused mappings are purged and the open retried, then every unused
 * mapping of the process, as UCX's cuda_ipc cache does. A mapping in use by a call is
 * pinned and never closed under it; each peer keeps at most CG_IPC_MAX_PER_PEER unpinned
 * mappings (least recently used goes first).
 *
 * A local group's table of known buffers (intra_publish.c) holds the mappings it lists, so
 * that no purge closes them between calls. Only a stale mapping (the peer's allocation was
 * freed: another of its allocations overlaps it) is closed under a hold: it is unlinked and
 * marked dead, and its record goes when the last holder lets go (the buffer id is never
 * published again, so no table looks it up).
 */
#include "coll/intra/intra.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CG_IPC_MAX_PER_PEER 64

struct cg_ipc_mapping {
    uint64_t               peer;
    uint64_t               buffer_id;
    uint64_t               base; /* the peer's address of the allocation */
    uint64_t               size;
    char                  *local; /* where it is mapped here */
    unsigned               pins;  /* calls using it now */
    unsigned               holds; /* groups' tables of known buffers listing it */
    int                    dead;  /* closed and unlinked: freed when pins and holds are 0 */
    uint64_t               last_use;
    struct cg_ipc_mapping *next;
};

static struct {
    pthread_mutex_t      lock;
    cg_dev_t            *dev;
    cg_ipc_mapping_t    *mappings;
    uint64_t             clock;
    cg_ipc_cache_stats_t stats;
} cg_ipc = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Unlink *link from the list and close its mapping; the record goes now unless a table
 * still holds it (then it is dead until the last hold is given back). Lock held. */
static void cg_ipc_drop(cg_ipc_mapping_t **link)
{
    cg_ipc_mapping_t *m = *link;

    *link = m->next;
    if (!cg_dev_abandoned(cg_ipc.dev)) {
        cg_ipc.dev->ops->ipc_close(cg_ipc.dev, m->local);
    }
    cg_ipc.stats.evictions++;
    m->local = NULL;
    m->dead  = 1;
    if (m->holds == 0) {
        free(m);
    }
}

/* Close the unpinned mappings for which drop(m) says so; held ones only if held_too (stale
 * ones). Returns how many. Lock held. */
static int cg_ipc_drop_if(int (*drop)(const cg_ipc_mapping_t *m, const void *arg), const void *arg,
                          int held_too)
{
    int n = 0;

    for (cg_ipc_mapping_t **link = &cg_ipc.mappings; *link != NULL;) {
        if ((*link)->pins == 0 && ((*link)->holds == 0 || held_too) && drop(*link, arg)) {
            cg_ipc_drop(link);
            n++;
        } else {
            link = &(*link)->next;
        }
    }
    return n;
}

typedef struct {
    uint64_t               peer;
    const cg_ipc_handle_t *handle;
} cg_ipc_match_t;

static int cg_ipc_overlaps(const cg_ipc_mapping_t *m, const void *arg)
{
    const cg_ipc_match_t *k = arg;

    return m->peer == k->peer && m->base < k->handle->base + k->handle->size &&
           k->handle->base < m->base + m->size;
}

static int cg_ipc_of_peer(const cg_ipc_mapping_t *m, const void *arg)
{
    return m->peer == ((const cg_ipc_match_t *)arg)->peer;
}

static int cg_ipc_any(const cg_ipc_mapping_t *m, const void *arg)
{
    (void)m;
    (void)arg;
    return 1;
}

/* When the peer has too many unpinned mappings, close its least recently used one. */
static void cg_ipc_limit_peer(uint64_t peer)
{
    cg_ipc_mapping_t **lru = NULL;
    int                count = 0;

    for (cg_ipc_mapping_t **link = &cg_ipc.mappings; *link != NULL; link = &(*link)->next) {
        if ((*link)->peer == peer && (*link)->pins == 0 && (*link)->holds == 0) {
            count++;
            if (lru == NULL || (*link)->last_use < (*lru)->last_use) {
                lru = link;
            }
        }
    }
    if (count >= CG_IPC_MAX_PER_PEER && lru != NULL) {
        cg_ipc_drop(lru);
    }
}

/* Open the handle: on "already mapped", purge the peer's unused mappings and retry, then
 * every unused mapping of the process and retry. Lock held. */
static cg_status_t cg_ipc_open(const cg_ipc_match_t *key, void **local)
{
    cg_status_t status = cg_ipc.dev->ops->ipc_import(cg_ipc.dev, key->handle, local);

    if (status == CG_ERR_ALREADY_MAPPED) {
        int purged = cg_ipc_drop_if(cg_ipc_of_peer, key, 0);
        cg_ipc.stats.retries++;
        cg_debug(CG_SUB_IPC, "already mapped: purged %d mappings of the peer, retrying", purged);
        status = cg_ipc.dev->ops->ipc_import(cg_ipc.dev, key->handle, local);
    }
    if (status == CG_ERR_ALREADY_MAPPED) {
        int purged = cg_ipc_drop_if(cg_ipc_any, NULL, 0);
        cg_ipc.stats.retries++;
        cg_debug(CG_SUB_IPC, "still already mapped: purged %d mappings, retrying", purged);
        status = cg_ipc.dev->ops->ipc_import(cg_ipc.dev, key->handle, local);
    }
    return status;
}

cg_status_t cg_ipc_acquire(cg_dev_t *dev, uint64_t peer, const cg_ipc_handle_t *handle,
                           char **ptr, cg_ipc_mapping_t **pin)
{
    cg_ipc_match_t    key = {peer, handle};
    cg_ipc_mapping_t *m;
    cg_status_t       status;
    void             *local;

    if (handle->buffer_id == 0 || handle->offset > handle->size) {
        return CG_ERR_INVALID_PARAM;
    }
    pthread_mutex_lock(&cg_ipc.lock);
    if (cg_ipc.dev != NULL && cg_ipc.dev != dev) {
        pthread_mutex_unlock(&cg_ipc.lock);
        return CG_ERR_INVALID_PARAM; /* one device layer per process */
    }
    cg_ipc.dev = dev;
    cg_ipc.clock++;
    for (m = cg_ipc.mappings; m != NULL; m = m->next) {
        if (m->peer == peer && m->buffer_id == handle->buffer_id && m->base == handle->base &&
            m->size == handle->size) {
            m->pins++;
            m->last_use = cg_ipc.clock;
            cg_ipc.stats.hits++;
            pthread_mutex_unlock(&cg_ipc.lock);
            *ptr = m->local + handle->offset;
            *pin = m;
            return CG_OK;
        }
    }
    if (cg_ipc_drop_if(cg_ipc_overlaps, &key, 1) > 0) {
        cg_debug(CG_SUB_IPC, "peer %#lx reused [%#lx, +%lu): stale mappings closed",
                 (unsigned long)peer, (unsigned long)handle->base, (unsigned long)handle->size);
    }
    cg_ipc_limit_peer(peer);
    m      = calloc(1, sizeof(*m));
    status = m == NULL ? CG_ERR_NO_MEMORY : cg_ipc_open(&key, &local);
    if (status != CG_OK) {
        free(m);
        pthread_mutex_unlock(&cg_ipc.lock);
        return status;
    }
    *m = (cg_ipc_mapping_t){.peer = peer, .buffer_id = handle->buffer_id, .base = handle->base,
                            .size = handle->size, .local = local, .pins = 1,
                            .last_use = cg_ipc.clock, .next = cg_ipc.mappings};
    cg_ipc.mappings = m;
    cg_ipc.stats.misses++;
    cg_count(CG_CNT_IPC_IMPORTS, 1);
    pthread_mutex_unlock(&cg_ipc.lock);
    *ptr = (char *)local + handle->offset;
    *pin = m;
    return CG_OK;
}

void cg_ipc_release(cg_ipc_mapping_t *pin, int close_now)
{
    if (pin == NULL) {
        return;
    }
    pthread_mutex_lock(&cg_ipc.lock);
    if (pin->pins > 0 && --pin->pins == 0 && close_now && pin->holds == 0 && !pin->dead) {
        for (cg_ipc_mapping_t **link = &cg_ipc.mappings; *link != NULL; link = &(*link)->next) {
            if (*link == pin) {
                cg_ipc_drop(link);
                break;
            }
        }
    }
    pthread_mutex_unlock(&cg_ipc.lock);
}

void cg_ipc_hold(cg_ipc_mapping_t *mapping)
{
    pthread_mutex_lock(&cg_ipc.lock);
    mapping->holds++;
    pthread_mutex_unlock(&cg_ipc.lock);
}

void cg_ipc_unhold(cg_ipc_mapping_t *mapping)
{
    if (mapping == NULL) {
        return;
    }
    pthread_mutex_lock(&cg_ipc.lock);
    if (mapping->holds > 0 && --mapping->holds == 0 && mapping->dead && mapping->pins == 0) {
        free(mapping);
    }
    pthread_mutex_unlock(&cg_ipc.lock);
}

char *cg_ipc_local(cg_ipc_mapping_t *mapping)
{
    char *local;

    pthread_mutex_lock(&cg_ipc.lock);
    local = mapping->local; /* NULL once dead */
    pthread_mutex_unlock(&cg_ipc.lock);
    return local;
}

void cg_ipc_registry_cleanup(void)
{
    pthread_mutex_lock(&cg_ipc.lock);
    while (cg_ipc.mappings != NULL) {
        cg_ipc_drop(&cg_ipc.mappings);
    }
    cg_ipc.dev = NULL;
    pthread_mutex_unlock(&cg_ipc.lock);
}

void cg_ipc_stats(cg_ipc_cache_stats_t *stats)
{
    pthread_mutex_lock(&cg_ipc.lock);
    *stats = cg_ipc.stats;
    stats->mapped = 0;
    for (cg_ipc_mapping_t *m = cg_ipc.mappings; m != NULL; m = m->next) {
        stats->mapped++;
    }
    pthread_mutex_unlock(&cg_ipc.lock);
}
