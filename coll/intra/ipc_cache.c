/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Mappings of peers' allocations, keyed by (peer, buffer id, base address). An allocation
 * is mapped once and reused call after call. When a peer frees memory and allocates again
 * at the same address, the driver gives the new allocation another buffer id: the old
 * mapping overlaps the new range with a different id, so it is closed and never read
 * again. Each peer keeps at most max_per_peer mappings (least recently used goes first).
 */
#include "coll/intra/intra.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t buffer_id;
    uint64_t base; /* the peer's address of the allocation */
    uint64_t size;
    char    *local; /* where it is mapped here */
    uint64_t last_use;
} cg_ipc_entry_t;

struct cg_ipc_cache {
    cg_dev_t            *dev;
    int                  npeers;
    int                  max_per_peer;
    uint64_t             clock;
    cg_ipc_cache_stats_t stats;
    int                 *count;   /* entries per peer */
    cg_ipc_entry_t      *entries; /* npeers x max_per_peer */
};

cg_status_t cg_ipc_cache_create(cg_dev_t *dev, int npeers, int max_per_peer, cg_ipc_cache_t **out)
{
    cg_ipc_cache_t *c = calloc(1, sizeof(*c));

    if (c == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    c->dev          = dev;
    c->npeers       = npeers;
    c->max_per_peer = max_per_peer > 0 ? max_per_peer : 1;
    c->count        = calloc((size_t)npeers, sizeof(int));
    c->entries      = calloc((size_t)npeers * (size_t)c->max_per_peer, sizeof(cg_ipc_entry_t));
    if (c->count == NULL || c->entries == NULL) {
        cg_ipc_cache_destroy(c);
        return CG_ERR_NO_MEMORY;
    }
    *out = c;
    return CG_OK;
}

static void cg_ipc_cache_drop(cg_ipc_cache_t *c, int peer, int i)
{
    cg_ipc_entry_t *e = &c->entries[peer * c->max_per_peer];

    c->dev->ops->ipc_close(c->dev, e[i].local);
    e[i] = e[--c->count[peer]];
    c->stats.evictions++;
}

void cg_ipc_cache_destroy(cg_ipc_cache_t *c)
{
    if (c == NULL) {
        return;
    }
    for (int p = 0; c->count != NULL && p < c->npeers; p++) {
        while (c->count[p] > 0) {
            cg_ipc_cache_drop(c, p, 0);
        }
    }
    free(c->count);
    free(c->entries);
    free(c);
}

cg_status_t cg_ipc_cache_get(cg_ipc_cache_t *c, int peer, const cg_ipc_handle_t *h, char **ptr)
{
    cg_ipc_entry_t *e;
    cg_status_t     status;
    void           *local;
    int             lru = 0;

    if (peer < 0 || peer >= c->npeers || h->buffer_id == 0 || h->offset > h->size) {
        return CG_ERR_INVALID_PARAM;
    }
    e = &c->entries[peer * c->max_per_peer];
    c->clock++;
    for (int i = 0; i < c->count[peer]; i++) {
        if (e[i].buffer_id == h->buffer_id && e[i].base == h->base && e[i].size == h->size) {
            e[i].last_use = c->clock;
            c->stats.hits++;
            *ptr = e[i].local + h->offset;
            return CG_OK;
        }
    }
    /* Stale mappings: anything of this peer overlapping the new allocation's range. */
    for (int i = 0; i < c->count[peer];) {
        if (e[i].base < h->base + h->size && h->base < e[i].base + e[i].size) {
            cg_debug(CG_SUB_IPC, "peer %d reused [%#lx, +%lu): buffer %lu replaces %lu", peer,
                     (unsigned long)h->base, (unsigned long)h->size,
                     (unsigned long)h->buffer_id, (unsigned long)e[i].buffer_id);
            cg_ipc_cache_drop(c, peer, i);
        } else {
            i++;
        }
    }
    if (c->count[peer] == c->max_per_peer) {
        for (int i = 1; i < c->count[peer]; i++) {
            lru = (e[i].last_use < e[lru].last_use) ? i : lru;
        }
        cg_ipc_cache_drop(c, peer, lru);
    }
    status = c->dev->ops->ipc_import(c->dev, h, &local);
    if (status != CG_OK) {
        return status;
    }
    c->stats.misses++;
    e[c->count[peer]++] = (cg_ipc_entry_t){h->buffer_id, h->base, h->size, local, c->clock};
    *ptr = (char *)local + h->offset;
    return CG_OK;
}

void cg_ipc_cache_stats(const cg_ipc_cache_t *c, cg_ipc_cache_stats_t *stats)
{
    *stats = c->stats;
}
