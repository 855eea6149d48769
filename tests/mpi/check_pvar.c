/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
#include "tests/mpi/check_pvar.h"

#include <stdio.h>
#include <string.h>

MPI_T_pvar_handle check_pvar_handle(MPI_T_pvar_session session, const char *name)
{
    MPI_T_pvar_handle handle = MPI_T_PVAR_HANDLE_NULL;
    int               pvars  = 0;

    MPI_T_pvar_get_num(&pvars);
    for (int i = 0; i < pvars && handle == MPI_T_PVAR_HANDLE_NULL; i++) {
        char         found[256], desc[1024];
        int          nl = sizeof(found), dl = sizeof(desc), verb, cls, bind, ro, cont, atomic, cnt;
        MPI_Datatype dt;
        MPI_T_enum   e;
        if (MPI_T_pvar_get_info(i, found, &nl, &verb, &cls, &dt, &e, desc, &dl, &bind, &ro,
                                &cont, &atomic) == MPI_SUCCESS && strcmp(found, name) == 0) {
            MPI_T_pvar_handle_alloc(session, i, NULL, &handle, &cnt);
        }
    }
    return handle;
}

/* --expect-ll-served: a counter counts from its handle's start (MPI_T), so it is watched
 * from when the program starts and read at its end. */
static check_pvar_watch_t served_watch;
static int                served_found; /* the component's counter exists */

void check_pvar_served_start(void)
{
    served_found = check_pvar_watch(&served_watch, "coll_gpu_ll_served");
}

int check_pvar_expect_served(const char *program)
{
    unsigned long long served = check_pvar_watched(&served_watch);
    int                rank;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (served == 0) {
        fprintf(stderr, "%s: FAIL rank %d: no LL call was rung on a server (coll_gpu_ll_served "
                "0; --expect-ll-served)\n", program, rank);
        return 1;
    }
    return 0;
}

int check_pvar_watch(check_pvar_watch_t *watch, const char *name)
{
    int provided;

    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&watch->session);
    watch->handle = check_pvar_handle(watch->session, name);
    return watch->handle != MPI_T_PVAR_HANDLE_NULL;
}

unsigned long long check_pvar_watched(check_pvar_watch_t *watch)
{
    unsigned long long value = 0;

    if (watch->handle != MPI_T_PVAR_HANDLE_NULL) {
        MPI_T_pvar_read(watch->session, watch->handle, &value);
        MPI_T_pvar_handle_free(watch->session, &watch->handle);
    }
    MPI_T_pvar_session_free(&watch->session);
    MPI_T_finalize();
    return value;
}

int check_pvar_expect_launched(const char *program)
{
    unsigned long long served = check_pvar_watched(&served_watch);
    int                rank;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!served_found || served != 0) {
        fprintf(stderr, "%s: FAIL rank %d: %s (--expect-ll-launched)\n", program, rank,
                served_found ? "an LL call was rung on a server (coll_gpu_ll_served above 0)"
                             : "no coll_gpu_ll_served counter (the component not loaded)");
        return 1;
    }
    return 0;
}
