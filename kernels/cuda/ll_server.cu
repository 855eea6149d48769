/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The CUDA layer's LL server (coll_gpu_ll_persist; the protocol: kernels/dev_ll_server.h;
 * the host's side: dev_cuda_server.c): one block that stays on the GPU between LL calls,
 * reads each call the host rings (its parameters posted as tagged lines, read with the
 * bell) and runs the body of ll_body.cuh that a launched kernel would (ll_cuda.cu); the
 * posting of a call, and its launch when no server could read it.
 */
#include "kernels/cuda/ll_body.cuh"
#include "kernels/dev_ll_server.h"

#include <string.h>

using namespace cg_ll;

namespace {

template <typename T, typename F, int STORE>
__device__ __noinline__ int ll_reduce_entry(const LLParams &p)
{
    return ll_reduce_body<T, F, STORE>(p);
}

__device__ __noinline__ int ll_copy_entry(const LLParams &p)
{
    return ll_copy_body(p);
}

/* A direct call per body (no function pointers: ptxas sizes the stack, no ABI call). */
__device__ int ll_body_run(const LLParams &p)
{
    switch (p.body) {
    case LL_BODY_COPY: return ll_copy_entry(p);
#define CG_X_CASE(DT, OP, T, FN, STORE)                                                   \
    case LL_BODY_##FN: return ll_reduce_entry<T, LLFn_##FN, STORE>(p);
    CG_REDUCE_TABLE(CG_X_CASE)
#undef CG_X_CASE
    default: return 1; /* not a body: given up (the host never posts one) */
    }
}

/* The words of dev_ll_server.h, as the device sees them. */
struct LLServerWords {
    unsigned long long bell, bell_pad[7];
    unsigned long long left, left_pad[7];
};

/* The GPU's nanosecond timer: the same on every SM, whatever the clock. */
__device__ __forceinline__ unsigned long long ll_now_ns()
{
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
}

/* The bell, read with acquire semantics at the system's scope once it moved: what the host
 * ordered before its ring (the application's work it saw end, which wrote the call's input)
 * is what the block's later loads see, through the block's barriers; without it an
 * ordinary load could hit an older copy of an input in this SM's L1, where a kernel that
 * stays keeps them across calls (a launched kernel starts with none). Polled with a relaxed
 * load of system scope, and the acquire made by a fence when the value differs from
 * served (PTX's fence-based acquire pattern): an acquire load at every poll may
 * invalidate the L1 of the SM at every poll (sm_90 compiles it so), which the
 * application's blocks on that SM would feel. */
__device__ __forceinline__ unsigned long long ll_bell_read(const volatile unsigned long long *word,
                                                           unsigned long long served)
{
    unsigned long long value;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(word) : "memory");
    if (value != served) {
        asm volatile("fence.acq_rel.sys;" ::: "memory");
    }
    return value;
}

/* The posted arguments (dev_ll_server.h): the words of LLParams, the head then the ranks,
 * each as two tagged lines. A call of `size` ranks posts the head and its ranks only. */
constexpr int kParamWords = sizeof(LLParams) / sizeof(unsigned long long);
constexpr int kHeadWords  = offsetof(LLParams, peer) / sizeof(unsigned long long);
constexpr int kPeerWords  = sizeof(LLPeer) / sizeof(unsigned long long);
constexpr int kPostLines  = CG_LL_POST_LINES(kParamWords);
static_assert(sizeof(LLParams) % sizeof(unsigned long long) == 0, "whole words");
static_assert(offsetof(LLParams, peer) % sizeof(unsigned long long) == 0, "whole words");
static_assert(sizeof(LLPeer) % sizeof(unsigned long long) == 0, "whole words");
static_assert(kPostLines <= kThreads, "a line per thread");

/* The longest a server waits for a posted line it did not read with the bell. */
constexpr unsigned long long kPostWaitNs = 1000000;

__host__ __device__ constexpr int ll_post_lines(int size)
{
    return CG_LL_POST_LINES(kHeadWords + size * kPeerWords);
}

/* Words [from, to) of the call from the lines seen, a word per thread. */
__device__ __forceinline__ void ll_post_decode(const unsigned long long *seen, LLParams *call,
                                               int from, int to)
{
    unsigned long long *block = reinterpret_cast<unsigned long long *>(call);

    for (int w = from + (int)threadIdx.x; w < to; w += blockDim.x) {
        block[w] = cg_ll_post_word(seen[2 * w], seen[2 * w + 1]);
    }
}

/* Block-wide: the call's lines among those seen (the first `polled`) checked against its tag
 * and decoded into *call, the head first (it holds the call's ranks); lines beyond `polled`
 * read now, a round trip more (never: the group of a stream is fixed; kPostWaitNs at most).
 * 1 when taken, 0 when a line seen is older than the bell (read both again). */
__device__ int ll_post_take(const volatile unsigned long long *lines, unsigned long long *seen,
                            int polled, uint32_t tag, LLParams *call)
{
    const int head = CG_LL_POST_LINES(kHeadWords), me = (int)threadIdx.x;

    if (!__syncthreads_and(me >= head || cg_ll_post_fresh(seen[me], tag))) {
        return 0;
    }
    ll_post_decode(seen, call, 0, kHeadWords); /* the head is the call's */
    __syncthreads();
    const int need = ll_post_lines(max(1, min(call->size, CG_DEV_MAX_FANIN)));
    const int have = min(need, polled);
    if (!__syncthreads_and(me < head || me >= have || cg_ll_post_fresh(seen[me], tag))) {
        return 0;
    }
    ll_post_decode(seen, call, kHeadWords, have / 2);
    /* a bounded wait: a line that never carries the tag (a defect) sends the server back to
     * its loop, where it leaves at the end of its life (the host then launches the call) */
    const unsigned long long since = ll_now_ns();
    int                      fresh = 1;
    for (int line = have + me; line < need && fresh; line += blockDim.x) {
        unsigned long long value;
        while (!(fresh = cg_ll_post_fresh(value = lines[line], tag)) &&
               ll_now_ns() - since < kPostWaitNs) {
            __nanosleep(64);
        }
        seen[line] = value;
    }
    if (!__syncthreads_and(fresh)) {
        return 0;
    }
    ll_post_decode(seen, call, have / 2, need / 2);
    __syncthreads();
    return 1;
}

/* The bell (thread 0) and the first `polled` posted lines (a line per thread) read at once,
 * in one round trip across the bus, until the bell rings and every line of the call carries
 * its tag (a line read with the bell may be older: read both again), or the server leaves.
 * Thread 0 decides that: no ring for its idle time, or the stop; past its life it leaves
 * without a look at the bell (after one look at least, *looked: a server started late still
 * serves the ring it was started for; a call rung meanwhile is the next server's, which the
 * host starts when it sees this one left). Returns the call rung, its arguments in *call;
 * served or CG_LL_SERVER_STOP: leave. */
__device__ unsigned long long ll_server_take(volatile LLServerWords *words,
                                             const volatile unsigned long long *lines, int polled,
                                             unsigned long long served, unsigned long long since,
                                             unsigned long long born, unsigned long long idle_ns,
                                             unsigned long long life_ns, int *looked, LLParams *call)
{
    __shared__ unsigned long long seen[kPostLines];
    __shared__ unsigned long long rung;
    __shared__ int                leave;
    const int                     me = (int)threadIdx.x;

    for (unsigned spins = 1;; spins++) {
        unsigned long long line = 0, bell = served;
        int                out  = 0;
        if (me < polled) {
            line = lines[me];
        }
        if (me == 0) { /* the bell's read issued right after the line's: one round trip */
            out = *looked && ll_now_ns() - born >= life_ns;
            if (!out) {
                bell = ll_bell_read(&words->bell, served);
            }
        }
        if (me < polled) {
            seen[me] = line;
        }
        if (me == 0) {
            if (!out) {
                out = bell == CG_LL_SERVER_STOP ||
                      (bell == served && spins % 32 == 0 && ll_now_ns() - since > idle_ns);
            }
            *looked = 1;
            rung    = out && bell != CG_LL_SERVER_STOP ? served : bell;
            leave   = out;
        }
        __syncthreads();
        bell = rung;
        if (leave) {
            __syncthreads(); /* every thread has read rung */
            return bell;
        }
        if (bell != served && ll_post_take(lines, seen, polled, cg_ll_post_tag(bell), call)) {
            return bell; /* its arguments in *call */
        }
        if (spins > 64) {
            __nanosleep(64);
        }
        __syncthreads(); /* seen and rung read by every thread before they are written again */
    }
}

__global__ void __launch_bounds__(kThreads)
    ll_server_kernel(volatile LLServerWords *words, const unsigned long long *posted, int polled,
                     volatile unsigned long long *done, unsigned long long gen,
                     unsigned long long served, unsigned long long idle_ns,
                     unsigned long long life_ns)
{
    __shared__ LLParams      call;
    const unsigned long long born  = ll_now_ns();
    unsigned long long       since = born;
    int                      looked = 0;

    polled = max(ll_post_lines(1), min(polled, kPostLines)) & ~1; /* the head, whole words */
    for (;;) {
        const unsigned long long bell =
            ll_server_take(words, reinterpret_cast<const volatile unsigned long long *>(posted), polled,
                           served, since, born, idle_ns, life_ns, &looked, &call);
        if (bell == served || bell == CG_LL_SERVER_STOP) {
            break; /* idle for its time, at the end of its life, or stopped */
        }
        if (threadIdx.x == 0) {
            call.done       = done;
            call.done_value = bell;
        }
        __syncthreads();
        ll_done(call, ll_body_run(call));
        served = bell;
        since  = ll_now_ns();
    }
    if (threadIdx.x == 0) { /* after its last look at the bell */
        __threadfence_system();
        words->left = gen;
    }
}

} // namespace

cudaError_t cg_ll::ll_server_preload(void)
{
    cudaFuncAttributes attr;

    return cudaFuncGetAttributes(&attr, ll_server_kernel);
}

extern "C" cudaError_t cg_cuda_ll_launch_posted(const void *posted, uint64_t call,
                                                cudaStream_t stream, uint64_t *done)
{
    const uint64_t *lines = static_cast<const uint64_t *>(posted);
    uint64_t        words[kParamWords] = {0};
    LLParams        p;

    (void)cudaGetLastError();
    if (!cg_ll_server_decode(lines, words, kHeadWords, call)) {
        return cudaErrorInvalidValue;
    }
    memcpy(&p, words, sizeof(p)); /* the head: the call's ranks, then their words */
    if (p.size < 1 || p.size > CG_DEV_MAX_FANIN ||
        !cg_ll_server_decode(lines + CG_LL_POST_LINES(kHeadWords), words + kHeadWords,
                             (size_t)(p.size * kPeerWords), call)) {
        return cudaErrorInvalidValue;
    }
    memcpy(&p, words, sizeof(p));
    return ll_launch_params(p, stream, done, call);
}

extern "C" size_t cg_cuda_ll_posted_bytes(void)
{
    return kPostLines * sizeof(uint64_t);
}

extern "C" cudaError_t cg_cuda_ll_post(const cg_ll_args_t *a, void *posted, uint64_t call,
                                       int *lines)
{
    LLParams params;
    uint64_t words[kParamWords];

    if (ll_params(a, &params) < 0) {
        return cudaErrorInvalidValue;
    }
    memcpy(words, &params, sizeof(words));
    /* what the server uses: the head and the call's ranks (a call of 4 ranks: 27 words of
     * 139, 54 lines) */
    *lines = ll_post_lines(params.size);
    cg_ll_server_post(static_cast<uint64_t *>(posted), words, (size_t)*lines / 2, call);
    return cudaSuccess;
}

extern "C" cudaError_t cg_cuda_ll_server_start(void *words, const void *posted, int polled,
                                               uint64_t *done, uint64_t gen, uint64_t served,
                                               uint64_t idle_ns, uint64_t life_ns,
                                               cudaStream_t stream)
{
    static_assert(sizeof(LLServerWords) == sizeof(cg_ll_server_words_t), "the protocol's words");
    (void)cudaGetLastError();
    ll_server_kernel<<<1, kThreads, 0, stream>>>(
        static_cast<volatile LLServerWords *>(words), static_cast<const unsigned long long *>(posted),
        polled, reinterpret_cast<volatile unsigned long long *>(done), gen, served, idle_ns, life_ns);
    return cudaGetLastError();
}
