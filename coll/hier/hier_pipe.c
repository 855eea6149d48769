/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Overlap of the phases of a hierarchical collective, chunk by chunk.
 *
 * The message is cut into chunks; each chunk goes through an intra-node phase before the
 * network (pre), the inter-node phase (mid) and an intra-node phase after it (post). The
 * calling thread runs the intra-node phases in one fixed order on every rank,
 *     pre(0) .. pre(W-1) | post(0) pre(W) | post(1) pre(W+1) | ... | post(K-1)
 * while the communicator's lane threads run the mids: lane m (its own UCX worker, stream
 * and staging buffers) takes chunks m, m+M, m+2M, ... in order, as soon as their pre is
 * done. So the network carries M chunks at once (their latencies overlap) while the GPUs
 * of the node reduce the next chunks and share the previous ones. W = M + 1 chunks are
 * between their pre and their post at any time: the algorithm's work slots.
 *
 * No deadlock: every rank of a node runs the same sequence of intra-node phases, every lane
 * runs its chunks in the same order on every rank, and the post the caller waits for
 * (chunk i - W) depends only on pres that came before it.
 */
#include "coll/hier/hier.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

struct cg_hier_pipe;

typedef struct {
    struct cg_hier_pipe *pipe;
    int                  index;
    pthread_t            thread;
    int                  started;
    int                  finished; /* chunks of the current job this lane has done */
} cg_hier_lane_t;

struct cg_hier_pipe {
    cg_comm_t           *comm;
    pthread_mutex_t      lock;
    pthread_cond_t       wake;      /* the lanes: a chunk was submitted, or exit */
    int                  exiting;
    const cg_pipe_job_t *job;
    int                  lanes;     /* lanes of the current job */
    int                  submitted; /* chunks whose pre is done */
    int                  skip_from; /* chunks from here on skip mid (a pre failed) */
    cg_status_t          status;    /* first failure of a mid */
    int                  nthreads;
    cg_hier_lane_t       lane[CG_MAX_LANES];
};

static void *cg_hier_lane_main(void *arg)
{
    cg_hier_lane_t *l = arg;
    cg_hier_pipe_t *pipe = l->pipe;

    cg_pace_no_progress(); /* MPI is progressed by the thread in the call */
    /* the device current for the thread's life (UCX's CUDA transports need a context) */
    (void)pipe->comm->dev->ops->thread_bind(pipe->comm->dev);
    pthread_mutex_lock(&pipe->lock);
    for (;;) {
        /* this lane's next chunk */
        int next = l->index + l->finished * CG_MAX(pipe->lanes, 1);
        while (!pipe->exiting && (pipe->job == NULL || l->index >= pipe->lanes || next >= pipe->job->chunks ||
                               next >= pipe->submitted)) {
            pthread_cond_wait(&pipe->wake, &pipe->lock);
            next = l->index + l->finished * CG_MAX(pipe->lanes, 1);
        }
        if (pipe->exiting) {
            break;
        }
        const cg_pipe_job_t *job    = pipe->job;
        const int            run    = pipe->status == CG_OK && next < pipe->skip_from;
        cg_status_t          status = CG_OK;

        pthread_mutex_unlock(&pipe->lock);
        if (run && job->mid != NULL) {
            status = job->mid(job->ctx, next, pipe->comm->lane[l->index]);
        }
        pthread_mutex_lock(&pipe->lock);
        if (status != CG_OK && pipe->status == CG_OK) {
            pipe->status = status;
        }
        l->finished++;
    }
    pthread_mutex_unlock(&pipe->lock);
    return NULL;
}

/* The pipeline of a communicator, with a thread per lane. */
static cg_status_t cg_hier_pipe_create(cg_comm_t *comm, cg_hier_pipe_t **pipe_out)
{
    cg_hier_pipe_t *pipe = calloc(1, sizeof(*pipe));
    sigset_t        all, old;
    int             rc = 0;

    if (pipe == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    pipe->comm = comm;
    pthread_mutex_init(&pipe->lock, NULL);
    pthread_cond_init(&pipe->wake, NULL);
    /* signals stay with the application's threads */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int m = 0; m < comm->num_lanes && rc == 0; m++) {
        pipe->lane[m] = (cg_hier_lane_t){pipe, m, 0, 0, 0};
        rc         = pthread_create(&pipe->lane[m].thread, NULL, cg_hier_lane_main, &pipe->lane[m]);
        pipe->lane[m].started = (rc == 0);
        pipe->nthreads += (rc == 0);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        cg_error(CG_SUB_COLL, "cannot start the pipeline threads (error %d)", rc);
        cg_hier_pipe_destroy(pipe);
        return CG_ERR_IO;
    }
    *pipe_out = pipe;
    return CG_OK;
}

void cg_hier_pipe_destroy(cg_hier_pipe_t *pipe)
{
    if (pipe == NULL) {
        return;
    }
    pthread_mutex_lock(&pipe->lock);
    pipe->exiting = 1;
    pthread_cond_broadcast(&pipe->wake);
    pthread_mutex_unlock(&pipe->lock);
    for (int m = 0; m < CG_MAX_LANES; m++) {
        if (pipe->lane[m].started) {
            pthread_join(pipe->lane[m].thread, NULL);
        }
    }
    pthread_cond_destroy(&pipe->wake);
    pthread_mutex_destroy(&pipe->lock);
    free(pipe);
}

/* The next chunk's pre is done (ok: its mid may run). */
static void cg_hier_pipe_submit(cg_hier_pipe_t *pipe, int ok)
{
    pthread_mutex_lock(&pipe->lock);
    if (!ok && pipe->skip_from > pipe->submitted) {
        pipe->skip_from = pipe->submitted;
    }
    pipe->submitted++;
    pthread_cond_broadcast(&pipe->wake);
    pthread_mutex_unlock(&pipe->lock);
}

/* Wait until chunk i's mid is done; the first failure of any mid so far. Polled, not
 * slept on: like every wait for peers it makes MPI progress (cg_pace), which the lane
 * threads do not. */
static cg_status_t cg_hier_pipe_wait(cg_hier_pipe_t *pipe, int i)
{
    const cg_hier_lane_t *l    = &pipe->lane[i % pipe->lanes];
    cg_pace_t             pace = {0};
    cg_status_t           status;

    cg_count(CG_CNT_HOST_WAITS, 1); /* for the lane thread that ran chunk i's mid */
    pthread_mutex_lock(&pipe->lock);
    while (l->finished <= i / pipe->lanes) {
        pthread_mutex_unlock(&pipe->lock);
        (void)cg_pace(&pace);
        pthread_mutex_lock(&pipe->lock);
    }
    status = pipe->status;
    pthread_mutex_unlock(&pipe->lock);
    return status;
}

cg_status_t cg_hier_lanes_reserve(cg_comm_t *comm, size_t bytes)
{
    void       *tmp;
    cg_status_t status = CG_OK;

    for (int m = 0; m < CG_MAX(comm->num_lanes, 1) && status == CG_OK; m++) {
        status = cg_inter_tmp(m == 0 ? comm->inter : comm->lane[m], CG_MAX(bytes, (size_t)1), &tmp);
    }
    return status;
}

int cg_hier_pipe_window(const cg_comm_t *comm, int max_lanes)
{
    return CG_MAX(1, CG_MIN(comm->num_lanes, max_lanes > 0 ? max_lanes : CG_MAX_LANES)) + 1;
}

/* Without lane threads: the phases of each chunk one after the other, on lane 0. */
static cg_status_t cg_hier_pipe_serial(cg_comm_t *comm, const cg_pipe_job_t *job)
{
    cg_status_t status = CG_OK, mid = CG_OK;

    for (int i = 0; i < job->chunks; i++) {
        if (job->pre != NULL) {
            status = job->pre(job->ctx, i, status);
        }
        if (status == CG_OK && mid == CG_OK && job->mid != NULL) {
            mid = job->mid(job->ctx, i, comm->inter);
        }
        if (job->post != NULL) {
            status = job->post(job->ctx, i, status != CG_OK ? status : mid);
        } else if (status == CG_OK) {
            status = mid;
        }
    }
    return status != CG_OK ? status : mid;
}

/* At the first pipelined call of the communicator (every rank gets there in the same call,
 * cg_hier_pipe_agree, before anything of the call can fail):
 * start the lane threads and agree that every rank has them; otherwise every rank runs its
 * pipelines one phase after the other (a rank alone doing so would pair its exchanges and
 * barriers with the wrong ones). */
static int cg_hier_pipe_ready(cg_comm_t *comm)
{
    int ok;

    if (comm->pipe_state != 0) {
        return comm->pipe_state > 0;
    }
    ok = cg_hier_pipe_create(comm, &comm->pipe) == CG_OK;
    if (!ok) {
        comm->pipe = NULL;
    }
    (void)cg_comm_vote(comm, &ok); /* a failed exchange votes no */
    if (!ok) {
        cg_warn(CG_SUB_COLL, "lane threads unavailable on some rank: the phases of hierarchical "
                "collectives run one after the other on this communicator");
        cg_hier_pipe_destroy(comm->pipe);
        comm->pipe = NULL;
    }
    comm->pipe_state = ok ? 1 : -1;
    return ok;
}

void cg_hier_pipe_agree(cg_comm_t *comm, const cg_plan_t *plan, const cg_call_t *call)
{
    if (comm->pipe_state == 0 && comm->local_size > 1 &&
        cg_hier_plan_chunks(plan, cg_call_size(call)) > 1) {
        (void)cg_hier_pipe_ready(comm);
    }
}

/* The caller's part: post of chunk i, after its mid. */
static cg_status_t cg_hier_pipe_post(cg_hier_pipe_t *pipe, const cg_pipe_job_t *job, int i,
                                     cg_status_t status)
{
    cg_status_t mid = cg_hier_pipe_wait(pipe, i);

    if (job->post != NULL) {
        return job->post(job->ctx, i, status != CG_OK ? status : mid);
    }
    return status != CG_OK ? status : mid;
}

cg_status_t cg_hier_pipe_run(cg_comm_t *comm, const cg_pipe_job_t *job)
{
    const int       window = cg_hier_pipe_window(comm, job->max_lanes);
    cg_hier_pipe_t *pipe;
    cg_status_t     status = CG_OK;
    int             posted = 0;

    /* nothing to overlap: one chunk, or no intra-node phase (one rank per node). The callers
     * run on equal layouts with an agreed plan, so these hold alike on every rank, as
     * cg_hier_pipe_ready's agreement requires. */
    if (job->chunks <= 1 || job->serial || job->mid == NULL || comm->local_size == 1 ||
        (job->pre == NULL && job->post == NULL)) {
        return cg_hier_pipe_serial(comm, job);
    }
    if (!cg_hier_pipe_ready(comm)) {
        return cg_hier_pipe_serial(comm, job); /* no threads: still correct, not overlapped */
    }
    pipe = comm->pipe;
    pthread_mutex_lock(&pipe->lock);
    pipe->job       = job;
    pipe->lanes     = window - 1;
    pipe->submitted = 0;
    pipe->skip_from = job->chunks;
    pipe->status    = CG_OK;
    for (int m = 0; m < CG_MAX_LANES; m++) {
        pipe->lane[m].finished = 0;
    }
    pthread_mutex_unlock(&pipe->lock);

    /* Every rank of the node runs the same sequence of intra-node phases, whatever fails:
     * a failure travels to the node's other ranks through the phases' barriers. */
    for (int i = 0; i < job->chunks; i++) {
        while (i - posted >= window) { /* chunk i takes the slot of chunk i - window */
            status = cg_hier_pipe_post(pipe, job, posted++, status);
        }
        if (job->pre != NULL) {
            status = job->pre(job->ctx, i, status);
        }
        cg_hier_pipe_submit(pipe, status == CG_OK);
    }
    while (posted < job->chunks) {
        status = cg_hier_pipe_post(pipe, job, posted++, status);
    }
    pthread_mutex_lock(&pipe->lock);
    pipe->job = NULL;
    pthread_mutex_unlock(&pipe->lock);
    return status;
}
