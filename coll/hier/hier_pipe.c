/*
 * Overlap of the phases of a hierarchical collective, chunk by chunk.
 *
 * The message is cut into chunks; each chunk goes through an intra-node phase before the
 * network (pre), the inter-node phase (mid) and an intra-node phase after it (post). The
 * calling thread runs the intra-node phases in one fixed order on every rank,
 *     pre(0) | pre(1) post(0) | pre(2) post(1) | ... | post(K-1)
 * while a helper thread of the communicator runs mid(0), mid(1), ... as soon as the
 * chunk's pre is done. So the network carries chunk i while the GPUs of the node reduce
 * chunk i+1 and share chunk i-1. Two work slots suffice: pre(i+1) reuses the slot of chunk
 * i-1 only after post(i-1) is done.
 *
 * The helper thread is the only user of the inter-node transport while a pipeline runs; it
 * is created at the first pipelined call and sleeps between calls.
 */
#include "coll/hier/hier.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

struct cg_hier_pipe {
    pthread_t            thread;
    pthread_mutex_t      lock;
    pthread_cond_t       wake;      /* the helper: a chunk was submitted, or exit */
    pthread_cond_t       done;      /* the caller: a chunk's mid finished */
    int                  exiting;
    const cg_pipe_job_t *job;
    int                  submitted; /* chunks whose pre is done */
    int                  finished;  /* chunks whose mid is done (or skipped) */
    int                  skip_from; /* chunks from here on skip mid (a pre failed) */
    cg_status_t          status;    /* first failure of a mid */
};

static void *cg_hier_pipe_main(void *arg)
{
    cg_hier_pipe_t *p = arg;

    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->exiting && (p->job == NULL || p->finished >= p->submitted)) {
            pthread_cond_wait(&p->wake, &p->lock);
        }
        if (p->exiting) {
            break;
        }
        const cg_pipe_job_t *job   = p->job;
        const int            chunk = p->finished;
        const int            run   = p->status == CG_OK && chunk < p->skip_from;
        cg_status_t          status = CG_OK;

        pthread_mutex_unlock(&p->lock);
        if (run && job->mid != NULL) {
            status = job->mid(job->ctx, chunk);
        }
        pthread_mutex_lock(&p->lock);
        if (status != CG_OK && p->status == CG_OK) {
            p->status = status;
        }
        p->finished++;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static cg_status_t cg_hier_pipe_create(cg_hier_pipe_t **pipe_out)
{
    cg_hier_pipe_t *p = calloc(1, sizeof(*p));
    sigset_t        all, old;
    int             rc;

    if (p == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    /* signals stay with the application's threads */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&p->thread, NULL, cg_hier_pipe_main, p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        cg_error(CG_SUB_COLL, "cannot start the pipeline thread (error %d)", rc);
        pthread_cond_destroy(&p->done);
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->lock);
        free(p);
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
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* Chunk i's pre is done (ok: its mid may run). */
static void cg_hier_pipe_submit(cg_hier_pipe_t *p, int ok)
{
    pthread_mutex_lock(&p->lock);
    if (!ok && p->skip_from > p->submitted) {
        p->skip_from = p->submitted;
    }
    p->submitted++;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

/* Wait until chunk i's mid is done; the first failure of any mid so far. */
static cg_status_t cg_hier_pipe_wait(cg_hier_pipe_t *p, int i)
{
    cg_status_t status;

    pthread_mutex_lock(&p->lock);
    while (p->finished <= i) {
        pthread_cond_wait(&p->done, &p->lock);
    }
    status = p->status;
    pthread_mutex_unlock(&p->lock);
    return status;
}

/* Without a helper thread (one chunk): the phases one after the other. */
static cg_status_t cg_hier_pipe_serial(const cg_pipe_job_t *job)
{
    cg_status_t status = CG_OK, mid = CG_OK;

    for (int i = 0; i < job->chunks; i++) {
        if (job->pre != NULL) {
            status = job->pre(job->ctx, i, status);
        }
        if (status == CG_OK && mid == CG_OK && job->mid != NULL) {
            mid = job->mid(job->ctx, i);
        }
        if (job->post != NULL) {
            status = job->post(job->ctx, i, status != CG_OK ? status : mid);
        } else if (status == CG_OK) {
            status = mid;
        }
    }
    return status != CG_OK ? status : mid;
}

cg_status_t cg_hier_pipe_run(cg_comm_t *c, const cg_pipe_job_t *job)
{
    cg_hier_pipe_t *p;
    cg_status_t     status = CG_OK, mid = CG_OK;

    /* nothing to overlap: one chunk, or no intra-node phase (one rank per node) */
    if (job->chunks <= 1 || job->mid == NULL || c->local_size == 1 ||
        (job->pre == NULL && job->post == NULL)) {
        return cg_hier_pipe_serial(job);
    }
    if (c->pipe == NULL && cg_hier_pipe_create(&c->pipe) != CG_OK) {
        return cg_hier_pipe_serial(job); /* no thread: still correct, not overlapped */
    }
    p = c->pipe;
    pthread_mutex_lock(&p->lock);
    p->job       = job;
    p->submitted = 0;
    p->finished  = 0;
    p->skip_from = job->chunks;
    p->status    = CG_OK;
    pthread_mutex_unlock(&p->lock);

    /* Every rank of the node runs the same sequence of intra-node phases, whatever fails:
     * a failure travels to the node's other ranks through the phases' barriers. */
    for (int i = 0; i <= job->chunks; i++) {
        if (i < job->chunks) {
            if (job->pre != NULL) {
                status = job->pre(job->ctx, i, status);
            }
            cg_hier_pipe_submit(p, status == CG_OK);
        }
        if (i > 0) {
            mid = cg_hier_pipe_wait(p, i - 1);
            if (job->post != NULL) {
                status = job->post(job->ctx, i - 1, status != CG_OK ? status : mid);
            } else if (status == CG_OK) {
                status = mid;
            }
        }
    }
    pthread_mutex_lock(&p->lock);
    p->job = NULL;
    pthread_mutex_unlock(&p->lock);
    return status != CG_OK ? status : mid;
}
