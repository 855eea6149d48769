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

#endif /* MCA_COLL_GPU_COMPAT_H */
