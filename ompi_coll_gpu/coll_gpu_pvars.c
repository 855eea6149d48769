/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The MPI_T performance variables of coll/gpu, all registered here:
 * - coll_gpu_<counter> (class counter): counters since the process started (base/cg_base.h);
 *   read one before and after a call to see what it cost;
 * - coll_gpu_<coll>_last_algorithm (class state): which algorithm the last call of each
 *   collective ran in this process, so that a benchmark or a tool can report what ran
 *   without the verbose log. The per-call cost is one pointer store
 *   (mca_coll_gpu_log_call); the name is mapped to the enumeration's value only when the
 *   variable is read;
 * - coll_gpu_ucx_workers, _ucx_endpoints, _ucx_endpoints_created, _pending_groups: what the
 *   process holds (class level, or counter), for leak checks (tests/mpi/check_soak.c).
 * All are read-only and continuous.
 */
#include "ompi_coll_gpu/coll_gpu.h"

#include "opal/mca/base/mca_base_pvar.h"
#include "opal/mca/base/mca_base_var_enum.h"
#include "coll/intra/intra.h"
#include "ucx_glue/cg_ucx.h"

#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <string.h>

/* Values beyond the algorithms: no call yet, host buffers passed to the layer underneath
 * and a one-rank communicator's copy ("underlying" and "local" in the verbose line). */
#define MCA_COLL_GPU_PVAR_NONE       (-1)
#define MCA_COLL_GPU_PVAR_UNDERLYING CG_ALG_COUNT
#define MCA_COLL_GPU_PVAR_LOCAL      (CG_ALG_COUNT + 1)

static int mca_coll_gpu_pvar_last_alg(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    const cg_coll_t coll = (cg_coll_t)(intptr_t)pvar->ctx;
    const char     *name = mca_coll_gpu_component.last_alg[coll];
    int            *out  = value;

    (void)obj;
    *out = MCA_COLL_GPU_PVAR_NONE;
    if (name == NULL) {
        return OPAL_SUCCESS;
    }
    if (strcmp(name, "underlying") == 0) {
        *out = MCA_COLL_GPU_PVAR_UNDERLYING;
        return OPAL_SUCCESS;
    }
    if (strcmp(name, "local") == 0) {
        *out = MCA_COLL_GPU_PVAR_LOCAL;
        return OPAL_SUCCESS;
    }
    for (int a = 0; a < CG_ALG_COUNT; a++) {
        if (strcmp(name, cg_alg_name((cg_alg_t)a)) == 0) {
            *out = a;
            break;
        }
    }
    return OPAL_SUCCESS;
}

static int mca_coll_gpu_register_last_algorithm(void)
{
    static mca_base_var_enum_value_t values[CG_ALG_COUNT + 4];
    static char                      names[CG_COLL_COUNT][64];
    mca_base_var_enum_t             *enumerator = NULL;
    int                              n = 0, rc;

    values[n++] = (mca_base_var_enum_value_t){MCA_COLL_GPU_PVAR_NONE, "none"};
    for (int a = 0; a < CG_ALG_COUNT; a++) {
        values[n++] = (mca_base_var_enum_value_t){a, cg_alg_name((cg_alg_t)a)};
    }
    values[n++] = (mca_base_var_enum_value_t){MCA_COLL_GPU_PVAR_UNDERLYING, "underlying"};
    values[n++] = (mca_base_var_enum_value_t){MCA_COLL_GPU_PVAR_LOCAL, "local"};
    values[n]   = (mca_base_var_enum_value_t){0, NULL};
    rc = mca_base_var_enum_create("coll_gpu_algorithm_ran", values, &enumerator);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    for (int c = 0; c < CG_COLL_COUNT && rc >= 0; c++) {
        snprintf(names[c], sizeof(names[c]), "%s_last_algorithm", cg_coll_name((cg_coll_t)c));
        /* No description: Open MPI 4.1's ompi_info prints a performance variable that has a
         * description and an enumeration into an array one entry too short and crashes
         * (mca_base_pvar_dump). The enumeration names the values; README.md explains. */
        rc = mca_base_component_pvar_register(
            &mca_coll_gpu_component.super.collm_version, names[c], NULL, OPAL_INFO_LVL_4,
            MCA_BASE_PVAR_CLASS_STATE, MCA_BASE_VAR_TYPE_INT, enumerator,
            MCA_BASE_VAR_BIND_NO_OBJECT, MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS,
            mca_coll_gpu_pvar_last_alg, NULL, NULL, (void *)(intptr_t)c);
    }
    OBJ_RELEASE(enumerator); /* every variable holds a reference of its own */
    return rc < 0 ? rc : OPAL_SUCCESS;
}

static int mca_coll_gpu_register_counters(void)
{
    for (int i = 0; i < CG_CNT_COUNT; i++) {
        int rc = mca_base_component_pvar_register(
            &mca_coll_gpu_component.super.collm_version, cg_counter_name((cg_counter_t)i),
            cg_counter_help((cg_counter_t)i), OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_COUNTER,
            MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL, MCA_BASE_VAR_BIND_NO_OBJECT,
            MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS, NULL, NULL, NULL,
            &cg_counters[i]);
        if (rc < 0) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

/* ---- performance variables (MPI_T): what the process holds, for leak checks ------------ */
enum { CG_PVAR_WORKERS, CG_PVAR_ENDPOINTS, CG_PVAR_ENDPOINTS_CREATED, CG_PVAR_PENDING_GROUPS };

static int mca_coll_gpu_pvar_holding(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    cg_ucx_counters_t counters;
    unsigned long    *out = value;

    (void)obj;
    cg_ucx_counters(&counters);
    switch ((int)(intptr_t)pvar->ctx) {
    case CG_PVAR_WORKERS:           *out = counters.workers; break;
    case CG_PVAR_ENDPOINTS:         *out = counters.endpoints; break;
    case CG_PVAR_ENDPOINTS_CREATED: *out = counters.endpoints_created; break;
    default:                        *out = cg_intra_pending_groups(); break;
    }
    return OPAL_SUCCESS;
}

static int mca_coll_gpu_register_holdings(void)
{
    static const struct {
        const char *name;
        int         var_class;
        int         which;
        const char *help;
    } pvars[] = {
        {"ucx_workers", MCA_BASE_PVAR_CLASS_LEVEL, CG_PVAR_WORKERS,
         "UCX workers the component holds in this process (its own and its lanes')"},
        {"ucx_endpoints", MCA_BASE_PVAR_CLASS_LEVEL, CG_PVAR_ENDPOINTS,
         "UCX endpoints open in this process (one per peer worker, shared by every "
         "communicator: freeing communicators must not change it)"},
        {"ucx_endpoints_created", MCA_BASE_PVAR_CLASS_COUNTER, CG_PVAR_ENDPOINTS_CREATED,
         "UCX endpoints created since the process started"},
        {"pending_groups", MCA_BASE_PVAR_CLASS_LEVEL, CG_PVAR_PENDING_GROUPS,
         "Node-local groups of freed communicators whose memory waits for their peers to "
         "free the communicator too"},
    };

    for (size_t i = 0; i < CG_ARRAY_SIZE(pvars); i++) {
        int rc = mca_base_component_pvar_register(
            &mca_coll_gpu_component.super.collm_version, pvars[i].name, pvars[i].help,
            OPAL_INFO_LVL_9, pvars[i].var_class, MCA_BASE_VAR_TYPE_UNSIGNED_LONG, NULL,
            MCA_BASE_VAR_BIND_NO_OBJECT, MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS,
            mca_coll_gpu_pvar_holding, NULL, NULL, (void *)(intptr_t)pvars[i].which);
        if (rc < 0) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

int mca_coll_gpu_register_pvars(void)
{
    int rc = mca_coll_gpu_register_counters();

    if (OPAL_SUCCESS == rc) {
        rc = mca_coll_gpu_register_last_algorithm();
    }
    return OPAL_SUCCESS == rc ? mca_coll_gpu_register_holdings() : rc;
}
