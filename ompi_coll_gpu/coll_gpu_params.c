/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* The MCA parameters of coll/gpu, registered from one table (ompi_info lists them). */
#include "ompi_coll_gpu/coll_gpu.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/base/mca_base_var_enum.h"

#include <stdio.h>

#define CG_C (&mca_coll_gpu_component)

static const mca_base_var_enum_value_t device_values[] = {
    {MCA_COLL_GPU_DEVICE_AUTO, "auto"}, {MCA_COLL_GPU_DEVICE_CUDA, "cuda"},
    {MCA_COLL_GPU_DEVICE_HOST, "host"}, {0, NULL}};
static const mca_base_var_enum_value_t check_values[] = {
    {MCA_COLL_GPU_CHECK_AUTO, "auto"}, {MCA_COLL_GPU_CHECK_AGREE, "agree"},
    {MCA_COLL_GPU_CHECK_LOCAL, "local"}, {0, NULL}};
static const mca_base_var_enum_value_t app_wait_values[] = {
    {MCA_COLL_GPU_APP_WAIT_DEFAULT_STREAM, "default_stream"}, {MCA_COLL_GPU_APP_WAIT_NONE, "none"},
    {MCA_COLL_GPU_APP_WAIT_LAUNCH, "launch"}, {MCA_COLL_GPU_APP_WAIT_AUTO, "auto"}, {0, NULL}};
static const mca_base_var_enum_value_t sync_values[] = {
    {CG_SYNC_AUTO, "auto"}, {CG_SYNC_HOST, "host"}, {CG_SYNC_DEVICE, "device"}, {0, NULL}};
static const mca_base_var_enum_value_t copy_values[] = {
    {CG_COPY_AUTO, "auto"}, {CG_COPY_ENGINE, "engine"}, {CG_COPY_KERNEL, "kernel"}, {0, NULL}};
static const mca_base_var_enum_value_t staging_values[] = {
    {CG_STAGING_AUTO, "auto"}, {CG_STAGING_ALWAYS, "always"}, {CG_STAGING_NEVER, "never"},
    {0, NULL}};

typedef struct {
    const char                      *name;
    mca_base_var_type_t              type;
    const mca_base_var_enum_value_t *values; /* an enumeration, or NULL */
    void                            *storage;
    int                              level;
    int                              flags;
    mca_base_var_scope_t             scope;
    const char                      *help;
} mca_coll_gpu_param_t;

#define INT MCA_BASE_VAR_TYPE_INT
#define SIZE MCA_BASE_VAR_TYPE_SIZE_T
#define STR MCA_BASE_VAR_TYPE_STRING
#define DBL MCA_BASE_VAR_TYPE_DOUBLE
#define SET MCA_BASE_VAR_FLAG_SETTABLE
#define LOCAL MCA_BASE_VAR_SCOPE_LOCAL
#define RO MCA_BASE_VAR_SCOPE_READONLY
#define EQ MCA_BASE_VAR_SCOPE_ALL_EQ

static const mca_coll_gpu_param_t mca_coll_gpu_params[] = {
    {"priority", INT, NULL, &CG_C->priority, OPAL_INFO_LVL_2, 0, RO,
     "Priority of the gpu coll component (0 disables it). It sits above the host "
     "components and passes host buffers down to them untouched"},
    {"verbose", INT, NULL, &CG_C->verbose, OPAL_INFO_LVL_2, SET, LOCAL,
     "Verbosity: 0 errors, 1 warnings and fallbacks, 2 one line per intercepted call, "
     "3 setup and plan details, 5 debug, 9 trace"},
    {"verbose_subsys", STR, NULL, &CG_C->verbose_subsys, OPAL_INFO_LVL_4, 0, LOCAL,
     "Subsystems that log at coll_gpu_verbose: all, or a comma list of init, coll, dev, "
     "ipc, topo, plan, ucx; a leading ^ excludes the listed ones"},
    {"verbose_file", STR, NULL, &CG_C->verbose_file, OPAL_INFO_LVL_4, 0, LOCAL,
     "Write the log of each process to this file instead of stderr (like NCCL_DEBUG_FILE): "
     "%h is replaced by the host name, %p by the process id, %r by the MPI_COMM_WORLD rank; "
     "empty: stderr"},
    {"device", INT, device_values, &CG_C->device_mode, OPAL_INFO_LVL_2, 0, RO,
     "Device layer: auto (CUDA when a CUDA driver is installed; otherwise the rank takes "
     "host memory only and passes its calls underneath after one agreement per "
     "communicator, so that it can share a job with GPU ranks; the driver starts only at "
     "the first call with device buffers), cuda, or host (the host device layer, for "
     "testing and debugging without a GPU: strict when the application allocates from the "
     "simulated GPU, libcg_sim, whose memory the CPU cannot touch; otherwise every host "
     "buffer plays a device buffer)"},
    {"node_size", INT, NULL, &CG_C->node_size, OPAL_INFO_LVL_5, SET, EQ,
     "0: group ranks by the node they run on. N > 0: group N consecutive ranks of each "
     "communicator into one virtual node; N < 0: -N virtual nodes, the ranks dealt to them "
     "in turn like mpirun --map-by node (testing multi-node behaviour on one machine)"},
    {"buffer_check", INT, check_values, &CG_C->buffer_check, OPAL_INFO_LVL_4, 0, EQ,
     "How ranks agree on the memory kinds of a call that could take a fast path (safe "
     "when some ranks pass host buffers and others device buffers, except local): auto "
     "(inside one node through a shared-memory board: a host-buffer call costs one "
     "store, no MPI call; across nodes one small host allreduce per such call), agree "
     "(the allreduce on every such call), local (trust the application to pass the same "
     "kind of memory on every rank: no agreement at all)"},
    {"staging_cache_max", SIZE, NULL, &CG_C->staging_cache_max, OPAL_INFO_LVL_5, 0, LOCAL,
     "Page-locked staging memory (bytes) kept between calls; larger staging buffers are "
     "released after the call"},
    {"scratch_size", SIZE, NULL, &CG_C->scratch_size, OPAL_INFO_LVL_5, 0, EQ,
     "Device memory (bytes) each rank shares with the ranks of its node for the intra-node "
     "algorithms; larger messages go through it in pipelined steps"},
    {"intra_sync", INT, sync_values, &CG_C->intra_sync, OPAL_INFO_LVL_5, 0, EQ,
     "Barriers between the ranks of a node: host (the host waits for its stream and for "
     "flags in shared memory; safe when ranks share a GPU without MPS), device (stream "
     "memory operations on flags in GPU memory; ranks must run concurrently: one GPU "
     "each, or MPS), auto (device when every rank of the node has its own GPU)"},
    {"copy_method", INT, copy_values, &CG_C->copy_method, OPAL_INFO_LVL_5, 0, EQ,
     "How allgather and bcast copy one buffer into several peers' buffers: kernel (one "
     "kernel reads the source once and writes every destination: the fewest bytes "
     "through device memory), engine (one copy-engine transfer per destination: no SMs "
     "used), auto (each rank times both when its node's group is set up and keeps the "
     "faster; shown at coll_gpu_verbose 3)"},
    {"app_wait", INT, app_wait_values, &CG_C->app_wait, OPAL_INFO_LVL_5, 0, LOCAL,
     "What a call on device buffers waits for before it reads them: default_stream (the "
     "work the application queued on the legacy default stream and the streams that "
     "synchronise with it: an event recorded there, waited for on the component's stream "
     "or, for algorithms whose peers read the buffers directly, on the host), none (the "
     "application makes its buffers ready before it calls MPI, as CUDA-aware MPI requires, "
     "e.g. cudaStreamSynchronize: two driver calls and, for the zero-copy algorithms, a "
     "host wait fewer per call), launch (as default_stream, but the small-message LL "
     "kernel and a blocking staged call's copies are queued on the legacy default stream "
     "itself, after the application's work, with no event: two driver calls fewer per "
     "call; only under MPI_THREAD_SINGLE, "
     "otherwise default_stream, since another thread's device work queued behind the "
     "call's kernel would wait for it, and it for the other ranks), auto (launch under "
     "MPI_THREAD_SINGLE, default_stream otherwise, without a warning)"},
    {"ll_persist", INT, NULL, &CG_C->ll_persist, OPAL_INFO_LVL_5, 0, LOCAL,
     "1 (any value above 0): small-message (LL) calls whose buffers are ready when MPI is "
     "called (coll_gpu_app_wait none, or the node phase of hier_rd and hier_tree) go to a "
     "kernel that stays on the GPU between calls and is rung by the host with a store into "
     "page-locked memory: no launch per call. It leaves after coll_gpu_ll_persist_idle_us "
     "without a call, and 10 ms after it started at the latest (a cudaDeviceSynchronize or "
     "cudaFree of the application waits until then), and holds one block of 512 threads per "
     "communicator in use while it stays. Not on ranks that share a GPU without MPS (they "
     "take turns on it): they launch their calls (the job's rank 0 says so when it is one "
     "of them, each at coll_gpu_verbose 1). 0: a kernel launched per call"},
    {"ll_persist_idle_us", INT, NULL, &CG_C->ll_persist_idle_us, OPAL_INFO_LVL_5, 0, LOCAL,
     "Microseconds without a call after which the LL kernel of coll_gpu_ll_persist leaves "
     "the GPU (the next call starts it again)"},
    {"timeout", INT, NULL, &CG_C->timeout, OPAL_INFO_LVL_5, 0, EQ,
     "Seconds a fast-path collective waits for its peers before it fails with an error "
     "(0: no limit; peers that died are detected either way)"},
    {"spin_us", INT, NULL, &CG_C->spin_us, OPAL_INFO_LVL_5, 0, LOCAL,
     "Microseconds a wait for peers or for the device spins before it gives its core away "
     "at every poll (-1, default: 0 when Open MPI yields when idle, mpi_yield_when_idle, "
     "which mpirun sets on an oversubscribed node; otherwise 50)"},
    {"allreduce_one_shot_max", SIZE, NULL, &CG_C->planner.one_shot_max, OPAL_INFO_LVL_5, SET,
     EQ, "Largest allreduce (bytes) that auto runs with the one-shot algorithm on one node; "
     "larger ones run two-shot (the ring along NVLink pairs where GPUs are paired). 0 "
     "(default): the cost model decides from the node's class (on the host device layer "
     "about 4 KiB at 2 ranks, as measured); hierarchical algorithms then take 64 KiB as "
     "their small-message limit"},
    {"topo_file", STR, NULL, &CG_C->topo_file, OPAL_INFO_LVL_4, 0, RO,
     "hwloc XML topology to use instead of the machine's (like NCCL_TOPO_FILE): every "
     "topology decision can be reproduced. With coll_gpu_device=host, local rank i plays "
     "the file's GPU i"},
    {"rules_file", STR, NULL, &CG_C->rules_file, OPAL_INFO_LVL_4, 0, EQ,
     "Rules that override the planner's cost model, one per line: collective min_bytes "
     "max_bytes min_nodes max_nodes algorithm (\"*\": any; first match wins; see README)"},
    {"net_bw", DBL, NULL, &CG_C->net_bw, OPAL_INFO_LVL_5, 0, EQ,
     "Cost model: bandwidth of one NIC in GB/s per direction (0: 48, a 400 Gb/s NIC)"},
    {"net_latency", DBL, NULL, &CG_C->net_latency, OPAL_INFO_LVL_5, 0, EQ,
     "Cost model: latency of one message between nodes in microseconds (0: measured when a "
     "communicator spanning nodes gets its fast-path context, from one small collective of "
     "the layer underneath; 5 until then)"},
    {"copy_latency", DBL, NULL, &CG_C->copy_latency, OPAL_INFO_LVL_5, 0, EQ,
     "Cost model: one small synchronous copy between device and host memory in "
     "microseconds, what the staged path pays twice (0: measured with the network's "
     "latency; 8 until then, 0.5 on the host device layer)"},
    {"hier_chunk_size", SIZE, NULL, &CG_C->planner.hier_chunk_bytes, OPAL_INFO_LVL_5, SET, EQ,
     "Hierarchical hier_ring algorithms cut a message into chunks of this many bytes (of "
     "the whole message) and overlap the intra-node phases of one chunk with the network "
     "phase of the next (0: the cost model chooses; a value at least the message size "
     "runs the phases one after the other)"},
    {"hier_lanes", INT, NULL, &CG_C->hier_lanes, OPAL_INFO_LVL_5, 0, EQ,
     "Inter-node lanes (1 to 8): each lane is a helper thread with a UCX worker of its own, "
     "and the network phases of that many chunks of a hier_ring call run at once, so their "
     "latencies overlap (1: one chunk at a time)"},
    {"context_keep", INT, NULL, &CG_C->context_keep, OPAL_INFO_LVL_5, 0, EQ,
     "Fast-path contexts of freed communicators kept (0 to 16; 0: none) for a later "
     "communicator over the same processes in the same order, such as the next "
     "MPI_Comm_dup of the same communicator: its first call then costs one small exchange "
     "instead of a new context (device scratch, IPC mappings, UCX endpoints). A kept "
     "context holds its device memory until it is reused, pushed out by newer ones, or "
     "the process ends"},
    {"host_cache", INT, NULL, &CG_C->host_cache, OPAL_INFO_LVL_5, 0, LOCAL,
     "1: remember the buffers found to be host memory, so that the next collective on "
     "them skips the memory query (a cuPointerGetAttributes on a GPU); in use only where "
     "UCX reports every release of address space (its memory hooks; not with "
     "UCX_MEM_EVENTS=no). 0: query every buffer of every call"},
    {"ucx_chunk_size", SIZE, NULL, &CG_C->ucx_chunk_size, OPAL_INFO_LVL_5, 0, EQ,
     "Inter-node staging: bytes per page-locked chunk when UCX cannot move device memory"},
    {"ucx_depth", INT, NULL, &CG_C->ucx_depth, OPAL_INFO_LVL_5, 0, EQ,
     "Inter-node staging: chunks in flight in each direction (copies overlap transfers)"},
    {"ucx_staging", INT, staging_values, &CG_C->ucx_staging, OPAL_INFO_LVL_5, 0, EQ,
     "Inter-node data: auto (device memory straight to UCX when it supports CUDA memory, "
     "otherwise through page-locked host chunks), always (force the staging pipeline), "
     "never"},
    {"debug_fail", STR, NULL, &CG_C->debug_fail, OPAL_INFO_LVL_9, 0, RO,
     "Testing failure handling: RANK:CALL makes the first device operation of the CALL-th "
     "fast-path call of MPI_COMM_WORLD rank RANK fail, as a device error would; "
     "RANK:CALL:sticky makes every later one fail too, as after a GPU fault"},
    {"debug_host_buffer_ranks", STR, NULL, &CG_C->debug_host_buffer_ranks, OPAL_INFO_LVL_9, 0,
     RO, "Testing with coll_gpu_device=host in lenient mode: comma list of MPI_COMM_WORLD "
     "ranks whose buffers count as host memory, to exercise ranks that mix memory kinds"},
    {"debug_host_lenient", INT, NULL, &CG_C->debug_host_lenient, OPAL_INFO_LVL_9, 0, RO,
     "Testing with coll_gpu_device=host: 1 ignores the simulated GPU even when the "
     "application loaded it (lenient mode: every host buffer plays device memory)"},
    {"debug_host_time_sliced", INT, NULL, &CG_C->debug_host_time_sliced, OPAL_INFO_LVL_9, 0, RO,
     "Testing with coll_gpu_device=host: 1 makes the host layer play a GPU that its ranks "
     "share without MPS (they take turns on it), as the planner sees it"},
    {"debug_host_pinned_max", SIZE, NULL, &CG_C->debug_host_pinned_max, OPAL_INFO_LVL_9, 0, RO,
     "Testing with coll_gpu_device=host: page-locked allocations of more bytes than this "
     "fail, as on a node short of memory it can lock (0: no limit)"},
    {"debug_host_blocking_waits", INT, NULL, &CG_C->debug_host_blocking_waits, OPAL_INFO_LVL_9, 0,
     RO, "Testing with coll_gpu_device=host: 1 makes device-side flag waits block the calling "
     "thread (0: they stay queued on their streams while the thread goes on, as on a GPU)"},
    {"debug_host_query_miss", INT, NULL, &CG_C->debug_host_query_miss, OPAL_INFO_LVL_9, 0, RO,
     "Testing with coll_gpu_device=host: N > 0 makes every N-th query of the application's "
     "work (an LL call's, with coll_gpu_ll_persist) find it not done even when nothing is "
     "queued, as a GPU's first query of a fresh event may (ranks miss different calls)"},
    {"debug_host_server_deaf", INT, NULL, &CG_C->debug_host_server_deaf, OPAL_INFO_LVL_9, 0, RO,
     "Testing with coll_gpu_device=host: 1 makes the LL servers of coll_gpu_ll_persist "
     "never read the calls posted to them, as a kernel whose reading of them is broken "
     "would: each such call runs launched after its server's life, and the stream's later "
     "calls without a server"},
    {"debug_host_no_p2p", INT, NULL, &CG_C->debug_host_no_p2p, OPAL_INFO_LVL_9, 0, RO,
     "Testing with coll_gpu_device=host: 1 makes every mapping of a peer's memory fail as "
     "between GPUs without peer-to-peer access (a node of PCIe GPUs on two sockets): the "
     "node's collectives on device memory run staged, with no error"},
    {"debug_host_slow", STR, NULL, &CG_C->debug_host_slow, OPAL_INFO_LVL_9, 0, RO,
     "Testing with coll_gpu_device=host: RANK:MS makes each copy, fill and reduction of "
     "MPI_COMM_WORLD rank RANK's device take MS milliseconds, as a long kernel would, while "
     "its host goes on (queued flag waits only); all:MS every rank's; MS 0: no delay, but no "
     "work runs inside the call that queues it"},
    {"debug_ll_flag_period", INT, NULL, &CG_C->debug_ll_flag_period, OPAL_INFO_LVL_9, 0, RO,
     "Testing the LL flags' wrap: LL calls of a local group after which its flags repeat "
     "(0: 2^31 - 1, as many as a line carries; 3 at least; every rank must set the same)"},
    {"debug_comm_ids", INT, NULL, &CG_C->debug_comm_ids, OPAL_INFO_LVL_9, 0, EQ,
     "Testing the inter-node tags: N > 0 gives every communicator one of N ids of the kind "
     "Open MPI 5 draws from PMIx for communicators made without a parent (hashed into the "
     "tags), so that communicators alive at once share one, as two whose hashes collide "
     "would (0: the ids as they are)"},
    {"debug_library_version", STR, NULL, &CG_C->debug_library_version, OPAL_INFO_LVL_9, 0, RO,
     "Testing the release check: the text MPI_Get_library_version is taken to return (e.g. "
     "\"Open MPI v5.0.10\"), so that a build meets a release it was not built for"},
};

static int mca_coll_gpu_register_one(const char *name, mca_base_var_type_t type,
                                     const mca_base_var_enum_value_t *values, void *storage,
                                     int level, int flags, mca_base_var_scope_t scope,
                                     const char *help)
{
    mca_base_var_enum_t *enumerator = NULL;
    char                 enum_name[64];
    int                  rc;

    if (values != NULL) {
        snprintf(enum_name, sizeof(enum_name), "coll_gpu_%s", name);
        rc = mca_base_var_enum_create(enum_name, values, &enumerator);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    rc = mca_base_component_var_register(&mca_coll_gpu_component.super.collm_version, name, help,
                                         type, enumerator, 0, flags, level, scope, storage);
    if (enumerator != NULL) {
        OBJ_RELEASE(enumerator);
    }
    return rc < 0 ? rc : OPAL_SUCCESS;
}

/* coll_gpu_<coll>_algorithm: one enumeration per collective, from the algorithm registry
 * (names and summaries). Settable through MPI_T so that a benchmark can compare algorithms
 * in one run. */
static int mca_coll_gpu_register_algorithms(void)
{
    static mca_base_var_enum_value_t values[CG_COLL_COUNT][CG_ALG_COUNT + 1];
    static char                      help[CG_COLL_COUNT][2048];
    static char                      names[CG_COLL_COUNT][64];
    const cg_alg_info_t             *rows;
    int                              nrows;

    rows = cg_alg_table(&nrows);
    for (int c = 0; c < CG_COLL_COUNT; c++) {
        size_t used;
        int    n = 0, rc;

        used = (size_t)snprintf(help[c], sizeof(help[c]),
                                "Algorithm of MPI_%s on device buffers. Values: auto (the planner "
                                "chooses by size and topology)", cg_coll_name((cg_coll_t)c));
        values[c][n++] = (mca_base_var_enum_value_t){CG_ALG_AUTO, "auto"};
        for (int i = 0; i < nrows; i++) {
            if (rows[i].coll != (cg_coll_t)c || n >= CG_ALG_COUNT) {
                continue;
            }
            values[c][n++] = (mca_base_var_enum_value_t){rows[i].alg, rows[i].name};
            if (used < sizeof(help[c])) {
                used += (size_t)snprintf(help[c] + used, sizeof(help[c]) - used, "; %s (%s)",
                                         rows[i].name, rows[i].summary);
            }
        }
        values[c][n] = (mca_base_var_enum_value_t){0, NULL};
        mca_coll_gpu_component.algorithm[c] = CG_ALG_AUTO;
        snprintf(names[c], sizeof(names[c]), "%s_algorithm", cg_coll_name((cg_coll_t)c));
        rc = mca_coll_gpu_register_one(names[c], INT, values[c], &mca_coll_gpu_component.algorithm[c],
                                       OPAL_INFO_LVL_5, SET, EQ, help[c]);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

/* FNV-1a over len bytes, continuing from hash. */
static uint64_t mca_coll_gpu_digest_add(uint64_t hash, const void *bytes, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        hash = (hash ^ ((const unsigned char *)bytes)[i]) * UINT64_C(0x100000001b3);
    }
    return hash;
}

/* All-equal parameters that the setup resolves when ranks differ, or whose difference only
 * changes what one rank does alone: not in the digest. */
static const char *const mca_coll_gpu_params_resolved[] = {
    "intra_sync",   /* the node's ranks settle on one kind of barrier */
    "ucx_staging",  /* staged everywhere when any rank stages */
    "hier_lanes",   /* the fewest lanes any rank has */
    "copy_method",  /* how this rank copies its own data */
    "timeout",      /* how long this rank waits */
    "context_keep", /* this rank's kept contexts (taken only when every rank holds one) */
    "topo_file",    /* the node's leader's topology is the node's */
    "rules_file",   /* compared by what the rules decide (cg_rules_digest), not by path */
};

static int mca_coll_gpu_param_resolved(const char *name)
{
    for (size_t i = 0; i < CG_ARRAY_SIZE(mca_coll_gpu_params_resolved); i++) {
        if (strcmp(name, mca_coll_gpu_params_resolved[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

uint64_t mca_coll_gpu_params_digest(void)
{
    uint64_t hash = UINT64_C(0xcbf29ce484222325);

    for (size_t i = 0; i < CG_ARRAY_SIZE(mca_coll_gpu_params); i++) {
        const mca_coll_gpu_param_t *p = &mca_coll_gpu_params[i];
        size_t                      len;

        if (p->scope != EQ || mca_coll_gpu_param_resolved(p->name)) {
            continue;
        }
        hash = mca_coll_gpu_digest_add(hash, p->name, strlen(p->name) + 1);
        if (p->type == STR) {
            const char *text = *(char *const *)p->storage;
            hash = mca_coll_gpu_digest_add(hash, text != NULL ? text : "", text != NULL ? strlen(text) + 1 : 1);
            continue;
        }
        len  = p->type == SIZE ? sizeof(size_t) : p->type == DBL ? sizeof(double) : sizeof(int);
        hash = mca_coll_gpu_digest_add(hash, p->storage, len);
    }
    return mca_coll_gpu_digest_add(hash, mca_coll_gpu_component.algorithm,
                                   sizeof(mca_coll_gpu_component.algorithm));
}

int mca_coll_gpu_register_params(void)
{
    int rc;

    cg_planner_config_default(&mca_coll_gpu_component.planner);
    for (size_t i = 0; i < CG_ARRAY_SIZE(mca_coll_gpu_params); i++) {
        const mca_coll_gpu_param_t *p = &mca_coll_gpu_params[i];
        rc = mca_coll_gpu_register_one(p->name, p->type, p->values, p->storage, p->level,
                                           p->flags, p->scope, p->help);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    rc = mca_coll_gpu_register_algorithms();
    if (OPAL_SUCCESS == rc) {
        rc = mca_coll_gpu_register_pvars(); /* coll_gpu_pvars.c */
    }
    if (OPAL_SUCCESS == rc) {
        mca_coll_gpu_check_param_names(); /* every parameter is known now: report typos */
    }
    return rc;
}
