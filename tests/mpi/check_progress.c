/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_progress: a rank waiting in a collective on device buffers makes MPI progress, as
 * MPI's progress rule asks of every blocking call.
 *
 * Before each collective, the last rank sends rank 0 a synchronous message (MPI_Ssend,
 * which ends only once rank 0 has matched it) and a large one (--large bytes: past the
 * eager limit, so it also needs rank 0's help), and only then enters the collective; rank
 * 0 posts the receives, enters the collective and waits for the receives after it. The
 * program is correct MPI: rank 0's receives are posted before it blocks, so the sends must
 * complete while it is in the collective, which can only end once the last rank reaches
 * it. A component that waits for its peers without progressing MPI (a spin on a board, a
 * barrier or a GPU's flag) hangs here, and the watchdog ends the run with an error.
 *
 * The collectives: by turns an allreduce (SUM), a bcast (the root by turns), an allgather
 * and a reduce_scatter_block (SUM) of 64-bit integers on device memory, --rounds times each
 * count of --counts (after --warm small allreduces: the node's announcement board exists
 * after a few calls, and so do the in-band paths that ride on it), every element compared
 * with a reference computed on the host, the output poisoned first.
 *
 * --expect-fast 1: every rank ran each of the collectives with messages on a device
 * algorithm (MPI_T coll_gpu_calls_fast): the waits under test were the component's own.
 *
 * usage: coll_progress [--mem device|host] [--counts N,N,...] [--rounds N] [--warm N]
 *                      [--large BYTES] [--watchdog S] [--expect-fast 0|1]
 */
#include "examples/example_mem.h"
#include "tests/mpi/check_pvar.h"

#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRESS_TAG_SYNC  71
#define PROGRESS_TAG_LARGE 72
/* The last rank sends this late, so that its messages reach rank 0 while rank 0 waits in
 * the collective (not while it posts the receives, which may match them itself). */
#define PROGRESS_LATE_US   20000

static int progress_rank;

static void progress_watchdog(int sig)
{
    char line[160];
    int  n = snprintf(line, sizeof(line), "coll_progress: TIMEOUT on world rank %d (a rank "
                      "waited in a collective without making MPI progress?)\n", progress_rank);
    (void)sig;
    if (write(2, line, (size_t)n) < 0) {
        _exit(125);
    }
    _exit(124);
}

static uint64_t progress_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static int64_t progress_value(int rank, long call, int i)
{
    return (int64_t)(progress_mix(((uint64_t)rank << 40) ^ ((uint64_t)call << 8) ^
                                  ((uint64_t)i << 20)) % 2000003) - 1000001;
}

typedef struct {
    MPI_Comm  comm;
    em_kind_t kind;
    int       rank, size;
    size_t    large;     /* bytes of the large message */
    int64_t  *dev_in, *dev_out, *host_in, *host_out, *expect;
    char     *large_buf; /* host memory */
    long      calls, wrong;
} progress_t;

/* The reference of call number pr->calls, collective kind (0-3), count n per rank. */
static void progress_expect(progress_t *pr, int kind, int root, int n)
{
    const int size = pr->size, out_n = kind == 2 ? n * size : n;

    for (int i = 0; i < out_n; i++) {
        int64_t sum = 0;
        switch (kind) {
        case 0:
            for (int r = 0; r < size; r++) {
                sum += progress_value(r, pr->calls, i);
            }
            break;
        case 1: sum = progress_value(root, pr->calls, i); break;
        case 2: sum = progress_value(i / n, pr->calls, i % n); break;
        default:
            for (int r = 0; r < size; r++) {
                sum += progress_value(r, pr->calls, pr->rank * n + i);
            }
        }
        pr->expect[i] = sum;
    }
}

static void progress_collective(progress_t *pr, int kind, int root, int n)
{
    switch (kind) {
    case 0: MPI_Allreduce(pr->dev_in, pr->dev_out, n, MPI_INT64_T, MPI_SUM, pr->comm); break;
    case 1: MPI_Bcast(pr->dev_out, n, MPI_INT64_T, root, pr->comm); break;
    case 2: MPI_Allgather(pr->dev_in, n, MPI_INT64_T, pr->dev_out, n, MPI_INT64_T, pr->comm); break;
    default: MPI_Reduce_scatter_block(pr->dev_in, pr->dev_out, n, MPI_INT64_T, MPI_SUM, pr->comm);
    }
}

/* One checked collective with the point-to-point messages around it (with_messages). */
static void progress_call(progress_t *pr, int kind, int n, int with_messages)
{
    const int    size = pr->size, root = (int)((pr->calls / 4) % size);
    const int    in_n = kind == 3 ? n * size : n, out_n = kind == 2 ? n * size : n;
    const size_t elem = sizeof(int64_t);
    const int    last = size - 1;
    MPI_Request  recvs[2];
    int          token = (int)pr->calls, got = -1;

    for (int i = 0; i < in_n; i++) {
        pr->host_in[i] = progress_value(pr->rank, pr->calls, i);
    }
    progress_expect(pr, kind, root, n);
    memset(pr->host_out, 0x5a, (size_t)out_n * elem);
    if (kind == 1 && pr->rank == root) {
        memcpy(pr->host_out, pr->host_in, (size_t)n * elem);
    }
    em_to_dev(pr->dev_in, pr->host_in, (size_t)in_n * elem, pr->kind);
    em_to_dev(pr->dev_out, pr->host_out, (size_t)out_n * elem, pr->kind); /* poisoned */
    if (with_messages && pr->rank == 0) {
        MPI_Irecv(&got, 1, MPI_INT, last, PROGRESS_TAG_SYNC, MPI_COMM_WORLD, &recvs[0]);
        MPI_Irecv(pr->large_buf, (int)pr->large, MPI_CHAR, last, PROGRESS_TAG_LARGE,
                  MPI_COMM_WORLD, &recvs[1]);
    } else if (with_messages && pr->rank == last) {
        memset(pr->large_buf, (int)(pr->calls & 0x7f), pr->large);
        usleep(PROGRESS_LATE_US); /* rank 0 in the collective by now: only its wait can match */
        MPI_Ssend(&token, 1, MPI_INT, 0, PROGRESS_TAG_SYNC, MPI_COMM_WORLD);
        MPI_Send(pr->large_buf, (int)pr->large, MPI_CHAR, 0, PROGRESS_TAG_LARGE, MPI_COMM_WORLD);
    }
    progress_collective(pr, kind, root, n);
    if (with_messages && pr->rank == 0) {
        MPI_Waitall(2, recvs, MPI_STATUSES_IGNORE);
        if (got != token || pr->large_buf[pr->large - 1] != (char)(pr->calls & 0x7f)) {
            pr->wrong++;
            fprintf(stderr, "coll_progress: rank 0 call %ld: the messages carried %d, "
                    "expected %d\n", pr->calls, got, token);
        }
    }
    em_to_host(pr->host_out, pr->dev_out, (size_t)out_n * elem, pr->kind);
    for (int i = 0; i < out_n; i++) {
        if (pr->host_out[i] != pr->expect[i] && pr->wrong++ < 5) {
            fprintf(stderr, "coll_progress: rank %d call %ld (collective %d, count %d) element "
                    "%d: %lld, expected %lld\n", pr->rank, pr->calls, kind, n, i,
                    (long long)pr->host_out[i], (long long)pr->expect[i]);
        }
    }
    pr->calls++;
}

int main(int argc, char **argv)
{
    const char *mem = "device", *counts = "1,1000,100003";
    int         rounds = 2, warm = 10, watchdog = 120, max_count = 0, fails = 0, total = 0;
    int         expect_fast = 0;
    progress_t  pr;
    check_pvar_watch_t fast;
    unsigned long long fast_calls;
    char       *list, *item, *save = NULL;

    memset(&pr, 0, sizeof(pr));
    pr.large = 4 << 20;
    MPI_Init(&argc, &argv);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--mem") == 0) mem = argv[i + 1];
        else if (strcmp(argv[i], "--counts") == 0) counts = argv[i + 1];
        else if (strcmp(argv[i], "--rounds") == 0) rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--warm") == 0) warm = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--large") == 0) pr.large = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "--watchdog") == 0) watchdog = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--expect-fast") == 0) expect_fast = atoi(argv[i + 1]);
    }
    pr.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(pr.comm, &pr.rank);
    MPI_Comm_size(pr.comm, &pr.size);
    progress_rank = pr.rank;
    if (pr.size < 2 || pr.large < 1) {
        if (pr.rank == 0) {
            fprintf(stderr, "coll_progress: needs 2 ranks or more and --large >= 1\n");
        }
        MPI_Finalize();
        return 2;
    }
    if (watchdog > 0) {
        signal(SIGALRM, progress_watchdog);
        alarm((unsigned)watchdog);
    }
    list = strdup(counts);
    for (item = strtok_r(list, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
        max_count = atoi(item) > max_count ? atoi(item) : max_count;
    }
    pr.kind = em_init(mem, em_local_rank(pr.rank));
    {
        const size_t bytes = (size_t)(max_count > 1 ? max_count : 1) * (size_t)pr.size * sizeof(int64_t);
        pr.dev_in    = em_alloc(bytes, pr.kind);
        pr.dev_out   = em_alloc(bytes, pr.kind);
        pr.host_in   = malloc(bytes);
        pr.host_out  = malloc(bytes);
        pr.expect    = malloc(bytes);
        pr.large_buf = malloc(pr.large);
    }
    for (int w = 0; w < warm; w++) { /* no messages: the board and the contexts get made */
        progress_call(&pr, 0, 1, 0);
    }
    if (!check_pvar_watch(&fast, "coll_gpu_calls_fast") && expect_fast) {
        fprintf(stderr, "coll_progress: FAIL: rank %d has no coll_gpu_calls_fast\n", pr.rank);
        pr.wrong++;
    }
    strcpy(list, counts);
    for (item = strtok_r(list, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
        for (int r = 0; r < rounds; r++) {
            for (int kind = 0; kind < 4; kind++) {
                progress_call(&pr, kind, atoi(item), 1);
                total++;
            }
        }
    }
    free(list);
    fast_calls = check_pvar_watched(&fast);
    if (expect_fast && fast_calls < (unsigned long long)total) {
        fprintf(stderr, "coll_progress: FAIL: rank %d ran %llu of %d collectives on a device "
                "algorithm\n", pr.rank, fast_calls, total);
        pr.wrong++;
    }
    fails = pr.wrong > 0;
    MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (pr.rank == 0) {
        printf("coll_progress: %d collectives with messages around them at %d ranks (%s): %s\n",
               total, pr.size, em_describe(), fails ? "FAIL" : "ok");
    }
    em_free(pr.dev_in, pr.kind);
    em_free(pr.dev_out, pr.kind);
    free(pr.host_in);
    free(pr.host_out);
    free(pr.expect);
    free(pr.large_buf);
    MPI_Finalize();
    return fails ? 1 : 0;
}
