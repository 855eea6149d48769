/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The LL collective on the GPU (cg_ll_args_t in kernels/cg_dev.h): one kernel per call or,
 * with coll_gpu_ll_persist, ll_server_kernel running the same bodies for each call the
 * host rings (below). It
 * writes this rank's payload into its peers' inboxes as 8-byte lines (4 bytes of data, the
 * call's 4-byte flag: one store each, so a reader sees a line whole or not at all), then
 * waits on the lines of its own inbox and writes the result: the reduction in rank order
 * (the same bits on every rank), or the copies. A slot whose lines carry CG_LL_ABORT (written
 * by the host when a peer will never send), or the host's cancel word set to the call's
 * flag (a peer is not on the call), ends the wait without a result.
 *
 * One block: small messages, where the launch and the wait dominate. The types and ops are
 * the rows of the shared table (cg_reduce_ops.h), as for the reduction kernel.
 */
#include "kernels/cuda/cg_cuda.h"
#include "kernels/dev_ll_server.h"

#include <stdint.h>

namespace {

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

__device__ void ll_push(const LLParams &p)
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
__device__ int ll_wait_empty(const LLParams &p)
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
__device__ int ll_consume(const LLParams &p, int aborted)
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
__device__ void ll_pull_bytes(const LLParams &p, int from, char *at, int *aborted)
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

template <typename T, typename F, int STORE>
__global__ void __launch_bounds__(kThreads) ll_reduce_kernel(const __grid_constant__ LLParams p)
{
    ll_done(p, ll_reduce_body<T, F, STORE>(p));
}

__global__ void __launch_bounds__(kThreads) ll_copy_kernel(const __grid_constant__ LLParams p)
{
    ll_done(p, ll_copy_body(p));
}

#define CG_X_FUNCTOR(DT, OP, T, FN, STORE)                                                \
    struct LLFn_##FN {                                                                    \
        __device__ __forceinline__ T operator()(T a, T b) const { return FN(a, b); }      \
    };
CG_REDUCE_TABLE(CG_X_FUNCTOR)
#undef CG_X_FUNCTOR

/* ---- the server (coll_gpu_ll_persist; the protocol: kernels/dev_ll_server.h) ----------- */

/* Every body a server may run (LLParams body): the copies, then one per row of the table. */
enum LLBodyIndex {
    LL_BODY_COPY = 0,
#define CG_X_BODY(DT, OP, T, FN, STORE) LL_BODY_##FN,
    CG_REDUCE_TABLE(CG_X_BODY)
#undef CG_X_BODY
};

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

/* The bell, read with acquire semantics at the system's scope: what the host ordered before
 * its ring (the application's work it saw end, which wrote the call's input) is what the
 * block's later loads see, through the block's barriers; without it an ordinary load could
 * hit an older copy of an input in this SM's L1, where a kernel that stays keeps them
 * across calls (a launched kernel starts with none). It also means one L1 invalidation per
 * poll, which an idle server does not feel. */
__device__ __forceinline__ unsigned long long ll_load_acquire(const volatile unsigned long long *word)
{
    unsigned long long value;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(word) : "memory");
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
                bell = ll_load_acquire(&words->bell);
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

/* The kernel's arguments of an LL call; its body (LLBodyIndex), -1 when none. */
int ll_params(const cg_ll_args_t *a, LLParams *p)
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

} // namespace

extern "C" cudaError_t cg_cuda_ll_preload(void)
{
    cudaFuncAttributes attr;
    cudaError_t        err = cudaFuncGetAttributes(&attr, ll_copy_kernel);

    if (err == cudaSuccess) {
        err = cudaFuncGetAttributes(&attr, ll_server_kernel);
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
static cudaError_t ll_launch_params(LLParams &p, cudaStream_t stream, uint64_t *done,
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
    memcpy(&p, words, sizeof(p)); /* the head: the call's ranks */
    if (p.size < 1 || p.size > CG_DEV_MAX_FANIN ||
        !cg_ll_server_decode(lines, words, (size_t)ll_post_lines(p.size) / 2, call)) {
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
