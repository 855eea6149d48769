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
#include <sys/mman.h>

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

int mca_coll_gpu_app_wait_foreign(uintptr_t foreign_base)
{
    cg_dev_t *dev = mca_coll_gpu_dev();

    if (foreign_base == 0 || dev == NULL) {
        return OMPI_SUCCESS;
    }
    /* not seen in the copies that follow: another context's error is not the layer's */
    return mca_coll_gpu_status_to_mpi(cg_dev_app_wait_foreign(dev, (const void *)foreign_base));
}

/* An arena of ordinary memory, zero-filled. Pages are taken as they are touched, so a span
 * far larger than its data (a type over several allocations, with MPI_BOTTOM: only its
 * pieces are touched) costs the pages of its pieces only. */
static int mca_coll_gpu_arena_plain(mca_coll_gpu_staging_t *st, size_t bytes)
{
    void *ptr = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

    if (ptr == MAP_FAILED) {
        mca_coll_gpu_show_help("staging allocation failed", bytes);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    st->arena      = ptr;
    st->arena_size = bytes;
    st->pageable   = 1;
    return OMPI_SUCCESS;
}

static void mca_coll_gpu_arena_free(mca_coll_gpu_staging_t *st)
{
    if (st->arena != NULL) {
        munmap(st->arena, st->arena_size ? st->arena_size : 1);
    }
    st->arena = NULL;
}

int mca_coll_gpu_staging_begin(mca_coll_gpu_staging_t *st, mca_coll_gpu_module_t *m,
                               size_t total_bytes, size_t data_bytes, int blocking)
{
    cg_dev_t                    *dev = mca_coll_gpu_dev();
    mca_coll_gpu_staging_buf_t **pp, **best = NULL;
    void                        *ptr;

    memset(st, 0, sizeof(*st));
    st->module = m;
    if (cg_dev_reset_check(dev)) {
        /* the device was reset: no copy can run, and the cached page-locked arenas went
         * with it (the CPU must not touch them): ordinary memory, zeros, an error. Asked
         * of the driver at every staged call (a CUDA layer learns of a reset no other way
         * before a copy fails, and then the arena would be in use): two queries of its
         * context, no device work, against the copies a staged call makes */
        mca_coll_gpu_reset_explain();
        st->broken = 1;
        return mca_coll_gpu_arena_plain(st, total_bytes);
    }
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
        st->broken = 1;
        return mca_coll_gpu_arena_plain(st, total_bytes);
    }
    if (total_bytes == 0) {
        return OMPI_SUCCESS;
    }
    if (total_bytes / 2 > data_bytes + ((size_t)1 << 20)) {
        return mca_coll_gpu_arena_plain(st, total_bytes); /* mostly gaps: see coll_gpu.h */
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
        if (cg_once(&told)) {
            cg_warn(CG_SUB_COLL, "page-locked host memory for staging %zu bytes is not "
                    "available: staged collectives of this size use ordinary host memory "
                    "(slower copies)", total_bytes);
        }
        return mca_coll_gpu_arena_plain(st, total_bytes);
    }
    st->arena      = ptr;
    st->arena_size = total_bytes;
    return OMPI_SUCCESS;
}

int mca_coll_gpu_stage_pieces(mca_coll_gpu_runs_t *runs, const cg_mem_attr_t *attr,
                              const void *data, size_t span, int gaps_written,
                              int (*list)(const void *arg, mca_coll_gpu_runs_t *runs),
                              const void *arg)
{
    runs->no_join = !mca_coll_gpu_attr_holds(attr, data, span);
    if ((runs->no_join || gaps_written) && OMPI_SUCCESS != list(arg, runs)) {
        mca_coll_gpu_runs_free(runs);
        return 1;
    }
    return 0;
}

/* count elements of dtype from the buffer pointer (mca_coll_gpu_stage_pieces' list). */
typedef struct {
    struct ompi_datatype_t *dtype;
    size_t                  count;
} mca_coll_gpu_elements_t;

static int mca_coll_gpu_elements_list(const void *arg, mca_coll_gpu_runs_t *runs)
{
    const mca_coll_gpu_elements_t *elements = arg;

    return mca_coll_gpu_runs_add(runs, elements->dtype, elements->count, 0);
}

size_t mca_coll_gpu_stage_bytes(struct ompi_datatype_t *dtype, size_t count,
                                const mca_coll_gpu_compact_t *plan)
{
    ptrdiff_t gap;

    return MCA_COLL_GPU_STAGE_BYTES(plan != NULL && plan->type != NULL
                                        ? mca_coll_gpu_compact_span(plan, count)
                                        : mca_coll_gpu_span(dtype, count, &gap));
}

int mca_coll_gpu_stage_compact(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b, void *user,
                               struct ompi_datatype_t *dtype, size_t count,
                               const mca_coll_gpu_compact_t *plan, int copy_in)
{
    mca_coll_gpu_runs_t runs = {0};
    int                 rc;

    if (OMPI_SUCCESS != (rc = mca_coll_gpu_compact_runs(plan, dtype, count, &runs))) {
        mca_coll_gpu_runs_free(&runs);
        memset(b, 0, sizeof(*b));
        return rc; /* not expected: every piece was checked in one element by the plan */
    }
    rc = mca_coll_gpu_stage_device(st, b, user, 0, mca_coll_gpu_compact_span(plan, count),
                                   &runs, 0);
    mca_coll_gpu_runs_free(&runs);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    OBJ_RETAIN(plan->type); /* released by the staging's end */
    b->type = plan->type;
    cg_count(CG_CNT_STAGED_COMPACT, 1);
    return copy_in ? mca_coll_gpu_stage_copy_in(st, b) : OMPI_SUCCESS;
}

int mca_coll_gpu_stage_in(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b, void *user,
                          struct ompi_datatype_t *dtype, size_t count, int reads, int writes,
                          int kind, const cg_mem_attr_t *attr,
                          const mca_coll_gpu_compact_t *plan)
{
    const mca_coll_gpu_elements_t elements = {dtype, count};
    mca_coll_gpu_runs_t runs = {0};
    cg_mem_attr_t       asked;
    ptrdiff_t           gap;
    size_t              span = mca_coll_gpu_span(dtype, count, &gap);
    int                 rc;

    if (span > 0 && (kind == MCA_COLL_GPU_KIND_UNKNOWN || attr == NULL)) {
        kind = mca_coll_gpu_buffer_query((char *)user + gap, span, &asked); /* where it is */
        attr = &asked;
    }
    if (span == 0 || !(kind & MCA_COLL_GPU_KIND_DEVICE)) {
        memset(b, 0, sizeof(*b));
        b->user = user;
        b->host = user;
        return OMPI_SUCCESS; /* host memory (or nothing): the layer underneath reads it */
    }
    mca_coll_gpu_stage_wait_foreign(st, MCA_COLL_GPU_FOREIGN_BASE(attr));
    if (plan != NULL && plan->type != NULL) {
        rc = mca_coll_gpu_stage_compact(st, b, user, dtype, count, plan, reads);
    } else {
        /* Any device memory is staged (another GPU's, another context's too): the layer
         * underneath must never see a device pointer. With gaps, the bytes between the
         * pieces are not copied: written ones would overwrite another writer's bytes, and
         * read ones may lie outside every allocation (read in one copy where they lie in
         * the first byte's allocation). */
        if (mca_coll_gpu_stage_pieces(&runs, attr, (char *)user + gap, span,
                                      writes && !mca_coll_gpu_dtype_is_dense(dtype, count),
                                      mca_coll_gpu_elements_list, &elements)) {
            reads = 1; /* the whole span, gaps read first */
        }
        rc = mca_coll_gpu_stage_device(st, b, user, gap, span, &runs, reads);
        mca_coll_gpu_runs_free(&runs);
    }
    b->foreign_base = MCA_COLL_GPU_FOREIGN_BASE(attr);
    return rc;
}

int mca_coll_gpu_stage_device(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b, void *user,
                              ptrdiff_t gap, size_t span, mca_coll_gpu_runs_t *runs,
                              int copy_in)
{
    memset(b, 0, sizeof(*b));
    b->user = user;
    b->host = user;
    b->gap  = gap;
    b->span = span;
    if (st->arena_used + MCA_COLL_GPU_STAGE_BYTES(span) > st->arena_size ||
        st->nplaced == CG_ARRAY_SIZE(st->placed)) {
        return OMPI_ERR_BAD_PARAM; /* the caller sized the arena wrong */
    }
    b->host_span = (char *)st->arena + st->arena_used;
    /* The pointer passed underneath is the span's start less its gap, which may land on
     * another buffer's: the layer underneath would take the call for one in place (Open
     * MPI's nonblocking collectives do, for a send buffer equal to the receive buffer). */
    for (int i = 0; i < st->nplaced; i++) {
        if (st->placed[i]->host == b->host_span - gap) {
            b->host_span += MCA_COLL_GPU_STAGE_ALIGN;
            st->arena_used += MCA_COLL_GPU_STAGE_ALIGN;
        }
    }
    b->host   = b->host_span - gap;
    b->staged = 1;
    if (runs != NULL) { /* taken over: the staging frees them */
        b->runs = *runs;
        memset(runs, 0, sizeof(*runs));
    }
    st->placed[st->nplaced++] = b;
    st->arena_used += CG_ALIGN_UP(span, MCA_COLL_GPU_STAGE_ALIGN);
    return copy_in ? mca_coll_gpu_stage_copy_in(st, b) : OMPI_SUCCESS;
}

/* Zeros where a staged buffer's data is in the arena. */
static void mca_coll_gpu_stage_zero(mca_coll_gpu_stage_t *b)
{
    if (b->runs.count > 0) {
        mca_coll_gpu_runs_zero(&b->runs, b->host);
    } else {
        memset(b->host_span, 0, b->span);
    }
}

/* Was the device reset under this staging's page-locked arena (which went with it)? */
int mca_coll_gpu_staging_gone(const mca_coll_gpu_staging_t *st)
{
    return st->arena != NULL && !st->pageable && cg_dev_reset_check(mca_coll_gpu_dev());
}

/* A device copy or wait failed: from now on the staging copies nothing, its arena holds
 * zeros (its place for this rank's data in the collective underneath, which the call still
 * joins: its peers wait in it), and staging_end returns the error. */
static void mca_coll_gpu_staging_lose(mca_coll_gpu_staging_t *st)
{
    if (!st->lost) {
        cg_error(CG_SUB_COLL, "a device copy or wait of a staged collective failed: this rank "
                 "takes part with zeros and the call returns an error");
        mca_coll_gpu_reset_explain();
    }
    if (!st->lost && st->stream != NULL) { /* copies queued before may still land */
        (void)mca_coll_gpu_dev()->ops->stream_sync(mca_coll_gpu_dev(), st->stream);
    }
    st->lost = 1;
    if (!mca_coll_gpu_staging_gone(st)) { /* asked once, not per buffer */
        for (int i = 0; i < st->nplaced; i++) {
            mca_coll_gpu_stage_zero(st->placed[i]);
        }
    }
}

/* Copy a staged buffer's bytes between the device and the arena (in: to the arena). */
static int mca_coll_gpu_stage_copy(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b, int in)
{
    cg_dev_t *dev = mca_coll_gpu_dev();
    char     *user = (char *)b->user;
    int       rc;

    if (b->runs.count > 0) {
        cg_count(CG_CNT_STAGED_BYTES, b->runs.bytes);
        rc = mca_coll_gpu_runs_copy(dev, &b->runs, b->host, user, in, st->stream);
    } else {
        cg_count(CG_CNT_STAGED_BYTES, b->span);
        rc = mca_coll_gpu_status_to_mpi(
            in ? dev->ops->copy(dev, b->host_span, user + b->gap, b->span, st->stream)
               : dev->ops->copy(dev, user + b->gap, b->host_span, b->span, st->stream));
    }
    if (OMPI_SUCCESS != rc) {
        mca_coll_gpu_staging_lose(st);
    }
    return OMPI_SUCCESS;
}

void mca_coll_gpu_stage_wait_foreign(mca_coll_gpu_staging_t *st, uintptr_t foreign_base)
{
    if (!st->broken && !st->lost && mca_coll_gpu_app_wait_foreign(foreign_base) != OMPI_SUCCESS) {
        mca_coll_gpu_staging_lose(st);
    }
}

int mca_coll_gpu_stage_copy_in(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b)
{
    if (b->staged && (st->lost || st->broken) && !mca_coll_gpu_staging_gone(st)) {
        mca_coll_gpu_stage_zero(b); /* zeros, at every persistent start too */
    }
    if (!b->staged || st->broken || st->lost) {
        return OMPI_SUCCESS; /* zeros when broken or lost */
    }
    return mca_coll_gpu_stage_copy(st, b, 1);
}

int mca_coll_gpu_stage_out(mca_coll_gpu_staging_t *st, mca_coll_gpu_stage_t *b)
{
    if (!b->staged || st->broken || st->lost) {
        return OMPI_SUCCESS;
    }
    return mca_coll_gpu_stage_copy(st, b, 0);
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

    for (int i = 0; i < st->nplaced; i++) {
        mca_coll_gpu_runs_free(&st->placed[i]->runs);
        if (st->placed[i]->type != NULL) {
            OBJ_RELEASE(st->placed[i]->type);
            st->placed[i]->type = NULL;
        }
    }
    st->nplaced = 0;
    if (st->broken) {
        mca_coll_gpu_arena_free(st);
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
        mca_coll_gpu_arena_free(st);
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
