/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* coll_gpu_bench internals. */
#ifndef CG_BENCH_H
#define CG_BENCH_H

#include <mpi.h>

/* Select the algorithm of one collective through the MPI tool interface (the
 * coll_gpu_<coll>_algorithm control variable). Returns 0 on success, -1 when the component
 * or the algorithm is not there (a message says why on rank 0). */
int bench_mpit_init(void);
int bench_set_algorithm(const char *coll, const char *alg, int verbose);
/* Comma list of the algorithm names of coll, or NULL without the component. */
const char *bench_algorithms(const char *coll);
void bench_mpit_finalize(void);

#endif
