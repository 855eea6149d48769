/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * CUDA IPC of the CUDA device layer: legacy cudaIpc handles of whole cudaMalloc
 * allocations, the mappings this process opened (closed with the layer), and
 * cudaErrorAlreadyMapped reported as CG_ERR_ALREADY_MAPPED so that the caller's cache
 * evicts the stale mapping and retries (coll/intra/ipc_cache.c). Memory that legacy IPC
 * refuses and that was made by cuMemCreate with a POSIX file-descriptor handle type (as
 * PyTorch's expandable segments make it) is shared as that descriptor (base/cg_fd_share.c):
 * the importer maps the allocation into a range it reserves and gives its device access.
 */
#include "kernels/cuda/dev_cuda_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cuMemCreate memory whose allocation asked for POSIX file-descriptor handles: a
 * descriptor of it (open until ipc_export_done); CG_ERR_UNSUPPORTED otherwise. */
static cg_status_t cg_cuda_vmm_export(const void *ptr, cg_ipc_handle_t *handle)
{
    CUmemGenericAllocationHandle alloc;
    CUmemAllocationProp          prop;
    cg_fd_ref_t                  ref;
    int                          fd = -1;
    CUresult                     res;

    if (!cg_cu_vmm_available() || !cg_fd_share_usable() ||
        cg_cu.cuMemRetainAllocationHandle(&alloc, (void *)(uintptr_t)ptr) != CUDA_SUCCESS) {
        return CG_ERR_UNSUPPORTED; /* not cuMemCreate memory, or no way to share it */
    }
    memset(&prop, 0, sizeof(prop));
    res = cg_cu.cuMemGetAllocationPropertiesFromHandle(&prop, alloc);
    if (res == CUDA_SUCCESS &&
        (prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0) {
        res = cg_cu.cuMemExportToShareableHandle(&fd, alloc,
                                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    } else if (res == CUDA_SUCCESS) {
        res = CUDA_ERROR_NOT_SUPPORTED;
    }
    (void)cg_cu.cuMemRelease(alloc); /* the reference the retain took */
    if (res != CUDA_SUCCESS || cg_fd_share_ref(fd, &ref) != CG_OK) {
        cg_debug(CG_SUB_IPC, "cuMemCreate memory at %p not exportable as a descriptor: %s", ptr,
                 res != CUDA_SUCCESS ? cg_cu_error_string(res) : "no descriptor");
        if (fd >= 0) {
            close(fd);
        }
        return CG_ERR_UNSUPPORTED;
    }
    handle->share = CG_IPC_SHARE_FD;
    memcpy(handle->opaque, &ref, sizeof(ref));
    return CG_OK;
}

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
        start == 0 || buffer_id == 0 || (uintptr_t)ptr + size > (uintptr_t)start + range) {
        return CG_ERR_UNSUPPORTED; /* a buffer id names the allocation in peers' tables */
    }
    handle->buffer_id = buffer_id;
    handle->base      = (uint64_t)start;
    handle->size      = range;
    handle->offset    = (uint64_t)((uintptr_t)ptr - (uintptr_t)start);
    /* Memory from cuMemCreate/VMM allocators cannot go through legacy IPC: shared as a
     * descriptor where it can be, else the caller copies through its scratch buffer. */
    if (cudaIpcGetMemHandle(&mem, (void *)(uintptr_t)start) != cudaSuccess) {
        (void)cudaGetLastError();
        cg_debug(CG_SUB_IPC, "cudaIpcGetMemHandle refused %p: trying it as cuMemCreate memory",
                 ptr);
        return cg_cuda_vmm_export(ptr, handle);
    }
    memcpy(handle->opaque, &mem, sizeof(mem));
    return CG_OK;
}

cg_status_t cg_cuda_ipc_export(cg_dev_t *dev, const void *ptr, size_t size,
                                      cg_ipc_handle_t *handle)
{
    memset(handle, 0, sizeof(*handle));
    return CG_CUDA_GUARDED(dev, cg_cuda_ipc_export_guarded(ptr, size, handle));
}

/* Map a peer's cuMemCreate allocation: its descriptor, a range of this process's address
 * space, read and write access for this device. */
static cg_status_t cg_cuda_vmm_map(cg_dev_cuda_t *cuda, const cg_ipc_handle_t *handle,
                                   CUdeviceptr *va_out)
{
    CUmemGenericAllocationHandle alloc;
    CUmemAccessDesc              access;
    cg_fd_ref_t                  ref;
    CUdeviceptr                  va = 0;
    const size_t                 size = (size_t)handle->size;
    cg_status_t                  status;
    CUresult                     res;
    int                          fd;

    if (!cg_cu_vmm_available()) {
        return CG_ERR_UNSUPPORTED;
    }
    memcpy(&ref, handle->opaque, sizeof(ref));
    status = cg_fd_share_fetch(&ref, &fd);
    if (status != CG_OK) {
        return status;
    }
    status = CG_CU_CALL(cuMemImportFromShareableHandle, &alloc, (void *)(uintptr_t)fd,
                        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    close(fd); /* the imported handle holds the memory */
    if (status != CG_OK) {
        return status;
    }
    status = CG_CU_CALL(cuMemAddressReserve, &va, size, 0, 0, 0);
    if (status == CG_OK) {
        status = CG_CU_CALL(cuMemMap, va, size, 0, alloc, 0);
        if (status != CG_OK) {
            (void)cg_cu.cuMemAddressFree(va, size);
        }
    }
    (void)cg_cu.cuMemRelease(alloc); /* from here the mapping holds it */
    if (status != CG_OK) {
        return status;
    }
    memset(&access, 0, sizeof(access));
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id   = cuda->ordinal;
    access.flags         = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    res                  = cg_cu.cuMemSetAccess(va, size, &access, 1);
    if (res == CUDA_ERROR_INVALID_DEVICE || res == CUDA_ERROR_NOT_SUPPORTED) {
        /* this GPU cannot reach the peer's memory (no P2P between them): a path not taken,
         * no error, as for legacy IPC below (the caller says so once) */
        cg_debug(CG_SUB_IPC, "cuMemSetAccess on buffer %#lx of a peer: %s",
                 (unsigned long)handle->buffer_id, cg_cu_error_string(res));
        status = CG_ERR_UNSUPPORTED;
    } else if (res != CUDA_SUCCESS) {
        cg_error(CG_SUB_DEV, "cuMemSetAccess() failed: %s", cg_cu_error_string(res));
        status = CG_ERR_DEVICE;
    }
    if (status != CG_OK) {
        (void)cg_cu.cuMemUnmap(va, size);
        (void)cg_cu.cuMemAddressFree(va, size);
        return status;
    }
    *va_out = va;
    return CG_OK;
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
    if (handle->share == CG_IPC_SHARE_FD) {
        CUdeviceptr va = 0;
        status = cg_cuda_vmm_map(cuda, handle, &va);
        if (status != CG_OK) {
            free(m);
            return status;
        }
        base   = (void *)(uintptr_t)va;
        m->vmm = 1;
        goto mapped;
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
    if (err == cudaErrorPeerAccessUnsupported || err == cudaErrorTooManyPeers ||
        err == cudaErrorNotSupported) {
        /* this GPU cannot reach the peer's (no P2P between them: PCIe across sockets, an
         * IOMMU or ACS in the way), or this platform has no IPC: a path not taken, no
         * error (the caller says so once) */
        (void)cudaGetLastError();
        free(m);
        cg_debug(CG_SUB_IPC, "cudaIpcOpenMemHandle of buffer %#lx: %s",
                 (unsigned long)handle->buffer_id, cudaGetErrorString(err));
        return CG_ERR_UNSUPPORTED;
    }
    status = CG_CUDART_CALL(err);
    if (status != CG_OK) {
        free(m);
        return status;
    }
mapped:
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
    if (m != NULL && m->vmm) {
        const CUdeviceptr va = (CUdeviceptr)(uintptr_t)m->base;
        (void)CG_CUDA_GUARDED(dev, CG_CU_CALL(cuMemUnmap, va, m->size));
        (void)CG_CUDA_GUARDED(dev, CG_CU_CALL(cuMemAddressFree, va, m->size));
    } else if (m != NULL) {
        (void)CG_CUDA_GUARDED(dev, CG_CUDART_CALL(cudaIpcCloseMemHandle(m->base)));
    }
    free(m);
}
