/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Host staging: device data is copied into page-locked host memory, the collective of the
 * layer underneath runs on it, results are copied back. Correct for every datatype (the
 * whole memory span of the buffer is copied, so gaps of derived types are preserved), every
 * op and MPI_IN_PLACE. The universal fallback, and the baseline of the fast paths.
 *
 * Staging memory comes from a small pool shared by all communicators (calls on different
 * communicators may run concurrently under MPI_THREAD_MULTIPLE).
 */
#include "ompi_coll_gpu/coll_gpu.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MCA_COLL_GPU_STAGE_ALIGN 64

typedef struct mca_coll_gpu_staging_buf {
    void                            *ptr;
    size_t                           size;
    struct mca_coll_gpu_staging_buf *next;
} mca_coll_gpu_staging_buf_t;

static pthread_mutex_t             mca_coll_gpu_staging_lock = PTHREAD_MUTEX_INITIALIZER;
static mca_coll_gpu_staging_buf_t *mca_coll_gpu_staging_free;
static size_t                      mca_coll_gpu_staging_cached;

size_t mca_coll_gpu_span(struct ompi_datatype_t *dtype, size_t count, ptrdiff_t *gap)
{
    ptrdiff_t lb, extent, true_lb, true_extent, lo, hi;
    size_t    size = 0;

    ompi_datatype_type_size(dtype, &size);
    *gap = 0;
    if (count == 0 || size == 0) {
        return 0;
    }
    ompi_datatype_get_extent(dtype, &lb, &extent);
    ompi_datatype_get_true_extent(dtype, &true_lb, &true_extent);
    lo = true_lb;
    hi = true_lb + true_extent;
    if (extent >= 0) {
        hi += (ptrdiff_t)(count - 1) * extent;
    } else {
        lo += (ptrdiff_t)(count - 1) * extent;
    }
    *gap = lo;
    return (size_t)(hi - lo);
}

static cg_dev_stream_t *mca_coll_gpu_module_stream(mca_coll_gpu_module_t *m, cg_dev_t *dev)
{
    if (m->stream == NULL && dev->ops->stream_create(dev, &m->stream) != CG_OK) {
        m->stream = NULL;
    }
    return m->stream;
}

/* The stream of a blocking staged call's copies, ordered after the application's work: its
 * default stream where one thread calls (no event), else the module's after an app wait. */
static cg_dev_stream_t *mca_coll_gpu_blocking_stream(mca_coll_gpu_module_t *m, cg_dev_t *dev)
{
    if (cg_dev_ll_after_app(dev)) {
        if (m->app_stream == NULL && dev->ops->app_stream_create(dev, &m->app_stream) != CG_OK) {
            m->app_stream = NULL;
        }
        if (m->app_stream != NULL) {
            return m->app_stream;
        }
    }
    if (mca_coll_gpu_module_stream(m, dev) != NULL) {
        mca_coll_gpu_app_wait(m); /* on that stream */
    }
    return m->stream;
}

void mca_coll_gpu_app_wait(mca_coll_gpu_module_t *m)
{
    cg_dev_t *dev = mca_coll_gpu_dev();

    if (dev != NULL) { /* a failure shows in the copies that follow */
        (void)cg_dev_app_wait(dev, mca_coll_gpu_module_stream(m, dev));
    }
}

int mca_coll_gpu_staging_begin(mca_coll_gpu_staging_t *st, mca_coll_gpu_module_t *m,
                               size_t total_bytes, int blocking)
{
    cg_dev_t                    *dev = mca_coll_gpu_dev();
    mca_coll_gpu_staging_buf_t **pp, **best = NULL;
    void                        *ptr;

    memset(st, 0, sizeof(*st));
    st->module = m;
    if (dev != NULL) {
        st->stream = blocking ? mca_coll_gpu_blocking_stream(m, dev)
                              : mca_coll_gpu_module_stream(m, dev);
        if (st->stream == NULL) {
            cg_error(CG_SUB_COLL, "no device stream for the copies of a staged collective (the "
                     "device failed): this rank takes part with zeros and the call returns "
                     "an error");
        }
    }
    if (st->stream == NULL) {
        /* Device memory but no device layer (it failed to open, reported then), or no
         * stream to copy on (after a GPU fault): this rank cannot read its data, but it
         * must still take part in the collective of the layer underneath, or its peers
         * would wait for ever. It sends zeros and its call returns an error. */
        st->broken     = 1;
        st->arena      = calloc(1, total_bytes ? total_bytes : 1);
        st->arena_size = total_bytes;
        return st->arena != NULL ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (total_bytes == 0) {
        return OMPI_SUCCESS;
    }
    /* The smallest cached buffer that fits. */
    pthread_mutex_lock(&mca_coll_gpu_staging_lock);
    for (pp = &mca_coll_gpu_staging_free; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->size >= total_bytes && (best == NULL || (*pp)->size < (*best)->size)) {
            best = pp;
        }
    }
    if (best != NULL) {
        mca_coll_gpu_staging_buf_t *b = *best;
        *best = b->next;
        mca_coll_gpu_staging_cached -= b->size;
        st->arena      = b->ptr;
        st->arena_size = b->size;
        free(b);
    }
    pthread_mutex_unlock(&mca_coll_gpu_staging_lock);
    if (st->arena != NULL) {
        return OMPI_SUCCESS;
    }
    total_bytes = CG_ALIGN_UP(total_bytes, (size_t)1 << 20);
    if (dev->ops->host_alloc(dev, total_bytes, &ptr) != CG_OK) {
        /* Ordinary memory instead: the device copies still work (the driver stages them),
         * and this rank must take part in the collective underneath, or its peers would
         * wait for ever. Not kept in the cache (it would pass for page-locked memory). */
        static int told;
        if (posix_memalign(&ptr, 4096, total_bytes) != 0) {
            mca_coll_gpu_show_help("staging allocation failed", total_bytes);
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        if (cg_once(&told)) {
            cg_warn(CG_SUB_COLL, "page-locked host memory for staging %zu bytes is not "
                    "available: staged collectives of this size use ordinary host memory "
                    "(slower copies)", total_bytes);
        }
        st->pageable = 1;
    }
    st->arena      = ptr;
    st->arena_size = total_bytes;
    return OMPI_SUCCESS;
}

int mca_coll_gpu_stage_in(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b, void *user,
                          struct ompi_datatype_t *dtype, size_t count, int copy_in, int kind)
{
    ptrdiff_t gap;
    size_t    span = mca_coll_gpu_span(dtype, count, &gap);

    if (span > 0 && kind == MCA_COLL_GPU_KIND_UNKNOWN) {
        kind = mca_coll_gpu_buffer_kind((char *)user + gap, span); /* where the data is */
    }
    if (span == 0 || !(kind & MCA_COLL_GPU_KIND_DEVICE)) {
        memset(b, 0, sizeof(*b));
        b->user = user;
        b->host = user;
        return OMPI_SUCCESS; /* host memory (or nothing): the layer underneath reads it */
    }
    /* Any device memory is staged (another GPU's, another context's too): the layer
     * underneath must never see a device pointer. */
    return mca_coll_gpu_stage_device(st, b, user, gap, span, copy_in);
}

int mca_coll_gpu_stage_device(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b, void *user,
                              ptrdiff_t gap, size_t span, int copy_in)
{
    memset(b, 0, sizeof(*b));
    b->user = user;
    b->host = user;
    b->gap  = gap;
    b->span = span;
    if (st->arena_used + span > st->arena_size) {
        return OMPI_ERR_BAD_PARAM; /* the caller sized the arena wrong */
    }
    b->host_span = (char *)st->arena + st->arena_used;
    b->host      = b->host_span - gap;
    b->staged    = 1;
    st->arena_used += CG_ALIGN_UP(span, MCA_COLL_GPU_STAGE_ALIGN);
    return copy_in ? mca_coll_gpu_stage_copy_in(st, b) : OMPI_SUCCESS;
}

/* A device copy or wait failed: from now on the staging copies nothing, its arena holds
 * zeros (its place for this rank's data in the collective underneath, which the call still
 * joins: its peers wait in it), and staging_end returns the error. */
static void mca_coll_gpu_staging_lose(mca_coll_gpu_staging_t *st)
{
    if (!st->lost) {
        cg_error(CG_SUB_COLL, "a device copy of a staged collective failed: this rank takes "
                 "part with zeros and the call returns an error");
    }
    st->lost = 1;
    if (st->arena != NULL) {
        memset(st->arena, 0, st->arena_used);
    }
}

int mca_coll_gpu_stage_copy_in(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b)
{
    cg_dev_t *dev = mca_coll_gpu_dev();

    if (b->staged && st->lost) { /* a region placed after the loss: zeros too */
        memset(b->host_span, 0, b->span);
    }
    if (!b->staged || st->broken || st->lost) {
        return OMPI_SUCCESS; /* zeros when broken or lost */
    }
    cg_count(CG_CNT_STAGED_BYTES, b->span);
    if (dev->ops->copy(dev, b->host_span, (char *)b->user + b->gap, b->span,
                       st->stream) != CG_OK) {
        mca_coll_gpu_staging_lose(st);
    }
    return OMPI_SUCCESS;
}

int mca_coll_gpu_stage_out(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b)
{
    cg_dev_t *dev = mca_coll_gpu_dev();

    if (!b->staged || st->broken || st->lost) {
        return OMPI_SUCCESS;
    }
    cg_count(CG_CNT_STAGED_BYTES, b->span);
    if (dev->ops->copy(dev, (char *)b->user + b->gap, b->host_span, b->span,
                       st->stream) != CG_OK) {
        mca_coll_gpu_staging_lose(st);
    }
    return OMPI_SUCCESS;
}

int mca_coll_gpu_staging_sync(mca_coll_gpu_staging_t *st)
{
    cg_dev_t *dev = mca_coll_gpu_dev();

    if (st->broken || st->lost) {
        return OMPI_SUCCESS;
    }
    if (dev->ops->stream_sync(dev, st->stream) != CG_OK) {
        mca_coll_gpu_staging_lose(st); /* the copies may not have landed: zeros instead */
    }
    return OMPI_SUCCESS;
}

int mca_coll_gpu_staging_end(mca_coll_gpu_staging_t *st, int rc)
{
    cg_dev_t                   *dev = mca_coll_gpu_dev();
    mca_coll_gpu_staging_buf_t *b;

    if (st->broken) {
        free(st->arena);
        st->arena = NULL;
        return OMPI_SUCCESS != rc ? rc : OMPI_ERR_NOT_AVAILABLE;
    }
    if (st->lost && OMPI_SUCCESS == rc) {
        rc = OMPI_ERROR;
    }
    if (st->lost && st->stream != NULL) { /* a copy queued before the failure may still run */
        (void)dev->ops->stream_sync(dev, st->stream);
    }
    if (st->arena == NULL) {
        return rc;
    }
    if (st->pageable) {
        free(st->arena);
        st->arena = NULL;
        return rc;
    }
    b = malloc(sizeof(*b));
    pthread_mutex_lock(&mca_coll_gpu_staging_lock);
    if (b != NULL &&
        mca_coll_gpu_staging_cached + st->arena_size <= mca_coll_gpu_component.staging_cache_max) {
        b->ptr  = st->arena;
        b->size = st->arena_size;
        b->next = mca_coll_gpu_staging_free;
        mca_coll_gpu_staging_free = b;
        mca_coll_gpu_staging_cached += b->size;
        b = NULL;
        st->arena = NULL;
    }
    pthread_mutex_unlock(&mca_coll_gpu_staging_lock);
    free(b);
    if (st->arena != NULL) {
        cg_dev_host_release(dev, st->arena);
        st->arena = NULL;
    }
    return rc;
}

void mca_coll_gpu_staging_cache_release(void)
{
    cg_dev_t *dev = mca_coll_gpu_dev();

    pthread_mutex_lock(&mca_coll_gpu_staging_lock);
    while (mca_coll_gpu_staging_free != NULL) {
        mca_coll_gpu_staging_buf_t *b = mca_coll_gpu_staging_free;
        mca_coll_gpu_staging_free = b->next;
        if (dev != NULL) {
            cg_dev_host_release(dev, b->ptr);
        }
        free(b);
    }
    mca_coll_gpu_staging_cached = 0;
    pthread_mutex_unlock(&mca_coll_gpu_staging_lock);
}
