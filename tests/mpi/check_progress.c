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
#include "tests/mpi/check_pvar.h"
#include "tests/mpi/check_turns.h"

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

typedef struct {
    check_turns_t turns;     /* the collectives' buffers, on MPI_COMM_WORLD */
    size_t        large;     /* bytes of the large message */
    char         *large_buf; /* host memory */
    long          wrong;     /* failures other than wrong elements */
} progress_t;

/* One checked collective with the point-to-point messages around it (with_messages). */
static void progress_call(progress_t *pr, check_turn_kind_t kind, int n, int with_messages)
{
    check_turns_t *turns = &pr->turns;
    const int      rank = turns->rank, last = turns->size - 1;
    const int      root = (int)((turns->calls / 4) % turns->size);
    MPI_Request    recvs[2];
    int            token = (int)turns->calls, got = -1;
    const char     stamp = (char)(turns->calls & 0x7f);

    check_turns_prepare(turns, kind, root, n, 0);
    if (with_messages && rank == 0) {
        MPI_Irecv(&got, 1, MPI_INT, last, PROGRESS_TAG_SYNC, MPI_COMM_WORLD, &recvs[0]);
        MPI_Irecv(pr->large_buf, (int)pr->large, MPI_CHAR, last, PROGRESS_TAG_LARGE,
                  MPI_COMM_WORLD, &recvs[1]);
    } else if (with_messages && rank == last) {
        memset(pr->large_buf, stamp, pr->large);
        usleep(PROGRESS_LATE_US); /* rank 0 in the collective by now: only its wait can match */
        MPI_Ssend(&token, 1, MPI_INT, 0, PROGRESS_TAG_SYNC, MPI_COMM_WORLD);
        MPI_Send(pr->large_buf, (int)pr->large, MPI_CHAR, 0, PROGRESS_TAG_LARGE, MPI_COMM_WORLD);
    }
    check_turns_run(turns, MPI_COMM_WORLD, kind, root, n);
    if (with_messages && rank == 0) {
        MPI_Waitall(2, recvs, MPI_STATUSES_IGNORE);
        if (got != token || pr->large_buf[pr->large - 1] != stamp) {
            pr->wrong++;
            fprintf(stderr, "coll_progress: rank 0 call %ld: the messages carried %d, "
                    "expected %d\n", turns->calls, got, token);
        }
    }
    check_turns_verify(turns, kind, n, 0);
}

int main(int argc, char **argv)
{
    const char *mem = "device", *counts = "1,1000,100003";
    int         rounds = 2, warm = 10, watchdog = 120, max_count = 0, fails = 0, total = 0;
    int         expect_fast = 0, rank, size;
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
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    progress_rank = rank;
    if (size < 2 || pr.large < 1) {
        if (rank == 0) {
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
    check_turns_init(&pr.turns, "coll_progress", MPI_COMM_WORLD,
                     em_init(mem, em_local_rank(rank)), max_count);
    pr.large_buf = malloc(pr.large);
    if (pr.large_buf == NULL) {
        fprintf(stderr, "coll_progress: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int w = 0; w < warm; w++) { /* no messages: the board and the contexts get made */
        progress_call(&pr, CHECK_TURN_ALLREDUCE, 1, 0);
    }
    if (!check_pvar_watch(&fast, "coll_gpu_calls_fast") && expect_fast) {
        fprintf(stderr, "coll_progress: FAIL: rank %d has no coll_gpu_calls_fast\n", rank);
        pr.wrong++;
    }
    strcpy(list, counts);
    for (item = strtok_r(list, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
        for (int r = 0; r < rounds; r++) {
            for (int kind = 0; kind < CHECK_TURN_KINDS; kind++) {
                progress_call(&pr, (check_turn_kind_t)kind, atoi(item), 1);
                total++;
            }
        }
    }
    free(list);
    fast_calls = check_pvar_watched(&fast);
    if (expect_fast && fast_calls < (unsigned long long)total) {
        fprintf(stderr, "coll_progress: FAIL: rank %d ran %llu of %d collectives on a device "
                "algorithm\n", rank, fast_calls, total);
        pr.wrong++;
    }
    fails = pr.wrong > 0 || pr.turns.wrong > 0;
    MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("coll_progress: %d collectives with messages around them at %d ranks (%s): %s\n",
               total, size, em_describe(), fails ? "FAIL" : "ok");
    }
    check_turns_free(&pr.turns);
    free(pr.large_buf);
    MPI_Finalize();
    return fails ? 1 : 0;
}
