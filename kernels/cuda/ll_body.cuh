/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The LL collective's device side, shared by the kernel launched per call (ll_cuda.cu) and
 * the LL server that stays on the GPU (ll_server.cu): its parameters and bodies. A body
 * writes this rank's payload into its peers' inboxes as 8-byte lines (4 bytes of data, the
 * call's 4-byte flag: one store each, so a reader sees a line whole or not at all), then
 * waits on the lines of its own inbox and writes the result: the reduction in rank order
 * (the same bits on every rank), or the copies. A slot whose lines carry CG_LL_ABORT (written
 * by the host when a peer will never send), or the host's cancel word set to the call's
 * flag (a peer is not on the call), ends the wait without a result.
 *
 * One block: small messages, where the launch and the wait dominate. The types and ops are
 * the rows of the shared table (cg_reduce_ops.h), as for the reduction kernel. Included by
 * those two files only; every device function here is inline (each file has its own).
 */
#ifndef CG_LL_BODY_CUH
#define CG_LL_BODY_CUH

#include "kernels/cuda/cg_cuda.h"

#include <stdint.h>

namespace cg_ll {

constexpr int kThreads = 512;

/* What the kernel needs of each rank; after the rest, so that the host posts a server the
 * head and the call's ranks only (cg_cuda_ll_post). */
struct LLPeer {
    char  *inbox;
    size_t send_off; /* byte offset in src of what goes to the rank */
    size_t send_len; /* bytes to the rank (0: nothing) */
    size_t recv_len; /* bytes expected from the rank (0: nothing) */
};

struct LLParams {
    size_t   slot_bytes;
    const char *src;
    char    *dst;
    int      size, rank, root, coll, parity, body; /* body: LLBodyIndex (a server's) */
    uint32_t flag;
    size_t   count;  /* reductions: elements of the result; allgather: bytes of a block */
    const volatile unsigned long long *cancel; /* this rank's cancel word; NULL: none */
    volatile unsigned long long *done;         /* page-locked host word: the call ended */
    unsigned long long           done_value;
    LLPeer   peer[CG_DEV_MAX_FANIN];
};

__device__ __forceinline__ char *ll_slot(const LLParams &p, int owner, int from)
{
    return p.peer[owner].inbox + ((size_t)p.parity * (size_t)p.size + (size_t)from) * p.slot_bytes;
}

/* Wait for line i of slot `from` of this rank's inbox; its 4 data bytes, or *aborted (an
 * abort line, or the host set the cancel word to this call's flag: a peer will never send). */
__device__ __forceinline__ uint32_t ll_wait(const LLParams &p, int from, size_t i, int *aborted)
{
    const volatile unsigned long long *line =
        reinterpret_cast<const volatile unsigned long long *>(ll_slot(p, p.rank, from)) + i;
    unsigned spins = 0;

    for (;;) {
        unsigned long long v = *line;
        uint32_t           f = (uint32_t)(v >> 32);
        if (f == p.flag) {
            return (uint32_t)v;
        }
        if (f == (p.flag | CG_LL_ABORT)) {
            *aborted = 1;
            return 0;
        }
        if (++spins > 64) {
            if (p.cancel != nullptr && *p.cancel == (unsigned long long)p.flag) {
                *aborted = 1;
                return 0;
            }
            __nanosleep(64);
        }
    }
}

__device__ inline void ll_push(const LLParams &p)
{
    for (int to = 0; to < p.size; to++) { /* every peer: at least an empty line */
        const size_t len = p.peer[to].send_len, lines = cg_ll_slot_lines(len);
        volatile unsigned long long *out =
            reinterpret_cast<volatile unsigned long long *>(ll_slot(p, to, p.rank));
        const char *in = p.src + p.peer[to].send_off;
        for (size_t i = threadIdx.x; i < lines; i += blockDim.x) {
            uint32_t data = 0;
            for (int b = 0; b < 4 && 4 * i + b < len; b++) {
                data |= (uint32_t)(unsigned char)in[4 * i + b] << (8 * b);
            }
            out[i] = ((unsigned long long)p.flag << 32) | data;
        }
    }
}

/* The empty line of every peer that sends this rank no data (cg_ll_slot_lines): it has
 * started this call. Block-wide: 1 when any was an abort line. */
__device__ inline int ll_wait_empty(const LLParams &p)
{
    int aborted = 0;

    for (int from = threadIdx.x; from < p.size; from += blockDim.x) {
        if (p.peer[from].recv_len == 0) {
            (void)ll_wait(p, from, 0, &aborted);
        }
    }
    return __syncthreads_or(aborted);
}

/* The kernel's last store: every thread's writes are done (the block barrier) and visible
 * system-wide (the fence, cumulative) before the host sees the call end in its word, which
 * it polls with no driver call. Stored on every path, a call given up included: the low bit
 * says so (no result written), so that a host that cancelled a call which had just ended
 * knows it ended with its result (cg_cuda_ll_ended). */
__device__ __forceinline__ void ll_done(const LLParams &p, int given_up)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence_system();
        *p.done = (p.done_value << 1) | (given_up ? 1ull : 0ull);
    }
}

/* Once every thread has read its lines (the block barrier), unless the call was given up:
 * the lines this rank read go back to 0, so that no line outlives its call. The flags repeat
 * every 2^31 - 1 calls (intra_ll.c), and an old line further into a slot than the calls in
 * between wrote would otherwise carry a later call's flag. No peer writes this half again
 * before this rank's next call has sent it lines, queued after this kernel. Returns 1 when
 * the call was given up (an abort line or the cancel word, on any thread). */
__device__ inline int ll_consume(const LLParams &p, int aborted)
{
    if (__syncthreads_or(aborted)) {
        return 1; /* given up */
    }
    for (int from = 0; from < p.size; from++) {
        const size_t lines = cg_ll_slot_lines(p.peer[from].recv_len);
        volatile unsigned long long *in =
            reinterpret_cast<volatile unsigned long long *>(ll_slot(p, p.rank, from));
        for (size_t i = threadIdx.x; i < lines; i += blockDim.x) {
            in[i] = 0;
        }
    }
    return 0;
}

/* bcast and allgather: the lines of slot `from` into dst + at, byte by byte at the tail. */
__device__ inline void ll_pull_bytes(const LLParams &p, int from, char *at, int *aborted)
{
    const size_t len = p.peer[from].recv_len, lines = (len + 3) / 4;

    for (size_t i = threadIdx.x; i < lines; i += blockDim.x) {
        uint32_t data = ll_wait(p, from, i, aborted);
        if (*aborted) {
            return;
        }
        for (int b = 0; b < 4 && 4 * i + b < len; b++) {
            at[4 * i + b] = (char)(data >> (8 * b));
        }
    }
}

/* Element e of slot `from` (bytes e*sizeof(T) ..), assembled from its lines. */
template <typename T>
__device__ __forceinline__ T ll_element(const LLParams &p, int from, size_t e, int *aborted)
{
    unsigned char bytes[sizeof(T) + 8];
    const size_t  first = e * sizeof(T), line0 = first / 4, line1 = (first + sizeof(T) - 1) / 4;
    T             v;

    for (size_t l = line0; l <= line1; l++) {
        uint32_t data = ll_wait(p, from, l, aborted);
        for (int b = 0; b < 4; b++) {
            bytes[(l - line0) * 4 + b] = (unsigned char)(data >> (8 * b));
        }
    }
    memcpy(&v, bytes + (first - line0 * 4), sizeof(T));
    return v;
}

/* The reduction: the lines out, every contribution in rank order into dst. Returns 1 when
 * the call was given up (ll_consume). */
template <typename T, typename F, int STORE>
__device__ __forceinline__ int ll_reduce_body(const LLParams &p)
{
    F   fn;
    int aborted;

    ll_push(p);
    /* in place: every line of the input left before the result is written (the barrier of
     * ll_wait_empty) */
    aborted = ll_wait_empty(p);
    for (size_t e = threadIdx.x; e < p.count && !aborted; e += blockDim.x) {
        T acc = ll_element<T>(p, 0, e, &aborted);
        for (int s = 1; s < p.size && !aborted; s++) {
            acc = fn(acc, ll_element<T>(p, s, e, &aborted));
        }
        if (!aborted) {
            char *out = p.dst + e * sizeof(T);
            if constexpr (STORE != 0) { /* the user's padding bytes are never written */
                memcpy(out, &acc, sizeof(acc.v));
                memcpy(out + offsetof(T, i), reinterpret_cast<const char *>(&acc) + offsetof(T, i),
                       sizeof(int));
            } else {
                memcpy(out, &acc, sizeof(T));
            }
        }
    }
    return ll_consume(p, aborted);
}

__device__ __forceinline__ int ll_copy_body(const LLParams &p)
{
    int aborted;

    ll_push(p);
    aborted = ll_wait_empty(p);
    if (!aborted && p.coll == CG_LL_BCAST) {
        ll_pull_bytes(p, p.root, p.dst, &aborted);
    } else {
        for (int s = 0; s < p.size && !aborted; s++) { /* allgather */
            ll_pull_bytes(p, s, p.dst + (size_t)s * p.count, &aborted);
        }
    }
    return ll_consume(p, aborted);
}

#define CG_X_FUNCTOR(DT, OP, T, FN, STORE)                                                \
    struct LLFn_##FN {                                                                    \
        __device__ __forceinline__ T operator()(T a, T b) const { return FN(a, b); }      \
    };
CG_REDUCE_TABLE(CG_X_FUNCTOR)
#undef CG_X_FUNCTOR

/* Every body (LLParams body; a server runs any): the copies, then one per row of the table. */
enum LLBodyIndex {
    LL_BODY_COPY = 0,
#define CG_X_BODY(DT, OP, T, FN, STORE) LL_BODY_##FN,
    CG_REDUCE_TABLE(CG_X_BODY)
#undef CG_X_BODY
};

/* The parameters of an LL call (ll_cuda.cu): its body (LLBodyIndex), -1 when none. */
int ll_params(const cg_ll_args_t *a, LLParams *p);
/* The kernel of p's body launched on stream, its end stored into *done (ll_cuda.cu). */
cudaError_t ll_launch_params(LLParams &p, cudaStream_t stream, uint64_t *done,
                             uint64_t done_value);
/* Load the server's kernel now (ll_server.cu; cg_cuda_ll_preload). */
cudaError_t ll_server_preload(void);

} // namespace cg_ll

#endif /* CG_LL_BODY_CUH */
