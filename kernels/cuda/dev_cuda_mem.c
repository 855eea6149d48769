/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The CUDA layer's view of a buffer: what the driver says it is (device memory of which
 * device and context, managed or host memory), and, for memory of another device or
 * context, the wait for the work that context's application queued before the call
 * (mem_query, app_wait_foreign).
 */
#include "kernels/cuda/dev_cuda_int.h"

#include <string.h>

/* Pointer attributes; *context is the allocation's context (NULL for host memory). */
static cg_status_t cg_cuda_pointer_attrs(const void *ptr, cg_mem_attr_t *attr, CUcontext *context)
{
    CUpointer_attribute names[7] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_BUFFER_ID,
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        CU_POINTER_ATTRIBUTE_CONTEXT,
    };
    unsigned int       mem_type   = 0;
    unsigned int       is_managed = 0;
    int                ordinal    = -1;
    unsigned long long buffer_id  = 0;
    CUdeviceptr        start      = 0;
    size_t             size       = 0;
    CUresult           res;
    void *data[7] = {&mem_type, &is_managed, &ordinal, &buffer_id, &start, &size, context};

    memset(attr, 0, sizeof(*attr));
    attr->kind   = CG_MEM_HOST;
    attr->device = -1;
    *context     = NULL;
    if (ptr == NULL || !cg_cu_process_active()) {
        return CG_OK; /* before the application initialised CUDA, nothing is device memory */
    }
    /* An address unknown to CUDA is reported as success with every attribute zero: a
     * failure is a real one (and never means host memory). */
    cg_count(CG_CNT_MEM_QUERIES, 1);
    res = cg_cu.cuPointerGetAttributes(7, names, data, (CUdeviceptr)(uintptr_t)ptr);
    if (res != CUDA_SUCCESS) {
        cg_warn(CG_SUB_DEV, "cuPointerGetAttributes(%p) failed: %s", ptr, cg_cu_error_string(res));
        return CG_ERR_DEVICE;
    }
    if (is_managed) {
        attr->kind = CG_MEM_MANAGED;
    } else if (mem_type == CU_MEMORYTYPE_DEVICE) {
        attr->kind      = CG_MEM_DEVICE;
        attr->device    = ordinal;
        attr->base      = (uintptr_t)start;
        attr->size      = size;
        attr->buffer_id = buffer_id;
    }
    return CG_OK;
}

cg_status_t cg_dev_cuda_mem_query(const void *ptr, cg_mem_attr_t *attr)
{
    CUcontext context;

    return cg_cuda_pointer_attrs(ptr, attr, &context);
}

/* With the layer open: memory of another device, or of a context other than the device's
 * primary one (our kernels run in the primary context and cannot address it), is foreign;
 * memory of no context (pools of cudaMallocAsync, cuMemCreate mappings) is the device's. */
cg_status_t cg_cuda_mem_query(cg_dev_t *dev, const void *ptr, cg_mem_attr_t *attr)
{
    CUcontext   context;
    cg_status_t status = cg_cuda_pointer_attrs(ptr, attr, &context);

    if (status == CG_OK && attr->kind == CG_MEM_DEVICE) {
        attr->foreign = cg_dev_mem_is_foreign(attr->device, (uintptr_t)context, dev->ordinal,
                                              (uintptr_t)cg_cuda_impl(dev)->ctx);
    }
    return status;
}

/* Memory of another device or context: an event recorded on that context's legacy default
 * stream (which orders after its blocking streams, as app_wait's does on the layer's) and
 * waited for with that context current (the layer's guard would make the layer's current),
 * then the thread's context again. Memory of no context (a pool, cuMemCreate memory) is
 * its device's primary context's, retained for the wait; an inactive one (memory made
 * under the application's own contexts) has nothing queued. A foreign buffer is staged, so
 * this host wait comes before copies that the host orders after it anyway. */
static cg_status_t cg_cuda_wait_current_legacy(void)
{
    cudaEvent_t event;
    cg_status_t status = CG_CUDART_CALL(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));

    if (status != CG_OK) {
        return status;
    }
    status = CG_CUDART_CALL(cudaEventRecord(event, cudaStreamLegacy));
    if (status == CG_OK) {
        cg_count(CG_CNT_HOST_WAITS, 1);
        status = CG_CUDART_CALL(cudaEventSynchronize(event));
    }
    (void)cudaEventDestroy(event);
    return status;
}

cg_status_t cg_cuda_app_wait_foreign(cg_dev_t *dev, const void *ptr)
{
    cg_mem_attr_t attr;
    CUcontext     context = NULL, previous = NULL, primary = NULL;
    CUdevice      device  = 0;
    unsigned int  flags   = 0;
    int           active  = 1;
    cg_status_t   status;

    if (cg_dev_lost(dev)) {
        return CG_ERR_DEVICE;
    }
    status = cg_cuda_pointer_attrs(ptr, &attr, &context);
    if (status != CG_OK || attr.kind != CG_MEM_DEVICE) {
        return status;
    }
    if (context == NULL) {
        status = CG_CU_CALL(cuDeviceGet, &device, attr.device);
        if (status == CG_OK && cg_cu.cuDevicePrimaryCtxGetState != NULL) {
            status = CG_CU_CALL(cuDevicePrimaryCtxGetState, device, &flags, &active);
        }
        if (status != CG_OK || !active) {
            return status;
        }
        status = CG_CU_CALL(cuDevicePrimaryCtxRetain, &primary, device);
        if (status != CG_OK) {
            return status;
        }
        context = primary;
    }
    status = CG_CU_CALL(cuCtxGetCurrent, &previous);
    if (status == CG_OK) {
        status = CG_CU_CALL(cuCtxSetCurrent, context);
        if (status == CG_OK) {
            status = cg_cuda_wait_current_legacy();
            (void)cg_cu.cuCtxSetCurrent(previous);
        }
    }
    if (primary != NULL) {
        (void)cg_cu.cuDevicePrimaryCtxRelease(device);
    }
    return status;
}
