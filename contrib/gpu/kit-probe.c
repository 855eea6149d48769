/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_gpu_probe: what the driver operations of one small call cost on this GPU, each timed
 * alone, every rank at once (MPI only lines the ranks up): where an 8-byte collective's
 * time goes. Built by contrib/gpu/make-kit.sh, run by the kit's phase probe at 1 rank and
 * at 4 (ranks sharing the GPU, under MPS there).
 *
 *   mpirun -np N coll_gpu_probe [ITERATIONS]
 *
 * Rows (microseconds per operation, median of each rank, then the mean and the largest of
 * those over the ranks, and the largest 90th percentile):
 *   query_device  cuPointerGetAttributes on device memory (the attributes the CUDA layer asks)
 *   query_host    the same on host memory (what the host-memory cache saves)
 *   query_kind    on device memory, the kind only (type, managed, ordinal, context: no
 *                 range or buffer id): what a lazier query would cost
 *   idle_legacy   cudaStreamQuery on the legacy default stream with nothing queued: what
 *                 a call would pay to learn that the application's work there (and on its
 *                 blocking streams) is done without queueing anything; it says nothing of
 *                 the application's non-blocking streams
 *   idle_event    an event recorded on the legacy default stream with nothing queued
 *                 anywhere, queried until done: what coll_gpu_ll_persist with the default
 *                 coll_gpu_app_wait pays to learn that the application's work is done
 *                 (the CUDA layer's app_done queries once; a line below says how often that
 *                 first query found it done: when it rarely does, such calls are launched)
 *   app_wait      an event recorded on the legacy default stream and waited for by a
 *                 non-blocking stream (coll_gpu_app_wait default_stream, stream-ordered)
 *   enqueue       queueing an 8-byte memset (the host side of a launch)
 *   memset_sync   an 8-byte memset and cudaStreamSynchronize (the benchmark's round trip)
 *   memset_event  the memset, an event, cudaEventQuery until done (the old LL completion)
 *   memset_word   the memset, a stream write of a word in page-locked host memory, the host
 *                 reading the word until it changes (the LL completion word)
 *   word_only     the stream write and the host poll alone (a device op's least round trip)
 *   app_word      app_wait, then memset_word on the stream: an LL call's driver work and
 *                 round trip without its exchange (coll_gpu_app_wait default_stream)
 *   legacy_word   memset_word queued on the legacy default stream itself, no event: the
 *                 same for coll_gpu_app_wait launch
 *   copy_8        an 8-byte copy from device to page-locked host memory and
 *                 cudaStreamSynchronize (the staged path's copy out)
 *   copy_64k      the same for 64 KiB (without MPS: which device work waits for the
 *                 other processes' time slices, a memset's or a copy's)
 *   persist_rt    a kernel already running (contrib/gpu/kit-persist.cu) answers a word the
 *                 host writes in page-locked memory with another: a device round trip with
 *                 no launch and no stream operation, the floor of a call whose exchange a
 *                 persistent kernel would do (every rank's kernel holds one SM meanwhile)
 *   launch_ll     an 8-byte allreduce among the ranks (every rank's lines into the others'
 *                 inboxes, mapped by CUDA IPC, each line carrying its flag) by a kernel
 *                 launched per call that stores the call's flag into a page-locked word
 *                 last; the host polls the word: the component's LL call on the device side
 *                 without its host work (queried pointers, the application's stream)
 *   persist_ll    the same exchange by one kernel that stays and runs each call the host
 *                 rings in a page-locked word, its arguments posted there before as tagged
 *                 lines, read by the kernel with the bell (as the component's LL server):
 *                 what a persistent-kernel design would take
 *                 for #12's 8-byte allreduce, the ranks' skew included (the results of
 *                 both rows are checked; at most 8 ranks)
 * Without a CUDA device it says so and exits 0 (the kit's dry run).
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kit-probe.h"

enum { P_QUERY_DEVICE, P_QUERY_HOST, P_QUERY_KIND, P_IDLE_LEGACY, P_IDLE_EVENT, P_APP_WAIT, P_ENQUEUE,
       P_MEMSET_SYNC, P_MEMSET_EVENT, P_MEMSET_WORD, P_WORD_ONLY, P_APP_WORD, P_LEGACY_WORD, P_COPY_8, P_COPY_64K, P_PERSIST,
       P_LAUNCH_LL, P_PERSIST_LL, P_NUM };
static const char *const probe_names[P_NUM] = {"query_device", "query_host", "query_kind", "idle_legacy",
                                               "idle_event", "app_wait",
                                               "enqueue", "memset_sync", "memset_event",
                                               "memset_word", "word_only", "app_word",
                                               "legacy_word", "copy_8", "copy_64k",
                                               "persist_rt", "launch_ll", "persist_ll"};

typedef CUresult (*probe_attrs_fn)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);
typedef CUresult (*probe_write_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned);

static probe_attrs_fn probe_attrs;
static probe_write_fn probe_write;
static long           probe_idle_first; /* idle_event: the first query found the event done */

#define PROBE_CUDA(call)                                                                     \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "coll_gpu_probe: %s: %s\n", #call, cudaGetErrorString(e_));      \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                    \
        }                                                                                    \
    } while (0)

static double probe_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int probe_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The CUDA layer's query (cg_cuda_pointer_attrs): 7 attributes, or the first 3 and the
 * context (kind_only). */
static void probe_query(const void *ptr, int kind_only)
{
    CUpointer_attribute names[7] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                    CU_POINTER_ATTRIBUTE_CONTEXT};
    unsigned            type = 0, managed = 0;
    int                 ordinal = -1;
    unsigned long long  id = 0;
    CUdeviceptr         start = 0;
    size_t              size = 0;
    CUcontext           ctx = NULL;
    void               *values[7] = {&type, &managed, &ordinal, &id, &start, &size, &ctx};

    if (kind_only) {
        names[3]  = CU_POINTER_ATTRIBUTE_CONTEXT;
        values[3] = &ctx;
    }
    (void)probe_attrs(kind_only ? 4 : 7, names, values, (CUdeviceptr)(uintptr_t)ptr);
}

/* The CUDA layer's wait for the application (coll_gpu_app_wait default_stream): an event on
 * the legacy default stream, waited for by the layer's stream. */
static void probe_app_wait(cudaEvent_t event, cudaStream_t stream)
{
    PROBE_CUDA(cudaEventRecord(event, cudaStreamLegacy));
    PROBE_CUDA(cudaStreamWaitEvent(stream, event, 0));
}

/* persist_rt: the kernel started, iterations rings each answered, then the stop value.
 * bell and reply: page-locked words the kernel sees at bell_dev and reply_dev. */
static void probe_persist(int iterations, double *samples, cudaStream_t stream,
                          volatile unsigned *bell, volatile unsigned *reply, unsigned *bell_dev,
                          unsigned *reply_dev)
{
    *bell  = 0;
    *reply = 0;
    PROBE_CUDA(probe_persist_start(bell_dev, reply_dev, stream));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -iterations / 10; i < iterations; i++) { /* the first tenth warms up */
        const unsigned value = (unsigned)(i + iterations / 10 + 1);
        double         t0    = probe_now_us();
        *bell = value;
        for (unsigned spins = 1; *reply != value; spins++) {
            if ((spins & 4095) == 0 && probe_now_us() - t0 > 2e6) {
                fprintf(stderr, "coll_gpu_probe: the persistent kernel did not answer in 2 s\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        if (i >= 0) {
            samples[i] = probe_now_us() - t0;
        }
    }
    *bell = 0xffffffffu;
    PROBE_CUDA(cudaStreamSynchronize(stream));
}

/* launch_ll and persist_ll: every rank's inbox mapped here (CUDA IPC), the input (rank + 1,
 * 2 (rank + 1), to which each call adds its flag) and two outputs on the device (a call
 * writes the one of its flag's parity), the last call's flag. */
typedef struct {
    probe_ll_args_t  args;
    unsigned long long *posted;     /* persist_ll: page-locked, each call's tagged lines */
    unsigned long long *posted_dev; /* their device view */
    void            *inbox;      /* this rank's */
    float           *src;        /* the input, then the two outputs */
    unsigned         flag;
} probe_ll_t;

/* Every rank's inbox opened here: 1 on every rank, or 0 on every rank (beyond
 * PROBE_LL_MAX_RANKS ranks, or where a rank could not open a peer's: the rows are not run,
 * the others are). */
static int probe_ll_open(probe_ll_t *ll, int rank, int size)
{
    cudaIpcMemHandle_t mine, *all;
    float              in[PROBE_LL_LINES];
    int                opened = 0, ok = 1, all_ok = 0;

    memset(ll, 0, sizeof(*ll));
    if (size > PROBE_LL_MAX_RANKS) {
        return 0;
    }
    PROBE_CUDA(cudaMalloc(&ll->inbox, PROBE_LL_INBOX_BYTES));
    PROBE_CUDA(cudaMemset(ll->inbox, 0, PROBE_LL_INBOX_BYTES));
    PROBE_CUDA(cudaMalloc((void **)&ll->src, 3 * sizeof(in)));
    for (int line = 0; line < PROBE_LL_LINES; line++) {
        in[line] = (float)((rank + 1) * (line + 1));
    }
    PROBE_CUDA(cudaMemcpy(ll->src, in, sizeof(in), cudaMemcpyHostToDevice));
    PROBE_CUDA(cudaIpcGetMemHandle(&mine, ll->inbox));
    all = malloc(sizeof(*all) * (size_t)size);
    MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, MPI_COMM_WORLD);
    for (int peer = 0; peer < size && ok; peer++, opened = peer) {
        cudaError_t err = cudaSuccess;
        if (peer == rank) {
            ll->args.inbox[peer] = ll->inbox;
        } else if ((err = cudaIpcOpenMemHandle((void **)&ll->args.inbox[peer], all[peer],
                                               cudaIpcMemLazyEnablePeerAccess)) != cudaSuccess) {
            fprintf(stderr, "coll_gpu_probe: rank %d cannot open rank %d's inbox: %s\n", rank,
                    peer, cudaGetErrorString(err));
            ll->args.inbox[peer] = NULL;
            ok = 0;
        }
    }
    free(all);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    ll->args.src  = ll->src;
    ll->args.size = size;
    ll->args.rank = rank;
    if (!all_ok) {
        ll->args.size = opened; /* close what was opened */
        return 0;
    }
    PROBE_CUDA(cudaHostAlloc((void **)&ll->posted, PROBE_LL_POST_LINES * sizeof(*ll->posted),
                             cudaHostAllocMapped | cudaHostAllocPortable));
    memset(ll->posted, 0, PROBE_LL_POST_LINES * sizeof(*ll->posted)); /* no call's tag */
    PROBE_CUDA(cudaHostGetDevicePointer((void **)&ll->posted_dev, ll->posted, 0));
    PROBE_CUDA(cudaDeviceSynchronize()); /* the inbox zeroed before any peer writes it */
    MPI_Barrier(MPI_COMM_WORLD);
    return 1;
}

/* Peers' inboxes closed before any rank frees its own (an exported allocation freed while
 * another process has it open is undefined behaviour). */
static void probe_ll_close(probe_ll_t *ll)
{
    for (int peer = 0; peer < ll->args.size; peer++) {
        if (peer != ll->args.rank && ll->args.inbox[peer] != NULL) {
            PROBE_CUDA(cudaIpcCloseMemHandle(ll->args.inbox[peer]));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    PROBE_CUDA(cudaFree(ll->inbox));
    PROBE_CUDA(cudaFree(ll->src));
    if (ll->posted != NULL) {
        PROBE_CUDA(cudaFreeHost(ll->posted));
    }
}

/* The output of the call of this flag (the one of its parity). */
static float *probe_ll_out(const probe_ll_t *ll, unsigned flag)
{
    return ll->src + PROBE_LL_LINES * (1 + (flag & 1u));
}

/* The outputs of the last two calls: every rank's input plus the call's flag, summed. */
static void probe_ll_check(const probe_ll_t *ll, const char *row)
{
    const int n = ll->args.size;
    float     out[PROBE_LL_LINES];

    for (unsigned flag = ll->flag - 1; flag <= ll->flag; flag++) {
        PROBE_CUDA(cudaMemcpy(out, probe_ll_out(ll, flag), sizeof(out), cudaMemcpyDeviceToHost));
        for (int line = 0; line < PROBE_LL_LINES; line++) {
            const float want = (float)(n * (n + 1) / 2 * (line + 1)) + (float)n * (float)flag;
            if (out[line] != want) {
                fprintf(stderr, "coll_gpu_probe: %s: rank %d: call %u: element %d is %g, not %g\n",
                        row, ll->args.rank, flag, line, (double)out[line], (double)want);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
}

/* persist_ll: the call's arguments as lines tagged with its flag, one 8-byte store each. */
static void probe_ll_post(probe_ll_t *ll, unsigned flag)
{
    unsigned long long words[PROBE_LL_POST_WORDS];

    memcpy(words, &ll->args, sizeof(words));
    for (size_t word = 0; word < PROBE_LL_POST_WORDS; word++) {
        __atomic_store_n(&ll->posted[2 * word], (unsigned long long)flag << 32 | (uint32_t)words[word],
                         __ATOMIC_RELAXED);
        __atomic_store_n(&ll->posted[2 * word + 1], (unsigned long long)flag << 32 | words[word] >> 32,
                         __ATOMIC_RELAXED);
    }
}

/* launch_ll (persist 0) or persist_ll: the outputs poisoned, iterations calls timed, each
 * done when the page-locked word *reply holds its flag (bell: persist_ll's ring). */
static void probe_ll_run(probe_ll_t *ll, int persist, int iterations, double *samples,
                         cudaStream_t stream, volatile unsigned *bell, volatile unsigned *reply,
                         unsigned *bell_dev, unsigned *reply_dev)
{
    const char *row = probe_names[persist ? P_PERSIST_LL : P_LAUNCH_LL];

    PROBE_CUDA(cudaMemset(ll->src + PROBE_LL_LINES, 0xff, 2 * PROBE_LL_LINES * sizeof(float)));
    PROBE_CUDA(cudaDeviceSynchronize());
    *bell  = ll->flag;
    *reply = ll->flag;
    if (persist) {
        PROBE_CUDA(probe_ll_persist_start(ll->posted_dev, ll->flag, bell_dev, reply_dev, stream));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -iterations / 10; i < iterations; i++) { /* the first tenth warms up */
        const unsigned flag = ++ll->flag;
        double         t0   = probe_now_us();
        ll->args.dst        = probe_ll_out(ll, flag);
        if (persist) { /* the call's arguments posted, then its ring */
            probe_ll_post(ll, flag);
            __atomic_store_n(bell, flag, __ATOMIC_RELEASE);
        } else {
            PROBE_CUDA(probe_ll_launch(&ll->args, flag, reply_dev, stream));
        }
        for (unsigned spins = 1; *reply != flag; spins++) {
            if ((spins & 4095) == 0 && probe_now_us() - t0 > 2e6) {
                fprintf(stderr, "coll_gpu_probe: %s: call %u did not end in 2 s\n", row, flag);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        if (i >= 0) {
            samples[i] = probe_now_us() - t0;
        }
    }
    if (persist) {
        __atomic_store_n(bell, PROBE_LL_STOP, __ATOMIC_RELEASE);
    }
    PROBE_CUDA(cudaStreamSynchronize(stream));
    probe_ll_check(ll, row);
}

/* One operation (probe) timed iterations times; the ranks start together. */
static void probe_run(int probe, int iterations, double *samples, void *dev, void *host,
                      void *pinned, cudaStream_t stream, cudaEvent_t event, volatile uint32_t *word,
                      CUdeviceptr word_dev)
{
    /* legacy_word: the work and the word on the legacy default stream */
    cudaStream_t on = probe == P_LEGACY_WORD ? cudaStreamLegacy : stream;

    if (probe == P_IDLE_LEGACY || probe == P_IDLE_EVENT) {
        PROBE_CUDA(cudaDeviceSynchronize()); /* nothing queued anywhere */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -iterations / 10; i < iterations; i++) { /* the first tenth warms up */
        const uint32_t value = (uint32_t)(i + iterations) * P_NUM + (uint32_t)probe + 1;
        double         t0    = probe_now_us();
        switch (probe) {
        case P_QUERY_DEVICE: probe_query(dev, 0); break;
        case P_QUERY_HOST: probe_query(host, 0); break;
        case P_QUERY_KIND: probe_query(dev, 1); break;
        case P_IDLE_LEGACY: {
            const cudaError_t err = cudaStreamQuery(cudaStreamLegacy);
            if (err != cudaSuccess) { /* idle: the row's first call synchronised the device */
                fprintf(stderr, "coll_gpu_probe: the idle legacy default stream answers %s\n",
                        cudaGetErrorString(err));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            break;
        }
        case P_IDLE_EVENT: {
            cudaError_t err;
            PROBE_CUDA(cudaEventRecord(event, cudaStreamLegacy));
            err = cudaEventQuery(event);
            probe_idle_first += i >= 0 && err == cudaSuccess;
            while (err == cudaErrorNotReady) {
                err = cudaEventQuery(event);
            }
            PROBE_CUDA(err);
            (void)cudaGetLastError(); /* not ready is kept as the last error */
            break;
        }
        case P_APP_WAIT: probe_app_wait(event, stream); break;
        case P_ENQUEUE: PROBE_CUDA(cudaMemsetAsync(dev, 0, 8, stream)); break;
        case P_MEMSET_SYNC:
            PROBE_CUDA(cudaMemsetAsync(dev, 0, 8, stream));
            PROBE_CUDA(cudaStreamSynchronize(stream));
            break;
        case P_COPY_8:
        case P_COPY_64K:
            PROBE_CUDA(cudaMemcpyAsync(pinned, dev, probe == P_COPY_8 ? 8 : 65536,
                                       cudaMemcpyDeviceToHost, stream));
            PROBE_CUDA(cudaStreamSynchronize(stream));
            break;
        case P_MEMSET_EVENT:
            PROBE_CUDA(cudaMemsetAsync(dev, 0, 8, stream));
            PROBE_CUDA(cudaEventRecord(event, stream));
            while (cudaEventQuery(event) == cudaErrorNotReady) {
            }
            PROBE_CUDA(cudaGetLastError());
            break;
        case P_MEMSET_WORD:
        case P_WORD_ONLY:
        case P_APP_WORD:
        case P_LEGACY_WORD:
            if (probe == P_APP_WORD) {
                probe_app_wait(event, stream);
            }
            if (probe != P_WORD_ONLY) {
                PROBE_CUDA(cudaMemsetAsync(dev, 0, 8, on));
            }
            if (probe_write((CUstream)on, word_dev, value, 0) != CUDA_SUCCESS) {
                fprintf(stderr, "coll_gpu_probe: cuStreamWriteValue32 failed\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            for (unsigned spins = 1; *word != value; spins++) {
                if ((spins & 4095) == 0 && probe_now_us() - t0 > 2e6) { /* not a lease's minute */
                    fprintf(stderr, "coll_gpu_probe: the stream's write of a host word never "
                            "came (stream memory operations unsupported?)\n");
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
            break;
        }
        if (i >= 0) {
            samples[i] = probe_now_us() - t0;
        }
        if (probe == P_APP_WAIT || probe == P_ENQUEUE) {
            PROBE_CUDA(cudaStreamSynchronize(stream)); /* untimed: the queue stays short */
        }
    }
}

int main(int argc, char **argv)
{
    int                iterations = argc > 1 ? atoi(argv[1]) : 2000;
    int                rank, size, count = 0;
    double            *samples, median[P_NUM], p90[P_NUM];
    void              *dev = NULL, *host, *pinned = NULL, *lib;
    volatile uint32_t *word = NULL;
    CUdeviceptr        word_dev = 0;
    cudaStream_t       stream;
    cudaEvent_t        event;
    probe_ll_t         ll;
    int                ll_open;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (iterations < 10) {
        iterations = 10;
    }
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        if (rank == 0) {
            printf("coll_gpu_probe: no CUDA device here: nothing to measure\n");
        }
        MPI_Finalize();
        return 0;
    }
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    probe_attrs = lib ? (probe_attrs_fn)dlsym(lib, "cuPointerGetAttributes") : NULL;
    probe_write = lib ? (probe_write_fn)dlsym(lib, "cuStreamWriteValue32_v2") : NULL;
    if (probe_write == NULL && lib != NULL) {
        probe_write = (probe_write_fn)dlsym(lib, "cuStreamWriteValue32");
    }
    if (probe_attrs == NULL || probe_write == NULL) {
        fprintf(stderr, "coll_gpu_probe: the CUDA driver lacks cuPointerGetAttributes or "
                "cuStreamWriteValue32\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    PROBE_CUDA(cudaSetDevice(0));
    PROBE_CUDA(cudaMalloc(&dev, 1 << 20));
    PROBE_CUDA(cudaHostAlloc((void **)&word, 256, cudaHostAllocMapped | cudaHostAllocPortable));
    PROBE_CUDA(cudaMallocHost(&pinned, 65536));
    PROBE_CUDA(cudaHostGetDevicePointer((void **)&word_dev, (void *)word, 0));
    PROBE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    PROBE_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    host    = malloc(1 << 20);
    samples = malloc(sizeof(double) * (size_t)iterations);
    *word   = 0;
    ll_open = probe_ll_open(&ll, rank, size);
    for (int probe = 0; probe < P_NUM; probe++) {
        if (probe == P_LAUNCH_LL || probe == P_PERSIST_LL) {
            if (ll_open) { /* words of their own: bell at 128 bytes, reply at 192 */
                probe_ll_run(&ll, probe == P_PERSIST_LL, iterations, samples, stream, word + 32,
                             word + 48, (unsigned *)(uintptr_t)(word_dev + 128),
                             (unsigned *)(uintptr_t)(word_dev + 192));
            } else {
                memset(samples, 0, sizeof(double) * (size_t)iterations);
            }
        } else if (probe == P_PERSIST) {
            probe_persist(iterations, samples, stream, word + 4, word + 8,
                          (unsigned *)(uintptr_t)(word_dev + 16), (unsigned *)(uintptr_t)(word_dev + 32));
        } else {
            probe_run(probe, iterations, samples, dev, host, pinned, stream, event, word, word_dev);
        }
        qsort(samples, (size_t)iterations, sizeof(double), probe_cmp);
        median[probe] = samples[iterations / 2];
        p90[probe]    = samples[iterations * 9 / 10];
    }
    {
        double sum[P_NUM], max[P_NUM], max90[P_NUM];
        long   idle_first = 0;
        MPI_Reduce(&probe_idle_first, &idle_first, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(median, sum, P_NUM, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(median, max, P_NUM, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(p90, max90, P_NUM, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            struct cudaDeviceProp prop;
            PROBE_CUDA(cudaGetDeviceProperties(&prop, 0));
            printf("# coll_gpu_probe: %d ranks on %s, %d iterations each, every rank at once "
                   "(us per operation)\n", size, prop.name, iterations);
            printf("# %-14s %10s %10s %10s\n", "operation", "median", "max rank", "p90 max");
            for (int probe = 0; probe < P_NUM; probe++) {
                if (!ll_open && (probe == P_LAUNCH_LL || probe == P_PERSIST_LL)) {
                    printf("  %-14s %10s %10s %10s\n", probe_names[probe], "n/a", "n/a", "n/a");
                    continue;
                }
                printf("  %-14s %10.2f %10.2f %10.2f\n", probe_names[probe], sum[probe] / size,
                       max[probe], max90[probe]);
            }
            printf("# idle_event: the first query found the event done in %ld of %ld calls "
                   "(all ranks)\n", idle_first, (long)iterations * size);
        }
    }
    if (ll.inbox != NULL) { /* on every rank or on none (the rank count decides) */
        probe_ll_close(&ll);
    }
    if (!ll_open && rank == 0) {
        printf("# launch_ll, persist_ll: not run (more than %d ranks, or an inbox could not be "
               "opened)\n", PROBE_LL_MAX_RANKS);
    }
    free(samples);
    free(host);
    PROBE_CUDA(cudaEventDestroy(event));
    PROBE_CUDA(cudaStreamDestroy(stream));
    PROBE_CUDA(cudaFreeHost((void *)word));
    PROBE_CUDA(cudaFreeHost(pinned));
    PROBE_CUDA(cudaFree(dev));
    MPI_Finalize();
    return 0;
}
