/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The probe's kernels (kit-probe.h). persist_rt: one thread that stays on the GPU and
 * answers a doorbell word in page-locked host memory with a reply word there, so that the
 * host sees a device round trip with no launch and no stream operation. launch_ll and
 * persist_ll: an 8-byte allreduce among the ranks sharing the GPU, its lines carrying
 * their flag (as the component's LL kernel), run by a kernel launched per call or by one
 * kernel that stays and is rung by the host: what a persistent design would save, with the
 * exchange and the ranks' skew included. Persistent kernels end at their stop value, or on
 * their own after about ten seconds without a ring (a host that went away).
 */
#include "kit-probe.h"

namespace {

constexpr unsigned long long probe_patience_ns = 10000000000ull; /* ten seconds */
constexpr int                probe_ll_threads  = 32;
static_assert(PROBE_LL_MAX_RANKS * PROBE_LL_LINES <= probe_ll_threads, "a thread per line");

/* The GPU's global nanosecond timer: the same on every SM (a block moved to another SM
 * after a time slice keeps its idea of time), independent of the clock rate. */
__device__ __forceinline__ unsigned long long probe_now_ns()
{
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
}

__global__ void probe_persist_kernel(volatile unsigned *bell, volatile unsigned *reply)
{
    unsigned           last  = 0;
    unsigned long long since = probe_now_ns();

    for (;;) {
        const unsigned value = *bell;
        if (value == PROBE_LL_STOP) {
            return;
        }
        if (value != last) {
            last = value;
            __threadfence_system();
            *reply = value;
            since  = probe_now_ns();
        } else if (probe_now_ns() - since > probe_patience_ns) {
            return;
        }
    }
}

/* One call of the LL allreduce, by one block: thread (peer, line) sends its line to that
 * peer's inbox and takes the peer's line from this rank's, spinning on its flag; then the
 * first threads sum the lines in rank order into dst. A slot of a parity is written again
 * two calls later, when every rank has finished this one (it sent its next call's lines
 * only after). */
__device__ void probe_ll_step(const probe_ll_args_t &args, unsigned flag)
{
    __shared__ float got[PROBE_LL_MAX_RANKS][PROBE_LL_LINES];
    const int        thread = threadIdx.x;
    const unsigned   parity = flag & 1u;

    if (thread < args.size * PROBE_LL_LINES) {
        const int peer = thread / PROBE_LL_LINES, line = thread % PROBE_LL_LINES;
        const unsigned long long word = /* the input plus the flag: each call's sum differs */
            (unsigned long long)flag << 32 | __float_as_uint(args.src[line] + (float)flag);
        volatile unsigned long long *out =
            args.inbox[peer] + (parity * PROBE_LL_MAX_RANKS + args.rank) * PROBE_LL_LINES + line;
        volatile unsigned long long *in =
            args.inbox[args.rank] + (parity * PROBE_LL_MAX_RANKS + peer) * PROBE_LL_LINES + line;
        unsigned long long seen;

        *out = word;
        do {
            seen = *in;
        } while ((unsigned)(seen >> 32) != flag);
        got[peer][line] = __uint_as_float((unsigned)seen);
    }
    __syncthreads();
    if (thread < PROBE_LL_LINES) {
        float sum = 0.0f;
        for (int peer = 0; peer < args.size; peer++) {
            sum += got[peer][thread];
        }
        args.dst[thread] = sum;
    }
    __syncthreads();
}

/* The result written: the flag to the host, after it. */
__device__ void probe_ll_reply(volatile unsigned *reply, unsigned flag)
{
    if (threadIdx.x == 0) {
        __threadfence_system();
        *reply = flag;
    }
}

__global__ void probe_ll_launch_kernel(probe_ll_args_t args, unsigned flag, volatile unsigned *reply)
{
    probe_ll_step(args, flag);
    probe_ll_reply(reply, flag);
}

/* The call's arguments, written by the host into page-locked memory as tagged lines before
 * its ring (kit-probe.h), read by the warp together with the bell (as a real descriptor
 * would be: the cost of that read over the bus is part of the row). */
union probe_ll_posted_t {
    probe_ll_args_t    args;
    unsigned long long words[PROBE_LL_POST_WORDS];
};
static_assert(sizeof(probe_ll_args_t) % sizeof(unsigned long long) == 0, "whole words");
static_assert(PROBE_LL_POST_LINES <= probe_ll_threads, "a line per thread");

__global__ void probe_ll_persist_kernel(const unsigned long long *posted, unsigned last,
                                        volatile unsigned *bell, volatile unsigned *reply)
{
    constexpr unsigned                 all   = 0xffffffffu; /* one warp */
    __shared__ probe_ll_posted_t       args;
    const volatile unsigned long long *lines = posted;
    const int                          me    = threadIdx.x;
    unsigned long long                 since = probe_now_ns();

    for (;;) {
        const unsigned long long line  = me < (int)PROBE_LL_POST_LINES ? lines[me] : 0;
        unsigned                 value = 0;
        int                      quit  = 0;
        if (me == 0) {
            value = *bell;
            quit  = value == PROBE_LL_STOP ||
                   (value == last && probe_now_ns() - since > probe_patience_ns);
        }
        value = __shfl_sync(all, value, 0);
        if (__shfl_sync(all, quit, 0)) {
            return; /* the stop, or no ring for ten seconds */
        }
        if (value == last ||
            !__all_sync(all, me >= (int)PROBE_LL_POST_LINES || (unsigned)(line >> 32) == value)) {
            continue; /* not rung, or a line older than the bell: read both again */
        }
        const unsigned long long low  = __shfl_sync(all, line, (2 * me) % 32);
        const unsigned long long high = __shfl_sync(all, line, (2 * me + 1) % 32);
        if (me < (int)PROBE_LL_POST_WORDS) {
            args.words[me] = (low & 0xffffffffull) | (high << 32);
        }
        __syncthreads();
        last = value;
        probe_ll_step(args.args, value);
        probe_ll_reply(reply, value);
        since = probe_now_ns();
    }
}

} // namespace

extern "C" cudaError_t probe_persist_start(unsigned *bell_dev, unsigned *reply_dev, cudaStream_t stream)
{
    probe_persist_kernel<<<1, 1, 0, stream>>>(bell_dev, reply_dev);
    return cudaGetLastError();
}

extern "C" cudaError_t probe_ll_launch(const probe_ll_args_t *args, unsigned flag, unsigned *reply_dev,
                                       cudaStream_t stream)
{
    probe_ll_launch_kernel<<<1, probe_ll_threads, 0, stream>>>(*args, flag, reply_dev);
    return cudaGetLastError();
}

extern "C" cudaError_t probe_ll_persist_start(const unsigned long long *posted_dev, unsigned last,
                                              unsigned *bell_dev, unsigned *reply_dev, cudaStream_t stream)
{
    probe_ll_persist_kernel<<<1, probe_ll_threads, 0, stream>>>(posted_dev, last, bell_dev, reply_dev);
    return cudaGetLastError();
}
