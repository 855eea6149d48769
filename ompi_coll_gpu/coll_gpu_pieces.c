/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The pieces of a staged buffer whose data does not fill its span (the gaps of a derived
 * type, the holes between a v-collective's blocks): staging copies those pieces only, in
 * and out, so that the bytes between them are never read (they may lie in no allocation:
 * a type over several, with MPI_BOTTOM) nor written (another writer may own them: a second
 * request into the other blocks of the same array).
 *
 * Pieces are kept as runs: rows pieces of one width, one pitch apart. Open MPI's
 * convertor lists the pieces of one element of a type; each becomes a run of count rows one
 * extent apart, so a strided layout of any count costs one device copy per piece of its
 * element (cudaMemcpy2DAsync), and consecutive pieces that touch, or repeat at one
 * distance (blocks at regular displacements), join into one run.
 */
#include "ompi_coll_gpu/coll_gpu.h"

#include "opal/datatype/opal_convertor.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MCA_COLL_GPU_RAW_BATCH 64

static int mca_coll_gpu_runs_push(mca_coll_gpu_runs_t *runs, const mca_coll_gpu_run_t *run)
{
    if (runs->count == runs->capacity) {
        size_t              capacity = runs->capacity ? 2 * runs->capacity : 8;
        mca_coll_gpu_run_t *grown    = realloc(runs->runs, capacity * sizeof(*grown));
        if (grown == NULL) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        runs->runs     = grown;
        runs->capacity = capacity;
    }
    runs->runs[runs->count++] = *run;
    return OMPI_SUCCESS;
}

/* Append a run, joined to the last one where that describes the same bytes: a single
 * piece that ends where the new one starts grows; two single pieces of one width become
 * rows; a run of rows takes the next row of its pattern. Not with no_join: one copy may
 * not cross from one allocation to another (the pieces of a datatype over several). */
static int mca_coll_gpu_runs_append(mca_coll_gpu_runs_t *runs, ptrdiff_t offset, size_t width,
                                    size_t pitch, size_t rows)
{
    mca_coll_gpu_run_t  run  = {offset, width, rows > 1 ? pitch : width, rows};
    mca_coll_gpu_run_t *last = runs->count > 0 ? &runs->runs[runs->count - 1] : NULL;

    if (width == 0 || rows == 0) {
        return OMPI_SUCCESS;
    }
    if (rows > 1 && pitch == width && !runs->rebased) { /* rows that touch: one piece */
        run = (mca_coll_gpu_run_t){offset, width * rows, width * rows, 1};
    }
    runs->bytes += run.width * run.rows;
    if (last != NULL && run.rows == 1 && !runs->no_join) {
        if (last->rows == 1 && offset == last->offset + (ptrdiff_t)last->width) {
            last->width += run.width;
            last->pitch = last->width;
            return OMPI_SUCCESS;
        }
        if (last->rows == 1 && run.width == last->width && offset > last->offset &&
            (size_t)(offset - last->offset) >= last->width) {
            last->pitch = (size_t)(offset - last->offset);
            last->rows  = 2;
            return OMPI_SUCCESS;
        }
        if (last->rows > 1 && run.width == last->width &&
            offset == last->offset + (ptrdiff_t)(last->rows * last->pitch)) {
            last->rows++;
            return OMPI_SUCCESS;
        }
    }
    return mca_coll_gpu_runs_push(runs, &run);
}

/* The pieces of count elements of dtype laid out from base (offsets relative to it), as
 * Open MPI's convertor lists them; each piece goes to piece(arg, offset, bytes). */
static int mca_coll_gpu_raw_pieces(struct ompi_datatype_t *dtype, size_t count, ptrdiff_t base,
                                   int (*piece)(void *arg, ptrdiff_t offset, size_t bytes),
                                   void *arg)
{
    static const char anchor[1]; /* a host address: the convertor never reads the data */
    struct iovec      iov[MCA_COLL_GPU_RAW_BATCH];
    opal_convertor_t  convertor;
    int               done = 0, rc = OMPI_SUCCESS;

    OBJ_CONSTRUCT(&convertor, opal_convertor_t);
    if (OPAL_SUCCESS != opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor,
                                                                  &dtype->super, count, anchor,
                                                                  0, &convertor)) {
        OBJ_DESTRUCT(&convertor);
        return OMPI_ERROR;
    }
    while (!done && OMPI_SUCCESS == rc) {
        uint32_t n      = MCA_COLL_GPU_RAW_BATCH;
        size_t   length = 0;
        done = opal_convertor_raw(&convertor, iov, &n, &length);
        for (uint32_t i = 0; i < n && OMPI_SUCCESS == rc; i++) {
            ptrdiff_t at = (ptrdiff_t)((uintptr_t)iov[i].iov_base - (uintptr_t)anchor);
            rc = piece(arg, base + at, iov[i].iov_len);
        }
        if (!done && n == 0) {
            rc = OMPI_ERROR; /* no progress: never expected */
        }
    }
    OBJ_DESTRUCT(&convertor);
    return rc;
}

static int mca_coll_gpu_runs_piece(void *arg, ptrdiff_t offset, size_t bytes)
{
    return mca_coll_gpu_runs_append(arg, offset, bytes, bytes, 1);
}

/* One element's pieces, gathered to be repeated count times. */
typedef struct {
    mca_coll_gpu_runs_t element;
    ptrdiff_t           lo, hi; /* first byte and end of the element's pieces */
} mca_coll_gpu_element_t;

static int mca_coll_gpu_element_piece(void *arg, ptrdiff_t offset, size_t bytes)
{
    mca_coll_gpu_element_t *e = arg;
    mca_coll_gpu_run_t      run = {offset, bytes, bytes, 1};

    e->lo = offset < e->lo ? offset : e->lo;
    e->hi = offset + (ptrdiff_t)bytes > e->hi ? offset + (ptrdiff_t)bytes : e->hi;
    return bytes > 0 ? mca_coll_gpu_runs_push(&e->element, &run) : OMPI_SUCCESS;
}

int mca_coll_gpu_runs_add(mca_coll_gpu_runs_t *runs, struct ompi_datatype_t *dtype, size_t count,
                          ptrdiff_t offset)
{
    mca_coll_gpu_element_t e = {{NULL, 0, 0, 0}, PTRDIFF_MAX, PTRDIFF_MIN};
    ptrdiff_t              lb, extent;
    size_t                 size = 0;
    int                    rc;

    ompi_datatype_type_size(dtype, &size);
    if (count == 0 || size == 0) {
        return OMPI_SUCCESS;
    }
    ompi_datatype_get_extent(dtype, &lb, &extent);
    rc = mca_coll_gpu_raw_pieces(dtype, 1, 0, mca_coll_gpu_element_piece, &e);
    if (OMPI_SUCCESS == rc && count > 1 && !runs->rebased &&
        (size_t)(extent < 0 ? -extent : extent) < (size_t)(e.hi - e.lo)) {
        /* elements that interleave or overlap (a send type may): every piece in order */
        rc = mca_coll_gpu_raw_pieces(dtype, count, offset, mca_coll_gpu_runs_piece, runs);
    } else if (OMPI_SUCCESS == rc) {
        /* each piece of the element, once per element: rows one extent apart (a negative
         * extent: from the last element up); rebased runs (compact staging) so even where
         * elements interleave: each row has its place in the arena */
        const ptrdiff_t first = extent < 0 ? (ptrdiff_t)(count - 1) * extent : 0;
        const size_t    pitch = (size_t)(extent < 0 ? -extent : extent);
        for (size_t i = 0; i < e.element.count && OMPI_SUCCESS == rc; i++) {
            const mca_coll_gpu_run_t *piece = &e.element.runs[i];
            if (runs->rebased && count > 1 && piece->width > pitch) {
                rc = OMPI_ERROR; /* rebased: a piece longer than the extent */
                break;
            }
            rc = mca_coll_gpu_runs_append(runs, offset + first + piece->offset, piece->width,
                                          pitch, count);
        }
    }
    free(e.element.runs);
    return rc;
}

void mca_coll_gpu_runs_free(mca_coll_gpu_runs_t *runs)
{
    free(runs->runs);
    memset(runs, 0, sizeof(*runs));
}

/* ---- copying them ------------------------------------------------------------------ */

/* Where a run's first row lies in the arena, and its rows' pitch there. */
static ptrdiff_t mca_coll_gpu_run_in_arena(const mca_coll_gpu_runs_t *runs,
                                           const mca_coll_gpu_run_t *run, size_t *pitch)
{
    *pitch = runs->rebased ? run->host_pitch : run->pitch;
    return runs->rebased ? run->host_offset : run->offset;
}

int mca_coll_gpu_runs_copy(cg_dev_t *dev, const mca_coll_gpu_runs_t *runs, char *host_base,
                           char *user_base, int to_host, cg_dev_stream_t *stream)
{
    for (size_t i = 0; i < runs->count; i++) {
        const mca_coll_gpu_run_t *run  = &runs->runs[i];
        char                     *user = user_base + run->offset;
        size_t                    host_pitch;
        char                     *host = host_base + mca_coll_gpu_run_in_arena(runs, run,
                                                                               &host_pitch);
        cg_status_t               status;
        if (run->rows == 1) {
            status = dev->ops->copy(dev, to_host ? host : user, to_host ? user : host,
                                    run->width, stream);
        } else if (to_host) {
            status = dev->ops->copy_2d(dev, host, host_pitch, user, run->pitch, run->width,
                                       run->rows, stream);
        } else {
            status = dev->ops->copy_2d(dev, user, run->pitch, host, host_pitch, run->width,
                                       run->rows, stream);
        }
        if (status != CG_OK) {
            return mca_coll_gpu_status_to_mpi(status);
        }
    }
    return OMPI_SUCCESS;
}

void mca_coll_gpu_runs_zero(const mca_coll_gpu_runs_t *runs, char *host_base)
{
    for (size_t i = 0; i < runs->count; i++) {
        const mca_coll_gpu_run_t *run = &runs->runs[i];
        size_t                    pitch;
        const ptrdiff_t           at = mca_coll_gpu_run_in_arena(runs, run, &pitch);
        for (size_t row = 0; row < run->rows; row++) {
            memset(host_base + at + (ptrdiff_t)(row * pitch), 0, run->width);
        }
    }
}
