/*
 * The one place where Open MPI series differ for this component.
 *
 *   4.1      coll framework 2.0.0, module struct 2.3.0, int counts
 *   5.0      coll framework 2.4.0, module struct 2.4.0, int counts
 *   6.0/main coll framework 3.0.0, size_t counts, enable installs the functions (not yet)
 */
#ifndef MCA_COLL_GPU_COMPAT_H
#define MCA_COLL_GPU_COMPAT_H

#include "ompi_config.h"
#include "ompi/mca/coll/coll.h"

#if OMPI_MAJOR_VERSION == 4
#define MCA_COLL_GPU_BASE_VERSION MCA_COLL_BASE_VERSION_2_0_0
typedef mca_coll_base_component_2_0_0_t mca_coll_gpu_base_component_t;
typedef mca_coll_base_module_2_3_0_t    mca_coll_gpu_base_module_t;
#elif OMPI_MAJOR_VERSION == 5
#define MCA_COLL_GPU_BASE_VERSION MCA_COLL_BASE_VERSION_2_4_0
typedef mca_coll_base_component_2_4_0_t mca_coll_gpu_base_component_t;
typedef mca_coll_base_module_2_4_0_t    mca_coll_gpu_base_module_t;
#else
#error "coll/gpu is built for Open MPI 4.1 and 5.0; this Open MPI series is not supported yet"
#endif

/* Count arguments of the collective entry points (size_t from Open MPI 6 on). */
typedef int mca_coll_gpu_count_t;

/* Where Open MPI keeps the per-communicator collective table. */
#define MCA_COLL_GPU_COMM_TABLE(comm) ((comm)->c_coll)

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

#endif /* MCA_COLL_GPU_COMPAT_H */
