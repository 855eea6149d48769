/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Frees held back while device work waits for peers (cg_dev.h: cg_dev_frees_enable). Below
 * both device layers (the CUDA layer frees its streams' completion words here too): it
 * reaches a layer only through its operations table.
 */
#include "kernels/cg_dev.h"

#include <pthread.h>
#include <stdlib.h>

#define CG_DEV_HELD_MANY 1024 /* frees held at once that the log mentions (once) */

typedef struct cg_dev_held {
    void               *ptr;
    int                 host; /* page-locked host memory (ops->host_free) */
    struct cg_dev_held *next;
} cg_dev_held_t;

struct cg_dev_frees {
    pthread_mutex_t lock;        /* a free runs under it: no waiting work starts meanwhile */
    unsigned        peer_waits;  /* device work in flight that waits for peers */
    cg_dev_held_t  *held;        /* frees kept until peer_waits is 0 */
    unsigned        num_held;
    int             told;        /* many held: said once */
};

/* Nothing is freed any more: device work that never ends would hold the free (abandoned),
 * or the memory went with a reset (lost); the records go. */
static int cg_dev_frees_off(const cg_dev_t *dev)
{
    return cg_dev_abandoned(dev) || cg_dev_lost(dev);
}

static void cg_dev_free_now(cg_dev_t *dev, void *ptr, int host)
{
    if (host) {
        dev->ops->host_free(dev, ptr);
    } else {
        dev->ops->mem_free(dev, ptr);
    }
}

/* Under frees->lock with no waiting work in flight: free what was held (after
 * cg_dev_abandon it stays allocated, after a reset it is gone: only the records go). */
static void cg_dev_frees_flush(cg_dev_t *dev)
{
    const int      off  = cg_dev_frees_off(dev);
    cg_dev_held_t *held = dev->frees->held;

    dev->frees->held     = NULL;
    dev->frees->num_held = 0;
    while (held != NULL) {
        cg_dev_held_t *next = held->next;
        if (!off) {
            cg_dev_free_now(dev, held->ptr, held->host);
        }
        free(held);
        held = next;
    }
}

cg_status_t cg_dev_frees_enable(cg_dev_t *dev)
{
    struct cg_dev_frees *frees;

    if (dev->frees != NULL) {
        return CG_OK;
    }
    frees = calloc(1, sizeof(*frees));
    if (frees == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    pthread_mutex_init(&frees->lock, NULL);
    dev->frees = frees;
    return CG_OK;
}

void cg_dev_peer_wait_begin(cg_dev_t *dev)
{
    if (dev->frees != NULL) {
        pthread_mutex_lock(&dev->frees->lock);
        dev->frees->peer_waits++;
        pthread_mutex_unlock(&dev->frees->lock);
    }
}

void cg_dev_peer_wait_end(cg_dev_t *dev)
{
    if (dev->frees != NULL) {
        pthread_mutex_lock(&dev->frees->lock);
        if (dev->frees->peer_waits == 0) {
            cg_error(CG_SUB_DEV, "device work that waits for peers ended more often than it began");
        } else if (--dev->frees->peer_waits == 0) {
            cg_dev_frees_flush(dev);
        }
        pthread_mutex_unlock(&dev->frees->lock);
    }
}

static void cg_dev_release(cg_dev_t *dev, void *ptr, int host)
{
    cg_dev_held_t *held;

    if (ptr == NULL || cg_dev_frees_off(dev)) {
        return;
    }
    if (dev->frees == NULL) {
        cg_dev_free_now(dev, ptr, host);
        return;
    }
    pthread_mutex_lock(&dev->frees->lock);
    held = dev->frees->peer_waits > 0 ? malloc(sizeof(*held)) : NULL;
    if (held != NULL) {
        *held            = (cg_dev_held_t){.ptr = ptr, .host = host, .next = dev->frees->held};
        dev->frees->held = held;
        cg_count(CG_CNT_FREES_HELD, 1);
        if (++dev->frees->num_held >= CG_DEV_HELD_MANY && cg_once(&dev->frees->told)) {
            cg_warn(CG_SUB_DEV, "%u frees held back: calls on other threads keep device work "
                    "waiting for peers in flight, so their memory stays allocated",
                    dev->frees->num_held);
        }
    } else { /* nothing waits for peers (or no memory to remember it: free, as before) */
        cg_dev_free_now(dev, ptr, host);
    }
    pthread_mutex_unlock(&dev->frees->lock);
}

void cg_dev_mem_release(cg_dev_t *dev, void *ptr)
{
    cg_dev_release(dev, ptr, 0);
}

void cg_dev_host_release(cg_dev_t *dev, void *ptr)
{
    cg_dev_release(dev, ptr, 1);
}

void cg_dev_abandon(cg_dev_t *dev)
{
    if (!__atomic_exchange_n(&dev->abandoned, 1, __ATOMIC_ACQ_REL)) {
        cg_error(CG_SUB_DEV, "device work of a failed collective never ended: from now on this "
                 "process frees no device or page-locked memory of the component (a free "
                 "would wait for that work for ever)");
    }
}

/* At close: nothing runs any more; what was held goes now (unless work was abandoned). */
void cg_dev_frees_close(cg_dev_t *dev)
{
    if (dev->frees != NULL) {
        pthread_mutex_lock(&dev->frees->lock);
        if (!cg_dev_frees_off(dev) && dev->frees->peer_waits != 0) {
            cg_error(CG_SUB_DEV, "%u brackets of device work that waits for peers still open at "
                     "close", dev->frees->peer_waits);
        }
        cg_dev_frees_flush(dev);
        pthread_mutex_unlock(&dev->frees->lock);
        pthread_mutex_destroy(&dev->frees->lock);
        free(dev->frees);
        dev->frees = NULL;
    }
}
