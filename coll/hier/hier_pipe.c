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
    pthread_cond_t       done;      /* the caller: a chunk's mid finished */
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
    cg_hier_pipe_t *p = l->pipe;

    /* the device current for the thread's life (UCX's CUDA transports need a context) */
    (void)p->comm->dev->ops->thread_bind(p->comm->dev);
    pthread_mutex_lock(&p->lock);
    for (;;) {
        /* this lane's next chunk */
        int next = l->index + l->finished * CG_MAX(p->lanes, 1);
        while (!p->exiting && (p->job == NULL || l->index >= p->lanes || next >= p->job->chunks ||
                               next >= p->submitted)) {
            pthread_cond_wait(&p->wake, &p->lock);
            next = l->index + l->finished * CG_MAX(p->lanes, 1);
        }
        if (p->exiting) {
            break;
        }
        const cg_pipe_job_t *job    = p->job;
        const int            run    = p->status == CG_OK && next < p->skip_from;
        cg_status_t          status = CG_OK;

        pthread_mutex_unlock(&p->lock);
        if (run && job->mid != NULL) {
            status = job->mid(job->ctx, next, p->comm->lane[l->index]);
        }
        pthread_mutex_lock(&p->lock);
        if (status != CG_OK && p->status == CG_OK) {
            p->status = status;
        }
        l->finished++;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* The pipeline of a communicator, with a thread per lane. */
static cg_status_t cg_hier_pipe_create(cg_comm_t *c, cg_hier_pipe_t **pipe_out)
{
    cg_hier_pipe_t *p = calloc(1, sizeof(*p));
    sigset_t        all, old;
    int             rc = 0;

    if (p == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    p->comm = c;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    /* signals stay with the application's threads */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int m = 0; m < c->num_lanes && rc == 0; m++) {
        p->lane[m] = (cg_hier_lane_t){p, m, 0, 0, 0};
        rc         = pthread_create(&p->lane[m].thread, NULL, cg_hier_lane_main, &p->lane[m]);
        p->lane[m].started = (rc == 0);
        p->nthreads += (rc == 0);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        cg_error(CG_SUB_COLL, "cannot start the pipeline threads (error %d)", rc);
        cg_hier_pipe_destroy(p);
        return CG_ERR_IO;
    }
    *pipe_out = p;
    return CG_OK;
}

void cg_hier_pipe_destroy(cg_hier_pipe_t *p)
{
    if (p == NULL) {
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->exiting = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int m = 0; m < CG_MAX_LANES; m++) {
        if (p->lane[m].started) {
            pthread_join(p->lane[m].thread, NULL);
        }
    }
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* The next chunk's pre is done (ok: its mid may run). */
static void cg_hier_pipe_submit(cg_hier_pipe_t *p, int ok)
{
    pthread_mutex_lock(&p->lock);
    if (!ok && p->skip_from > p->submitted) {
        p->skip_from = p->submitted;
    }
    p->submitted++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

/* Wait until chunk i's mid is done; the first failure of any mid so far. */
static cg_status_t cg_hier_pipe_wait(cg_hier_pipe_t *p, int i)
{
    const cg_hier_lane_t *l = &p->lane[i % p->lanes];
    cg_status_t           status;

    pthread_mutex_lock(&p->lock);
    while (l->finished <= i / p->lanes) {
        pthread_cond_wait(&p->done, &p->lock);
    }
    status = p->status;
    pthread_mutex_unlock(&p->lock);
    return status;
}

cg_status_t cg_hier_lanes_reserve(cg_comm_t *c, size_t bytes)
{
    void       *tmp;
    cg_status_t status = CG_OK;

    for (int m = 0; m < CG_MAX(c->num_lanes, 1) && status == CG_OK; m++) {
        status = cg_inter_tmp(m == 0 ? c->inter : c->lane[m], CG_MAX(bytes, (size_t)1), &tmp);
    }
    return status;
}

int cg_hier_pipe_window(const cg_comm_t *c, int max_lanes)
{
    return CG_MAX(1, CG_MIN(c->num_lanes, max_lanes > 0 ? max_lanes : CG_MAX_LANES)) + 1;
}

/* Without lane threads: the phases of each chunk one after the other, on lane 0. */
static cg_status_t cg_hier_pipe_serial(cg_comm_t *c, const cg_pipe_job_t *job)
{
    cg_status_t status = CG_OK, mid = CG_OK;

    for (int i = 0; i < job->chunks; i++) {
        if (job->pre != NULL) {
            status = job->pre(job->ctx, i, status);
        }
        if (status == CG_OK && mid == CG_OK && job->mid != NULL) {
            mid = job->mid(job->ctx, i, c->inter);
        }
        if (job->post != NULL) {
            status = job->post(job->ctx, i, status != CG_OK ? status : mid);
        } else if (status == CG_OK) {
            status = mid;
        }
    }
    return status != CG_OK ? status : mid;
}

/* At the first pipelined call of the communicator (every rank gets there in the same call):
 * start the lane threads and agree that every rank has them; otherwise every rank runs its
 * pipelines one phase after the other (a rank alone doing so would pair its exchanges and
 * barriers with the wrong ones). */
static int cg_hier_pipe_ready(cg_comm_t *c)
{
    cg_status_t status;
    int         ok;

    if (c->pipe_state != 0) {
        return c->pipe_state > 0;
    }
    ok = cg_hier_pipe_create(c, &c->pipe) == CG_OK;
    if (!ok) {
        c->pipe = NULL;
    }
    status = c->oob.allgather(c->oob.ctx, &ok, c->votes, sizeof(int));
    for (int r = 0; status == CG_OK && r < c->config.size; r++) {
        ok &= c->votes[r];
    }
    ok &= (status == CG_OK);
    if (!ok) {
        cg_warn(CG_SUB_COLL, "lane threads unavailable on some rank: the phases of hierarchical "
                "collectives run one after the other on this communicator");
        cg_hier_pipe_destroy(c->pipe);
        c->pipe = NULL;
    }
    c->pipe_state = ok ? 1 : -1;
    return ok;
}

/* The caller's part: post of chunk i, after its mid. */
static cg_status_t cg_hier_pipe_post(cg_hier_pipe_t *p, const cg_pipe_job_t *job, int i,
                                     cg_status_t status)
{
    cg_status_t mid = cg_hier_pipe_wait(p, i);

    if (job->post != NULL) {
        return job->post(job->ctx, i, status != CG_OK ? status : mid);
    }
    return status != CG_OK ? status : mid;
}

cg_status_t cg_hier_pipe_run(cg_comm_t *c, const cg_pipe_job_t *job)
{
    const int       window = cg_hier_pipe_window(c, job->max_lanes);
    cg_hier_pipe_t *p;
    cg_status_t     status = CG_OK;
    int             posted = 0;

    /* nothing to overlap: one chunk, or no intra-node phase (one rank per node). The callers
     * run on equal layouts with an agreed plan, so these hold alike on every rank, as
     * cg_hier_pipe_ready's agreement requires. */
    if (job->chunks <= 1 || job->mid == NULL || c->local_size == 1 ||
        (job->pre == NULL && job->post == NULL)) {
        return cg_hier_pipe_serial(c, job);
    }
    if (!cg_hier_pipe_ready(c)) {
        return cg_hier_pipe_serial(c, job); /* no threads: still correct, not overlapped */
    }
    p = c->pipe;
    pthread_mutex_lock(&p->lock);
    p->job       = job;
    p->lanes     = window - 1;
    p->submitted = 0;
    p->skip_from = job->chunks;
    p->status    = CG_OK;
    for (int m = 0; m < CG_MAX_LANES; m++) {
        p->lane[m].finished = 0;
    }
    pthread_mutex_unlock(&p->lock);

    /* Every rank of the node runs the same sequence of intra-node phases, whatever fails:
     * a failure travels to the node's other ranks through the phases' barriers. */
    for (int i = 0; i < job->chunks; i++) {
        while (i - posted >= window) { /* chunk i takes the slot of chunk i - window */
            status = cg_hier_pipe_post(p, job, posted++, status);
        }
        if (job->pre != NULL) {
            status = job->pre(job->ctx, i, status);
        }
        cg_hier_pipe_submit(p, status == CG_OK);
    }
    while (posted < job->chunks) {
        status = cg_hier_pipe_post(p, job, posted++, status);
    }
    pthread_mutex_lock(&p->lock);
    p->job = NULL;
    pthread_mutex_unlock(&p->lock);
    return status;
}
