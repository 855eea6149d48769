/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The probe's persistent kernel (coll_gpu_probe row persist_rt): one thread that stays on
 * the GPU and answers a doorbell word in page-locked host memory with a reply word there,
 * so that the host sees a device round trip with no launch and no stream operation: the
 * floor of a call whose exchange a kernel already running would do. It ends at the stop
 * value, or on its own after about ten seconds without a ring (a host that went away).
 */
#include <cuda_runtime.h>

namespace {

__global__ void probe_persist_kernel(volatile unsigned *bell, volatile unsigned *reply)
{
    const long long patience = 20000000000ll; /* cycles: about ten seconds */
    unsigned        last     = 0;
    long long       since    = clock64();

    for (;;) {
        const unsigned value = *bell;
        if (value == 0xffffffffu) {
            return;
        }
        if (value != last) {
            last = value;
            __threadfence_system();
            *reply = value;
            since  = clock64();
        } else if (clock64() - since > patience) {
            return;
        }
    }
}

} // namespace

/* Start the kernel on stream, on the device views of the two host words. */
extern "C" cudaError_t probe_persist_start(unsigned *bell_dev, unsigned *reply_dev, cudaStream_t stream)
{
    probe_persist_kernel<<<1, 1, 0, stream>>>(bell_dev, reply_dev);
    return cudaGetLastError();
}
