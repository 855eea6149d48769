/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Allgather inside a node: every rank's segments land in every rank's buffer. */
#include "coll/allgather/allgather.h"

cg_status_t cg_segs_pack(cg_intra_t *g, const cg_seg_t *segs, int nseg, size_t unit,
                         size_t first, size_t len, char *buf, char *packed, int to_packed)
{
    cg_status_t status = CG_OK;
    size_t      pos    = 0; /* start of segment k in the concatenation */

    for (int k = 0; k < nseg && status == CG_OK; pos += segs[k].len, k++) {
        size_t lo = CG_MAX(first, pos), hi = CG_MIN(first + len, pos + segs[k].len);
        if (lo >= hi) {
            continue;
        }
        char *user = buf + (segs[k].off + (lo - pos)) * unit, *p = packed + (lo - first) * unit;
        status     = g->dev->ops->copy(g->dev, to_packed ? p : user, to_packed ? user : p,
                                       (hi - lo) * unit, g->stream);
    }
    return status;
}

static cg_status_t cg_segs_copy(cg_intra_t *g, const cg_seg_t *segs, int nseg, size_t first,
                                size_t len, char *rbuf, char *packed, int to_packed)
{
    return cg_segs_pack(g, segs, nseg, 1, first, len, rbuf, packed, to_packed);
}

static size_t cg_segs_total(const cg_seg_t *segs, int nseg)
{
    size_t total = 0;
    for (int k = 0; k < nseg; k++) {
        total += segs[k].len;
    }
    return total;
}

static cg_status_t cg_ag_zero_copy(cg_intra_t *g, char *const out[], const cg_seg_t *mine, int nseg)
{
    cg_status_t status = CG_OK;

    for (int k = 0; k < nseg && status == CG_OK; k++) {
        char *dsts[CG_INTRA_MAX];
        int   n = 0;
        for (int p = 0; p < g->size; p++) {
            if (p != g->rank) {
                dsts[n++] = out[p] + mine[k].off;
            }
        }
        if (mine[k].len > 0) {
            status = cg_intra_copy_multi(g, dsts, n, out[g->rank] + mine[k].off, mine[k].len);
        }
    }
    return cg_intra_finish(g, cg_intra_barrier(g, status));
}

static cg_status_t cg_ag_copy(cg_intra_t *g, char *rbuf, const cg_seg_t *segs, int nseg,
                              cg_status_t status)
{
    const size_t window = g->half_bytes;
    const size_t mine   = cg_segs_total(segs + (size_t)g->rank * nseg, nseg);
    size_t       longest = 0;

    for (int p = 0; p < g->size; p++) {
        longest = CG_MAX(longest, cg_segs_total(segs + (size_t)p * nseg, nseg));
    }
    for (size_t first = 0; first < longest; first += window) {
        const unsigned h = g->parity++;
        if (status == CG_OK && first < mine) {
            status = cg_segs_copy(g, segs + (size_t)g->rank * nseg, nseg, first,
                                  CG_MIN(window, mine - first), rbuf, cg_intra_half(g, g->rank, h), 1);
        }
        status = cg_intra_barrier(g, status);
        for (int p = 0; p < g->size && status == CG_OK; p++) {
            size_t total = cg_segs_total(segs + (size_t)p * nseg, nseg);
            if (p != g->rank && first < total) {
                status = cg_segs_copy(g, segs + (size_t)p * nseg, nseg, first,
                                      CG_MIN(window, total - first), rbuf, cg_intra_half(g, p, h), 0);
            }
        }
    }
    return cg_intra_finish(g, status);
}

cg_status_t cg_allgather_segments(cg_intra_t *g, void *rbuf, const cg_seg_t *segs, int nseg,
                                  cg_status_t status)
{
    char       *peer_in[CG_INTRA_MAX], *peer_out[CG_INTRA_MAX];
    size_t      extent = 0;
    int         zero_copy = 0;

    for (int i = 0; i < g->size * nseg; i++) {
        extent = CG_MAX(extent, segs[i].off + segs[i].len);
    }
    if (g->dev->caps.ipc_user_buffers) {
        status = cg_intra_publish(g, status, NULL, 0, rbuf, extent, peer_in, peer_out, &zero_copy);
        if (status != CG_OK) {
            return cg_intra_finish(g, status);
        }
    }
    cg_detail(CG_SUB_COLL, "allgather: %s", zero_copy ? "zero copy" : "through scratch");
    return zero_copy ? cg_ag_zero_copy(g, peer_out, segs + (size_t)g->rank * nseg, nseg)
                     : cg_ag_copy(g, rbuf, segs, nseg, status);
}

cg_status_t cg_allgather_direct(cg_intra_t *g, const void *sbuf, void *rbuf, size_t bytes)
{
    cg_seg_t    segs[CG_INTRA_MAX];
    cg_status_t status = CG_OK;

    for (int p = 0; p < g->size; p++) {
        segs[p] = (cg_seg_t){(size_t)p * bytes, bytes};
    }
    if (sbuf != NULL) { /* out of place: this rank's block into place first */
        status = g->dev->ops->copy(g->dev, (char *)rbuf + (size_t)g->rank * bytes, sbuf, bytes,
                                   g->stream);
    }
    return cg_allgather_segments(g, rbuf, segs, 1, status);
}
