/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* The CUDA driver API, loaded at run time. */
#include "kernels/cuda/cg_cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

cg_cu_driver_t cg_cu;

const char *cg_cu_error_string(CUresult res)
{
    const char *str = NULL;

    if (cg_cu.cuGetErrorString == NULL || cg_cu.cuGetErrorString(res, &str) != CUDA_SUCCESS ||
        str == NULL) {
        return "unknown CUDA driver error";
    }
    return str;
}

/* Two steps, so that MPI_Init never starts the driver: loading libcuda and resolving its
 * symbols (init_query: is there a driver at all?), then cuInit, only once the application
 * itself has initialised CUDA or a device buffer is on its way (cuInit reads
 * CUDA_VISIBLE_DEVICES once, and costs a CPU-only job the driver's start-up). */
static pthread_once_t cg_cu_load_once_ctl = PTHREAD_ONCE_INIT;
static pthread_once_t cg_cu_init_once_ctl = PTHREAD_ONCE_INIT;
static cg_status_t    cg_cu_load_status = CG_ERR_NO_DEVICE;
static cg_status_t    cg_cu_init_status = CG_ERR_NO_DEVICE;
static char           cg_cu_load_reason[200];
static char           cg_cu_init_reason[200];
static int            cg_cu_active; /* CUDA is initialised in this process */

static void cg_cu_load_once(void)
{
    void *lib;

    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(cg_cu_load_reason, sizeof(cg_cu_load_reason),
                 "no CUDA driver (libcuda.so.1 not found)");
        return;
    }
#define CG_CU_SYM(_field, _name)                                                          \
    do {                                                                                   \
        *(void **)&cg_cu._field = dlsym(lib, _name);                                       \
        if (cg_cu._field == NULL) {                                                        \
            snprintf(cg_cu_load_reason, sizeof(cg_cu_load_reason),                         \
                     "the CUDA driver lacks %s (driver too old)", _name);                  \
            return;                                                                        \
        }                                                                                  \
    } while (0)
    CG_CU_SYM(cuInit, "cuInit");
    CG_CU_SYM(cuDriverGetVersion, "cuDriverGetVersion");
    CG_CU_SYM(cuDeviceGetCount, "cuDeviceGetCount");
    CG_CU_SYM(cuGetErrorString, "cuGetErrorString");
    CG_CU_SYM(cuPointerGetAttributes, "cuPointerGetAttributes");
    CG_CU_SYM(cuMemGetAddressRange, "cuMemGetAddressRange_v2");
    CG_CU_SYM(cuStreamWriteValue64, "cuStreamWriteValue64_v2");
    CG_CU_SYM(cuStreamWaitValue64, "cuStreamWaitValue64_v2");
    CG_CU_SYM(cuDeviceGet, "cuDeviceGet");
    CG_CU_SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute");
    CG_CU_SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    CG_CU_SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    CG_CU_SYM(cuCtxGetCurrent, "cuCtxGetCurrent");
    CG_CU_SYM(cuCtxSetCurrent, "cuCtxSetCurrent");
#undef CG_CU_SYM
    /* optional: without them, cuMemCreate memory is copied through scratch memory */
#define CG_CU_SYM_OPTIONAL(_field) (*(void **)&cg_cu._field = dlsym(lib, #_field))
    CG_CU_SYM_OPTIONAL(cuMemRetainAllocationHandle);
    CG_CU_SYM_OPTIONAL(cuMemGetAllocationPropertiesFromHandle);
    CG_CU_SYM_OPTIONAL(cuMemExportToShareableHandle);
    CG_CU_SYM_OPTIONAL(cuMemImportFromShareableHandle);
    CG_CU_SYM_OPTIONAL(cuMemGetAllocationGranularity);
    CG_CU_SYM_OPTIONAL(cuMemAddressReserve);
    CG_CU_SYM_OPTIONAL(cuMemAddressFree);
    CG_CU_SYM_OPTIONAL(cuMemMap);
    CG_CU_SYM_OPTIONAL(cuMemUnmap);
    CG_CU_SYM_OPTIONAL(cuMemSetAccess);
    CG_CU_SYM_OPTIONAL(cuMemRelease);
    /* optional: without them a device reset before MPI_Finalize goes unseen */
    CG_CU_SYM_OPTIONAL(cuDevicePrimaryCtxGetState);
    CG_CU_SYM_OPTIONAL(cuCtxGetId);
#undef CG_CU_SYM_OPTIONAL
    cg_cu_load_status = CG_OK;
}

static void cg_cu_init_once(void)
{
    CUresult res;
    int      version = 0;

    res = cg_cu.cuInit(0);
    if (res != CUDA_SUCCESS) {
        snprintf(cg_cu_init_reason, sizeof(cg_cu_init_reason), "cuInit failed: %s",
                 cg_cu_error_string(res));
        return;
    }
    /* the runtime linked in needs a driver of at least its major version */
    res = cg_cu.cuDriverGetVersion(&version);
    if (res != CUDA_SUCCESS || version < CUDART_VERSION / 1000 * 1000) {
        snprintf(cg_cu_init_reason, sizeof(cg_cu_init_reason),
                 "CUDA driver version %d is older than the CUDA %d.%d runtime built in", version,
                 CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
        return;
    }
    cg_cu_init_status = CG_OK;
    __atomic_store_n(&cg_cu_active, 1, __ATOMIC_RELEASE);
}

/* Load libcuda and resolve its symbols, without initialising it; fills reason when it
 * cannot. Idempotent. */
static cg_status_t cg_cu_driver_load(char *reason, size_t reason_len)
{
    pthread_once(&cg_cu_load_once_ctl, cg_cu_load_once);
    if (cg_cu_load_status != CG_OK && reason != NULL) {
        snprintf(reason, reason_len, "%s", cg_cu_load_reason);
    }
    return cg_cu_load_status;
}

/* Load and cuInit (once). */
static cg_status_t cg_cu_driver_init(char *reason, size_t reason_len)
{
    cg_status_t status = cg_cu_driver_load(reason, reason_len);

    if (status != CG_OK) {
        return status;
    }
    pthread_once(&cg_cu_init_once_ctl, cg_cu_init_once);
    if (cg_cu_init_status != CG_OK && reason != NULL) {
        snprintf(reason, reason_len, "%s", cg_cu_init_reason);
    }
    return cg_cu_init_status;
}

int cg_cu_process_active(void)
{
    CUcontext ctx;

    if (__atomic_load_n(&cg_cu_active, __ATOMIC_ACQUIRE)) {
        return 1;
    }
    if (cg_cu_driver_load(NULL, 0) != CG_OK) {
        return 0;
    }
    /* CUDA_ERROR_NOT_INITIALIZED: nobody in the process called cuInit, so no pointer can
     * be device memory. Once the application has, our own cuInit costs nothing. */
    if (cg_cu.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS) {
        return 0;
    }
    return cg_cu_driver_init(NULL, 0) == CG_OK;
}

cg_status_t cg_dev_cuda_driver_present(char *reason, size_t reason_len)
{
    return cg_cu_driver_load(reason, reason_len) == CG_OK ? CG_OK : CG_ERR_NO_DEVICE;
}

cg_status_t cg_dev_cuda_probe(char *reason, size_t reason_len)
{
    int      count = 0;
    CUresult res;

    if (cg_cu_driver_init(reason, reason_len) != CG_OK) {
        return CG_ERR_NO_DEVICE;
    }
    res = cg_cu.cuDeviceGetCount(&count);
    if (res != CUDA_SUCCESS || count <= 0) {
        snprintf(reason, reason_len, "no CUDA device (%s, count %d)",
                 res != CUDA_SUCCESS ? cg_cu_error_string(res) : "no error", count);
        return CG_ERR_NO_DEVICE;
    }
    return CG_OK;
}

int cg_dev_cuda_mps(int ordinal)
{
    CUdevice cudev;
    int      mps = 0;

    if (cg_cu.cuDeviceGet == NULL || cg_cu.cuDeviceGet(&cudev, ordinal) != CUDA_SUCCESS ||
        cg_cu.cuDeviceGetAttribute(&mps, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, cudev) != CUDA_SUCCESS) {
        return -1; /* a driver older than the attribute */
    }
    return mps != 0;
}

int cg_dev_cuda_built(void)
{
    return 1;
}

int cg_cu_vmm_available(void)
{
    return cg_cu.cuMemRetainAllocationHandle != NULL &&
           cg_cu.cuMemGetAllocationPropertiesFromHandle != NULL &&
           cg_cu.cuMemExportToShareableHandle != NULL &&
           cg_cu.cuMemImportFromShareableHandle != NULL &&
           cg_cu.cuMemGetAllocationGranularity != NULL && cg_cu.cuMemAddressReserve != NULL &&
           cg_cu.cuMemAddressFree != NULL && cg_cu.cuMemMap != NULL && cg_cu.cuMemUnmap != NULL &&
           cg_cu.cuMemSetAccess != NULL && cg_cu.cuMemRelease != NULL;
}
