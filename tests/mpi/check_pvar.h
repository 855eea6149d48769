/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* MPI_T performance variables for the test programs (coll_costs, coll_threads). */
#ifndef CG_CHECK_PVAR_H
#define CG_CHECK_PVAR_H

#include <mpi.h>

/* A handle in session of the performance variable called name (e.g. coll_gpu_frees_held);
 * MPI_T_PVAR_HANDLE_NULL when there is none (the component not loaded). */
MPI_T_pvar_handle check_pvar_handle(MPI_T_pvar_session session, const char *name);

#endif
