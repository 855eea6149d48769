/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Fused multi-source, multi-destination reduction kernel for every (type, op) of the
 * shared table in cg_reduce_ops.h:
 *
 *     dsts[d][i] = srcs[0][i] op srcs[1][i] op ... op srcs[nsrc-1][i]   for every d
 *
 * Sources and destinations may be peers' memory mapped through CUDA IPC. A copy is the
 * nsrc == 1 case (one source broadcast to every destination).
 *
 * Three access paths, chosen from the alignment of every pointer:
 *   vec16 - 16-byte loads and stores (all pointers 16-byte aligned, element without padding)
 *   elem  - one element per access (all pointers aligned to the element)
 *   bytes - byte-wise loads and stores (any alignment)
 * Padded pair types are stored field by field so that the user's padding bytes are
 * never written.
 */
#include "kernels/cuda/cg_cuda.h"

#include <stdint.h>

namespace {

constexpr int kThreads = 512;

struct Pointers {
    const char *srcs[CG_DEV_MAX_FANIN];
    char       *dsts[CG_DEV_MAX_FANIN];
    int         nsrc;
    int         ndst;
};

template <typename T, int STORE>
__device__ __forceinline__ void store_elem(char *dst, const T &v)
{
    *reinterpret_cast<T *>(dst) = v;
}

#define CG_STORE_PAIR_SPECIALISATION(T)                                                   \
    template <>                                                                           \
    __device__ __forceinline__ void store_elem<T, 1>(char *dst, const T &v)               \
    {                                                                                     \
        T *d = reinterpret_cast<T *>(dst);                                                \
        d->v = v.v;                                                                       \
        d->i = v.i;                                                                       \
    }
CG_STORE_PAIR_SPECIALISATION(cg_double_int_t)
CG_STORE_PAIR_SPECIALISATION(cg_long_int_t)
CG_STORE_PAIR_SPECIALISATION(cg_short_int_t)

template <typename T>
__device__ __forceinline__ T load_bytes(const char *src)
{
    T v;
    memcpy(&v, src, sizeof(T));
    return v;
}

template <typename T, int STORE>
__device__ __forceinline__ void store_bytes(char *dst, const T &v)
{
    if constexpr (STORE != 0) {
        /* padded pair: value at offset 0, index at offsetof(T, i) */
        memcpy(dst, &v, sizeof(v.v));
        memcpy(dst + offsetof(T, i), reinterpret_cast<const char *>(&v) + offsetof(T, i),
               sizeof(int));
    } else {
        memcpy(dst, &v, sizeof(T));
    }
}

/* 16-byte path: each thread reduces one uint4 worth of elements per iteration. */
template <typename T, typename F>
__global__ void __launch_bounds__(kThreads)
    reduce_vec16(Pointers p, size_t nvec)
{
    constexpr int E = 16 / sizeof(T);
    union Vec {
        uint4 u;
        T     t[E];
    };
    F            fn;
    const size_t stride = (size_t)gridDim.x * blockDim.x;

    for (size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x; v < nvec; v += stride) {
        Vec acc;
        acc.u = reinterpret_cast<const uint4 *>(p.srcs[0])[v];
        for (int s = 1; s < p.nsrc; s++) {
            Vec x;
            x.u = reinterpret_cast<const uint4 *>(p.srcs[s])[v];
#pragma unroll
            for (int e = 0; e < E; e++) {
                acc.t[e] = fn(acc.t[e], x.t[e]);
            }
        }
        for (int d = 0; d < p.ndst; d++) {
            reinterpret_cast<uint4 *>(p.dsts[d])[v] = acc.u;
        }
    }
}

/* Element path (ALIGNED) or byte path (!ALIGNED), for elements [first, count). */
template <typename T, typename F, int STORE, bool ALIGNED>
__global__ void __launch_bounds__(kThreads)
    reduce_elem(Pointers p, size_t first, size_t count)
{
    F            fn;
    const size_t stride = (size_t)gridDim.x * blockDim.x;

    for (size_t i = first + (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += stride) {
        const size_t off = i * sizeof(T);
        T acc = ALIGNED ? *reinterpret_cast<const T *>(p.srcs[0] + off)
                        : load_bytes<T>(p.srcs[0] + off);
        for (int s = 1; s < p.nsrc; s++) {
            T x = ALIGNED ? *reinterpret_cast<const T *>(p.srcs[s] + off)
                          : load_bytes<T>(p.srcs[s] + off);
            acc = fn(acc, x);
        }
        for (int d = 0; d < p.ndst; d++) {
            if (ALIGNED) {
                store_elem<T, STORE>(p.dsts[d] + off, acc);
            } else {
                store_bytes<T, STORE>(p.dsts[d] + off, acc);
            }
        }
    }
}

int grid_for(size_t work, int sm_count)
{
    size_t blocks = (work + kThreads - 1) / kThreads;
    size_t cap    = (size_t)(sm_count > 0 ? sm_count : 1) * 8;
    if (blocks > cap) {
        blocks = cap;
    }
    return blocks ? (int)blocks : 1;
}

template <typename T, typename F, int STORE>
cudaError_t launch(const cg_reduce_args_t *a, int sm_count, cudaStream_t stream)
{
    Pointers  p;
    uintptr_t bits = 0;

    p.nsrc = a->nsrc;
    p.ndst = a->ndst;
    for (int s = 0; s < a->nsrc; s++) {
        p.srcs[s] = static_cast<const char *>(a->srcs[s]);
        bits |= (uintptr_t)a->srcs[s];
    }
    for (int d = 0; d < a->ndst; d++) {
        p.dsts[d] = static_cast<char *>(a->dsts[d]);
        bits |= (uintptr_t)a->dsts[d];
    }

    size_t first = 0;
    if (!STORE && 16 % sizeof(T) == 0 && (bits & 15) == 0) {
        const size_t nvec = a->count * sizeof(T) / 16;
        if (nvec > 0) {
            reduce_vec16<T, F><<<grid_for(nvec, sm_count), kThreads, 0, stream>>>(p, nvec);
            first = nvec * 16 / sizeof(T);
        }
    }
    if (first < a->count) {
        const size_t rest = a->count - first;
        if ((bits % alignof(T)) == 0) {
            reduce_elem<T, F, STORE, true>
                <<<grid_for(rest, sm_count), kThreads, 0, stream>>>(p, first, a->count);
        } else {
            reduce_elem<T, F, STORE, false>
                <<<grid_for(rest, sm_count), kThreads, 0, stream>>>(p, first, a->count);
        }
    }
    return cudaGetLastError();
}

/* One functor per row of the table, so the kernels inline the combine function. */
#define CG_X_FUNCTOR(DT, OP, T, FN, STORE)                                                \
    struct Fn_##FN {                                                                      \
        __device__ __forceinline__ T operator()(T a, T b) const { return FN(a, b); }      \
    };
CG_REDUCE_TABLE(CG_X_FUNCTOR)
#undef CG_X_FUNCTOR

} // namespace

/* Every kernel launch<T, F, STORE> may start, referenced once: loaded now (cg_cuda_preload). */
template <typename T, typename F, int STORE>
cudaError_t preload()
{
    cudaFuncAttributes attr;
    cudaError_t        err = cudaSuccess;

    if (!STORE && 16 % sizeof(T) == 0) {
        err = cudaFuncGetAttributes(&attr, reduce_vec16<T, F>);
    }
    if (err == cudaSuccess) {
        err = cudaFuncGetAttributes(&attr, reduce_elem<T, F, STORE, true>);
    }
    if (err == cudaSuccess) {
        err = cudaFuncGetAttributes(&attr, reduce_elem<T, F, STORE, false>);
    }
    return err;
}

extern "C" cudaError_t cg_cuda_reduce_preload(void)
{
    cudaError_t err = cudaSuccess;

#define CG_X_PRELOAD(DT, OP, T, FN, STORE)                                                \
    if (err == cudaSuccess) {                                                             \
        err = preload<T, Fn_##FN, STORE>();                                               \
    }
    CG_REDUCE_TABLE(CG_X_PRELOAD)
#undef CG_X_PRELOAD
    return err;
}

extern "C" cudaError_t cg_cuda_reduce_launch(const cg_reduce_args_t *args, int sm_count,
                                             cudaStream_t stream)
{
    /* the launch check below reads the thread's last error: start from a clean one (an
     * error that sticks to the context makes the launch itself fail) */
    (void)cudaGetLastError();
#define CG_X_DISPATCH(DT, OP, T, FN, STORE)                                               \
    if (args->dtype == (DT) && args->op == (OP)) {                                        \
        return launch<T, Fn_##FN, STORE>(args, sm_count, stream);                         \
    }
    CG_REDUCE_TABLE(CG_X_DISPATCH)
#undef CG_X_DISPATCH
    return cudaErrorInvalidValue;
}
