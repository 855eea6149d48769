/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Two-shot allreduce: each rank owns one block, reduces it from every peer and writes it
 * to every peer. Zero copy: every input is read once and every output written once. */
#include "coll/allreduce/allreduce.h"

/* Block of rank r among size ranks over count elements, aligned to 256 bytes. */
static void cg_two_shot_block(size_t count, size_t elem, int size, int r, size_t *first,
                              size_t *n)
{
    size_t align = elem < 256 ? 256 / elem : 1;
    size_t block = CG_ALIGN_UP((count + (size_t)size - 1) / (size_t)size, align);

    *first = CG_MIN(count, block * (size_t)r);
    *n     = CG_MIN(count - *first, block);
}

static cg_status_t cg_two_shot_zero_copy(cg_intra_t *group, char *const in[], char *const out[],
                                         size_t count, cg_dtype_t dtype, cg_op_t op)
{
    const size_t     elem = cg_dtype_size(dtype);
    size_t           first, n;
    cg_reduce_args_t args = {.dtype = dtype, .op = op, .nsrc = group->size, .ndst = group->size};
    cg_status_t      status = CG_OK;

    cg_two_shot_block(count, elem, group->size, group->rank, &first, &n);
    args.count = n;
    for (int p = 0; p < group->size; p++) {
        args.srcs[p] = in[p] + first * elem;
        args.dsts[p] = out[p] + first * elem;
    }
    if (n > 0) {
        status = group->dev->ops->reduce(group->dev, &args, group->stream);
    }
    /* Nobody returns while a peer still reads its input or writes its output. */
    return cg_intra_close(group, status);
}

/* Steps of up to half/2 elements: copy in, barrier, reduce own sub-block into every
 * peer's scratch output, barrier, copy out. */
static cg_status_t cg_two_shot_copy(cg_intra_t *group, const char *in, char *rbuf, size_t count,
                                    cg_dtype_t dtype, cg_op_t op)
{
    const size_t elem  = cg_dtype_size(dtype);
    const size_t chunk = (group->half_bytes / 2) / elem;
    const size_t out_off = group->half_bytes / 2;
    cg_dev_t    *dev   = group->dev;
    cg_status_t  status = CG_OK;

    for (size_t first = 0; first < count; first += chunk) {
        const size_t     n = CG_MIN(chunk, count - first);
        const unsigned   h = group->parity++;
        size_t           sub, len;
        cg_reduce_args_t args = {.dtype = dtype, .op = op, .nsrc = group->size, .ndst = group->size};

        if (status == CG_OK) {
            status = cg_intra_copy(group, cg_intra_half(group, group->rank, h), in + first * elem,
                                    n * elem, group->stream);
        }
        status = cg_intra_barrier(group, status);
        cg_two_shot_block(n, elem, group->size, group->rank, &sub, &len);
        args.count = len;
        for (int p = 0; p < group->size; p++) {
            args.srcs[p] = cg_intra_half(group, p, h) + sub * elem;
            args.dsts[p] = cg_intra_half(group, p, h) + out_off + sub * elem;
        }
        if (status == CG_OK && len > 0) {
            status = dev->ops->reduce(dev, &args, group->stream);
        }
        status = cg_intra_barrier(group, status);
        if (status == CG_OK) {
            status = cg_intra_copy_typed(group, rbuf + first * elem,
                                         cg_intra_half(group, group->rank, h) + out_off, n, dtype);
        }
    }
    return cg_intra_finish(group, status);
}

cg_status_t cg_allreduce_two_shot(cg_intra_t *group, const void *sbuf, void *rbuf, size_t count,
                                  cg_dtype_t dtype, cg_op_t op)
{
    const size_t bytes = count * cg_dtype_size(dtype);
    const char  *in    = sbuf ? (const char *)sbuf : (const char *)rbuf;
    char        *peer_in[CG_INTRA_MAX], *peer_out[CG_INTRA_MAX];
    cg_status_t  status = CG_OK;
    int          zero_copy = 0;

    if (group->dev->caps.ipc_user_buffers) {
        status = cg_intra_publish(group, CG_OK, in, bytes, rbuf, bytes, peer_in, peer_out, &zero_copy);
    }
    if (status != CG_OK) {
        return cg_intra_finish(group, status);
    }
    cg_detail(CG_SUB_COLL, "allreduce two_shot: %s", zero_copy ? "zero copy" : "through scratch");
    return zero_copy ? cg_two_shot_zero_copy(group, peer_in, peer_out, count, dtype, op)
                     : cg_two_shot_copy(group, in, rbuf, count, dtype, op);
}

cg_status_t cg_allreduce_two_shot_run(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    (void)plan;
    return cg_allreduce_two_shot(comm->intra, call->sbuf, call->rbuf, call->count, call->dtype,
                                 call->op);
}
