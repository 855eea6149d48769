/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Direct broadcast: the root pushes its data into every peer's buffer. */
#include "coll/bcast/bcast.h"

static cg_status_t cg_bcast_copy(cg_intra_t *g, char *buf, size_t bytes, int root)
{
    const size_t window = g->half_bytes;
    cg_dev_t    *dev    = g->dev;
    cg_status_t  status = CG_OK;

    for (size_t first = 0; first < bytes; first += window) {
        const size_t   n = CG_MIN(window, bytes - first);
        const unsigned h = g->parity++;

        if (status == CG_OK && g->rank == root) {
            status = dev->ops->copy(dev, cg_intra_half(g, root, h), buf + first, n, g->stream);
        }
        status = cg_intra_barrier(g, status);
        if (status == CG_OK && g->rank != root) {
            status = dev->ops->copy(dev, buf + first, cg_intra_half(g, root, h), n, g->stream);
        }
    }
    return cg_intra_finish(g, status);
}

cg_status_t cg_bcast_direct(cg_intra_t *g, void *buf, size_t bytes, int root)
{
    char       *peer_in[CG_INTRA_MAX], *peer_out[CG_INTRA_MAX];
    cg_status_t status    = CG_OK;
    int         zero_copy = 0;

    if (g->dev->caps.ipc_user_buffers) {
        status = cg_intra_publish(g, CG_OK, NULL, 0, g->rank == root ? NULL : buf, bytes, peer_in,
                                  peer_out, &zero_copy);
        if (status != CG_OK) {
            return cg_intra_finish(g, status);
        }
    }
    cg_detail(CG_SUB_COLL, "bcast direct: %s", zero_copy ? "zero copy" : "through scratch");
    if (!zero_copy) {
        return cg_bcast_copy(g, buf, bytes, root);
    }
    if (g->rank == root) {
        char *dsts[CG_INTRA_MAX];
        int   n = 0;
        for (int p = 0; p < g->size; p++) {
            if (p != root) {
                dsts[n++] = peer_out[p];
            }
        }
        status = cg_intra_copy_multi(g, dsts, n, buf, bytes);
    }
    /* Nobody returns before the root has written every buffer. */
    return cg_intra_finish(g, cg_intra_barrier(g, status));
}

/* Through the root's scratch halves: window by window, each rank copies the part of its
 * segment that the window holds. */
static cg_status_t cg_scatter_copy(cg_intra_t *g, char *buf, const cg_seg_t *segs, int root,
                                   cg_status_t status)
{
    const size_t window = g->half_bytes;
    size_t       lo = SIZE_MAX, hi = 0;

    for (int p = 0; p < g->size; p++) {
        if (p != root && segs[p].len > 0) {
            lo = CG_MIN(lo, segs[p].off);
            hi = CG_MAX(hi, segs[p].off + segs[p].len);
        }
    }
    for (size_t first = lo; lo < hi && first < hi; first += window) {
        const size_t   n = CG_MIN(window, hi - first);
        const unsigned h = g->parity++;
        const cg_seg_t s = segs[g->rank];
        size_t         a = CG_MAX(first, s.off), b = CG_MIN(first + n, s.off + s.len);

        if (status == CG_OK && g->rank == root) {
            status = g->dev->ops->copy(g->dev, cg_intra_half(g, root, h), buf + first, n, g->stream);
        }
        status = cg_intra_barrier(g, status);
        if (status == CG_OK && g->rank != root && a < b) {
            status = g->dev->ops->copy(g->dev, buf + a, cg_intra_half(g, root, h) + (a - first),
                                       b - a, g->stream);
        }
    }
    /* the root's next window may overwrite a half only after everyone copied from it */
    return cg_intra_finish(g, cg_intra_barrier(g, status));
}

cg_status_t cg_scatter_segments(cg_intra_t *g, void *buf, const cg_seg_t *segs, int root,
                                cg_status_t status)
{
    char *peer_in[CG_INTRA_MAX], *peer_out[CG_INTRA_MAX];
    int   zero_copy = 0;

    if (g->dev->caps.ipc_user_buffers) {
        size_t extent = 0;
        for (int p = 0; p < g->size; p++) {
            extent = CG_MAX(extent, segs[p].off + segs[p].len);
        }
        status = cg_intra_publish(g, status, NULL, 0, g->rank == root ? NULL : buf, extent,
                                  peer_in, peer_out, &zero_copy);
        if (status != CG_OK) {
            return cg_intra_finish(g, status);
        }
    }
    cg_detail(CG_SUB_COLL, "scatter: %s", zero_copy ? "zero copy" : "through scratch");
    if (!zero_copy) {
        return cg_scatter_copy(g, buf, segs, root, status);
    }
    if (g->rank == root) {
        for (int p = 0; p < g->size && status == CG_OK; p++) {
            if (p != root && segs[p].len > 0) {
                status = g->dev->ops->copy(g->dev, peer_out[p] + segs[p].off,
                                           (char *)buf + segs[p].off, segs[p].len, g->stream);
            }
        }
    }
    /* nobody returns before the root has written every segment */
    return cg_intra_finish(g, cg_intra_barrier(g, status));
}

cg_status_t cg_bcast_scatter_allgather(cg_intra_t *g, void *buf, size_t bytes, int root)
{
    cg_seg_t    parts[CG_INTRA_MAX];
    size_t      part = CG_ALIGN_UP((bytes + (size_t)g->size - 1) / (size_t)g->size, 256);
    cg_status_t status;

    for (int p = 0; p < g->size; p++) {
        size_t off = CG_MIN(bytes, (size_t)p * part);
        parts[p]   = (cg_seg_t){off, CG_MIN(bytes - off, part)};
    }
    status = cg_scatter_segments(g, buf, parts, root, CG_OK);
    return cg_allgather_segments(g, buf, parts, 1, status);
}
