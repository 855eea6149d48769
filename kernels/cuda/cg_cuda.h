/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * CUDA device layer internals: the driver API table (libcuda is loaded at run time, so the
 * component loads on nodes without a driver) and the kernel launchers built by nvcc.
 * Every driver call goes through CG_CU_CALL, every runtime call through CG_CUDART_CALL:
 * both log the failing call once, with its name and the error string, and return
 * CG_ERR_DEVICE.
 */
#ifndef CG_CUDA_H
#define CG_CUDA_H

#include "kernels/cg_dev.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    CUresult (*cuInit)(unsigned int flags);
    CUresult (*cuDriverGetVersion)(int *version);
    CUresult (*cuDeviceGetCount)(int *count);
    CUresult (*cuGetErrorString)(CUresult error, const char **str);
    CUresult (*cuPointerGetAttributes)(unsigned int n, CUpointer_attribute *attrs, void **data,
                                       CUdeviceptr ptr);
    CUresult (*cuMemGetAddressRange)(CUdeviceptr *base, size_t *size, CUdeviceptr ptr);
    CUresult (*cuStreamWriteValue64)(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                     unsigned int flags);
    CUresult (*cuStreamWaitValue64)(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                    unsigned int flags);
    CUresult (*cuDeviceGet)(CUdevice *device, int ordinal);
    CUresult (*cuDeviceGetAttribute)(int *value, CUdevice_attribute attr, CUdevice device);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice device);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);
    CUresult (*cuCtxGetCurrent)(CUcontext *ctx);
    CUresult (*cuCtxSetCurrent)(CUcontext ctx);
    /* Virtual memory management (sharing cuMemCreate memory): NULL when the driver lacks
     * any of them (cg_cu_vmm_available) */
    CUresult (*cuMemRetainAllocationHandle)(CUmemGenericAllocationHandle *handle, void *addr);
    CUresult (*cuMemGetAllocationPropertiesFromHandle)(CUmemAllocationProp *prop,
                                                       CUmemGenericAllocationHandle handle);
    CUresult (*cuMemExportToShareableHandle)(void *shareable, CUmemGenericAllocationHandle handle,
                                             CUmemAllocationHandleType type,
                                             unsigned long long flags);
    CUresult (*cuMemImportFromShareableHandle)(CUmemGenericAllocationHandle *handle,
                                               void *shareable, CUmemAllocationHandleType type);
    CUresult (*cuMemGetAllocationGranularity)(size_t *granularity, const CUmemAllocationProp *prop,
                                              CUmemAllocationGranularity_flags option);
    CUresult (*cuMemAddressReserve)(CUdeviceptr *ptr, size_t size, size_t alignment,
                                    CUdeviceptr addr, unsigned long long flags);
    CUresult (*cuMemAddressFree)(CUdeviceptr ptr, size_t size);
    CUresult (*cuMemMap)(CUdeviceptr ptr, size_t size, size_t offset,
                         CUmemGenericAllocationHandle handle, unsigned long long flags);
    CUresult (*cuMemUnmap)(CUdeviceptr ptr, size_t size);
    CUresult (*cuMemSetAccess)(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                               size_t count);
    CUresult (*cuMemRelease)(CUmemGenericAllocationHandle handle);
    /* A reset of the device under the layer (cg_dev_reset_check): NULL when the driver lacks
     * them (cuCtxGetId: CUDA 12.0) */
    CUresult (*cuDevicePrimaryCtxGetState)(CUdevice device, unsigned int *flags, int *active);
    CUresult (*cuCtxGetId)(CUcontext ctx, unsigned long long *id);
} cg_cu_driver_t;

/* Has CUDA been initialised in this process (by the application, or by us)? Never
 * initialises it first: before the application does, no pointer is device memory. */
int         cg_cu_process_active(void);
extern cg_cu_driver_t cg_cu;
/* Does the driver have every VMM call of cg_cu? */
int         cg_cu_vmm_available(void);
const char *cg_cu_error_string(CUresult res);

#define CG_CU_CALL(_fn, ...)                                                               \
    ({                                                                                     \
        CUresult    _res = cg_cu._fn(__VA_ARGS__);                                         \
        cg_status_t _st  = CG_OK;                                                          \
        if (_res != CUDA_SUCCESS) {                                                        \
            cg_error(CG_SUB_DEV, "%s() failed: %s", #_fn, cg_cu_error_string(_res));       \
            _st = CG_ERR_DEVICE;                                                           \
        }                                                                                  \
        _st;                                                                               \
    })

#define CG_CUDART_CALL(_call)                                                              \
    ({                                                                                     \
        cudaError_t _err = (_call);                                                        \
        cg_status_t _st  = CG_OK;                                                          \
        if (_err != cudaSuccess) {                                                         \
            cg_error(CG_SUB_DEV, "%s failed: %s", #_call, cudaGetErrorString(_err));       \
            (void)cudaGetLastError(); /* ours: not left for the application's check */     \
            _st = CG_ERR_DEVICE;                                                           \
        }                                                                                  \
        _st;                                                                               \
    })

/* Kernels (reduce_cuda.cu). */
cudaError_t cg_cuda_reduce_launch(const cg_reduce_args_t *args, int sm_count,
                                  cudaStream_t stream);
/* The LL collective, one kernel (ll_cuda.cu); its last store writes done_value << 1 into
 * *done (device address of a page-locked host word), plus 1 when it was given up with no
 * result written. */
cudaError_t cg_cuda_ll_launch(const cg_ll_args_t *args, cudaStream_t stream, uint64_t *done,
                              uint64_t done_value);
/* The LL server (coll_gpu_ll_persist; kernels/dev_ll_server.h): the bytes of the posted
 * lines, call number `call` posted there (host address; *lines: the lines it took), and a
 * server started on stream (device addresses: the protocol's words, the posted lines, of
 * which it reads the first `polled` with the bell, the completion word). */
size_t      cg_cuda_ll_posted_bytes(void);
cudaError_t cg_cuda_ll_post(const cg_ll_args_t *args, void *posted, uint64_t call, int *lines);
cudaError_t cg_cuda_ll_server_start(void *words, const void *posted, int polled, uint64_t *done,
                                    uint64_t gen, uint64_t served, uint64_t idle_ns,
                                    uint64_t life_ns, cudaStream_t stream);
/* Call number `call` as posted there (host address), launched on stream instead (a server
 * could not read it: kernels/dev_ll_server.h); its end in *done as cg_cuda_ll_launch's. */
cudaError_t cg_cuda_ll_launch_posted(const void *posted, uint64_t call, cudaStream_t stream,
                                     uint64_t *done);
/* Load every kernel of the file now (cudaFuncGetAttributes references each), so that none
 * is loaded lazily later (cg_dev_cuda_preload). */
cudaError_t cg_cuda_reduce_preload(void);
cudaError_t cg_cuda_ll_preload(void);

#ifdef __cplusplus
}
#endif
#endif /* CG_CUDA_H */
