/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Device-layer helpers shared by the host and CUDA implementations. */
#include "kernels/cg_dev.h"

void cg_dev_close(cg_dev_t *dev)
{
    if (dev != NULL) {
        cg_dev_frees_close(dev);
        dev->ops->close(dev);
    }
}

void cg_dev_mark_lost(cg_dev_t *dev)
{
    if (!__atomic_exchange_n(&dev->lost, 1, __ATOMIC_ACQ_REL)) {
        cg_detail(CG_SUB_DEV, "the device was reset under the component (cudaDeviceReset): its "
                  "memory, streams and mappings went with the context; from now on only their "
                  "records are let go, and device work fails");
    }
}

int cg_dev_reset_check(cg_dev_t *dev)
{
    if (dev == NULL) {
        return 0;
    }
    if (!cg_dev_lost(dev) && dev->ops->reset_check != NULL && dev->ops->reset_check(dev)) {
        cg_dev_mark_lost(dev);
    }
    return cg_dev_lost(dev);
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
