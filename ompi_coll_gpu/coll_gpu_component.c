/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* coll/gpu component: open/close and the init-time device decision (parameters:
 * coll_gpu_params.c). */
#include "ompi_coll_gpu/coll_gpu.h"
#include "ompi_coll_gpu/coll_gpu_staged_calls.h"

#include "ompi/runtime/mpiruntime.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/show_help.h"

#include <dlfcn.h>
#include <errno.h>
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
#ifndef CG_VERSION_MAJOR /* set by configure */
#define CG_VERSION_MAJOR 0
#define CG_VERSION_MINOR 0
#define CG_VERSION_RELEASE 0
#endif

static int mca_coll_gpu_open(void);
static int mca_coll_gpu_close(void);

mca_coll_gpu_component_t mca_coll_gpu_component = {
    .super = {
        .collm_version = {
            MCA_COLL_GPU_BASE_VERSION,
            .mca_component_name            = "gpu",
            /* our own version (configure.ac), not Open MPI's: ompi_info shows it */
            MCA_BASE_MAKE_VERSION(component, CG_VERSION_MAJOR, CG_VERSION_MINOR,
                                  CG_VERSION_RELEASE),
            .mca_open_component            = mca_coll_gpu_open,
            .mca_close_component           = mca_coll_gpu_close,
            .mca_register_component_params = mca_coll_gpu_register_params,
        },
        .collm_data = {
            MCA_BASE_METADATA_PARAM_CHECKPOINT
        },
        .collm_init_query = mca_coll_gpu_init_query,
        .collm_comm_query = mca_coll_gpu_comm_query,
    },
    .priority          = 95,
    .verbose_subsys    = "all",
    .verbose_file      = "",
    .topo_file         = "",
    .rules_file        = "",
    .debug_host_buffer_ranks = "",
    .debug_fail              = "",
    .debug_fail_rank         = -1,
    .debug_host_slow         = "",
    .debug_host_slow_rank    = -1,
    .verbose           = 0,
    .device_mode       = MCA_COLL_GPU_DEVICE_AUTO,
    .node_size         = 0,
    .buffer_check      = MCA_COLL_GPU_CHECK_AUTO,
    .staging_cache_max = 256u << 20,
    .scratch_size      = 16u << 20,
    .ucx_chunk_size    = 1u << 20,
    .ucx_depth         = 4,
    .hier_lanes        = 4,
    .context_keep      = 4,
    .host_cache        = 1,
    .intra_sync        = 0,
    .app_wait          = MCA_COLL_GPU_APP_WAIT_AUTO,
    .ll_persist        = 0,
    .ll_persist_idle_us = 100,
    .timeout           = 0,
    .spin_us           = -1,
};

static char *mca_coll_gpu_help_dirs[3];

/* Help files, nearest to the component first: a build tree (the .so in .libs/, the text
 * next to .libs/), an installation (<prefix>/lib/openmpi -> <prefix>/share/openmpi), the
 * configured data directory. */
void mca_coll_gpu_add_help_dirs(void)
{
    Dl_info info;
    char    dir[PATH_MAX];
    int     n = 0;

    if (mca_coll_gpu_help_dirs[0] != NULL) { /* added already (at registration) */
        return;
    }
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
    (void)cg_log_set_file(mca_coll_gpu_component.verbose_file); /* reports its failure */
    if (cg_log_configure(mca_coll_gpu_component.verbose,
                         mca_coll_gpu_component.verbose_subsys) != CG_OK) {
        cg_warn(CG_SUB_INIT, "coll_gpu_verbose_subsys \"%s\" has an unknown name; logging all",
                mca_coll_gpu_component.verbose_subsys);
    }
    return OMPI_SUCCESS;
}

static int mca_coll_gpu_close(void)
{
    cg_pace_set_progress(NULL); /* Open MPI is closing: its progress is not ours to call */
    (void)cg_dev_reset_check(mca_coll_gpu_dev()); /* as at a module's end */
    mca_coll_gpu_host_cache_stop(); /* UCX must not call into an unloaded component */
    mca_coll_gpu_requests_fini();
    mca_coll_gpu_staging_cache_release();
    cg_comm_keep_drain(); /* kept contexts use UCX: first */
    cg_comm_process_cleanup();
    cg_rules_free(mca_coll_gpu_component.rules);
    mca_coll_gpu_component.rules = NULL;
    if (mca_coll_gpu_dev() != NULL) {
        cg_dev_close(mca_coll_gpu_dev());
        mca_coll_gpu_component.dev = NULL;
    }
    free(mca_coll_gpu_component.host_buffer_ranks);
    mca_coll_gpu_component.host_buffer_ranks = NULL;
    for (size_t i = 0; i < CG_ARRAY_SIZE(mca_coll_gpu_help_dirs); i++) {
        free(mca_coll_gpu_help_dirs[i]);
        mca_coll_gpu_help_dirs[i] = NULL;
    }
    cg_log_close_file();
    return OMPI_SUCCESS;
}


/* coll_gpu_debug_host_slow: "RANK:MS" (that world rank) or "all:MS" (every rank). */
static int mca_coll_gpu_parse_slow(const char *text)
{
    int    rank = -1, used = 0;
    double ms   = -1;

    if (strncmp(text, "all:", 4) == 0) {
        rank = MCA_COLL_GPU_SLOW_ALL;
        if (sscanf(text + 4, "%lf%n", &ms, &used) != 1 || text[4 + used] != '\0') {
            return OMPI_ERROR;
        }
    } else if (sscanf(text, "%d:%lf%n", &rank, &ms, &used) != 2 || text[used] != '\0' ||
               rank < 0) {
        return OMPI_ERROR;
    }
    if (ms < 0) {
        return OMPI_ERROR;
    }
    mca_coll_gpu_component.debug_host_slow_rank = rank;
    mca_coll_gpu_component.debug_host_slow_ms   = ms;
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

static void mca_coll_gpu_progress_mpi(void)
{
    opal_progress();
}

/* How long waits spin (coll_gpu_spin_us): by default as Open MPI's own progress does, which
 * yields when idle on an oversubscribed node (mpi_yield_when_idle) and spins otherwise.
 * Every wait for peers progresses MPI meanwhile (cg_pace_set_progress). */
static void mca_coll_gpu_pace_setup(void)
{
    int spin_us = mca_coll_gpu_component.spin_us;

    if (spin_us < 0) {
        const bool *yield = NULL;
        const int   index = mca_base_var_find("ompi", "mpi", NULL, "yield_when_idle");
        spin_us = index >= 0 && mca_base_var_get_value(index, &yield, NULL, NULL) == OPAL_SUCCESS &&
                  yield != NULL && *yield ? 0 : 50;
    }
    cg_pace_configure(spin_us);
    cg_pace_set_progress(mca_coll_gpu_progress_mpi);
    cg_log(CG_LOG_DETAIL, CG_SUB_INIT, "waits spin %d %s before they yield the core",
           spin_us > 0 ? spin_us : CG_PACE_SPIN, spin_us > 0 ? "us" : "polls");
}

/*
 * Decide whether the component can run in this process. It never touches a GPU here, nor
 * initialises the CUDA driver (cuInit reads CUDA_VISIBLE_DEVICES once, applications often
 * select their device after MPI_Init, and CPU-only jobs must not pay for it): a driver
 * library must exist; the device layer is opened at the first call with device buffers.
 */
int mca_coll_gpu_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    char       reason[200] = "";
    const bool world_init  = ompi_mpi_state >= OMPI_MPI_STATE_INIT_STARTED; /* MPI_Init */

    (void)enable_progress_threads;
    if (mca_coll_gpu_runtime_check() != OMPI_SUCCESS) {
        return OMPI_ERROR;
    }
    /* Open MPI 5's sessions (MPI_Session_init, no MPI_Init) set neither the level provided
     * nor enable_mpi_threads; a session of MPI_THREAD_MULTIPLE only sets OPAL's use of
     * threads (which MPI_Init sets for every level above single): without MPI_Init, that
     * is the level, and a process is never taken as single */
    mca_coll_gpu_component.thread_multi =
        enable_mpi_threads || (!world_init && opal_using_threads());
    mca_coll_gpu_component.thread_single =
        world_init && ompi_mpi_thread_provided == MPI_THREAD_SINGLE;
    if (mca_coll_gpu_component.app_wait == MCA_COLL_GPU_APP_WAIT_LAUNCH &&
        !mca_coll_gpu_component.thread_single) {
        static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                             "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
        const int level = ompi_mpi_thread_provided;
        mca_coll_gpu_show_help_once("app_wait launch unavailable",
                                    !world_init ? "a level of MPI sessions"
                                    : level >= 0 && level <= 3 ? levels[level] : "unknown");
    }
    cg_counters_callers_concurrent      = mca_coll_gpu_component.thread_multi;
    mca_coll_gpu_pace_setup();
    if (mca_coll_gpu_component.priority <= 0) {
        cg_log(CG_LOG_DETAIL, CG_SUB_INIT, "disabled: coll_gpu_priority is 0");
        return OMPI_ERROR;
    }
    if (mca_coll_gpu_component.rules_file && mca_coll_gpu_component.rules_file[0]) {
        char error[512];
        if (cg_rules_load(mca_coll_gpu_component.rules_file, &mca_coll_gpu_component.rules, error,
                          sizeof(error)) != CG_OK) {
            mca_coll_gpu_show_help_once("bad rules file", error); /* the job's rank 0 */
            cg_warn(CG_SUB_INIT, "coll_gpu_rules_file: %s: ignored", error); /* each rank */
            mca_coll_gpu_component.rules = NULL;
        } else {
            mca_coll_gpu_component.planner.rules = mca_coll_gpu_component.rules;
        }
    }
    /* a topology file that cannot be read leaves safe defaults (GPUs that cannot reach each
     * other: every call on device memory staged), so it is said once, here; one that reads
     * but does not parse is said where it is loaded (verbose 1) */
    if (mca_coll_gpu_component.topo_file && mca_coll_gpu_component.topo_file[0] &&
        access(mca_coll_gpu_component.topo_file, R_OK) != 0) {
        mca_coll_gpu_show_help_once("bad topology file", mca_coll_gpu_component.topo_file,
                                    strerror(errno));
    }
    if (mca_coll_gpu_component.debug_fail != NULL && mca_coll_gpu_component.debug_fail[0] != '\0' &&
        sscanf(mca_coll_gpu_component.debug_fail, "%d:%ld", &mca_coll_gpu_component.debug_fail_rank,
               &mca_coll_gpu_component.debug_fail_call) != 2) {
        cg_warn(CG_SUB_INIT, "coll_gpu_debug_fail \"%s\" is not RANK:CALL: ignored",
                mca_coll_gpu_component.debug_fail);
        mca_coll_gpu_component.debug_fail_rank = -1;
    }
    mca_coll_gpu_component.debug_fail_sticky =
        mca_coll_gpu_component.debug_fail != NULL && strstr(mca_coll_gpu_component.debug_fail, ":sticky") != NULL;
    if (mca_coll_gpu_component.debug_ll_flag_period != 0 &&
        mca_coll_gpu_component.debug_ll_flag_period < 3) {
        cg_warn(CG_SUB_INIT, "coll_gpu_debug_ll_flag_period %d is below 3: the flags repeat every "
                "2^31 - 1 calls", mca_coll_gpu_component.debug_ll_flag_period);
        mca_coll_gpu_component.debug_ll_flag_period = 0;
    }
    mca_coll_gpu_component.planner.net_bw_gbs   = mca_coll_gpu_component.net_bw;
    mca_coll_gpu_component.planner.net_alpha_us = mca_coll_gpu_component.net_latency;
    mca_coll_gpu_component.planner.copy_alpha_us = mca_coll_gpu_component.copy_latency;
    switch (mca_coll_gpu_component.device_mode) {
    case MCA_COLL_GPU_DEVICE_HOST:
        if (mca_coll_gpu_parse_rank_list(mca_coll_gpu_component.debug_host_buffer_ranks) !=
            OMPI_SUCCESS) {
            return OMPI_ERROR;
        }
        if (mca_coll_gpu_component.debug_host_slow != NULL &&
            mca_coll_gpu_component.debug_host_slow[0] != '\0' &&
            mca_coll_gpu_parse_slow(mca_coll_gpu_component.debug_host_slow) != OMPI_SUCCESS) {
            cg_warn(CG_SUB_INIT, "coll_gpu_debug_host_slow \"%s\" is not RANK:MS or all:MS: "
                    "ignored", mca_coll_gpu_component.debug_host_slow);
            mca_coll_gpu_component.debug_host_slow_rank = -1;
        }
        mca_coll_gpu_component.active_kind = CG_DEV_KIND_HOST;
        mca_coll_gpu_banner("host device layer");
        return OMPI_SUCCESS;
    case MCA_COLL_GPU_DEVICE_CUDA:
    case MCA_COLL_GPU_DEVICE_AUTO:
    default:
        if (!cg_dev_cuda_built()) {
            snprintf(reason, sizeof(reason), "built without CUDA support");
        } else if (cg_dev_cuda_driver_present(reason, sizeof(reason)) == CG_OK) {
            /* the driver is initialised and a GPU opened at the first call with device
             * buffers, never here */
            mca_coll_gpu_component.active_kind = CG_DEV_KIND_CUDA;
            mca_coll_gpu_banner("CUDA device layer");
            return OMPI_SUCCESS;
        }
        if (mca_coll_gpu_component.device_mode == MCA_COLL_GPU_DEVICE_CUDA) {
            mca_coll_gpu_cuda_required(reason); /* stops the job */
            return OMPI_ERROR;
        }
        /* Not a disqualification: in a job over GPU and CPU nodes the ranks with a GPU
         * agree on memory kinds with a small collective of their own, which this rank
         * must join (without the component it would pair their agreement with its data's
         * collective: wrong results or a hang). Its buffers are host memory, which it
         * asserts at the first agreement of each communicator: where every rank lacks
         * CUDA, that is the last one, and calls cost what Open MPI alone costs. */
        mca_coll_gpu_component.no_device   = 1;
        mca_coll_gpu_component.active_kind = CG_DEV_KIND_CUDA;
        cg_warn(CG_SUB_INIT, "no GPU here: %s (coll_gpu_device=auto): host memory only, "
                "collectives run underneath after one agreement per communicator", reason);
        return OMPI_SUCCESS;
    }
}
