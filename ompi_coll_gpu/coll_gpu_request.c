/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Requests of the component (nonblocking and persistent collectives on staged device
 * buffers) and their progress.
 *
 * A request wraps the layer underneath's request on the host copies. While it is active it
 * sits in a list that a progress callback (opal_progress: MPI_Test, MPI_Wait and every
 * other call that progresses MPI) walks: once the layer underneath's request has completed,
 * the results are copied back to the device on the module's stream and an event is
 * recorded after the copy; once the event has completed, the staging arena goes back to
 * the pool (persistent: it stays for the next start) and the request completes. Neither
 * step waits: a call that finds nothing done returns at once.
 *
 * Released requests are kept for reuse (at most MCA_COLL_GPU_REQUESTS_CACHED, the oldest
 * freed first when more come), and reused oldest first, only once
 * MCA_COLL_GPU_REQUESTS_QUARANTINE later ones have been released: the MPI bindings'
 * callbacks (ompi_coll_base_retain_op and _datatypes, where they wrap a request's free)
 * read a request, and release what it retained, right after its free function has
 * returned, so the request just released must be neither freed (it was, past 64 cached
 * requests) nor handed to another call (which would lose what it retains) then. Open MPI
 * 4.1.4 wraps no persistent request's free (an inactive one counts as complete).
 */
#include "ompi_coll_gpu/coll_gpu_staged_calls.h"

#include "ompi/errhandler/errcode-internal.h"
#include "opal/runtime/opal_progress.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>

enum {
    MCA_COLL_GPU_REQUEST_UNDER = 0, /* the layer underneath's request runs */
    MCA_COLL_GPU_REQUEST_COPY  = 1  /* the copy back runs */
};

#define MCA_COLL_GPU_REQUESTS_CACHED     64
#define MCA_COLL_GPU_REQUESTS_QUARANTINE 8

static pthread_mutex_t         mca_coll_gpu_requests_lock = PTHREAD_MUTEX_INITIALIZER;
static mca_coll_gpu_request_t *mca_coll_gpu_requests_active; /* in flight */
static int                     mca_coll_gpu_requests_count;  /* how many (read unlocked) */
static mca_coll_gpu_request_t *mca_coll_gpu_requests_unused; /* released, oldest first */
static mca_coll_gpu_request_t *mca_coll_gpu_requests_unused_last; /* the newest */
static int                     mca_coll_gpu_requests_unused_count;
static int                     mca_coll_gpu_progress_registered;

static int mca_coll_gpu_request_free(ompi_request_t **rptr);
static int mca_coll_gpu_progress(void);

static int mca_coll_gpu_request_cancel(ompi_request_t *request, int complete)
{
    (void)request;
    (void)complete;
    return MPI_ERR_REQUEST; /* collectives cannot be cancelled */
}

static void mca_coll_gpu_request_construct(mca_coll_gpu_request_t *req)
{
    req->super.super.req_type   = OMPI_REQUEST_COLL;
    req->super.super.req_free   = mca_coll_gpu_request_free;
    req->super.super.req_cancel = mca_coll_gpu_request_cancel;
}

OBJ_CLASS_INSTANCE(mca_coll_gpu_request_t, MCA_COLL_GPU_NBC_REQUEST_PARENT,
                   mca_coll_gpu_request_construct, NULL);

mca_coll_gpu_request_t *mca_coll_gpu_request_new(mca_coll_gpu_module_t *m,
                                                 struct ompi_communicator_t *comm,
                                                 bool persistent)
{
    mca_coll_gpu_request_t *req = NULL;
    int                     rc  = OPAL_SUCCESS;

    pthread_mutex_lock(&mca_coll_gpu_requests_lock);
    /* the progress callback, once, at the first request (cheap when none is in flight) */
    if (!mca_coll_gpu_progress_registered &&
        (rc = opal_progress_register(mca_coll_gpu_progress)) == OPAL_SUCCESS) {
        mca_coll_gpu_progress_registered = 1;
    }
    if (mca_coll_gpu_requests_unused_count > MCA_COLL_GPU_REQUESTS_QUARANTINE) {
        req                          = mca_coll_gpu_requests_unused;
        mca_coll_gpu_requests_unused = req->next;
        mca_coll_gpu_requests_unused_count--;
    }
    pthread_mutex_unlock(&mca_coll_gpu_requests_lock);
    if (rc != OPAL_SUCCESS) {
        cg_error(CG_SUB_COLL, "cannot register the progress of nonblocking collectives");
        return NULL;
    }
    if (req == NULL && (req = OBJ_NEW(mca_coll_gpu_request_t)) == NULL) {
        return NULL;
    }
    OMPI_REQUEST_INIT(&req->super.super, persistent);
    req->super.super.req_free         = mca_coll_gpu_request_free;
    req->super.super.req_start        = NULL;
    req->super.super.req_mpi_object.comm = comm;
    req->super.cb.req_complete_cb     = NULL;
    req->super.req_complete_cb_data   = NULL;
    MCA_COLL_GPU_NBC_OBJS(&req->super)[0] = NULL;
    MCA_COLL_GPU_NBC_OBJS(&req->super)[1] = NULL;
    req->next                         = NULL;
    req->module                       = m;
    req->under                        = NULL;
    req->copied                       = NULL;
    req->freeing                      = MCA_COLL_GPU_FREE_NONE;
    memset(&req->st, 0, sizeof(req->st));
    OBJ_RETAIN(m);
    /* MPI lets the application free the communicator while the request is pending: it
     * goes when its operations have completed. The request keeps it (and the collective
     * underneath, which Open MPI 4.1's libnbc runs on it, crashes without) until its end. */
    OBJ_RETAIN(comm);
    return req;
}

int mca_coll_gpu_request_stage(mca_coll_gpu_module_t *m, const mca_coll_gpu_args_t *a,
                               bool persistent, ompi_request_t **request,
                               mca_coll_gpu_request_t **req_out, mca_coll_gpu_region_t *send,
                               mca_coll_gpu_region_t *recv)
{
    mca_coll_gpu_request_t *req;
    mca_coll_gpu_args_t     staged;
    int                     kinds, rc;

    *req_out = NULL;
    kinds    = mca_coll_gpu_describe(a, send, recv);
    mca_coll_gpu_log_args(a, kinds);
    cg_count((kinds & MCA_COLL_GPU_KIND_DEVICE) ? CG_CNT_CALLS_STAGED : CG_CNT_CALLS_UNDER, 1);
    if (!(kinds & MCA_COLL_GPU_KIND_DEVICE)) {
        return mca_coll_gpu_under_call(m, a, a->sbuf, a->rbuf, request);
    }
    if ((req = mca_coll_gpu_request_new(m, a->comm, persistent)) == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (!persistent) {
        mca_coll_gpu_app_wait(m);
    }
    rc = mca_coll_gpu_stage_regions(&req->st, m, send, recv, &req->send, &req->recv, !persistent,
                                    0);
    if (OMPI_SUCCESS != rc) {
        return mca_coll_gpu_request_abandon(req, rc);
    }
    rc = mca_coll_gpu_under_call(m, mca_coll_gpu_args_staged(a, &req->send, &req->recv, &staged),
                                 req->send.host, req->recv.host, &req->under);
    if (OMPI_SUCCESS != rc) {
        req->under = NULL;
        return mca_coll_gpu_request_abandon(req, rc);
    }
    *req_out = req;
    return OMPI_SUCCESS;
}

/* Everything the request holds goes back; the request goes to the cache. */
static void mca_coll_gpu_request_destroy(mca_coll_gpu_request_t *req)
{
    cg_dev_t *dev = mca_coll_gpu_dev();

    if (req->under != NULL && req->under != MPI_REQUEST_NULL) {
        (void)ompi_request_free(&req->under);
    }
    req->under = NULL;
    if (req->st.arena != NULL) {
        (void)mca_coll_gpu_staging_end(&req->st, OMPI_SUCCESS);
    }
    if (req->copied != NULL && dev != NULL) {
        dev->ops->event_destroy(dev, req->copied);
    }
    req->copied = NULL;
    OBJ_RELEASE(req->module);
    req->module = NULL;
    if (req->super.super.req_mpi_object.comm != NULL) {
        OBJ_RELEASE(req->super.super.req_mpi_object.comm);
        req->super.super.req_mpi_object.comm = NULL;
    }
    OMPI_REQUEST_FINI(&req->super.super);
    req->next = NULL;
    pthread_mutex_lock(&mca_coll_gpu_requests_lock);
    if (mca_coll_gpu_requests_unused == NULL) {
        mca_coll_gpu_requests_unused = req;
    } else {
        mca_coll_gpu_requests_unused_last->next = req;
    }
    mca_coll_gpu_requests_unused_last = req;
    req                               = NULL;
    if (++mca_coll_gpu_requests_unused_count > MCA_COLL_GPU_REQUESTS_CACHED) {
        req                          = mca_coll_gpu_requests_unused; /* the oldest */
        mca_coll_gpu_requests_unused = req->next;
        mca_coll_gpu_requests_unused_count--;
    }
    pthread_mutex_unlock(&mca_coll_gpu_requests_lock);
    if (req != NULL) {
        OBJ_RELEASE(req);
    }
}

int mca_coll_gpu_request_abandon(mca_coll_gpu_request_t *req, int rc)
{
    mca_coll_gpu_request_destroy(req);
    return rc;
}

/* MPI_Request_free, also of a request still in flight (the thread that completes it then
 * destroys it), and the free after MPI_Wait or MPI_Test, maybe on another thread than the
 * one completing it: that one no longer touches the request once it is complete. */
static int mca_coll_gpu_request_free(ompi_request_t **rptr)
{
    mca_coll_gpu_request_t *req      = (mca_coll_gpu_request_t *)*rptr;
    int                     in_round = MCA_COLL_GPU_FREE_NONE;

    *rptr = MPI_REQUEST_NULL;
    if (!REQUEST_COMPLETE(&req->super.super) &&
        __atomic_compare_exchange_n(&req->freeing, &in_round, MCA_COLL_GPU_FREE_ASKED, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        return OMPI_SUCCESS; /* still in flight: destroyed when it completes */
    }
    while (!REQUEST_COMPLETE(&req->super.super)) { /* completing on another thread now */
        sched_yield();
    }
    mca_coll_gpu_request_destroy(req);
    return OMPI_SUCCESS;
}

/* ---- progress ------------------------------------------------------------------------ */

/* The layer underneath's request completed: start the copy back. Returns 1 when the
 * request has nothing more to wait for. */
static int mca_coll_gpu_request_copy_back(mca_coll_gpu_request_t *req)
{
    cg_dev_t *dev = mca_coll_gpu_dev();
    int       rc;

    req->error = req->under->req_status.MPI_ERROR;
    if (req->super.super.req_persistent) {
        if (req->under->req_type != OMPI_REQUEST_NOOP) {
            req->under->req_state = OMPI_REQUEST_INACTIVE; /* as a wait would leave it */
        }
    } else {
        (void)ompi_request_free(&req->under);
        req->under = NULL;
    }
    if (OMPI_SUCCESS != req->error || !req->recv.staged || !req->recv_copy_out ||
        req->st.broken) {
        return 1;
    }
    if (req->copied == NULL && dev->ops->event_create(dev, &req->copied) != CG_OK) {
        req->copied = NULL;
        req->error  = OMPI_ERR_OUT_OF_RESOURCE;
        return 1;
    }
    rc = mca_coll_gpu_stage_out(&req->st, &req->recv);
    if (OMPI_SUCCESS != rc ||
        dev->ops->event_record(dev, req->copied, req->module->stream) != CG_OK) {
        req->error = OMPI_SUCCESS != rc ? rc : OMPI_ERROR;
        return 1;
    }
    req->phase = MCA_COLL_GPU_REQUEST_COPY;
    return 0;
}

/* Is the request done? Advances it by one step when it can. */
static int mca_coll_gpu_request_step(mca_coll_gpu_request_t *req)
{
    cg_dev_t *dev  = mca_coll_gpu_dev();
    int       done = 0;

    if (req->phase == MCA_COLL_GPU_REQUEST_UNDER) {
        if (!REQUEST_COMPLETE(req->under)) {
            return 0;
        }
        if (mca_coll_gpu_request_copy_back(req)) {
            return 1;
        }
    }
    if (dev->ops->event_query(dev, req->copied, &done) != CG_OK) {
        req->error = OMPI_ERROR; /* reported by the device layer */
        return 1;
    }
    return done;
}

/* The request's round is over: give back what it no longer needs and complete it. */
static void mca_coll_gpu_request_finish(mca_coll_gpu_request_t *req)
{
    ompi_request_t *r  = &req->super.super;
    int             rc = req->error;

    if (!r->req_persistent) {
        rc = mca_coll_gpu_staging_end(&req->st, rc); /* the arena back to the pool */
        req->st.arena = NULL;
    } else if (req->st.broken && OMPI_SUCCESS == rc) {
        rc = OMPI_ERR_NOT_AVAILABLE; /* no device layer: the data could not be copied */
    } else if (req->st.lost && OMPI_SUCCESS == rc) {
        rc = OMPI_ERROR; /* a device copy failed: zeros went in for this rank's data */
    }
    if (OMPI_SUCCESS != rc) {
        cg_error(CG_SUB_COLL, "a nonblocking or persistent collective on %s failed: error %d",
                 r->req_mpi_object.comm->c_name, rc);
    }
    r->req_status.MPI_SOURCE = MPI_ANY_SOURCE;
    r->req_status.MPI_TAG    = MPI_ANY_TAG;
    r->req_status.MPI_ERROR  = ompi_errcode_get_mpi_code(rc); /* an MPI error class: the
                                                                 * status reaches the
                                                                 * application as it is */
    r->req_status._ucount    = 0;
    r->req_status._cancelled = 0;
    /* decided before the request is complete: once it is, another thread may free it */
    if (__atomic_exchange_n(&req->freeing, MCA_COLL_GPU_FREE_DONE, __ATOMIC_ACQ_REL) ==
        MCA_COLL_GPU_FREE_ASKED) {
        ompi_request_complete(r, true);
        mca_coll_gpu_request_destroy(req); /* the application freed it in flight */
        return;
    }
    ompi_request_complete(r, true); /* also releases what the bindings retained */
}

static int mca_coll_gpu_progress(void)
{
    mca_coll_gpu_request_t **pp, *done = NULL, *req;
    int                      completed = 0;

    if (__atomic_load_n(&mca_coll_gpu_requests_count, __ATOMIC_ACQUIRE) == 0 ||
        cg_pace_progressing() || pthread_mutex_trylock(&mca_coll_gpu_requests_lock) != 0) {
        return 0; /* nothing in flight, inside a wait of ours, or another thread is at it */
    }
    for (pp = &mca_coll_gpu_requests_active; (req = *pp) != NULL;) {
        if (mca_coll_gpu_request_step(req)) {
            *pp       = req->next;
            req->next = done;
            done      = req;
            __atomic_sub_fetch(&mca_coll_gpu_requests_count, 1, __ATOMIC_RELEASE);
        } else {
            pp = &req->next;
        }
    }
    pthread_mutex_unlock(&mca_coll_gpu_requests_lock);
    /* outside the lock: completion callbacks may start other requests */
    while ((req = done) != NULL) {
        done = req->next;
        req->next = NULL;
        mca_coll_gpu_request_finish(req);
        completed++;
    }
    return completed;
}

/* A new round of the request: active, not complete. */
static void mca_coll_gpu_request_begin(mca_coll_gpu_request_t *req)
{
    req->freeing                          = MCA_COLL_GPU_FREE_NONE;
    req->phase                            = MCA_COLL_GPU_REQUEST_UNDER;
    req->error                            = OMPI_SUCCESS;
    req->super.super.req_status.MPI_ERROR = OMPI_SUCCESS;
    req->super.super.req_complete         = REQUEST_PENDING;
    req->super.super.req_state            = OMPI_REQUEST_ACTIVE;
}

void mca_coll_gpu_request_fail(mca_coll_gpu_request_t *req, int rc)
{
    mca_coll_gpu_request_begin(req);
    req->error = rc;
    mca_coll_gpu_request_finish(req);
}

void mca_coll_gpu_request_submit(mca_coll_gpu_request_t *req)
{
    mca_coll_gpu_request_begin(req);
    pthread_mutex_lock(&mca_coll_gpu_requests_lock);
    req->next                    = mca_coll_gpu_requests_active;
    mca_coll_gpu_requests_active = req;
    __atomic_add_fetch(&mca_coll_gpu_requests_count, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mca_coll_gpu_requests_lock);
}

void mca_coll_gpu_requests_fini(void)
{
    mca_coll_gpu_request_t *req;

    pthread_mutex_lock(&mca_coll_gpu_requests_lock);
    if (mca_coll_gpu_progress_registered) {
        (void)opal_progress_unregister(mca_coll_gpu_progress);
        mca_coll_gpu_progress_registered = 0;
    }
    while ((req = mca_coll_gpu_requests_unused) != NULL) {
        mca_coll_gpu_requests_unused = req->next;
        OBJ_RELEASE(req);
    }
    mca_coll_gpu_requests_unused_last  = NULL;
    mca_coll_gpu_requests_unused_count = 0;
    pthread_mutex_unlock(&mca_coll_gpu_requests_lock);
}
