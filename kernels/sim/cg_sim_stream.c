/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The simulated GPU's default stream (kernels/sim/cg_sim.h). Work queued there
 * (cg_sim_memcpy_async, cg_sim_memset_async) runs when someone waits for the stream
 * (cg_sim_stream_sync: what the component does before it reads the application's buffers),
 * before a synchronous copy, set or free (which CUDA orders after the default stream), and
 * never on its own: a reader that skips the wait reads what was there before, as it would
 * on a GPU while the application's kernel still writes.
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

static pthread_mutex_t  cg_sim_stream_lock = PTHREAD_MUTEX_INITIALIZER;
static cg_sim_queued_t *cg_sim_stream_head, **cg_sim_stream_tail = &cg_sim_stream_head;

static int cg_sim_enqueue(void *dst, const void *src, int value, size_t bytes)
{
    cg_sim_queued_t *op = malloc(sizeof(*op) + (src != NULL ? bytes : 0));

    if (op == NULL) {
        return CG_SIM_ERR_NO_MEMORY;
    }
    *op = (cg_sim_queued_t){.dst = dst, .bytes = bytes, .value = value};
    if (src != NULL) {
        memcpy(op->data, src, bytes);
    }
    pthread_mutex_lock(&cg_sim_stream_lock);
    *cg_sim_stream_tail = op;
    cg_sim_stream_tail  = &op->next;
    pthread_mutex_unlock(&cg_sim_stream_lock);
    return CG_SIM_OK;
}

/* The first error of the queued work, as a stream reports it at its synchronisation. The
 * work runs under the lock: a second thread's wait, or a query (cg_sim_stream_idle), sees
 * it done only once it is. Its records are freed after (a large one is unmapped, which
 * memory hooks see). */
CG_SIM_EXPORT int cg_sim_stream_sync(void)
{
    cg_sim_queued_t *done, *op;
    int              rc = CG_SIM_OK;

    pthread_mutex_lock(&cg_sim_stream_lock);
    done               = cg_sim_stream_head;
    cg_sim_stream_head = NULL;
    cg_sim_stream_tail = &cg_sim_stream_head;
    for (op = done; op != NULL; op = op->next) {
        void *d = op->bytes ? cg_sim_access(op->dst, op->bytes) : op->dst;
        if (d == NULL) {
            rc = rc == CG_SIM_OK ? CG_SIM_ERR_INVALID : rc;
        } else if (op->value >= 0) {
            memset(d, op->value, op->bytes);
        } else {
            memcpy(d, op->data, op->bytes);
        }
    }
    pthread_mutex_unlock(&cg_sim_stream_lock);
    while (done != NULL) {
        op   = done;
        done = done->next;
        free(op);
    }
    return rc;
}

void cg_sim_stream_drop(void)
{
    cg_sim_queued_t *dropped;

    pthread_mutex_lock(&cg_sim_stream_lock);
    dropped            = cg_sim_stream_head;
    cg_sim_stream_head = NULL;
    cg_sim_stream_tail = &cg_sim_stream_head;
    pthread_mutex_unlock(&cg_sim_stream_lock);
    while (dropped != NULL) {
        cg_sim_queued_t *op = dropped;
        dropped             = dropped->next;
        free(op);
    }
}

CG_SIM_EXPORT int cg_sim_stream_idle(void)
{
    int idle;

    pthread_mutex_lock(&cg_sim_stream_lock);
    idle = cg_sim_stream_head == NULL;
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

