/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The simulated GPU's default streams, one per device (kernels/sim/cg_sim.h). Work queued
 * there (cg_sim_memcpy_async, cg_sim_memset_async) runs when someone waits for its stream
 * (cg_sim_stream_sync, cg_sim_device_sync: what the component does before it reads the
 * application's buffers), before a synchronous copy, set or free (which CUDA orders after
 * the default stream), and never on its own: a reader that skips the wait reads what was
 * there before, as it would on a GPU while the application's kernel still writes.
 */
#include "kernels/sim/cg_sim_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct cg_sim_queued {
    void                 *dst;
    size_t                bytes;
    int                   value;  /* memset: the byte; memcpy: -1 */
    struct cg_sim_queued *next;
    char                  data[]; /* memcpy: the source, taken when queued */
} cg_sim_queued_t;

#define CG_SIM_DEVICES 2 /* device 0, and device 1 (CG_SIM_ALLOC_OTHER_DEVICE memory) */

typedef struct {
    cg_sim_queued_t  *head, **tail;
} cg_sim_stream_t;

static pthread_mutex_t cg_sim_stream_lock = PTHREAD_MUTEX_INITIALIZER;
static cg_sim_stream_t cg_sim_streams[CG_SIM_DEVICES] = {{NULL, &cg_sim_streams[0].head},
                                                         {NULL, &cg_sim_streams[1].head}};

/* The stream of the device holding dst (the caller checked that it is device memory). */
static cg_sim_stream_t *cg_sim_stream_of(const void *dst)
{
    cg_sim_attr_t attr;

    return &cg_sim_streams[cg_sim_query(dst, &attr) == CG_SIM_OK ? attr.device : 0];
}

static int cg_sim_enqueue(void *dst, const void *src, int value, size_t bytes)
{
    cg_sim_queued_t *op     = malloc(sizeof(*op) + (src != NULL ? bytes : 0));
    cg_sim_stream_t *stream = cg_sim_stream_of(dst);

    if (op == NULL) {
        return CG_SIM_ERR_NO_MEMORY;
    }
    *op = (cg_sim_queued_t){.dst = dst, .bytes = bytes, .value = value};
    if (src != NULL) {
        memcpy(op->data, src, bytes);
    }
    pthread_mutex_lock(&cg_sim_stream_lock);
    *stream->tail = op;
    stream->tail  = &op->next;
    pthread_mutex_unlock(&cg_sim_stream_lock);
    return CG_SIM_OK;
}

/* The queued work of a stream, taken off it (lock held). */
static cg_sim_queued_t *cg_sim_stream_take(cg_sim_stream_t *stream)
{
    cg_sim_queued_t *taken = stream->head;

    stream->head = NULL;
    stream->tail = &stream->head;
    return taken;
}

static void cg_sim_queued_free(cg_sim_queued_t *list)
{
    while (list != NULL) {
        cg_sim_queued_t *op = list;
        list                = list->next;
        free(op);
    }
}

/* The first error of the queued work, as a stream reports it at its synchronisation. The
 * work runs under the lock: a second thread's wait, or a query (cg_sim_stream_idle), sees
 * it done only once it is. Its records are freed after (a large one is unmapped, which
 * memory hooks see). */
static int cg_sim_stream_run(int first, int last)
{
    cg_sim_queued_t *done[CG_SIM_DEVICES] = {NULL};
    int              rc = CG_SIM_OK;

    pthread_mutex_lock(&cg_sim_stream_lock);
    for (int device = first; device <= last; device++) {
        done[device] = cg_sim_stream_take(&cg_sim_streams[device]);
        for (cg_sim_queued_t *op = done[device]; op != NULL; op = op->next) {
            void *d = op->bytes ? cg_sim_access(op->dst, op->bytes) : op->dst;
            if (d == NULL) {
                rc = rc == CG_SIM_OK ? CG_SIM_ERR_INVALID : rc;
            } else if (op->value >= 0) {
                memset(d, op->value, op->bytes);
            } else {
                memcpy(d, op->data, op->bytes);
            }
        }
    }
    pthread_mutex_unlock(&cg_sim_stream_lock);
    for (int device = first; device <= last; device++) {
        cg_sim_queued_free(done[device]);
    }
    return rc;
}

CG_SIM_EXPORT int cg_sim_stream_sync(void)
{
    return cg_sim_stream_run(0, 0);
}

CG_SIM_EXPORT int cg_sim_device_sync(int device)
{
    if (device < 0 || device >= CG_SIM_DEVICES) {
        return CG_SIM_ERR_INVALID;
    }
    return cg_sim_stream_run(device, device);
}

int cg_sim_streams_sync_all(void)
{
    return cg_sim_stream_run(0, CG_SIM_DEVICES - 1);
}

void cg_sim_stream_drop(void)
{
    cg_sim_queued_t *dropped[CG_SIM_DEVICES];

    pthread_mutex_lock(&cg_sim_stream_lock);
    for (int device = 0; device < CG_SIM_DEVICES; device++) {
        dropped[device] = cg_sim_stream_take(&cg_sim_streams[device]);
    }
    pthread_mutex_unlock(&cg_sim_stream_lock);
    for (int device = 0; device < CG_SIM_DEVICES; device++) {
        cg_sim_queued_free(dropped[device]);
    }
}

CG_SIM_EXPORT int cg_sim_stream_idle(void)
{
    int idle;

    pthread_mutex_lock(&cg_sim_stream_lock);
    idle = cg_sim_streams[0].head == NULL;
    pthread_mutex_unlock(&cg_sim_stream_lock);
    return idle;
}

CG_SIM_EXPORT int cg_sim_memcpy_async(void *dst, const void *src, size_t bytes)
{
    return cg_sim_access(dst, bytes) != NULL ? cg_sim_enqueue(dst, src, -1, bytes)
                                             : CG_SIM_ERR_INVALID;
}

CG_SIM_EXPORT int cg_sim_memset_async(void *ptr, int value, size_t bytes)
{
    return cg_sim_access(ptr, bytes) != NULL ? cg_sim_enqueue(ptr, NULL, value & 0xff, bytes)
                                             : CG_SIM_ERR_INVALID;
}
