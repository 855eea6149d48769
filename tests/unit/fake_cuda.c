/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * A fake CUDA driver (libcuda.so.1) for the unit tests of the CUDA layer's driver handling
 * on machines without a GPU: it counts the calls, reports CUDA_ERROR_NOT_INITIALIZED until
 * someone calls cuInit, and answers pointer queries from a table the test sets, including
 * failures. Only what the layer resolves at load time is here.
 */
#include <cuda.h>
#include <stdint.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

static int       fake_initialized;
static int       fake_init_calls;
static int       fake_query_calls;
static uintptr_t fake_device_base, fake_device_size;
static CUresult  fake_query_result = CUDA_SUCCESS;
static int       fake_ctx_token;

/* test controls */
FAKE_EXPORT int fake_cuda_init_calls(void) { return fake_init_calls; }
FAKE_EXPORT int fake_cuda_query_calls(void) { return fake_query_calls; }
FAKE_EXPORT void fake_cuda_set_device_range(uintptr_t base, uintptr_t size)
{
    fake_device_base = base;
    fake_device_size = size;
}
FAKE_EXPORT void fake_cuda_set_query_result(CUresult result) { fake_query_result = result; }

FAKE_EXPORT CUresult cuInit(unsigned int flags)
{
    (void)flags;
    fake_init_calls++;
    fake_initialized = 1;
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDriverGetVersion(int *version)
{
    *version = 13000;
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetCount(int *count)
{
    if (!fake_initialized) {
        return CUDA_ERROR_NOT_INITIALIZED;
    }
    *count = 1;
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGetErrorString(CUresult error, const char **str)
{
    *str = error == CUDA_ERROR_NOT_INITIALIZED ? "initialization error" : "fake error";
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    if (!fake_initialized) {
        return CUDA_ERROR_NOT_INITIALIZED;
    }
    *ctx = NULL;
    return CUDA_SUCCESS;
}

/* attributes in the order the layer asks: memory type, managed, ordinal, buffer id, range
 * start, range size, context */
FAKE_EXPORT CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs,
                                            void **data, CUdeviceptr ptr)
{
    int device = ptr >= fake_device_base && ptr < fake_device_base + fake_device_size;

    fake_query_calls++;
    if (!fake_initialized) {
        return CUDA_ERROR_NOT_INITIALIZED;
    }
    if (fake_query_result != CUDA_SUCCESS) {
        return fake_query_result;
    }
    for (unsigned int i = 0; i < n; i++) {
        switch (attrs[i]) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
            *(unsigned int *)data[i] = device ? CU_MEMORYTYPE_DEVICE : 0;
            break;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned int *)data[i] = 0; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data[i] = device ? 0 : -1; break;
        case CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *)data[i] = device ? 77 : 0; break;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
            *(CUdeviceptr *)data[i] = device ? fake_device_base : 0;
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data[i] = device ? fake_device_size : 0; break;
        case CU_POINTER_ATTRIBUTE_CONTEXT:
            *(CUcontext *)data[i] = device ? (CUcontext)&fake_ctx_token : NULL;
            break;
        default: break;
        }
    }
    return CUDA_SUCCESS;
}

/* resolved by the layer, never called by the tests */
FAKE_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *b, size_t *s, CUdeviceptr p)
{
    (void)b, (void)s, (void)p;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FAKE_EXPORT CUresult cuStreamWriteValue64_v2(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f)
{
    (void)s, (void)a, (void)v, (void)f;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FAKE_EXPORT CUresult cuStreamWaitValue64_v2(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f)
{
    (void)s, (void)a, (void)v, (void)f;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FAKE_EXPORT CUresult cuDeviceGet(CUdevice *d, int o)
{
    (void)d, (void)o;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FAKE_EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)v, (void)a, (void)d;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    (void)c, (void)d;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    (void)d;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext c)
{
    (void)c;
    return CUDA_ERROR_NOT_SUPPORTED;
}
