/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The CUDA layer's use of the driver, against a fake libcuda.so.1 (fake_cuda.c): MPI_Init's
 * check loads the driver without starting it; classifying host buffers before the
 * application has initialised CUDA neither starts it nor queries it; once the application
 * has, pointers are classified by the driver; a failed query is an error, never "host".
 */
#include "kernels/cg_dev.h"

#include "tests/unit/unit.h"

#include <check.h>
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>

static void *fake;

static int fake_int(const char *name)
{
    int (*fn)(void);
    *(void **)&fn = dlsym(fake, name);
    ck_assert_ptr_nonnull(fn);
    return fn();
}

static void load_fake(void)
{
    /* loaded first under its soname, the layer's dlopen("libcuda.so.1") finds it */
    fake = dlopen(CG_FAKE_CUDA, RTLD_NOW | RTLD_GLOBAL);
    ck_assert_msg(fake != NULL, "%s", dlerror());
}

START_TEST(test_lazy_init)
{
    static char   device_memory[4096];
    char          reason[200] = "";
    int           host_buffer[4];
    cg_mem_attr_t attr;
    CUresult (*app_cu_init)(unsigned);
    void (*set_range)(uintptr_t, uintptr_t);

    load_fake();
    /* MPI_Init: a driver is there; it is not started */
    ck_assert_int_eq(cg_dev_cuda_driver_present(reason, sizeof(reason)), CG_OK);
    ck_assert_int_eq(fake_int("fake_cuda_init_calls"), 0);
    /* calls with host buffers before the application touched CUDA: host, nothing started */
    ck_assert_int_eq(cg_dev_cuda_mem_query(host_buffer, &attr), CG_OK);
    ck_assert_int_eq(attr.kind, CG_MEM_HOST);
    ck_assert_int_eq(fake_int("fake_cuda_init_calls"), 0);
    ck_assert_int_eq(fake_int("fake_cuda_query_calls"), 0);
    /* the application initialises CUDA (cudaSetDevice, cudaMalloc...) */
    *(void **)&app_cu_init = dlsym(fake, "cuInit");
    *(void **)&set_range   = dlsym(fake, "fake_cuda_set_device_range");
    ck_assert_int_eq(app_cu_init(0), CUDA_SUCCESS);
    set_range((uintptr_t)device_memory, sizeof(device_memory));
    ck_assert_int_eq(cg_dev_cuda_mem_query(device_memory + 100, &attr), CG_OK);
    ck_assert_int_eq(attr.kind, CG_MEM_DEVICE);
    ck_assert_int_eq(attr.device, 0);
    ck_assert_uint_eq(attr.base, (uintptr_t)device_memory);
    ck_assert_uint_eq(attr.buffer_id, 77);
    ck_assert_int_eq(cg_dev_cuda_mem_query(host_buffer, &attr), CG_OK);
    ck_assert_int_eq(attr.kind, CG_MEM_HOST);
}
END_TEST

START_TEST(test_query_failure_is_not_host)
{
    cg_mem_attr_t attr;
    int           host_buffer[4];
    CUresult (*app_cu_init)(unsigned);
    void (*set_result)(CUresult);

    load_fake();
    *(void **)&app_cu_init = dlsym(fake, "cuInit");
    *(void **)&set_result  = dlsym(fake, "fake_cuda_set_query_result");
    ck_assert_int_eq(app_cu_init(0), CUDA_SUCCESS);
    set_result(CUDA_ERROR_INVALID_CONTEXT);
    ck_assert_int_eq(cg_dev_cuda_mem_query(host_buffer, &attr), CG_ERR_DEVICE);
}
END_TEST

CG_UNIT_MAIN("cuda_driver", 0, test_lazy_init, test_query_failure_is_not_host)
