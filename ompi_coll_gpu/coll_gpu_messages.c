/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll/gpu: what the component tells users. A problem that every process of the job sees
 * alike (a parameter, a file) is reported once per job, by MPI_COMM_WORLD's rank 0; one that
 * belongs to a node, once per node; one that belongs to a communicator, by that
 * communicator's rank 0. Names of coll_gpu_* parameters set in the environment or on the
 * mpirun command line are checked, so that a typo is not silently ignored.
 */
#include "ompi_coll_gpu/coll_gpu.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/show_help.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CG_PACKAGE_VERSION
#define CG_PACKAGE_VERSION "unknown"
#endif
#ifndef CG_BUILD_CONFIG
#define CG_BUILD_CONFIG "unknown"
#endif

extern char **environ;

#define MCA_COLL_GPU_ENV_PREFIX OPAL_MCA_PREFIX "coll_gpu_"

/* Rank 0 of the job, or a process outside a job (ompi_info, a singleton). */
static int mca_coll_gpu_job_leader(void)
{
    int rank = mca_coll_gpu_job_rank();
    return rank <= 0;
}

void mca_coll_gpu_show_help_once(const char *topic, ...)
{
    va_list ap;

    if (!mca_coll_gpu_job_leader()) {
        return;
    }
    va_start(ap, topic);
    opal_show_vhelp("help-coll-gpu.txt", topic, true, ap);
    va_end(ap);
}

void mca_coll_gpu_show_help_comm(struct ompi_communicator_t *comm, const char *topic, ...)
{
    va_list ap;

    if (ompi_comm_rank(comm) != 0) {
        return;
    }
    va_start(ap, topic);
    opal_show_vhelp("help-coll-gpu.txt", topic, true, ap);
    va_end(ap);
}

/* coll_gpu_device=cuda and CUDA cannot be used here: the user required it, so the job
 * stops, with one message per node that lacks it (its first local rank's). */
void mca_coll_gpu_cuda_required(const char *reason)
{
    const char *local_rank = getenv("OMPI_COMM_WORLD_LOCAL_RANK"); /* set by mpirun */
    char        host[256] = "?";

    gethostname(host, sizeof(host) - 1);
    if (local_rank == NULL || atoi(local_rank) == 0) {
        /* straight to stderr: a help message sent to mpirun can be lost when the process
         * aborts right after (Open MPI 4.1: "Data unpack had inadequate space") */
        char *text = opal_show_help_string("help-coll-gpu.txt", "cuda unavailable", true, host,
                                           reason);
        if (text != NULL) {
            fputs(text, stderr);
            fflush(stderr);
            free(text);
        }
    } else {
        /* the others abort a little later, so that mpirun does not end the first local rank
         * before its message is out (a late one would leave the user with no reason) */
        sleep(2);
    }
    if (mca_coll_gpu_job_rank() >= 0) {
        ompi_rte_abort(1, NULL);
    }
}

/* One line on rank 0 at coll_gpu_verbose 1 (every rank at 3): what runs, which build. */
void mca_coll_gpu_banner(const char *layer)
{
    int level = mca_coll_gpu_job_leader() ? CG_LOG_WARN : CG_LOG_DETAIL;

    cg_log(level, CG_SUB_INIT, "coll/gpu %s (built against Open MPI %d.%d.%d): %s; build: %s",
           CG_PACKAGE_VERSION, OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION,
           layer, CG_BUILD_CONFIG);
}

/* Levenshtein distance, for "did you mean". */
static size_t mca_coll_gpu_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[128];

    if (lb >= CG_ARRAY_SIZE(row)) {
        return (size_t)-1;
    }
    for (size_t j = 0; j <= lb; j++) {
        row[j] = j;
    }
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] == b[j - 1] ? 0 : 1);
            best = CG_MIN(best, up + 1);
            best = CG_MIN(best, row[j - 1] + 1);
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* name's words (split at '_') sorted, so that a name with its words in another order
 * compares equal. */
static void mca_coll_gpu_word_key(const char *name, char *key, size_t key_size)
{
    char  copy[256], *words[32], *save = NULL;
    int   n = 0;
    size_t used = 0;

    snprintf(copy, sizeof(copy), "%s", name);
    for (char *w = strtok_r(copy, "_", &save); w != NULL && n < 32; w = strtok_r(NULL, "_", &save)) {
        int i = n++;
        for (; i > 0 && strcmp(words[i - 1], w) > 0; i--) {
            words[i] = words[i - 1];
        }
        words[i] = w;
    }
    key[0] = '\0';
    for (int i = 0; i < n && used < key_size; i++) {
        used += (size_t)snprintf(key + used, key_size - used, "%s_", words[i]);
    }
}

/* The registered coll_gpu_* parameter closest to name, or "" when none is close. */
static void mca_coll_gpu_closest(const char *name, char *out, size_t out_size)
{
    size_t best = (size_t)-1;
    int    count = mca_base_var_get_count();
    char   key[256], other[256];

    mca_coll_gpu_word_key(name, key, sizeof(key));

    out[0] = '\0';
    for (int i = 0; i < count; i++) {
        const mca_base_var_t *var = NULL;
        size_t                d;
        if (mca_base_var_get(i, &var) != OPAL_SUCCESS || var == NULL ||
            var->mbv_full_name == NULL || strncmp(var->mbv_full_name, "coll_gpu_", 9) != 0) {
            continue;
        }
        mca_coll_gpu_word_key(var->mbv_full_name, other, sizeof(other));
        d = strcmp(key, other) == 0 ? 0 : mca_coll_gpu_distance(name, var->mbv_full_name);
        if (d < best) {
            best = d;
            snprintf(out, out_size, "%s", var->mbv_full_name);
        }
    }
    if (best > 4) { /* nothing close */
        out[0] = '\0';
    }
}

/*
 * Every OMPI_MCA_coll_gpu_* variable of the environment (mpirun passes --mca options to the
 * processes that way too) must name a registered parameter. Unknown ones are reported once
 * per job, with the closest known name.
 */
void mca_coll_gpu_check_param_names(void)
{
    const size_t plen = strlen(MCA_COLL_GPU_ENV_PREFIX);

    mca_coll_gpu_add_help_dirs();
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        char        name[256], hint[300] = "", closest[256];
        const char *eq;
        int         vari;

        if (strncmp(*e, MCA_COLL_GPU_ENV_PREFIX, plen) != 0 || (eq = strchr(*e, '=')) == NULL) {
            continue;
        }
        /* the full name: coll_gpu_<param> */
        snprintf(name, sizeof(name), "%.*s", (int)(eq - *e - strlen(OPAL_MCA_PREFIX)),
                 *e + strlen(OPAL_MCA_PREFIX));
        if (mca_base_var_find_by_name(name, &vari) == OPAL_SUCCESS) {
            continue;
        }
        mca_coll_gpu_closest(name, closest, sizeof(closest));
        if (closest[0] != '\0') {
            snprintf(hint, sizeof(hint), " (did you mean %s?)", closest);
        }
        mca_coll_gpu_show_help_once("unknown parameter", name, hint);
    }
}
