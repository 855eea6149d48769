/* coll/gpu component: MCA parameters, open/close, and the init-time device decision. */
#include "ompi_coll_gpu/coll_gpu.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/base/mca_base_var_enum.h"
#include "opal/util/show_help.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CG_HELP_DIR
#define CG_HELP_DIR ""
#endif
#ifndef CG_PACKAGE_VERSION
#define CG_PACKAGE_VERSION "unknown"
#endif

static int mca_coll_gpu_register(void);
static int mca_coll_gpu_open(void);
static int mca_coll_gpu_close(void);

mca_coll_gpu_component_t mca_coll_gpu_component = {
    .super = {
        .collm_version = {
            MCA_COLL_GPU_BASE_VERSION,
            .mca_component_name            = "gpu",
            MCA_BASE_MAKE_VERSION(component, OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
                                  OMPI_RELEASE_VERSION),
            .mca_open_component            = mca_coll_gpu_open,
            .mca_close_component           = mca_coll_gpu_close,
            .mca_register_component_params = mca_coll_gpu_register,
        },
        .collm_data = {
            MCA_BASE_METADATA_PARAM_CHECKPOINT
        },
        .collm_init_query = mca_coll_gpu_init_query,
        .collm_comm_query = mca_coll_gpu_comm_query,
    },
    .priority          = 95,
    .verbose           = 0,
    .device_mode       = MCA_COLL_GPU_DEVICE_AUTO,
    .node_size         = 0,
    .buffer_check      = MCA_COLL_GPU_CHECK_AGREE,
    .staging_cache_max = 256u << 20,
    .scratch_size      = 16u << 20,
    .ucx_chunk_size    = 1u << 20,
    .ucx_depth         = 4,
    .intra_sync        = 0,
    .timeout           = 0,
};

static char *mca_coll_gpu_help_dirs[3];

static int mca_coll_gpu_register_enum(const char *name, const char *help,
                                      const mca_base_var_enum_value_t *values, int *storage,
                                      int level, int flags, mca_base_var_scope_t scope)
{
    mca_base_var_enum_t *new_enum = NULL;
    char                 enum_name[64];
    int                  rc;

    snprintf(enum_name, sizeof(enum_name), "coll_gpu_%s", name);
    rc = mca_base_var_enum_create(enum_name, values, &new_enum);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = mca_base_component_var_register(&mca_coll_gpu_component.super.collm_version, name,
                                         help, MCA_BASE_VAR_TYPE_INT, new_enum, 0, flags,
                                         level, scope, storage);
    OBJ_RELEASE(new_enum);
    return rc < 0 ? rc : OPAL_SUCCESS;
}

static int mca_coll_gpu_register_algorithms(void)
{
    static mca_base_var_enum_value_t values[CG_COLL_COUNT][CG_ALG_COUNT + 1];
    static char help[CG_COLL_COUNT][512];

    for (int c = 0; c < CG_COLL_COUNT; c++) {
        const cg_alg_t *algs = cg_coll_algs((cg_coll_t)c);
        char            name[64];
        size_t          used;
        int             n = 0, rc;

        used = (size_t)snprintf(help[c], sizeof(help[c]),
                                "Algorithm of MPI_%s on device buffers (auto: the planner "
                                "chooses by size and topology). Values:",
                                cg_coll_name((cg_coll_t)c));
        for (; algs[n] != (cg_alg_t)-1; n++) {
            values[c][n].value  = algs[n];
            values[c][n].string = cg_alg_name(algs[n]);
            used += (size_t)snprintf(help[c] + used, sizeof(help[c]) - used, "%s %s",
                                     n ? "," : "", cg_alg_name(algs[n]));
        }
        values[c][n].value  = 0;
        values[c][n].string = NULL;
        mca_coll_gpu_component.algorithm[c] = CG_ALG_AUTO;
        snprintf(name, sizeof(name), "%s_algorithm", cg_coll_name((cg_coll_t)c));
        /* Settable through MPI_T so that a benchmark can compare algorithms in one run. */
        rc = mca_coll_gpu_register_enum(name, help[c], values[c],
                                        &mca_coll_gpu_component.algorithm[c], OPAL_INFO_LVL_5,
                                        MCA_BASE_VAR_FLAG_SETTABLE, MCA_BASE_VAR_SCOPE_ALL_EQ);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

static int mca_coll_gpu_register(void)
{
    static const mca_base_var_enum_value_t device_values[] = {
        {MCA_COLL_GPU_DEVICE_AUTO, "auto"},
        {MCA_COLL_GPU_DEVICE_CUDA, "cuda"},
        {MCA_COLL_GPU_DEVICE_HOST, "host"},
        {0, NULL},
    };
    static const mca_base_var_enum_value_t check_values[] = {
        {MCA_COLL_GPU_CHECK_AGREE, "agree"},
        {MCA_COLL_GPU_CHECK_LOCAL, "local"},
        {0, NULL},
    };
    static const mca_base_var_enum_value_t sync_values[] = {
        {0, "auto"},
        {1, "host"},
        {2, "device"},
        {0, NULL},
    };
    static const mca_base_var_enum_value_t staging_values[] = {
        {0, "auto"},
        {1, "always"},
        {2, "never"},
        {0, NULL},
    };
    static const mca_base_var_enum_value_t copy_values[] = {
        {0, "auto"},
        {1, "engine"},
        {2, "kernel"},
        {0, NULL},
    };
    mca_base_component_t *c = &mca_coll_gpu_component.super.collm_version;
    int                   rc;

    cg_planner_config_default(&mca_coll_gpu_component.planner);

    (void)mca_base_component_var_register(
        c, "priority",
        "Priority of the gpu coll component (0 disables it). It sits above the host "
        "components and passes host buffers down to them untouched",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_2, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gpu_component.priority);
    (void)mca_base_component_var_register(
        c, "verbose",
        "Verbosity: 0 errors, 1 warnings and fallbacks, 2 one line per intercepted call, "
        "3 setup and plan details, 5 debug, 9 trace",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, MCA_BASE_VAR_FLAG_SETTABLE, OPAL_INFO_LVL_2,
        MCA_BASE_VAR_SCOPE_LOCAL, &mca_coll_gpu_component.verbose);
    mca_coll_gpu_component.verbose_subsys = "all";
    (void)mca_base_component_var_register(
        c, "verbose_subsys",
        "Subsystems that log at coll_gpu_verbose: all, or a comma list of init, coll, dev, "
        "ipc, topo, plan, ucx; a leading ^ excludes the listed ones",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_LOCAL,
        &mca_coll_gpu_component.verbose_subsys);
    rc = mca_coll_gpu_register_enum(
        "device",
        "Device layer: auto (CUDA when a GPU and driver are present, otherwise the component "
        "disqualifies itself quietly), cuda, or host (host buffers are treated as device "
        "buffers and run on the host device layer: testing and debugging without a GPU)",
        device_values, &mca_coll_gpu_component.device_mode, OPAL_INFO_LVL_2, 0,
        MCA_BASE_VAR_SCOPE_READONLY);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    (void)mca_base_component_var_register(
        c, "node_size",
        "0: group ranks by the node they run on. N > 0: group N consecutive ranks of each "
        "communicator into one virtual node (testing multi-node behaviour on one machine)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
        &mca_coll_gpu_component.node_size);
    rc = mca_coll_gpu_register_enum(
        "buffer_check",
        "agree: ranks agree on the memory kinds of every call that could take a fast path "
        "(safe when some ranks pass host buffers and others device buffers); local: trust "
        "the application to pass the same kind of memory on every rank (saves one small "
        "host allreduce per call)",
        check_values, &mca_coll_gpu_component.buffer_check, OPAL_INFO_LVL_4, 0,
        MCA_BASE_VAR_SCOPE_ALL_EQ);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    (void)mca_base_component_var_register(
        c, "staging_cache_max",
        "Page-locked staging memory (bytes) kept between calls; larger staging buffers are "
        "released after the call",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL,
        &mca_coll_gpu_component.staging_cache_max);
    (void)mca_base_component_var_register(
        c, "scratch_size",
        "Device memory (bytes) each rank shares with the ranks of its node for the intra-node "
        "algorithms; larger messages go through it in pipelined steps",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
        &mca_coll_gpu_component.scratch_size);
    rc = mca_coll_gpu_register_enum(
        "intra_sync",
        "Barriers between the ranks of a node: host (the host waits for its stream and for "
        "flags in shared memory; safe when ranks share a GPU without MPS), device (stream "
        "memory operations on flags in GPU memory; ranks must run concurrently: one GPU "
        "each, or MPS), auto (device when every rank of the node has its own GPU)",
        sync_values, &mca_coll_gpu_component.intra_sync, OPAL_INFO_LVL_5, 0,
        MCA_BASE_VAR_SCOPE_ALL_EQ);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = mca_coll_gpu_register_enum(
        "copy_method",
        "How allgather and bcast copy one buffer into several peers' buffers: kernel (one "
        "kernel reads the source once and writes every destination: the fewest bytes "
        "through device memory), engine (one copy-engine transfer per destination: no SMs "
        "used), auto (kernel)",
        copy_values, &mca_coll_gpu_component.copy_method, OPAL_INFO_LVL_5, 0,
        MCA_BASE_VAR_SCOPE_ALL_EQ);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    (void)mca_base_component_var_register(
        c, "timeout",
        "Seconds a fast-path collective waits for the ranks of its node before it fails "
        "with an error (0: no limit; peers that died are detected either way)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
        &mca_coll_gpu_component.timeout);
    (void)mca_base_component_var_register(
        c, "allreduce_one_shot_max",
        "Largest allreduce (bytes) that auto runs with the one-shot algorithm; larger ones "
        "run two-shot",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, 0, MCA_BASE_VAR_FLAG_SETTABLE, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_ALL_EQ, &mca_coll_gpu_component.planner.one_shot_max);
    mca_coll_gpu_component.topo_file = "";
    (void)mca_base_component_var_register(
        c, "topo_file",
        "hwloc XML topology to use instead of the machine's (like NCCL_TOPO_FILE): every "
        "topology decision can be reproduced. With coll_gpu_device=host, local rank i plays "
        "the file's GPU i",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gpu_component.topo_file);
    mca_coll_gpu_component.rules_file = "";
    (void)mca_base_component_var_register(
        c, "rules_file",
        "Rules that override the planner's cost model, one per line: collective min_bytes "
        "max_bytes min_nodes max_nodes algorithm (\"*\": any; first match wins; see README)",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_ALL_EQ,
        &mca_coll_gpu_component.rules_file);
    (void)mca_base_component_var_register(
        c, "net_bw",
        "Cost model: bandwidth of one NIC in GB/s per direction (0: 48, a 400 Gb/s NIC)",
        MCA_BASE_VAR_TYPE_DOUBLE, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
        &mca_coll_gpu_component.net_bw);
    (void)mca_base_component_var_register(
        c, "net_latency",
        "Cost model: latency of one message between nodes in microseconds (0: 5)",
        MCA_BASE_VAR_TYPE_DOUBLE, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
        &mca_coll_gpu_component.net_latency);
    (void)mca_base_component_var_register(
        c, "ucx_chunk_size",
        "Inter-node staging: bytes per page-locked chunk when UCX cannot move device memory",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
        &mca_coll_gpu_component.ucx_chunk_size);
    (void)mca_base_component_var_register(
        c, "ucx_depth",
        "Inter-node staging: chunks in flight in each direction (copies overlap transfers)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
        &mca_coll_gpu_component.ucx_depth);
    rc = mca_coll_gpu_register_enum(
        "ucx_staging",
        "Inter-node data: auto (device memory straight to UCX when it supports CUDA memory, "
        "otherwise through page-locked host chunks), always (force the staging pipeline), "
        "never",
        staging_values, &mca_coll_gpu_component.ucx_staging, OPAL_INFO_LVL_5, 0,
        MCA_BASE_VAR_SCOPE_ALL_EQ);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    mca_coll_gpu_component.debug_host_buffer_ranks = "";
    (void)mca_base_component_var_register(
        c, "debug_host_buffer_ranks",
        "Testing with coll_gpu_device=host: comma list of MPI_COMM_WORLD ranks whose buffers "
        "count as host memory, to exercise ranks that mix memory kinds",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gpu_component.debug_host_buffer_ranks);
    return mca_coll_gpu_register_algorithms();
}

/* Help files, nearest to the component first: a build tree (the .so in .libs/, the text
 * next to .libs/), an installation (<prefix>/lib/openmpi -> <prefix>/share/openmpi), the
 * configured data directory. */
static void mca_coll_gpu_add_help_dirs(void)
{
    Dl_info info;
    char    dir[PATH_MAX];
    int     n = 0;

    if (dladdr((void *)&mca_coll_gpu_component, &info) != 0 && info.dli_fname != NULL) {
        char *slash;
        snprintf(dir, sizeof(dir), "%s", info.dli_fname);
        slash = strrchr(dir, '/');
        if (slash != NULL && strlen(dir) + 32 < sizeof(dir)) {
            char rel[PATH_MAX + 32];
            *slash = '\0';
            snprintf(rel, sizeof(rel), "%s/..", dir);
            mca_coll_gpu_help_dirs[n++] = strdup(rel);
            snprintf(rel, sizeof(rel), "%s/../../share/openmpi", dir);
            mca_coll_gpu_help_dirs[n++] = strdup(rel);
        }
    }
    if (CG_HELP_DIR[0] != '\0') {
        mca_coll_gpu_help_dirs[n++] = strdup(CG_HELP_DIR);
    }
    /* searched after Open MPI's own directory, in the order added */
    for (int i = 0; i < n; i++) {
        if (mca_coll_gpu_help_dirs[i] != NULL) {
            opal_show_help_add_dir(mca_coll_gpu_help_dirs[i]);
        }
    }
}

static int mca_coll_gpu_open(void)
{
    mca_coll_gpu_add_help_dirs();
    if (cg_log_configure(mca_coll_gpu_component.verbose,
                         mca_coll_gpu_component.verbose_subsys) != CG_OK) {
        cg_warn(CG_SUB_INIT, "coll_gpu_verbose_subsys \"%s\" has an unknown name; logging all",
                mca_coll_gpu_component.verbose_subsys);
    }
    return OMPI_SUCCESS;
}

static int mca_coll_gpu_close(void)
{
    mca_coll_gpu_staging_cache_release();
    cg_comm_process_cleanup();
    cg_rules_free(mca_coll_gpu_component.rules);
    mca_coll_gpu_component.rules = NULL;
    if (mca_coll_gpu_component.dev != NULL) {
        cg_dev_close(mca_coll_gpu_component.dev);
        mca_coll_gpu_component.dev = NULL;
    }
    free(mca_coll_gpu_component.host_buffer_ranks);
    mca_coll_gpu_component.host_buffer_ranks = NULL;
    for (size_t i = 0; i < CG_ARRAY_SIZE(mca_coll_gpu_help_dirs); i++) {
        free(mca_coll_gpu_help_dirs[i]);
        mca_coll_gpu_help_dirs[i] = NULL;
    }
    return OMPI_SUCCESS;
}

static int mca_coll_gpu_parse_rank_list(const char *text)
{
    const char *p = text;
    int         n = 0;

    if (text == NULL || *text == '\0') {
        return OMPI_SUCCESS;
    }
    mca_coll_gpu_component.host_buffer_ranks = calloc(strlen(text) + 1, sizeof(int));
    if (mca_coll_gpu_component.host_buffer_ranks == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    while (*p != '\0') {
        char *end;
        long  r = strtol(p, &end, 10);
        if (end == p || r < 0 || r > INT_MAX) {
            cg_warn(CG_SUB_INIT, "coll_gpu_debug_host_buffer_ranks \"%s\" is not a rank list",
                    text);
            return OMPI_ERR_BAD_PARAM;
        }
        mca_coll_gpu_component.host_buffer_ranks[n++] = (int)r;
        p = (*end == ',') ? end + 1 : end;
        if (*end != ',' && *end != '\0') {
            return OMPI_ERR_BAD_PARAM;
        }
    }
    mca_coll_gpu_component.num_host_buffer_ranks = n;
    return OMPI_SUCCESS;
}

/*
 * Decide whether the component can run in this process. It never touches a GPU here:
 * applications often select their device after MPI_Init, so the device layer is opened at
 * the first call with device buffers.
 */
int mca_coll_gpu_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    char reason[200] = "";

    (void)enable_progress_threads;
    mca_coll_gpu_component.thread_multi = enable_mpi_threads;
    if (mca_coll_gpu_component.priority <= 0) {
        cg_log(CG_LOG_DETAIL, CG_SUB_INIT, "disabled: coll_gpu_priority is 0");
        return OMPI_ERROR;
    }
    if (mca_coll_gpu_component.rules_file && mca_coll_gpu_component.rules_file[0]) {
        char error[512];
        if (cg_rules_load(mca_coll_gpu_component.rules_file, &mca_coll_gpu_component.rules, error,
                          sizeof(error)) != CG_OK) {
            mca_coll_gpu_show_help("bad rules file", error);
            mca_coll_gpu_component.rules = NULL;
        } else {
            mca_coll_gpu_component.planner.rules = mca_coll_gpu_component.rules;
        }
    }
    mca_coll_gpu_component.planner.net_bw_gbs   = mca_coll_gpu_component.net_bw;
    mca_coll_gpu_component.planner.net_alpha_us = mca_coll_gpu_component.net_latency;
    switch (mca_coll_gpu_component.device_mode) {
    case MCA_COLL_GPU_DEVICE_HOST:
        if (mca_coll_gpu_parse_rank_list(mca_coll_gpu_component.debug_host_buffer_ranks) !=
            OMPI_SUCCESS) {
            return OMPI_ERROR;
        }
        mca_coll_gpu_component.active_kind = CG_DEV_KIND_HOST;
        cg_log(CG_LOG_DETAIL, CG_SUB_INIT, "coll/gpu %s: host device layer",
               CG_PACKAGE_VERSION);
        return OMPI_SUCCESS;
    case MCA_COLL_GPU_DEVICE_CUDA:
    case MCA_COLL_GPU_DEVICE_AUTO:
    default:
        if (!cg_dev_cuda_built()) {
            snprintf(reason, sizeof(reason), "built without CUDA support");
        } else if (cg_dev_cuda_probe(reason, sizeof(reason)) == CG_OK) {
            mca_coll_gpu_component.active_kind = CG_DEV_KIND_CUDA;
            cg_log(CG_LOG_DETAIL, CG_SUB_INIT, "coll/gpu %s: CUDA device layer",
                   CG_PACKAGE_VERSION);
            return OMPI_SUCCESS;
        }
        if (mca_coll_gpu_component.device_mode == MCA_COLL_GPU_DEVICE_CUDA) {
            mca_coll_gpu_show_help("cuda unavailable", reason);
        } else {
            cg_warn(CG_SUB_INIT, "disqualified: %s (coll_gpu_device=auto)", reason);
        }
        return OMPI_ERROR;
    }
}
