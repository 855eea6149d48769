/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_soak: communicators created, used and freed many times (issue #15): nothing may
 * grow, nothing may stall.
 *
 * Every cycle duplicates MPI_COMM_WORLD, runs an allreduce on it (the first call on a
 * communicator sets up its fast-path context: scratch, control pages, across virtual nodes
 * the inter-node transport over UCX), checks the result and frees the communicator. After
 * --warmup cycles and at the end, every rank samples what it holds: file descriptors
 * (/proc/self/fd), threads (/proc/self/task), resident memory (VmRSS), its shared-memory
 * segments (/dev/shm names carrying its pid) and the component's UCX endpoints (the
 * MPI_T performance variable coll_gpu_ucx_endpoints). The run fails when any of them grew
 * by more than a small constant (2 descriptors, 1 thread, 2 segments, no endpoint,
 * --rss-kib of memory), or when a result is wrong. Rank 0 prints cycles per second
 * and the time MPI_Comm_free took (mean and worst over every rank), and the same for the
 * phases of a cycle (dup, first call, a second call), so that the same program measures a
 * create/free loop with the component on and with it off (--mca coll ^gpu, --mem host).
 *
 * usage: coll_soak [--mem device|pool|host] [--cycles N] [--warmup N] [--count N]
 *                  [--rss-kib K] [--watchdog S] [--contexts kept|made|any] [--seconds S]
 *
 * --seconds S: stop after the first hundred cycles that end past S seconds (every rank at
 * the same cycle; the checks then cover the cycles done): a bound for loaded machines,
 * never a failure.
 *
 * --contexts kept: every measured cycle must reuse the context of the communicator freed
 * before it (MPI_T coll_gpu_contexts_kept +1, coll_gpu_contexts_made +0); made: every
 * cycle makes a new one (coll_gpu_context_keep=0); any (default): not checked.
 */
#include "examples/example_mem.h"

#include <dirent.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SOAK_FDS, SOAK_THREADS, SOAK_SHM, SOAK_ENDPOINTS, SOAK_RSS_KIB, SOAK_MADE, SOAK_KEPT, SOAK_NSAMPLES };
static const char *const soak_names[SOAK_NSAMPLES] = {"file descriptors", "threads",
                                                     "/dev/shm segments", "UCX endpoints",
                                                     "resident KiB", "contexts made",
                                                     "contexts reused"};

static int soak_rank;

static void soak_watchdog(int sig)
{
    char line[128];
    int  n = snprintf(line, sizeof(line), "coll_soak: TIMEOUT on world rank %d\n", soak_rank);
    (void)sig;
    if (write(2, line, (size_t)n) < 0) {
        _exit(125);
    }
    _exit(124);
}

/* Entries of a directory (without . and ..) whose name contains pattern (NULL: all). */
static long soak_count_dir(const char *path, const char *pattern)
{
    DIR           *dir = opendir(path);
    struct dirent *entry;
    long           n = 0;

    if (dir == NULL) {
        return -1;
    }
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] != '.' && (pattern == NULL || strstr(entry->d_name, pattern) != NULL)) {
            n++;
        }
    }
    closedir(dir);
    return n - (pattern == NULL && strcmp(path, "/proc/self/fd") == 0); /* opendir's own */
}

static long soak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char  line[256];
    long  kib = -1;

    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) {
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return kib;
}

/* A performance variable of the component (MPI_T), -1 when it has none. One session and
 * one handle per variable for the whole run: a counter reads as its growth since its
 * handle was made (the first sample), a level as what it is. */
#define SOAK_MAX_PVARS 4
static long soak_pvar(const char *pvar_name)
{
    static MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
    static struct {
        const char       *name;
        MPI_T_pvar_handle handle;
        int               found;
    } pvars[SOAK_MAX_PVARS];
    static int    num_pvars;
    unsigned long value = 0;
    int           slot  = 0;

    while (slot < num_pvars && strcmp(pvars[slot].name, pvar_name) != 0) {
        slot++;
    }
    if (slot == num_pvars) { /* first sample: look it up */
        char name[256], desc[256];
        int  n = 0;
        if (num_pvars == SOAK_MAX_PVARS ||
            (session == MPI_T_PVAR_SESSION_NULL && MPI_T_pvar_session_create(&session) != MPI_SUCCESS)) {
            return -1;
        }
        pvars[num_pvars].name  = pvar_name;
        pvars[num_pvars].found = 0;
        num_pvars++;
        MPI_T_pvar_get_num(&n);
        for (int i = 0; i < n; i++) {
            int          name_len = sizeof(name), desc_len = sizeof(desc), verbosity, var_class;
            int          binding, readonly, continuous, atomic, count;
            MPI_Datatype dt;
            MPI_T_enum   e;
            if (MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &dt, &e, desc,
                                    &desc_len, &binding, &readonly, &continuous,
                                    &atomic) == MPI_SUCCESS &&
                strcmp(name, pvar_name) == 0) {
                pvars[slot].found = MPI_T_pvar_handle_alloc(session, i, NULL, &pvars[slot].handle,
                                                            &count) == MPI_SUCCESS;
                break;
            }
        }
    }
    if (!pvars[slot].found || MPI_T_pvar_read(session, pvars[slot].handle, &value) != MPI_SUCCESS) {
        return -1;
    }
    return (long)value;
}

static void soak_sample(long *s)
{
    char pid[32];

    snprintf(pid, sizeof(pid), "-%d-", (int)getpid()); /* cg-gpu-UID-NS-PID-N, cg-sim-UID-PID-N */
    s[SOAK_FDS]       = soak_count_dir("/proc/self/fd", NULL);
    s[SOAK_THREADS]   = soak_count_dir("/proc/self/task", NULL);
    s[SOAK_SHM]       = soak_count_dir("/dev/shm", pid);
    s[SOAK_ENDPOINTS] = soak_pvar("coll_gpu_ucx_endpoints");
    s[SOAK_MADE]      = soak_pvar("coll_gpu_contexts_made");
    s[SOAK_KEPT]      = soak_pvar("coll_gpu_contexts_kept");
    s[SOAK_RSS_KIB]   = soak_rss_kib();
}

/* The same processes in the reverse order, after the loop freed communicators over them:
 * a kept context does not fit (its ranks would be others), an allgather shows the order.
 * Returns the wrong elements. */
static long soak_reversed(em_kind_t kind, int size)
{
    MPI_Comm reversed;
    int32_t *got  = malloc((size_t)size * sizeof(int32_t));
    void    *buf  = em_alloc((size_t)size * sizeof(int32_t), kind);
    int32_t  mine = 1000 + soak_rank;
    long     wrong = 0;

    MPI_Comm_split(MPI_COMM_WORLD, 0, size - soak_rank, &reversed);
    em_to_dev((char *)buf + (size_t)(size - 1 - soak_rank) * sizeof(int32_t), &mine, sizeof(mine), kind);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, 1, MPI_INT32_T, reversed);
    em_to_host(got, buf, (size_t)size * sizeof(int32_t), kind);
    for (int i = 0; i < size; i++) {
        wrong += got[i] != 1000 + (size - 1 - i); /* rank i of reversed is world rank size-1-i */
    }
    MPI_Comm_free(&reversed);
    em_free(buf, kind);
    free(got);
    if (wrong) {
        fprintf(stderr, "coll_soak: FAIL rank %d: allgather on the reversed communicator: %ld wrong\n",
                soak_rank, wrong);
    }
    return wrong;
}

/* Mean and worst of a per-rank mean and worst, over the ranks, on rank 0. */
static void soak_report(const char *what, double sum, double worst, long n)
{
    double local[2] = {n ? sum / (double)n : 0, worst}, total[2], top[2];
    int    size;

    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Reduce(local, total, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(local, top, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (soak_rank == 0) {
        printf("coll_soak: %-12s mean %9.1f us, worst %9.1f us\n", what, total[0] / size * 1e6,
               top[1] * 1e6);
    }
}

int main(int argc, char **argv)
{
    const char *mem = "device", *contexts = "any";
    long        cycles = 1000, warmup = 20, rss_kib = 8192, wrong = 0, failures = 0, all_failures = 0;
    double      max_seconds = 0;
    size_t      count = 1000;
    int         size, watchdog = 0, provided;
    long        at_warmup[SOAK_NSAMPLES], at_end[SOAK_NSAMPLES];
    double      t_dup = 0, t_first = 0, t_second = 0, t_free = 0, w_dup = 0, w_first = 0,
                w_second = 0, w_free = 0, t0 = 0, elapsed;
    int32_t    *host, *got;
    void       *buf;
    em_kind_t   kind;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--mem") == 0) mem = argv[i + 1];
        else if (strcmp(argv[i], "--cycles") == 0) cycles = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--seconds") == 0) max_seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--warmup") == 0) warmup = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--count") == 0) count = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "--rss-kib") == 0) rss_kib = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--watchdog") == 0) watchdog = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--contexts") == 0) contexts = argv[i + 1];
    }
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &soak_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (watchdog > 0) {
        signal(SIGALRM, soak_watchdog);
        alarm((unsigned)watchdog);
    }
    kind = em_init(mem, em_local_rank(soak_rank));
    host = malloc(count * sizeof(int32_t) + 4);
    got  = malloc(count * sizeof(int32_t) + 4);
    buf  = em_alloc(count * sizeof(int32_t) + 4, kind);
    warmup = warmup < cycles ? warmup : cycles;

    for (long cycle = 0; cycle < cycles + warmup; cycle++) {
        MPI_Comm comm;
        double   a, b, c, d, e;
        if (cycle == warmup) { /* what the process holds once everything is set up */
            MPI_Barrier(MPI_COMM_WORLD);
            soak_sample(at_warmup);
            t0 = MPI_Wtime();
        }
        for (size_t i = 0; i < count; i++) {
            host[i] = (int32_t)((i + (size_t)cycle) % 1000) + soak_rank;
        }
        em_to_dev(buf, host, count * sizeof(int32_t), kind);
        a = MPI_Wtime();
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        b = MPI_Wtime();
        MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_INT32_T, MPI_SUM, comm); /* sets up */
        c = MPI_Wtime();
        MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_INT32_T, MPI_MAX, comm);
        d = MPI_Wtime();
        MPI_Comm_free(&comm);
        e = MPI_Wtime();
        em_to_host(got, buf, count * sizeof(int32_t), kind);
        for (size_t i = 0; i < count; i++) {
            int32_t base = (int32_t)((i + (size_t)cycle) % 1000);
            wrong += got[i] != base * size + size * (size - 1) / 2;
        }
        if (cycle >= warmup) {
            t_dup += b - a, t_first += c - b, t_second += d - c, t_free += e - d;
            w_dup = b - a > w_dup ? b - a : w_dup, w_first = c - b > w_first ? c - b : w_first;
            w_second = d - c > w_second ? d - c : w_second, w_free = e - d > w_free ? e - d : w_free;
        }
        if (max_seconds > 0 && cycle >= warmup && (cycle - warmup) % 100 == 99) {
            /* a bound, not a verdict: every rank stops after the same cycle */
            double mine = MPI_Wtime() - t0, slowest;
            MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (slowest > max_seconds && cycle + 1 < cycles + warmup) {
                if (soak_rank == 0) {
                    printf("coll_soak: %.0f s reached after %ld of %ld cycles: stopped there\n",
                           slowest, cycle + 1 - warmup, cycles);
                }
                cycles = cycle + 1 - warmup;
                break;
            }
        }
    }
    elapsed = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    soak_sample(at_end);
    wrong += soak_reversed(kind, size);

    if (wrong) {
        fprintf(stderr, "coll_soak: FAIL rank %d: %ld wrong elements\n", soak_rank, wrong);
        failures++;
    }
    for (int s = 0; s < SOAK_NSAMPLES; s++) {
        /* a small constant: the group of the last communicator freed may still wait for its
         * peers (its scratch segment named, coll/intra), a UCX socket may come and go; a leak
         * grows with the cycles. Endpoints: none, ever (one per peer worker, shared). */
        static const long limits[SOAK_NSAMPLES] = {2, 1, 2, 0, 0};
        long limit = s == SOAK_RSS_KIB ? rss_kib : limits[s];
        if (s == SOAK_MADE || s == SOAK_KEPT) {
            continue; /* counters: checked below against --contexts */
        }
        if (at_warmup[s] >= 0 && at_end[s] - at_warmup[s] > limit) {
            fprintf(stderr, "coll_soak: FAIL rank %d: %s grew from %ld to %ld over %ld cycles\n",
                    soak_rank, soak_names[s], at_warmup[s], at_end[s], cycles);
            failures++;
        }
    }
    if (strcmp(contexts, "any") != 0) {
        /* kept: every cycle's communicator reuses the context of the one freed before it
         * (coll_gpu_context_keep); made: every cycle makes a new one (keep 0) */
        const int  kept   = strcmp(contexts, "kept") == 0;
        const long made   = at_end[SOAK_MADE] - at_warmup[SOAK_MADE];
        const long reused = at_end[SOAK_KEPT] - at_warmup[SOAK_KEPT];
        if (made != (kept ? 0 : cycles) || reused != (kept ? cycles : 0)) {
            fprintf(stderr, "coll_soak: FAIL rank %d: %ld contexts made and %ld reused in %ld cycles "
                    "(expected %s)\n", soak_rank, made, reused, cycles,
                    kept ? "none made, one reused per cycle" : "one made per cycle, none reused");
            failures++;
        }
    }
    if (soak_rank == 0) {
        printf("coll_soak: %d ranks, %ld cycles (after %ld to warm up), %.1f cycles/s\n", size,
               cycles, warmup, (double)cycles / elapsed);
        for (int s = 0; s < SOAK_NSAMPLES; s++) {
            printf("coll_soak: rank 0 %-18s %8ld after warm-up, %8ld at the end\n", soak_names[s],
                   at_warmup[s], at_end[s]);
        }
    }
    soak_report("dup", t_dup, w_dup, cycles);
    soak_report("first call", t_first, w_first, cycles);
    soak_report("second call", t_second, w_second, cycles);
    soak_report("free", t_free, w_free, cycles);
    MPI_Allreduce(&failures, &all_failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (soak_rank == 0) {
        printf("coll_soak: %s\n", all_failures ? "FAILED" : "PASSED");
    }
    em_free(buf, kind);
    free(host), free(got);
    alarm(0);
    MPI_T_finalize();
    MPI_Finalize();
    return all_failures ? 1 : 0;
}
