/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The intra-node phases that the algorithms are built from, on segments (each rank's list
 * of pieces of a buffer): allgather (every rank's segments land in every rank's buffer),
 * reduce-scatter (each rank reduces its own segments from every peer) and scatter (the
 * root hands each rank its segment). Zero copy through the peers' mapped buffers when every
 * rank's buffer can be shared, otherwise in pipelined steps through the scratch halves.
 */
#include "coll/intra/intra.h"

#include <stdint.h>

/* ---- allgather ------------------------------------------------------------------------ */
static cg_status_t cg_segs_pack(cg_intra_t *group, const cg_seg_t *segs, int nseg, size_t unit,
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
        status     = cg_intra_copy(group, to_packed ? p : user, to_packed ? user : p,
                                       (hi - lo) * unit, group->stream);
    }
    return status;
}

static cg_status_t cg_segs_copy(cg_intra_t *group, const cg_seg_t *segs, int nseg, size_t first,
                                size_t len, char *rbuf, char *packed, int to_packed)
{
    return cg_segs_pack(group, segs, nseg, 1, first, len, rbuf, packed, to_packed);
}

static size_t cg_segs_total(const cg_seg_t *segs, int nseg)
{
    size_t total = 0;
    for (int k = 0; k < nseg; k++) {
        total += segs[k].len;
    }
    return total;
}

static cg_status_t cg_ag_zero_copy(cg_intra_t *group, char *const out[], const cg_seg_t *mine, int nseg)
{
    cg_status_t status = CG_OK;

    for (int k = 0; k < nseg && status == CG_OK; k++) {
        char *dsts[CG_INTRA_MAX];
        int   n = 0;
        for (int p = 0; p < group->size; p++) {
            if (p != group->rank) {
                dsts[n++] = out[p] + mine[k].off;
            }
        }
        if (mine[k].len > 0) {
            status = cg_intra_copy_multi(group, dsts, n, out[group->rank] + mine[k].off, mine[k].len);
        }
    }
    return cg_intra_close(group, status);
}

static cg_status_t cg_ag_copy(cg_intra_t *group, char *rbuf, const cg_seg_t *segs, int nseg,
                              cg_status_t status)
{
    const size_t window = group->half_bytes;
    const size_t mine   = cg_segs_total(segs + (size_t)group->rank * nseg, nseg);
    size_t       longest = 0;

    for (int p = 0; p < group->size; p++) {
        longest = CG_MAX(longest, cg_segs_total(segs + (size_t)p * nseg, nseg));
    }
    for (size_t first = 0; first < longest; first += window) {
        const unsigned h = group->parity++;
        if (status == CG_OK && first < mine) {
            status = cg_segs_copy(group, segs + (size_t)group->rank * nseg, nseg, first,
                                  CG_MIN(window, mine - first), rbuf, cg_intra_half(group, group->rank, h), 1);
        }
        status = cg_intra_barrier(group, status);
        for (int p = 0; p < group->size && status == CG_OK; p++) {
            size_t total = cg_segs_total(segs + (size_t)p * nseg, nseg);
            if (p != group->rank && first < total) {
                status = cg_segs_copy(group, segs + (size_t)p * nseg, nseg, first,
                                      CG_MIN(window, total - first), rbuf, cg_intra_half(group, p, h), 0);
            }
        }
    }
    return cg_intra_finish(group, status);
}

cg_status_t cg_allgather_segments(cg_intra_t *group, void *rbuf, const cg_seg_t *segs, int nseg,
                                  cg_status_t status)
{
    char       *peer_in[CG_INTRA_MAX], *peer_out[CG_INTRA_MAX];
    size_t      extent = 0;
    int         zero_copy = 0;

    for (int i = 0; i < group->size * nseg; i++) {
        extent = CG_MAX(extent, segs[i].off + segs[i].len);
    }
    if (group->dev->caps.ipc_user_buffers) {
        status = cg_intra_publish(group, status, NULL, 0, rbuf, extent, peer_in, peer_out, &zero_copy);
        if (status != CG_OK) {
            return cg_intra_finish(group, status);
        }
    }
    cg_detail(CG_SUB_COLL, "allgather: %s", zero_copy ? "zero copy" : "through scratch");
    return zero_copy ? cg_ag_zero_copy(group, peer_out, segs + (size_t)group->rank * nseg, nseg)
                     : cg_ag_copy(group, rbuf, segs, nseg, status);
}

/* ---- reduce-scatter ------------------------------------------------------------------ */
static cg_status_t cg_rs_zero_copy(cg_intra_t *group, char *const in[], char *out,
                                   const cg_seg_t *mine, int nseg, cg_dtype_t dtype, cg_op_t op)
{
    const size_t elem   = cg_dtype_size(dtype);
    size_t       packed = 0;
    cg_status_t  status = CG_OK;

    for (int k = 0; k < nseg && status == CG_OK; packed += mine[k].len, k++) {
        cg_reduce_args_t args = {.dtype = dtype, .op = op, .count = mine[k].len,
                                 .nsrc = group->size, .ndst = 1};
        for (int p = 0; p < group->size; p++) {
            args.srcs[p] = in[p] + mine[k].off * elem;
        }
        args.dsts[0] = out + packed * elem;
        if (args.count > 0) {
            status = group->dev->ops->reduce(group->dev, &args, group->stream);
        }
    }
    /* nobody returns while a peer still reads its input */
    return cg_intra_close(group, status);
}

/* Through the scratch halves, window by window over the concatenation of every rank's
 * segments (rank by rank): each rank packs that window of its input into its half; after
 * the barrier each rank reduces the part of its own segments in the window from every
 * rank's half. Only the segments' elements are copied. In place (MPI's reduce-scatter: the
 * segments tile the input in rank order from its start, the output is its start), an
 * output element is written no earlier than the round that copied the input at its index. */
static cg_status_t cg_rs_copy(cg_intra_t *group, const char *in, char *out, const cg_seg_t *segs,
                              int nseg, cg_dtype_t dtype, cg_op_t op, cg_status_t status)
{
    const size_t    elem   = cg_dtype_size(dtype);
    const size_t    window = group->half_bytes / elem;
    const cg_seg_t *mine   = segs + (size_t)group->rank * nseg;
    size_t          total = 0, mine_at = 0;

    for (int i = 0; i < group->size * nseg; i++) {
        mine_at += (i < group->rank * nseg) ? segs[i].len : 0;
        total += segs[i].len;
    }
    for (size_t first = 0; first < total; first += window) {
        const unsigned h = group->parity++;
        const size_t   n = CG_MIN(window, total - first);
        size_t         pos = mine_at, packed = 0;

        if (status == CG_OK) {
            status = cg_segs_pack(group, segs, group->size * nseg, elem, first, n, (char *)in,
                                  cg_intra_half(group, group->rank, h), 1);
        }
        status = cg_intra_barrier(group, status);
        for (int k = 0; k < nseg && status == CG_OK; pos += mine[k].len, packed += mine[k].len, k++) {
            size_t lo = CG_MAX(first, pos), hi = CG_MIN(first + n, pos + mine[k].len);
            cg_reduce_args_t args = {.dtype = dtype, .op = op, .nsrc = group->size, .ndst = 1};
            if (lo >= hi) {
                continue;
            }
            args.count = hi - lo;
            for (int p = 0; p < group->size; p++) {
                args.srcs[p] = cg_intra_half(group, p, h) + (lo - first) * elem;
            }
            args.dsts[0] = out + (packed + lo - pos) * elem;
            status       = group->dev->ops->reduce(group->dev, &args, group->stream);
        }
    }
    return cg_intra_finish(group, status);
}

cg_status_t cg_reduce_scatter_segments(cg_intra_t *group, const void *in, void *out,
                                       const cg_seg_t *segs, int nseg, int in_place,
                                       cg_dtype_t dtype, cg_op_t op, cg_status_t status)
{
    char  *peer_in[CG_INTRA_MAX], *peer_out[CG_INTRA_MAX];
    size_t extent = 0;
    int    zero_copy = 0;

    for (int i = 0; i < group->size * nseg; i++) {
        extent = CG_MAX(extent, segs[i].off + segs[i].len);
    }
    if (!in_place && group->dev->caps.ipc_user_buffers) {
        status = cg_intra_publish(group, status, in, extent * cg_dtype_size(dtype), NULL, 0, peer_in,
                                  peer_out, &zero_copy);
        if (status != CG_OK) {
            return cg_intra_finish(group, status);
        }
    }
    cg_detail(CG_SUB_COLL, "reduce_scatter: %s", zero_copy ? "zero copy" : "through scratch");
    return zero_copy ? cg_rs_zero_copy(group, peer_in, out, segs + (size_t)group->rank * nseg, nseg, dtype, op)
                     : cg_rs_copy(group, in, out, segs, nseg, dtype, op, status);
}

/* ---- scatter -------------------------------------------------------------------------- */
/* Through the root's scratch halves: window by window, each rank copies the part of its
 * segment that the window holds. */
static cg_status_t cg_scatter_copy(cg_intra_t *group, char *buf, const cg_seg_t *segs, int root,
                                   cg_status_t status)
{
    const size_t window = group->half_bytes;
    size_t       lo = SIZE_MAX, hi = 0;

    for (int p = 0; p < group->size; p++) {
        if (p != root && segs[p].len > 0) {
            lo = CG_MIN(lo, segs[p].off);
            hi = CG_MAX(hi, segs[p].off + segs[p].len);
        }
    }
    for (size_t first = lo; lo < hi && first < hi; first += window) {
        const size_t   n = CG_MIN(window, hi - first);
        const unsigned h = group->parity++;
        const cg_seg_t s = segs[group->rank];
        size_t         a = CG_MAX(first, s.off), b = CG_MIN(first + n, s.off + s.len);

        if (status == CG_OK && group->rank == root) {
            status = cg_intra_copy(group, cg_intra_half(group, root, h), buf + first, n, group->stream);
        }
        status = cg_intra_barrier(group, status);
        if (status == CG_OK && group->rank != root && a < b) {
            status = cg_intra_copy(group, buf + a, cg_intra_half(group, root, h) + (a - first),
                                       b - a, group->stream);
        }
    }
    /* the root's next window may overwrite a half only after everyone copied from it */
    return cg_intra_close(group, status);
}

cg_status_t cg_scatter_segments(cg_intra_t *group, void *buf, const cg_seg_t *segs, int root,
                                cg_status_t status)
{
    char *peer_in[CG_INTRA_MAX], *peer_out[CG_INTRA_MAX];
    int   zero_copy = 0;

    if (group->dev->caps.ipc_user_buffers) {
        size_t extent = 0;
        for (int p = 0; p < group->size; p++) {
            extent = CG_MAX(extent, segs[p].off + segs[p].len);
        }
        status = cg_intra_publish(group, status, NULL, 0, group->rank == root ? NULL : buf, extent,
                                  peer_in, peer_out, &zero_copy);
        if (status != CG_OK) {
            return cg_intra_finish(group, status);
        }
    }
    cg_detail(CG_SUB_COLL, "scatter: %s", zero_copy ? "zero copy" : "through scratch");
    if (!zero_copy) {
        return cg_scatter_copy(group, buf, segs, root, status);
    }
    if (group->rank == root) {
        for (int p = 0; p < group->size && status == CG_OK; p++) {
            if (p != root && segs[p].len > 0) {
                status = cg_intra_copy(group, peer_out[p] + segs[p].off,
                                           (char *)buf + segs[p].off, segs[p].len, group->stream);
            }
        }
    }
    /* nobody returns before the root has written every segment */
    return cg_intra_close(group, status);
}

