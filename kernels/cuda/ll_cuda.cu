/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The LL collective on the GPU (cg_ll_args_t in kernels/cg_dev.h), one kernel per call: its
 * parameters, its kernels (one per body of ll_body.cuh) and their launch. With
 * coll_gpu_ll_persist a kernel that stays runs the same bodies instead (ll_server.cu).
 */
#include "kernels/cuda/ll_body.cuh"

using namespace cg_ll;

namespace {

template <typename T, typename F, int STORE>
__global__ void __launch_bounds__(kThreads) ll_reduce_kernel(const __grid_constant__ LLParams p)
{
    ll_done(p, ll_reduce_body<T, F, STORE>(p));
}

__global__ void __launch_bounds__(kThreads) ll_copy_kernel(const __grid_constant__ LLParams p)
{
    ll_done(p, ll_copy_body(p));
}

} // namespace

int cg_ll::ll_params(const cg_ll_args_t *a, LLParams *p)
{
    const size_t elem = a->dtype == CG_DT_NONE ? 1 : cg_dtype_size(a->dtype);

    if (a->size < 1 || a->size > CG_DEV_MAX_FANIN || elem == 0) {
        return -1;
    }
    *p = LLParams{};
    for (int r = 0; r < a->size; r++) {
        p->peer[r].inbox    = a->inbox[r];
        p->peer[r].send_len = cg_ll_send_bytes(a, r, &p->peer[r].send_off);
        p->peer[r].recv_len = cg_ll_recv_bytes(a, r);
        if (p->peer[r].send_len > cg_ll_capacity(a->slot_bytes)) {
            return -1;
        }
    }
    p->slot_bytes = a->slot_bytes;
    p->src        = static_cast<const char *>(a->src);
    p->dst        = static_cast<char *>(a->dst);
    p->size       = a->size;
    p->rank       = a->rank;
    p->root       = a->root;
    p->coll       = a->coll;
    p->parity     = (int)a->parity;
    p->flag       = a->flag;
    p->cancel     = reinterpret_cast<const volatile unsigned long long *>(a->cancel);
    if (a->coll == CG_LL_BCAST || a->coll == CG_LL_ALLGATHER) {
        p->count = a->count * elem; /* a block's bytes */
        return p->body = LL_BODY_COPY;
    }
    p->count = a->coll == CG_LL_REDUCE_SCATTER ? a->counts[a->rank] : a->count;
#define CG_X_INDEX(DT, OP, T, FN, STORE)                                                  \
    if (a->dtype == (DT) && a->op == (OP)) {                                              \
        return p->body = LL_BODY_##FN;                                                    \
    }
    CG_REDUCE_TABLE(CG_X_INDEX)
#undef CG_X_INDEX
    return -1;
}

extern "C" cudaError_t cg_cuda_ll_preload(void)
{
    cudaFuncAttributes attr;
    cudaError_t        err = cudaFuncGetAttributes(&attr, ll_copy_kernel);

    if (err == cudaSuccess) {
        err = ll_server_preload();
    }
#define CG_X_PRELOAD(DT, OP, T, FN, STORE)                                                \
    if (err == cudaSuccess) {                                                             \
        err = cudaFuncGetAttributes(&attr, ll_reduce_kernel<T, LLFn_##FN, STORE>);       \
    }
    CG_REDUCE_TABLE(CG_X_PRELOAD)
#undef CG_X_PRELOAD
    return err;
}

/* The kernel of p's body (ll_params found it: no second search of the table). */
cudaError_t cg_ll::ll_launch_params(LLParams &p, cudaStream_t stream, uint64_t *done,
                                    uint64_t done_value)
{
    p.done       = reinterpret_cast<volatile unsigned long long *>(done);
    p.done_value = done_value;
    switch (p.body) {
    case LL_BODY_COPY: ll_copy_kernel<<<1, kThreads, 0, stream>>>(p); break;
#define CG_X_DISPATCH(DT, OP, T, FN, STORE)                                               \
    case LL_BODY_##FN: ll_reduce_kernel<T, LLFn_##FN, STORE><<<1, kThreads, 0, stream>>>(p); break;
    CG_REDUCE_TABLE(CG_X_DISPATCH)
#undef CG_X_DISPATCH
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t cg_cuda_ll_launch(const cg_ll_args_t *a, cudaStream_t stream,
                                         uint64_t *done, uint64_t done_value)
{
    LLParams p;

    (void)cudaGetLastError();
    if (ll_params(a, &p) < 0) {
        return cudaErrorInvalidValue;
    }
    return ll_launch_params(p, stream, done, done_value);
}
