/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* MPI_T performance variables for the test programs (coll_costs, coll_threads). */
#ifndef CG_CHECK_PVAR_H
#define CG_CHECK_PVAR_H

#include <mpi.h>

/* A handle in session of the performance variable called name (e.g. coll_gpu_frees_held);
 * MPI_T_PVAR_HANDLE_NULL when there is none (the component not loaded). */
MPI_T_pvar_handle check_pvar_handle(MPI_T_pvar_session session, const char *name);

/* --expect-ll-served: check_pvar_served_start after MPI_Init (a counter counts from its
 * handle's start); check_pvar_expect_served at the end: 1 (and a FAIL line on stderr) when
 * this rank rang no LL call on a server (coll_gpu_ll_served 0: coll_gpu_ll_persist not in
 * use). */
void check_pvar_served_start(void);
int  check_pvar_expect_served(const char *program);
/* --expect-ll-launched: the same start; at the end 1 (and a FAIL line) when this rank rang
 * an LL call on a server, or the counter does not exist. */
int  check_pvar_expect_launched(const char *program);

/* A counter watched from now on: check_pvar_watch after MPI_Init (0: no such variable, the
 * component not loaded), check_pvar_watched for what it counted since (the watch ends). */
typedef struct {
    MPI_T_pvar_session session;
    MPI_T_pvar_handle  handle;
} check_pvar_watch_t;

int                check_pvar_watch(check_pvar_watch_t *watch, const char *name);
unsigned long long check_pvar_watched(check_pvar_watch_t *watch);

#endif
