/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Switching coll/gpu algorithms at run time through MPI_T control variables. */
#include "bench.h"

#include <stdio.h>
#include <string.h>

static int bench_mpit_ok;

int bench_mpit_init(void)
{
    int provided;
    bench_mpit_ok = (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
    return bench_mpit_ok ? 0 : -1;
}

void bench_mpit_finalize(void)
{
    if (bench_mpit_ok) {
        MPI_T_finalize();
    }
}

/* Find the control variable coll_gpu_<coll>_algorithm; returns its index or -1. */
static int bench_cvar(const char *coll, MPI_T_enum *enumtype)
{
    char want[128], name[256], desc[1024];
    int  n = 0;

    if (!bench_mpit_ok) {
        return -1;
    }
    snprintf(want, sizeof(want), "coll_gpu_%s_algorithm", coll);
    MPI_T_cvar_get_num(&n);
    for (int i = 0; i < n; i++) {
        int          name_len = sizeof(name), desc_len = sizeof(desc), verbosity, binding, scope;
        MPI_Datatype dt;
        if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, enumtype, desc, &desc_len,
                                &binding, &scope) == MPI_SUCCESS &&
            strcmp(name, want) == 0) {
            return i;
        }
    }
    return -1;
}

const char *bench_algorithms(const char *coll)
{
    static char list[512];
    MPI_T_enum  e;
    int         idx = bench_cvar(coll, &e), n = 0, used = 0;
    char        ename[64];
    int         elen = sizeof(ename);

    if (idx < 0 || e == MPI_T_ENUM_NULL || MPI_T_enum_get_info(e, &n, ename, &elen) != MPI_SUCCESS) {
        return NULL;
    }
    list[0] = '\0';
    for (int i = 0; i < n; i++) {
        char item[64];
        int  value, ilen = sizeof(item);
        if (MPI_T_enum_get_item(e, i, &value, item, &ilen) == MPI_SUCCESS) {
            used += snprintf(list + used, sizeof(list) - (size_t)used, "%s%s", i ? "," : "", item);
        }
    }
    return list;
}

int bench_set_algorithm(const char *coll, const char *alg, int verbose)
{
    MPI_T_enum        e;
    MPI_T_cvar_handle h;
    int               idx = bench_cvar(coll, &e), n = 0, count = 0, value = -1;
    char              ename[64];
    int               elen = sizeof(ename);

    if (idx < 0 || e == MPI_T_ENUM_NULL || MPI_T_enum_get_info(e, &n, ename, &elen) != MPI_SUCCESS) {
        if (verbose) {
            fprintf(stderr, "coll_gpu_bench: coll/gpu is not loaded: cannot select algorithm %s\n", alg);
        }
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char item[64];
        int  v, ilen = sizeof(item);
        if (MPI_T_enum_get_item(e, i, &v, item, &ilen) == MPI_SUCCESS && strcmp(item, alg) == 0) {
            value = v;
        }
    }
    if (value < 0) {
        if (verbose) {
            fprintf(stderr, "coll_gpu_bench: %s has no algorithm %s (it has: %s)\n", coll, alg,
                    bench_algorithms(coll));
        }
        return -1;
    }
    if (MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS) {
        return -1;
    }
    int rc = MPI_T_cvar_write(h, &value);
    MPI_T_cvar_handle_free(&h);
    if (rc != MPI_SUCCESS && verbose) {
        fprintf(stderr, "coll_gpu_bench: cannot write coll_gpu_%s_algorithm (error %d)\n", coll, rc);
    }
    return rc == MPI_SUCCESS ? 0 : -1;
}
