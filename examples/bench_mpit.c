/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* coll/gpu through the MPI tool interface: the algorithm under test is set through the
 * control variable coll_gpu_<coll>_algorithm, the algorithm that ran is read from the
 * performance variable coll_gpu_<coll>_last_algorithm, the cost counters from the
 * performance variables coll_gpu_<name> of class counter. */
#include "bench.h"

#include <stdio.h>
#include <string.h>

static int                bench_mpit_ok;
static MPI_T_pvar_session bench_session = MPI_T_PVAR_SESSION_NULL;

int bench_mpit_init(void)
{
    int provided;
    bench_mpit_ok = (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
    return bench_mpit_ok ? 0 : -1;
}

void bench_mpit_finalize(void)
{
    if (bench_session != MPI_T_PVAR_SESSION_NULL) {
        MPI_T_pvar_session_free(&bench_session);
    }
    if (bench_mpit_ok) {
        MPI_T_finalize();
    }
}

/* The one performance-variable session of the benchmark, made at the first use; 0 or -1. */
static int bench_session_open(void)
{
    if (bench_session == MPI_T_PVAR_SESSION_NULL &&
        MPI_T_pvar_session_create(&bench_session) != MPI_SUCCESS) {
        return -1;
    }
    return 0;
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

/* The enumeration item of value, or NULL. */
static const char *bench_enum_name(MPI_T_enum e, int value)
{
    static char item[64];
    char        ename[64];
    int         n = 0, elen = sizeof(ename);

    if (e == MPI_T_ENUM_NULL || MPI_T_enum_get_info(e, &n, ename, &elen) != MPI_SUCCESS) {
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        int v, ilen = sizeof(item);
        if (MPI_T_enum_get_item(e, i, &v, item, &ilen) == MPI_SUCCESS && v == value) {
            return item;
        }
    }
    return NULL;
}

const char *bench_last_algorithm(const char *coll)
{
    static struct {
        char              coll[32];
        MPI_T_pvar_handle handle;
        MPI_T_enum        e;
    } cache[8];
    static int cached;
    char       want[128], name[256], desc[1024];
    int        value = -1, num = 0, slot = -1;

    if (!bench_mpit_ok) {
        return NULL;
    }
    for (int i = 0; i < cached; i++) {
        if (strcmp(cache[i].coll, coll) == 0) {
            slot = i;
        }
    }
    if (slot < 0) {
        if (cached == 8 || bench_session_open() != 0) {
            return NULL;
        }
        snprintf(want, sizeof(want), "coll_gpu_%s_last_algorithm", coll);
        MPI_T_pvar_get_num(&num);
        for (int i = 0; i < num && slot < 0; i++) {
            int          nlen = sizeof(name), dlen = sizeof(desc), verbosity, var_class, bind;
            int          readonly, continuous, atomic, count;
            MPI_Datatype dt;
            MPI_T_enum   e;
            if (MPI_T_pvar_get_info(i, name, &nlen, &verbosity, &var_class, &dt, &e, desc, &dlen,
                                    &bind, &readonly, &continuous, &atomic) == MPI_SUCCESS &&
                strcmp(name, want) == 0 &&
                MPI_T_pvar_handle_alloc(bench_session, i, NULL, &cache[cached].handle, &count) ==
                    MPI_SUCCESS) {
                snprintf(cache[cached].coll, sizeof(cache[cached].coll), "%s", coll);
                cache[cached].e = e;
                slot            = cached++;
            }
        }
        if (slot < 0) {
            return NULL;
        }
    }
    if (MPI_T_pvar_read(bench_session, cache[slot].handle, &value) != MPI_SUCCESS) {
        return NULL;
    }
    return bench_enum_name(cache[slot].e, value);
}

int bench_counters_open(bench_counters_t *counters)
{
    static const char prefix[] = "coll_gpu_";
    char              name[256], desc[1024];
    int               num = 0;

    counters->count = 0;
    if (!bench_mpit_ok || bench_session_open() != 0) {
        return 0;
    }
    MPI_T_pvar_get_num(&num);
    for (int i = 0; i < num && counters->count < BENCH_COUNTERS_MAX; i++) {
        int               nlen = sizeof(name), dlen = sizeof(desc), verbosity, var_class, bind;
        int               readonly, continuous, atomic, elements;
        const int         slot = counters->count;
        MPI_Datatype      dt;
        MPI_T_enum        e;
        MPI_T_pvar_handle handle;

        if (MPI_T_pvar_get_info(i, name, &nlen, &verbosity, &var_class, &dt, &e, desc, &dlen,
                                &bind, &readonly, &continuous, &atomic) != MPI_SUCCESS ||
            var_class != MPI_T_PVAR_CLASS_COUNTER || strncmp(name, prefix, sizeof(prefix) - 1) != 0 ||
            (dt != MPI_UNSIGNED_LONG_LONG && dt != MPI_UNSIGNED_LONG && dt != MPI_UNSIGNED) ||
            MPI_T_pvar_handle_alloc(bench_session, i, NULL, &handle, &elements) != MPI_SUCCESS) {
            continue;
        }
        if (elements != 1) { /* one value per counter only */
            MPI_T_pvar_handle_free(bench_session, &handle);
            continue;
        }
        if (!continuous) {
            MPI_T_pvar_start(bench_session, handle);
        }
        snprintf(counters->names[slot], sizeof(counters->names[slot]), "%.*s",
                 (int)sizeof(counters->names[slot]) - 1, name + sizeof(prefix) - 1);
        counters->handles[slot] = handle;
        counters->types[slot]   = dt;
        counters->count++;
    }
    return counters->count;
}

void bench_counters_read(bench_counters_t *counters, unsigned long long *values)
{
    for (int i = 0; i < counters->count; i++) {
        union {
            unsigned long long ull;
            unsigned long      ul;
            unsigned           u;
        } value = {0};

        if (MPI_T_pvar_read(bench_session, counters->handles[i], &value) != MPI_SUCCESS) {
            values[i] = 0;
        } else if (counters->types[i] == MPI_UNSIGNED_LONG_LONG) {
            values[i] = value.ull;
        } else if (counters->types[i] == MPI_UNSIGNED_LONG) {
            values[i] = value.ul;
        } else {
            values[i] = value.u;
        }
    }
}
