/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The one place where Open MPI series differ for this component.
 *
 *   4.1      coll framework 2.0.0, module struct 2.3.0, int counts
 *   5.0      coll framework 2.4.0, module struct 2.4.0, int counts; OMPI_MODULE_DECLSPEC
 *            is gone; ompi_comm_get_cid is replaced by a per-process index
 *            (ompi_comm_get_local_cid) and a job-wide extended id (ompi_comm_get_extended_cid)
 *   6.0/main coll framework 3.0.0, size_t counts, enable installs the functions (not yet;
 *            see docs/INSTALL.md)
 */
#ifndef MCA_COLL_GPU_COMPAT_H
#define MCA_COLL_GPU_COMPAT_H

#include "ompi_config.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/communicator/communicator.h"
#if OMPI_MAJOR_VERSION == 4
#include "ompi/mca/rte/rte.h"
#else
#include "ompi/runtime/ompi_rte.h"
#endif
#include "opal/util/proc.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#if OMPI_MAJOR_VERSION == 4
#define MCA_COLL_GPU_BASE_VERSION MCA_COLL_BASE_VERSION_2_0_0
typedef mca_coll_base_component_2_0_0_t mca_coll_gpu_base_component_t;
typedef mca_coll_base_module_2_3_0_t    mca_coll_gpu_base_module_t;
#define MCA_COLL_GPU_DECLSPEC OMPI_MODULE_DECLSPEC
#elif OMPI_MAJOR_VERSION == 5
#define MCA_COLL_GPU_BASE_VERSION MCA_COLL_BASE_VERSION_2_4_0
typedef mca_coll_base_component_2_4_0_t mca_coll_gpu_base_component_t;
typedef mca_coll_base_module_2_4_0_t    mca_coll_gpu_base_module_t;
#define MCA_COLL_GPU_DECLSPEC OMPI_DECLSPEC
#else
#error "coll/gpu is built for Open MPI 4.1 and 5.0; this Open MPI series is not supported yet"
#endif

/* Count arguments of the collective entry points (size_t from Open MPI 6 on). */
typedef int mca_coll_gpu_count_t;

/* Where Open MPI keeps the per-communicator collective table. */
#define MCA_COLL_GPU_COMM_TABLE(comm) ((comm)->c_coll)

/*
 * An id of the communicator that is the same in every process of it (the inter-node tags
 * carry it). 4.1: the context id, agreed by all processes. 5.0: communicators made from
 * another one (dup, split, create) get an agreed id too, kept in the extended id as
 * {0, cid}; communicators made without one (MPI_Comm_create_from_group, sessions) get a
 * job-wide extended id from PMIx: {base, sub} with base != 0, folded here into 31 bits
 * with the top bit set so that it never equals an agreed id. Never the local index
 * (ompi_comm_get_local_cid): processes number those independently.
 */
static inline uint32_t mca_coll_gpu_comm_id(const struct ompi_communicator_t *comm)
{
#if OMPI_MAJOR_VERSION == 4
    return (uint32_t)ompi_comm_get_cid((struct ompi_communicator_t *)comm);
#else
    ompi_comm_extended_cid_t ext = ompi_comm_get_extended_cid(comm);
    uint64_t                 h;

    if (ext.cid_base == 0 && ext.cid_sub.u64 < UINT32_C(0x80000000)) {
        return (uint32_t)ext.cid_sub.u64;
    }
    /* 64-bit mix of both halves (splitmix64 finaliser), then 31 bits of it */
    h = ext.cid_base ^ (ext.cid_sub.u64 * UINT64_C(0x9e3779b97f4a7c15));
    h ^= h >> 30;
    h *= UINT64_C(0xbf58476d1ce4e5b9);
    h ^= h >> 27;
    h *= UINT64_C(0x94d049bb133111eb);
    h ^= h >> 31;
    return UINT32_C(0x80000000) | (uint32_t)(h & UINT32_C(0x7fffffff));
#endif
}

/* This process's rank in the job (MPI_COMM_WORLD), usable before MPI_COMM_WORLD exists;
 * -1 outside a job (ompi_info). */
static inline int mca_coll_gpu_job_rank(void)
{
    uint32_t vpid = (uint32_t)OMPI_PROC_MY_NAME->vpid;
    return vpid > (uint32_t)INT_MAX ? -1 : (int)vpid;
}

/* This process's rank among the job's processes on its node (opal_process_info: an int
 * in 4.1, 16 bits in 5.0). */
static inline int mca_coll_gpu_job_local_rank(void)
{
    return (int)opal_process_info.my_local_rank;
}

/* Open MPI's request of nonblocking and persistent collectives, ompi_coll_base_nbc_request_t
 * (ompi/mca/coll/base/coll_base_util.h). A component's request must start with its layout:
 * the MPI bindings write its fields on every such request (ompi_coll_base_retain_op and
 * _datatypes keep user ops and derived datatypes alive). Its header cannot be included
 * here (it needs ompi/op/op.h, which needs a Fortran header the devel packages lack), so
 * the layout is repeated, per series (checked against 4.1.4's and 5.0.7's headers: 192 and
 * 256 bytes on x86_64). The class, exported by libmpi, is the parent class. */
#include "ompi/request/request.h"
typedef struct {
    ompi_request_t super;
    union {
        ompi_request_complete_fn_t req_complete_cb;
        ompi_request_free_fn_t     req_free;
    } cb;
    void *req_complete_cb_data;
#if OMPI_MAJOR_VERSION == 4
    union {
        opal_object_t *objs[2];
    } data;
#else
    struct {
        union {
            opal_object_t *objs[2];
            struct {
                void *const *stypes, *const *rtypes;
                int          scount, rcount;
            } vecs;
        } refcounted;
        void *release_arrays[7];
    } data;
#endif
} mca_coll_gpu_nbc_request_t;
OMPI_DECLSPEC extern opal_class_t ompi_coll_base_nbc_request_t_class;
/* the parent class, for OBJ_CLASS_INSTANCE */
#define MCA_COLL_GPU_NBC_REQUEST_PARENT ompi_coll_base_nbc_request_t
#if OMPI_MAJOR_VERSION == 4
#define MCA_COLL_GPU_NBC_OBJS(req) ((req)->data.objs)
#else
#define MCA_COLL_GPU_NBC_OBJS(req) ((req)->data.refcounted.objs)
#endif

/* The value of the communicator's info key key into value (len bytes with the NUL): 1 when
 * the communicator has it (set at creation: MPI_Comm_dup_with_info, MPI_Comm_split_type,
 * ...), else 0. */
static inline int mca_coll_gpu_comm_info(struct ompi_communicator_t *comm, const char *key,
                                         char *value, int len)
{
    opal_info_t *info = comm->super.s_info;
    int          flag = 0;

    if (info == NULL || len < 2) {
        return 0;
    }
#if OMPI_MAJOR_VERSION == 4
    if (OPAL_SUCCESS != opal_info_get(info, (char *)key, len - 1, value, &flag) || !flag) {
        return 0;
    }
    value[len - 1] = '\0';
#else
    {
        opal_cstring_t *string = NULL;
        if (OPAL_SUCCESS != opal_info_get(info, key, &string, &flag) || !flag || string == NULL) {
            return 0;
        }
        snprintf(value, (size_t)len, "%s", string->string);
        OBJ_RELEASE(string);
    }
#endif
    return 1;
}

#endif /* MCA_COLL_GPU_COMPAT_H */
