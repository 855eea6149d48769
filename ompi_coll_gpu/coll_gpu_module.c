/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* coll/gpu module: per-communicator selection, saving the layer underneath, teardown. */
#include "ompi_coll_gpu/coll_gpu.h"
#include "ompi_coll_gpu/coll_gpu_staged_calls.h"

#include "ompi/mca/coll/base/base.h"
#include "opal/util/show_help.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void mca_coll_gpu_module_construct(mca_coll_gpu_module_t *m)
{
    memset(&m->under, 0, sizeof(m->under));
    m->comm        = NULL;
    m->stream      = NULL;
    m->app_stream  = NULL;
    m->core        = NULL;
    m->core_failed = 0;
    m->nested      = 0;
    m->counts      = NULL;
    m->seq         = 0;
    m->board       = NULL;
    m->board_failed = 0;
    m->host_asserted = 0;
    m->host_only    = 0;
    memset(m->plans, 0, sizeof(m->plans));
}

static void mca_coll_gpu_module_destruct(mca_coll_gpu_module_t *m)
{
    cg_dev_t *dev = mca_coll_gpu_dev();

    /* an application that reset the device (cudaDeviceReset before MPI_Finalize) took the
     * communicator's device resources with it: their records go, nothing reaches the GPU */
    (void)cg_dev_reset_check(dev);
    cg_comm_release(m->core, mca_coll_gpu_component.context_keep);
    cg_board_destroy(m->board);
    free(m->counts);
    if (m->stream != NULL && dev != NULL) {
        dev->ops->stream_destroy(dev, m->stream);
    }
    if (m->app_stream != NULL && dev != NULL) {
        dev->ops->stream_destroy(dev, m->app_stream);
    }
#define CG_RELEASE(_name)                                                                 \
    if (m->under._name##_module != NULL) {                                                \
        OBJ_RELEASE(m->under._name##_module);                                             \
    }
    MCA_COLL_GPU_INTERCEPTED(CG_RELEASE)
#undef CG_RELEASE
}

OBJ_CLASS_INSTANCE(mca_coll_gpu_module_t, mca_coll_base_module_t, mca_coll_gpu_module_construct,
                   mca_coll_gpu_module_destruct);

void mca_coll_gpu_show_help(const char *topic, ...)
{
    va_list ap;

    va_start(ap, topic);
    opal_show_vhelp("help-coll-gpu.txt", topic, true, ap);
    va_end(ap);
}

/*
 * Save the function and module of the layer underneath for every collective we intercept.
 * Enable runs from the lowest priority up, so comm->c_coll holds exactly that layer now;
 * Open MPI copies the module's functions into the communicator after enable, so a
 * collective that has no layer underneath is left alone (its slot cleared here): the
 * component still serves the others.
 */
static int mca_coll_gpu_module_enable(mca_coll_base_module_t *module,
                                      struct ompi_communicator_t *comm)
{
    mca_coll_gpu_module_t *m = (mca_coll_gpu_module_t *)module;

    m->comm = comm;
#define CG_SAVE(_name)                                                                    \
    m->under._name          = MCA_COLL_GPU_COMM_TABLE(comm)->coll_##_name;                \
    m->under._name##_module = MCA_COLL_GPU_COMM_TABLE(comm)->coll_##_name##_module;       \
    if (m->under._name == NULL || m->under._name##_module == NULL) {                      \
        m->under._name          = NULL;                                                   \
        m->under._name##_module = NULL;                                                   \
        m->super.coll_##_name   = NULL;                                                   \
        cg_warn(CG_SUB_INIT, "%s: no component underneath provides " #_name               \
                ": left to Open MPI, device buffers not handled", comm->c_name);          \
    } else {                                                                              \
        OBJ_RETAIN(m->under._name##_module);                                              \
    }
    MCA_COLL_GPU_INTERCEPTED(CG_SAVE)
#undef CG_SAVE

    /* The fast paths exchange through the allgather underneath and agree on memory kinds
     * through its allreduce: without them every device call is staged. */
    if (m->under.allreduce == NULL || m->under.allgather == NULL) {
        m->core_failed = 1;
    }
    /* reduce_scatter's counts for its fast paths, made here: a call cannot fail for want of
     * them before it agrees with its peers (without them the calls are staged) */
    m->counts = malloc(sizeof(size_t) * (size_t)ompi_comm_size(comm));
    if (m->counts == NULL) {
        cg_warn(CG_SUB_INIT, "%s: out of memory: no fast path on this communicator",
                comm->c_name);
        m->core_failed = 1;
    }
    /* MPI 4.1's assertion that the application uses these memory kinds only on this
     * communicator: host kinds only, on every rank, spares host-buffer calls the agreement
     * (learnt at the first one; coll_gpu_route.c) */
    {
        char kinds[256];
        m->host_asserted = mca_coll_gpu_component.no_device || /* it cannot have any other */
                           (mca_coll_gpu_comm_info(comm, "mpi_assert_memory_alloc_kinds", kinds,
                                                   (int)sizeof(kinds)) &&
                            mca_coll_gpu_kinds_host_only(kinds));
    }
    cg_log(CG_LOG_DETAIL, CG_SUB_INIT, "enabled on %s (cid %u, %d ranks)", comm->c_name,
           mca_coll_gpu_comm_id(comm), ompi_comm_size(comm));
    return OMPI_SUCCESS;
}

static int mca_coll_gpu_module_disable(mca_coll_base_module_t *module,
                                       struct ompi_communicator_t *comm)
{
    (void)module;
    (void)comm;
    return OMPI_SUCCESS;
}

mca_coll_base_module_t *mca_coll_gpu_comm_query(struct ompi_communicator_t *comm, int *priority)
{
    mca_coll_gpu_module_t *m;

    if (comm == MPI_COMM_WORLD) { /* tag every log line with the world rank */
        char tag[16];
        snprintf(tag, sizeof(tag), "%d", ompi_comm_rank(comm));
        cg_log_set_tag(tag);
    }
    /* Intercommunicators are left to the other components. Single-rank communicators
     * (MPI_COMM_SELF, splits of one) are served: coll/self would memcpy() device buffers on
     * the CPU. */
    if (OMPI_COMM_IS_INTER(comm) || mca_coll_gpu_component.priority <= 0) {
        return NULL;
    }
    m = OBJ_NEW(mca_coll_gpu_module_t);
    if (m == NULL) {
        return NULL;
    }
    *priority = mca_coll_gpu_component.priority;
    m->super.coll_module_enable        = mca_coll_gpu_module_enable;
    m->super.coll_module_disable       = mca_coll_gpu_module_disable;
#define CG_INSTALL(_name) m->super.coll_##_name = mca_coll_gpu_##_name;
    MCA_COLL_GPU_INTERCEPTED(CG_INSTALL)
#undef CG_INSTALL
    return &m->super;
}

int mca_coll_gpu_status_to_mpi(cg_status_t status)
{
    switch (status) {
    case CG_OK:                return OMPI_SUCCESS;
    case CG_ERR_NO_MEMORY:     return OMPI_ERR_OUT_OF_RESOURCE;
    case CG_ERR_INVALID_PARAM: return OMPI_ERR_BAD_PARAM;
    case CG_ERR_UNSUPPORTED:   return OMPI_ERR_NOT_SUPPORTED;
    case CG_ERR_NOT_FOUND:     return OMPI_ERR_NOT_FOUND;
    case CG_ERR_TIMEOUT:       return OMPI_ERR_TIMEOUT;
    case CG_ERR_PEER:
    case CG_ERR_PEER_DEAD:
    case CG_ERR_TRANSPORT:     return OMPI_ERR_UNREACH;
    default:                   return OMPI_ERROR;
    }
}
