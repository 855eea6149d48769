/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* The CUDA layer of a build configured --without-cuda: there is none. */
#include "kernels/cg_dev.h"

#include <stdio.h>

cg_status_t cg_dev_cuda_driver_present(char *reason, size_t reason_len)
{
    snprintf(reason, reason_len, "built without CUDA support");
    return CG_ERR_NO_DEVICE;
}

cg_status_t cg_dev_cuda_probe(char *reason, size_t reason_len)
{
    snprintf(reason, reason_len, "built without CUDA support");
    return CG_ERR_NO_DEVICE;
}

int cg_dev_cuda_mps(int ordinal)
{
    (void)ordinal;
    return -1;
}

cg_status_t cg_dev_cuda_mem_query(const void *ptr, cg_mem_attr_t *attr)
{
    (void)ptr;
    attr->kind      = CG_MEM_HOST;
    attr->device    = -1;
    attr->base      = 0;
    attr->size      = 0;
    attr->buffer_id = 0;
    attr->foreign   = 0;
    return CG_OK;
}

cg_status_t cg_dev_cuda_open(int ordinal, cg_dev_t **dev_out)
{
    (void)ordinal;
    (void)dev_out;
    return CG_ERR_NO_DEVICE;
}

cg_status_t cg_dev_cuda_preload(cg_dev_t *dev)
{
    (void)dev;
    return CG_OK;
}

int cg_dev_cuda_built(void)
{
    return 0;
}
