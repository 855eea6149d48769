/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
#include "tests/mpi/check_pvar.h"

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
