/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_fail: what an application sees when a fast path fails on one rank (run it with
 * coll_gpu_debug_fail=RANK:CALL, which makes a device operation of that call fail).
 *
 * With MPI_ERRORS_RETURN, every call must either return an error or deliver the exact
 * result; nobody may hang (the suite runs it under a timeout); the injected call must be
 * an error on the failing rank; and the calls after it must all succeed with exact results
 * (the communicator's fast paths are retired and its calls staged).
 *
 * With --again, the calls run on a duplicate of MPI_COMM_WORLD, which is then freed and
 * duplicated again for as many calls more, all of which must succeed exactly: a new
 * communicator (which Open MPI may give the freed one's id) must not see what the failed
 * call left behind (late abort messages, a context kept by the ranks that did not fail).
 *
 * With --sticky (run with coll_gpu_debug_fail=RANK:CALL:sticky, a GPU's fault: every later
 * device operation of that rank fails), allreduce only: the failing rank's later calls
 * (staged) must each return an error, and take part in the collective with zeros for its
 * input, so that its peers neither hang nor get anything but the sum without it. Then one
 * MPI_Iallreduce waited for by MPI_Waitall: the failing rank must get MPI_ERR_IN_STATUS and
 * an MPI error class in the status (not Open MPI's internal code), the others the sum
 * without it.
 *
 * With --reset (no coll_gpu_debug_fail), every rank resets the device before call K
 * (cudaDeviceReset while MPI still uses it, which the component does not support) and
 * allocates its buffers again: that call and every later one must return an error on
 * every rank, and none may hang; so must the starts (MPI_Start, MPI_Startall) of persistent
 * allreduces made and run (exactly) before the reset.
 *
 * usage: coll_fail [--mem MODE] [--coll allreduce|bcast|allgather] [--calls N] [--count N]
 *                  [--again 1] [--sticky 1] [--reset 1] [--expect-ll-served 1]
 *                  --fail-rank R --fail-call K
 * (bcast: from rank 0, on the second communicator from the last rank, whose input every
 * rank must then hold; allgather: count elements from every rank)
 */
#include "tests/mpi/check_pvar.h"
#include "examples/example_mem.h"

#include <mpi.h>
#if !(MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5))
#include <mpi-ext.h> /* Open MPI 4.1: MPIX_Allreduce_init */
#define MPI_Allreduce_init MPIX_Allreduce_init
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --reset: persistent allreduces of count elements, made and run (checked) before the reset
 * (after 0): one started by MPI_Start (a second start while it runs must be refused), two
 * by MPI_Startall. After it (after 1) the first
 * one's start must be an error; MPI_Startall does not report what its requests' starts
 * return, so the other two must either be refused there or complete with an error (their
 * waits must not report success). Then they are freed. Returns the number of
 * things wrong. */
#define FAIL_PERSISTENT 3
static int fail_persistent(em_kind_t kind, int rank, int size, size_t count, int after)
{
    static MPI_Request requests[FAIL_PERSISTENT];
    static int32_t    *send, *recv[FAIL_PERSISTENT];
    int32_t           *host = malloc(count * sizeof(int32_t));
    MPI_Status         statuses[FAIL_PERSISTENT];
    int                rc, wrong = 0;

    if (!after) {
        send = em_alloc(count * sizeof(int32_t), kind);
        for (size_t i = 0; i < count; i++) {
            host[i] = (int32_t)i + rank;
        }
        em_to_dev(send, host, count * sizeof(int32_t), kind);
        for (int q = 0; q < FAIL_PERSISTENT; q++) {
            recv[q] = em_alloc(count * sizeof(int32_t), kind);
            rc = MPI_Allreduce_init(send, recv[q], (int)count, MPI_INT32_T, MPI_SUM,
                                    MPI_COMM_WORLD, MPI_INFO_NULL, &requests[q]);
            wrong += rc != MPI_SUCCESS;
        }
        rc = wrong == 0 ? MPI_Start(&requests[0]) : MPI_ERR_OTHER;
        if (rc == MPI_SUCCESS && MPI_Start(&requests[0]) == MPI_SUCCESS) { /* erroneous */
            printf("coll_fail: rank %d: a start of an active request succeeded\n", rank);
            wrong++;
        }
        rc = rc == MPI_SUCCESS ? MPI_Startall(FAIL_PERSISTENT - 1, &requests[1]) : rc;
        rc = rc == MPI_SUCCESS ? MPI_Waitall(FAIL_PERSISTENT, requests, statuses) : rc;
        for (int q = 0; rc == MPI_SUCCESS && q < FAIL_PERSISTENT; q++) {
            em_to_host(host, recv[q], count * sizeof(int32_t), kind);
            for (size_t i = 0; i < count; i++) {
                wrong += host[i] != (int32_t)i * size + size * (size - 1) / 2;
            }
        }
        wrong += rc != MPI_SUCCESS;
    } else {
        rc = MPI_Start(&requests[0]);
        if (rc == MPI_SUCCESS) {
            printf("coll_fail: rank %d: a persistent start after the reset succeeded\n", rank);
            (void)MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
            wrong++;
        } else if (rc < 0 || rc > MPI_ERR_LASTCODE) {
            printf("coll_fail: rank %d: a persistent start returned %d, no MPI error\n", rank, rc);
            wrong++;
        }
        /* each waited for alone: Open MPI's MPI_Waitall returns success for persistent
         * requests that completed with an error (it only copies the error to the status) */
        if (MPI_Startall(FAIL_PERSISTENT - 1, &requests[1]) == MPI_SUCCESS) {
            for (int q = 1; q < FAIL_PERSISTENT; q++) {
                if (MPI_Wait(&requests[q], &statuses[q]) == MPI_SUCCESS) {
                    printf("coll_fail: rank %d: a request of MPI_Startall after the reset "
                           "completed without an error\n", rank);
                    wrong++;
                }
            }
        }
        for (int q = 0; q < FAIL_PERSISTENT; q++) {
            MPI_Request_free(&requests[q]); /* send and recv went with the reset */
        }
    }
    if (wrong) {
        printf("coll_fail: rank %d: the persistent allreduces %s the reset went wrong\n", rank,
               after ? "after" : "before");
    }
    free(host);
    return wrong;
}

/* --sticky: an MPI_Iallreduce after the fault, waited for by MPI_Waitall with a status.
 * Returns the number of things wrong. */
static int fail_status(em_kind_t kind, int rank, int size, int fail_rank, size_t count)
{
    int32_t    *send = em_alloc(count * sizeof(int32_t), kind);
    int32_t    *recv = em_alloc(count * sizeof(int32_t), kind);
    int32_t    *host = malloc(count * sizeof(int32_t));
    MPI_Request request;
    MPI_Status  status;
    int         rc, wrong = 0;

    for (size_t i = 0; i < count; i++) {
        host[i] = (int32_t)(i % 1001) + rank;
    }
    em_to_dev(send, host, count * sizeof(int32_t), kind);
    rc = MPI_Iallreduce(send, recv, (int)count, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, &request);
    if (rc == MPI_SUCCESS) {
        status.MPI_ERROR = -12345;
        rc = MPI_Waitall(1, &request, &status);
    }
    if (rank == fail_rank) {
        int class = -1;
        if (rc != MPI_ERR_IN_STATUS && rc != MPI_ERR_OTHER) { /* ERR_OTHER: the start failed */
            printf("coll_fail: rank %d: MPI_Waitall after the fault returned %d\n", rank, rc);
            wrong++;
        } else if (rc == MPI_ERR_IN_STATUS &&
                   (status.MPI_ERROR <= MPI_SUCCESS || status.MPI_ERROR > MPI_ERR_LASTCODE ||
                    MPI_Error_class(status.MPI_ERROR, &class) != MPI_SUCCESS)) {
            printf("coll_fail: rank %d: the status after the fault holds %d, no MPI error class\n",
                   rank, status.MPI_ERROR);
            wrong++;
        }
    } else if (rc != MPI_SUCCESS) {
        printf("coll_fail: rank %d: MPI_Waitall returned %d\n", rank, rc);
        wrong++;
    } else {
        em_to_host(host, recv, count * sizeof(int32_t), kind);
        for (size_t i = 0; i < count; i++) { /* zeros for the failing rank's input */
            wrong += host[i] != (int32_t)(i % 1001) * (size - 1) + size * (size - 1) / 2 - fail_rank;
        }
        if (wrong) {
            printf("coll_fail: rank %d: MPI_Iallreduce after the fault: wrong results\n", rank);
        }
    }
    em_free(send, kind), em_free(recv, kind);
    free(host);
    return wrong;
}

int main(int argc, char **argv)
{
    const char *mem = "auto", *coll = "allreduce";
    int         calls = 12, fail_call = 4, fail_rank = 0, rank, size, bad = 0, again = 0, sticky = 0;
    int         expect_served = 0; /* --expect-ll-served 1: LL calls rung on a server */
    int         reset = 0;         /* --reset 1: the device reset before call fail_call */
    MPI_Comm    comm = MPI_COMM_WORLD;
    size_t      count = 70001;
    /* errors at the failing call, wrong results, errors at other calls, failing rank
     * without an error */
    long        local[4] = {0, 0, 0, 0}, total[4];
    int32_t    *host, *got;
    void       *sbuf, *rbuf;
    size_t      out; /* elements of the result */
    em_kind_t   kind;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--mem") == 0) mem = argv[i + 1];
        else if (strcmp(argv[i], "--coll") == 0) coll = argv[i + 1];
        else if (strcmp(argv[i], "--calls") == 0) calls = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--count") == 0) count = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "--fail-call") == 0) fail_call = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--fail-rank") == 0) fail_rank = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--again") == 0) again = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--sticky") == 0) sticky = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--reset") == 0) reset = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--expect-ll-served") == 0) expect_served = atoi(argv[i + 1]);
    }
    MPI_Init(&argc, &argv);
    if (expect_served) {
        check_pvar_served_start();
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (again) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    }
    kind = em_init(mem, em_local_rank(rank));
    out  = strcmp(coll, "allgather") == 0 ? count * (size_t)size : count;
    host = malloc(count * sizeof(int32_t));
    got  = malloc(out * sizeof(int32_t));
    sbuf = em_alloc(count * sizeof(int32_t), kind);
    rbuf = em_alloc(out * sizeof(int32_t), kind);

    if (reset) {
        local[1] += fail_persistent(kind, rank, size, count, 0);
    }
    for (int call = 1; call <= (again ? 2 * calls : calls); call++) {
        size_t wrong = 0;
        int    rc, root = (again && call > calls) ? size - 1 : 0;
        if (again && call == calls + 1) { /* the second communicator */
            MPI_Comm_free(&comm);
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            if (rank == size - 1) { /* the others wait for the last rank in the first call
                                     * (bcast: its root), long enough to look for aborts */
                usleep(200000);
            }
        }
        if (reset && call == fail_call) { /* its memory goes: allocated again */
            if (!em_device_reset()) {
                printf("coll_fail: rank %d: no device to reset\n", rank);
                local[1]++;
            }
            sbuf = em_alloc(count * sizeof(int32_t), kind);
            rbuf = em_alloc(out * sizeof(int32_t), kind);
        }
        for (size_t i = 0; i < count; i++) {
            host[i] = (int32_t)((i * 7 + (size_t)call * 13) % 1001) + rank;
        }
        em_to_dev(sbuf, host, count * sizeof(int32_t), kind);
        memset(got, 0xa5, out * sizeof(int32_t));
        em_to_dev(rbuf, got, out * sizeof(int32_t), kind);
        if (strcmp(coll, "bcast") == 0) { /* in place: the input is rbuf's */
            em_to_dev(rbuf, rank == root ? host : got, count * sizeof(int32_t), kind);
            rc = MPI_Bcast(rbuf, (int)count, MPI_INT32_T, root, comm);
        } else if (strcmp(coll, "allgather") == 0) {
            rc = MPI_Allgather(sbuf, (int)count, MPI_INT32_T, rbuf, (int)count, MPI_INT32_T, comm);
        } else {
            rc = MPI_Allreduce(sbuf, rbuf, (int)count, MPI_INT32_T, MPI_SUM, comm);
        }
        if (rc != MPI_SUCCESS) {
            char text[MPI_MAX_ERROR_STRING];
            int  len = 0;
            MPI_Error_string(rc, text, &len);
            printf("coll_fail: rank %d: call %d returned an error: %s\n", rank, call, text);
            /* sticky: the failing rank's later calls are errors, as they must be; reset:
             * every rank's */
            local[call == fail_call ? 0 : 2] += !(sticky && rank == fail_rank && call > fail_call) &&
                                                !(reset && call > fail_call);
            continue;
        }
        local[3] += (call == fail_call || ((sticky || reset) && call > fail_call)) &&
                    (rank == fail_rank || reset);
        em_to_host(got, rbuf, out * sizeof(int32_t), kind);
        for (size_t j = 0; j < out; j++) {
            size_t  i    = j % count;
            int32_t base = (int32_t)((i * 7 + (size_t)call * 13) % 1001);
            if (strcmp(coll, "allgather") == 0) { /* block j / count: that rank's input */
                wrong += got[j] != base + (int32_t)(j / count);
            } else if (sticky && call > fail_call) { /* zeros for the failing rank's input */
                wrong += got[j] != base * (size - 1) + size * (size - 1) / 2 - fail_rank;
            } else {
                wrong += got[j] != (strcmp(coll, "bcast") == 0 ? base + root
                                                               : base * size + size * (size - 1) / 2);
            }
        }
        if (wrong) {
            printf("coll_fail: rank %d: call %d succeeded with %zu wrong elements\n", rank, call, wrong);
            local[1]++;
        }
    }
    if (reset) {
        local[1] += fail_persistent(kind, rank, size, count, 1);
    }
    if (sticky && strcmp(coll, "allreduce") == 0) {
        local[1] += fail_status(kind, rank, size, fail_rank, count);
    }
    fflush(stdout);
    if (again) {
        MPI_Comm_free(&comm);
    }
    MPI_Allreduce(local, total, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        bad = total[0] == 0 || total[1] != 0 || total[2] != 0 || total[3] != 0;
        printf("coll_fail: %s: %d ranks x %d calls; call %d: %ld ranks returned an error (rank "
               "%d %s); %ld wrong results; %ld errors at other calls\n", bad ? "FAILED" : "PASSED",
               size, calls, fail_call, total[0], fail_rank, total[3] ? "did not" : "did",
               total[1], total[2]);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (expect_served) {
        int unserved = check_pvar_expect_served("coll_fail"), any = 0;
        MPI_Allreduce(&unserved, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        bad |= any;
    }
    em_free(sbuf, kind), em_free(rbuf, kind);
    free(host), free(got);
    MPI_Finalize();
    return bad;
}
