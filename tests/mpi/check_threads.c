/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_threads: two threads of every rank call collectives at once (MPI_THREAD_MULTIPLE),
 * and the component's frees never wait for the other thread's device work.
 *
 * On a GPU, cudaFree and cudaFreeHost wait for all of the device's work. When one thread
 * of a process is in a collective whose device work waits for peers (an LL kernel, a stream
 * waiting on a peer's flag) and another thread frees device memory, the free waits for
 * those peers, which may be blocked the same way: a deadlock no single-threaded test shows.
 * The host layer's simulated GPU makes such a free wait too, and counts it (MPI_T
 * coll_gpu_free_stalls); the component holds such frees back (coll_gpu_frees_held).
 *
 * Thread "caller": small collectives of 64-bit integers on device memory on its own
 * communicator, by turns allreduce, bcast (the root by turns), allgather and
 * reduce_scatter_block, each checked element by element against a reference computed on
 * the host from the ranks' seeds, the output poisoned first, until every rank's churner is
 * done (a host-buffer MIN on the same communicator after each call: the same count
 * everywhere). Thread "churner": --cycles times a duplicate of its communicator, one
 * checked collective on it (a new fast-path context under coll_gpu_context_keep=0: scratch
 * allocated, peers' scratch mapped), then MPI_Comm_free (the context's memory goes, now or
 * at a later setup or teardown once its peers freed theirs), while the caller's calls run.
 * After --cycles, it goes on (up to 4 times as many) until some rank held a free back, so
 * that a loaded machine still tests the overlap.
 *
 * Fails when a result is wrong, when a free stalled on any rank, or when no rank ever held
 * a free back (nothing was tested). --expect-held 0 drops the last check (the component
 * off, host memory).
 *
 * usage: coll_threads [--mem device|host] [--cycles N] [--count N] [--watchdog S]
 *                     [--expect-held 0|1] [--expect-ll-served 1]
 */
#include "tests/mpi/check_pvar.h"
#include "tests/mpi/check_turns.h"

#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    MPI_Comm      comm;
    int           count;
    check_turns_t turns; /* the thread's buffers and checks */
} threads_side_t;

static int          threads_rank;
static int          threads_cycles = 40;
static int          threads_churn_done; /* the churner's cycles are over (this rank) */
static MPI_T_pvar_session threads_session;
static MPI_T_pvar_handle  threads_held, threads_stalls;

static void threads_watchdog(int sig)
{
    char line[128];
    int  n = snprintf(line, sizeof(line), "coll_threads: TIMEOUT on world rank %d\n", threads_rank);
    (void)sig;
    if (write(2, line, (size_t)n) < 0) {
        _exit(125);
    }
    _exit(124);
}

static unsigned long long threads_read(MPI_T_pvar_handle handle)
{
    unsigned long long value = 0;

    if (handle != MPI_T_PVAR_HANDLE_NULL) {
        MPI_T_pvar_read(threads_session, handle, &value);
    }
    return value;
}

/* One checked collective, by turns an allreduce, a bcast (root by turns), an allgather and a
 * reduce_scatter_block of count elements per rank; salt tells the threads' inputs apart. */
static void threads_call(threads_side_t *side, MPI_Comm comm, int salt)
{
    check_turns_t          *turns = &side->turns;
    const check_turn_kind_t kind  = (check_turn_kind_t)(turns->calls % CHECK_TURN_KINDS);
    const int               root  = (int)((turns->calls / CHECK_TURN_KINDS) % turns->size);

    check_turns_prepare(turns, kind, root, side->count, salt);
    check_turns_run(turns, comm, kind, root, side->count);
    check_turns_verify(turns, kind, side->count, salt);
}

static void *threads_caller(void *arg)
{
    threads_side_t *side = arg;
    int             done = 0;

    while (!done) {
        int mine = __atomic_load_n(&threads_churn_done, __ATOMIC_ACQUIRE);
        threads_call(side, side->comm, 1);
        MPI_Allreduce(&mine, &done, 1, MPI_INT, MPI_MIN, side->comm); /* host buffers */
    }
    return NULL;
}

static void *threads_churner(void *arg)
{
    threads_side_t *side = arg;
    int             held = 0;

    for (int cycle = 0; cycle < 4 * threads_cycles && (cycle < threads_cycles || !held); cycle++) {
        MPI_Comm comm;
        int      mine;
        MPI_Comm_dup(side->comm, &comm);
        threads_call(side, comm, 2);
        MPI_Comm_free(&comm);
        mine = threads_read(threads_held) > 0;
        MPI_Allreduce(&mine, &held, 1, MPI_INT, MPI_MAX, side->comm);
    }
    __atomic_store_n(&threads_churn_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void threads_side_init(threads_side_t *side, MPI_Comm comm, em_kind_t kind, int count)
{
    side->comm  = comm;
    side->count = count;
    check_turns_init(&side->turns, "coll_threads", comm, kind, count);
}

int main(int argc, char **argv)
{
    const char        *mem = "device";
    int                count = 7, watchdog = 600, expect_held = 1, provided, size, failed = 0;
    int                any_held = 0;
    unsigned long long stalls, held;
    long               wrong, totals[2];
    MPI_Comm           caller_comm, churner_comm;
    threads_side_t     caller, churner;
    pthread_t          caller_thread, churner_thread;
    em_kind_t          kind;
    int                expect_served = 0; /* --expect-ll-served 1: LL calls rung on a server */

    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mem")) {
            mem = argv[i + 1];
        } else if (!strcmp(argv[i], "--cycles")) {
            threads_cycles = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--count")) {
            count = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--watchdog")) {
            watchdog = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--expect-held")) {
            expect_held = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--expect-ll-served")) {
            expect_served = atoi(argv[i + 1]);
        }
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (expect_served) {
        check_pvar_served_start();
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &threads_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (threads_rank == 0) {
            fprintf(stderr, "coll_threads: FAIL: MPI_THREAD_MULTIPLE not provided (%d)\n",
                    provided);
        }
        MPI_Finalize();
        return 1;
    }
    signal(SIGALRM, threads_watchdog);
    alarm((unsigned)watchdog);
    MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
    MPI_T_pvar_session_create(&threads_session);
    threads_held   = check_pvar_handle(threads_session, "coll_gpu_frees_held");
    threads_stalls = check_pvar_handle(threads_session, "coll_gpu_free_stalls");
    if (expect_held &&
        (threads_held == MPI_T_PVAR_HANDLE_NULL || threads_stalls == MPI_T_PVAR_HANDLE_NULL)) {
        fprintf(stderr, "coll_threads: FAIL: no MPI_T coll_gpu_frees_held or coll_gpu_free_stalls "
                "(component not loaded?)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    kind           = em_init(mem, em_local_rank(threads_rank));
    MPI_Comm_dup(MPI_COMM_WORLD, &caller_comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &churner_comm);
    threads_side_init(&caller, caller_comm, kind, count);
    threads_side_init(&churner, churner_comm, kind, count);
    threads_call(&caller, caller_comm, 1); /* contexts made before the threads start */
    threads_call(&churner, churner_comm, 2);

    pthread_create(&caller_thread, NULL, threads_caller, &caller);
    pthread_create(&churner_thread, NULL, threads_churner, &churner);
    pthread_join(churner_thread, NULL);
    pthread_join(caller_thread, NULL);

    stalls = threads_read(threads_stalls);
    held   = threads_read(threads_held);
    wrong  = caller.turns.wrong + churner.turns.wrong;
    if (wrong > 0 || stalls > 0) {
        fprintf(stderr, "coll_threads: FAIL on rank %d: %ld wrong results, %llu frees that "
                "waited for the other thread's device work\n", threads_rank, wrong, stalls);
        failed = 1;
    }
    {
        long mine[2] = {caller.turns.calls, churner.turns.calls};
        int  mine_held = held > 0;
        MPI_Allreduce(mine, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(&mine_held, &any_held, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    if (threads_rank == 0) {
        if (expect_held && !any_held) {
            fprintf(stderr, "coll_threads: FAIL: no rank held a free back: the frees never "
                    "met the other thread's device work (nothing tested)\n");
            failed = 1;
        }
        printf("coll_threads: %d ranks (%s), caller %ld calls, churner %ld calls; frees held "
               "on rank 0: %llu, stalled: %llu: %s\n", size, em_describe(), totals[0], totals[1],
               held, stalls, failed ? "FAIL" : "PASS");
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (expect_served) {
        int unserved = check_pvar_expect_served("coll_threads"), any = 0;
        MPI_Allreduce(&unserved, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        failed |= any;
    }
    check_turns_free(&caller.turns);
    check_turns_free(&churner.turns);
    MPI_Comm_free(&caller_comm);
    MPI_Comm_free(&churner_comm);
    MPI_T_pvar_session_free(&threads_session);
    MPI_T_finalize();
    MPI_Finalize();
    return failed;
}
