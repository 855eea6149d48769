/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* The CUDA driver API, loaded at run time. */
#include "kernels/cuda/cg_cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

cg_cu_driver_t cg_cu;

static pthread_once_t cg_cu_once = PTHREAD_ONCE_INIT;
static cg_status_t    cg_cu_load_status = CG_ERR_NO_DEVICE;
static char           cg_cu_load_reason[200];

const char *cg_cu_error_string(CUresult res)
{
    const char *str = NULL;

    if (cg_cu.cuGetErrorString == NULL || cg_cu.cuGetErrorString(res, &str) != CUDA_SUCCESS ||
        str == NULL) {
        return "unknown CUDA driver error";
    }
    return str;
}

static void cg_cu_load_once(void)
{
    void    *lib;
    CUresult res;
    int      version = 0;

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
    CG_CU_SYM(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
#undef CG_CU_SYM

    res = cg_cu.cuInit(0);
    if (res != CUDA_SUCCESS) {
        snprintf(cg_cu_load_reason, sizeof(cg_cu_load_reason), "cuInit failed: %s",
                 cg_cu_error_string(res));
        return;
    }
    /* the runtime linked in needs a driver of at least its major version */
    res = cg_cu.cuDriverGetVersion(&version);
    if (res != CUDA_SUCCESS || version < CUDART_VERSION / 1000 * 1000) {
        snprintf(cg_cu_load_reason, sizeof(cg_cu_load_reason),
                 "CUDA driver version %d is older than the CUDA %d.%d runtime built in", version,
                 CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
        return;
    }
    cg_cu_load_status = CG_OK;
}

cg_status_t cg_cu_driver_load(char *reason, size_t reason_len)
{
    pthread_once(&cg_cu_once, cg_cu_load_once);
    if (cg_cu_load_status != CG_OK && reason != NULL) {
        snprintf(reason, reason_len, "%s", cg_cu_load_reason);
    }
    return cg_cu_load_status;
}

cg_status_t cg_dev_cuda_probe(char *reason, size_t reason_len)
{
    int      count = 0;
    CUresult res;

    if (cg_cu_driver_load(reason, reason_len) != CG_OK) {
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

int cg_dev_cuda_built(void)
{
    return 1;
}
