/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * CUDA IPC of the CUDA device layer: legacy cudaIpc handles of whole cudaMalloc
 * allocations, the mappings this process opened (closed with the layer), and
 * cudaErrorAlreadyMapped reported as CG_ERR_ALREADY_MAPPED so that the caller's cache
 * evicts the stale mapping and retries (coll/intra/ipc_cache.c).
 */
#include "kernels/cuda/dev_cuda_int.h"

#include <stdlib.h>
#include <string.h>

static cg_status_t cg_cuda_ipc_export_guarded(const void *ptr, size_t size,
                                              cg_ipc_handle_t *handle)
{
    CUpointer_attribute names[1] = {CU_POINTER_ATTRIBUTE_BUFFER_ID};
    unsigned long long  buffer_id = 0;
    void               *data[1]   = {&buffer_id};
    CUdeviceptr         start     = 0;
    size_t              range     = 0;
    cudaIpcMemHandle_t  mem;

    /* legacy IPC exports whole cudaMalloc allocations: the mapped region's base */
    if (cg_cu.cuMemGetAddressRange(&start, &range, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS ||
        cg_cu.cuPointerGetAttributes(1, names, data, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS ||
        start == 0 || (uintptr_t)ptr + size > (uintptr_t)start + range) {
        return CG_ERR_UNSUPPORTED;
    }
    /* Memory from cuMemCreate/VMM allocators cannot go through legacy IPC: the caller
     * falls back to copying through its scratch buffer. */
    if (cudaIpcGetMemHandle(&mem, (void *)(uintptr_t)start) != cudaSuccess) {
        (void)cudaGetLastError();
        cg_debug(CG_SUB_IPC, "cudaIpcGetMemHandle refused %p: not exportable", ptr);
        return CG_ERR_UNSUPPORTED;
    }
    handle->buffer_id = buffer_id;
    handle->base      = (uint64_t)start;
    handle->size      = range;
    handle->offset    = (uint64_t)((uintptr_t)ptr - (uintptr_t)start);
    memcpy(handle->opaque, &mem, sizeof(mem));
    return CG_OK;
}

cg_status_t cg_cuda_ipc_export(cg_dev_t *dev, const void *ptr, size_t size,
                                      cg_ipc_handle_t *handle)
{
    memset(handle, 0, sizeof(*handle));
    return CG_CUDA_GUARDED(dev, cg_cuda_ipc_export_guarded(ptr, size, handle));
}

static cg_status_t cg_cuda_ipc_import_guarded(cg_dev_t *dev, const cg_ipc_handle_t *handle,
                                              void **base_out)
{
    cg_dev_cuda_t     *cuda = cg_cuda_impl(dev);
    cg_cuda_mapping_t *m;
    cudaIpcMemHandle_t mem;
    void              *base = NULL;
    cudaError_t        err;
    cg_status_t        status;

    m = calloc(1, sizeof(*m));
    if (m == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    memcpy(&mem, handle->opaque, sizeof(mem));
    err = cudaIpcOpenMemHandle(&base, mem, cudaIpcMemLazyEnablePeerAccess);
    if (err == cudaErrorAlreadyMapped) {
        /* a stale mapping of this peer over the same range: the caller evicts and retries */
        (void)cudaGetLastError();
        free(m);
        cg_debug(CG_SUB_IPC, "cudaIpcOpenMemHandle of buffer %#lx: already mapped",
                 (unsigned long)handle->buffer_id);
        return CG_ERR_ALREADY_MAPPED;
    }
    status = CG_CUDART_CALL(err);
    if (status != CG_OK) {
        free(m);
        return status;
    }
    m->base = base;
    m->size = handle->size;
    pthread_mutex_lock(&cuda->lock);
    m->next     = cuda->mappings;
    cuda->mappings = m;
    pthread_mutex_unlock(&cuda->lock);
    *base_out = base;
    return CG_OK;
}

cg_status_t cg_cuda_ipc_import(cg_dev_t *dev, const cg_ipc_handle_t *handle, void **base)
{
    if (handle->buffer_id == 0) {
        cg_error(CG_SUB_IPC, "not a CUDA IPC handle");
        return CG_ERR_INVALID_PARAM;
    }
    return CG_CUDA_GUARDED(dev, cg_cuda_ipc_import_guarded(dev, handle, base));
}

void cg_cuda_ipc_close(cg_dev_t *dev, void *base)
{
    cg_dev_cuda_t      *cuda = cg_cuda_impl(dev);
    cg_cuda_mapping_t **pp, *m = NULL;

    pthread_mutex_lock(&cuda->lock);
    for (pp = &cuda->mappings; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->base == base) {
            m   = *pp;
            *pp = m->next;
            break;
        }
    }
    pthread_mutex_unlock(&cuda->lock);
    if (m != NULL) {
        (void)CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaIpcCloseMemHandle(m->base)));
        free(m);
    }
}
