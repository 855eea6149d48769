/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Device-layer helpers shared by the host and CUDA implementations. */
#include "kernels/cg_dev.h"

#include <pthread.h>
#include <stdlib.h>

static void cg_dev_frees_close(cg_dev_t *dev);

void cg_dev_close(cg_dev_t *dev)
{
    if (dev != NULL) {
        cg_dev_frees_close(dev);
        dev->ops->close(dev);
    }
}

cg_status_t cg_dev_copy_sync(cg_dev_t *dev, void *dst, const void *src, size_t bytes,
                             cg_dev_stream_t *stream)
{
    cg_status_t status = dev->ops->copy(dev, dst, src, bytes, stream);

    if (status != CG_OK) {
        return status;
    }
    return dev->ops->stream_sync(dev, stream);
}

cg_status_t cg_dev_copy_typed(cg_dev_t *dev, void *dst, const void *src, size_t count,
                              cg_dtype_t dtype, cg_dev_stream_t *stream)
{
    cg_reduce_args_t args = {.dtype = dtype, .op = CG_OP_MINLOC, .count = count, .nsrc = 1,
                             .ndst = 1};

    if (!cg_dtype_has_padding(dtype)) {
        return dev->ops->copy(dev, dst, src, count * cg_dtype_size(dtype), stream);
    }
    /* a one-source reduction writes the fields, never the padding */
    args.srcs[0] = src;
    args.dsts[0] = dst;
    return dev->ops->reduce(dev, &args, stream);
}

/* ---- frees held back while device work waits for peers (cg_dev.h) ----------------------- */
typedef struct cg_dev_held {
    void               *ptr;
    int                 host; /* page-locked host memory (ops->host_free) */
    struct cg_dev_held *next;
} cg_dev_held_t;

struct cg_dev_frees {
    pthread_mutex_t lock;        /* a free runs under it: no waiting work starts meanwhile */
    unsigned        peer_waits;  /* device work in flight that waits for peers */
    cg_dev_held_t  *held;        /* frees kept until peer_waits is 0 */
};

static void cg_dev_free_now(cg_dev_t *dev, void *ptr, int host)
{
    if (host) {
        dev->ops->host_free(dev, ptr);
    } else {
        dev->ops->mem_free(dev, ptr);
    }
}

/* Under frees->lock with no waiting work in flight: free what was held. */
static void cg_dev_frees_flush(cg_dev_t *dev)
{
    cg_dev_held_t *held = dev->frees->held;

    dev->frees->held = NULL;
    while (held != NULL) {
        cg_dev_held_t *next = held->next;
        cg_dev_free_now(dev, held->ptr, held->host);
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
        if (dev->frees->peer_waits > 0 && --dev->frees->peer_waits == 0) {
            cg_dev_frees_flush(dev);
        }
        pthread_mutex_unlock(&dev->frees->lock);
    }
}

static void cg_dev_release(cg_dev_t *dev, void *ptr, int host)
{
    cg_dev_held_t *held;

    if (ptr == NULL) {
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

/* At close: nothing runs any more; what was held goes now. */
static void cg_dev_frees_close(cg_dev_t *dev)
{
    if (dev->frees != NULL) {
        pthread_mutex_lock(&dev->frees->lock);
        cg_dev_frees_flush(dev);
        pthread_mutex_unlock(&dev->frees->lock);
        pthread_mutex_destroy(&dev->frees->lock);
        free(dev->frees);
        dev->frees = NULL;
    }
}
