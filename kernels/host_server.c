/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The host layer's LL server (coll_gpu_ll_persist; the protocol: kernels/dev_ll_server.h):
 * a thread plays the CUDA layer's kernel that stays on the GPU. It runs beside the stream,
 * ordered with none of its work, reads the call posted before each ring (the argument
 * block, cg_ll_args_t, as tagged lines read before the bell: a line older than the bell
 * is read again, as the kernel's may be), runs it as the
 * LL kernel does (host_ll.c: the lines out, the wait, the result) and stores the stream's
 * completion word; without a ring for coll_gpu_ll_persist_idle_us, or at the end of its
 * life (dev->ll_persist_life_s, 10 ms), it leaves, as the kernel does, so that CI sees the
 * rings that race a leave. While a server is there, every free
 * waits for it to leave, as cudaFree waits for a kernel that stays. A reset of the
 * simulated GPU ends it, as a GPU's reset ends its kernels (cg_host_reset_hook).
 */
#include "kernels/dev_host_int.h"
#include "kernels/dev_ll_server.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* The posted argument block: a cg_ll_args_t in whole words. */
#define CG_HOST_SERVER_WORDS ((sizeof(cg_ll_args_t) + sizeof(uint64_t) - 1) / sizeof(uint64_t))

typedef union {
    cg_ll_args_t args;
    uint64_t     words[CG_HOST_SERVER_WORDS];
} cg_host_server_block_t;

/* The page-locked memory of a server: the protocol's words, then the posted lines. */
typedef struct {
    cg_ll_server_words_t words;
    uint64_t             lines[CG_LL_POST_LINES(CG_HOST_SERVER_WORDS)];
} cg_host_server_pinned_t;

struct cg_host_server {
    cg_ll_server_t    proto;
    cg_dev_t         *dev;
    cg_dev_stream_t  *stream;
    pthread_t         thread;
    int               joinable;  /* a thread was started and not joined */
    uint64_t          gen, served; /* the thread's start */
    uint64_t          calls;     /* calls rung on this stream */
    int               rung;      /* a rung call not seen to end (counted as a peer wait) */
    unsigned         *owner;
    cg_host_ll_wait_t wait;      /* the server's */
    cg_status_t       failed;    /* a call the server could not run (it left) */
    int               deaf;      /* a server could not read a call posted to it: none again */
};

/* One call, as the kernel runs it; *given_up: an abort line or the cancel word ended it.
 * As the kernel, it waits for its peers with no limit: the host ends a call that cannot
 * end (abort lines, the cancel word). A slow rank's (coll_gpu_debug_host_slow) lines go
 * out at once and wait in the inbox until the call has taken its time, as on the stream. */
static cg_status_t cg_host_server_call(cg_host_server_t *server, const cg_ll_args_t *posted,
                                       int *given_up)
{
    cg_dev_t         *dev   = server->dev;
    const cg_ll_args_t args = *posted;
    const double      slow  = cg_host_impl(dev)->op_delay_s, started = cg_time_now();
    cg_pace_t         pace  = {0};
    cg_status_t       status;
    int               done  = 0;

    status = cg_host_ll_push(dev, &args);
    if (status == CG_OK) {
        status = cg_host_ll_wait_start(&args, &server->wait);
    }
    while (status == CG_OK && cg_time_now() - started < slow) {
        (void)cg_pace(&pace);
    }
    while (status == CG_OK && done == 0) {
        status = cg_host_ll_poll(dev, &args, &server->wait, &done);
        if (done == 0) {
            (void)cg_pace(&pace);
        }
    }
    *given_up = done == 2;
    return status;
}

static void *cg_host_server_main(void *arg)
{
    cg_host_server_t     *server = arg;
    cg_ll_server_words_t *words  = server->proto.words;
    const uint64_t       *lines  = ((const cg_host_server_pinned_t *)(void *)words)->lines;
    uint64_t             *done   = (uint64_t *)server->proto.done;
    uint64_t              served = server->served;
    const double          idle   = server->dev->ll_persist_idle_s, born = cg_time_now();
    const double          life   = server->dev->ll_persist_life_s;
    const int             deaf   = cg_host_impl(server->dev)->server_deaf;
    double                since  = born;
    unsigned              spins  = 0;
    int                   looked = 0;

    cg_pace_no_progress(); /* the stand-in of a kernel: no MPI here */
    for (;;) {
        cg_host_server_block_t posted;
        uint64_t               seen[CG_LL_POST_LINES(CG_HOST_SERVER_WORDS)], bell;
        int                    given_up = 0;
        /* its life over (after one look at the bell at least: a server started late still
         * serves the ring it was started for), it leaves with no look: a call rung
         * meanwhile is the next server's */
        if (looked && spins % 64 == 0 && cg_time_now() - born > life) {
            break;
        }
        looked = 1;
        /* the lines, then the bell, as the kernel reads both at once (its reads are not
         * ordered with each other): a line older than the bell has another call's tag */
        for (size_t line = 0; line < CG_LL_POST_LINES(CG_HOST_SERVER_WORDS); line++) {
            seen[line] = __atomic_load_n(&lines[line], __ATOMIC_RELAXED);
        }
        bell = __atomic_load_n(&words->bell, __ATOMIC_ACQUIRE);
        if (bell == CG_LL_SERVER_STOP || cg_dev_lost(server->dev)) { /* a reset ends it too */
            break;
        }
        if (bell != served && !deaf &&
            cg_ll_server_decode(seen, posted.words, CG_HOST_SERVER_WORDS, bell)) {
            cg_status_t status = cg_host_server_call(server, &posted.args, &given_up);
            if (status != CG_OK) { /* as a kernel that faulted: no word, the stream's error */
                __atomic_store_n(&server->failed, status, __ATOMIC_RELEASE);
                break;
            }
            __atomic_store_n(done, (bell << 1) | (uint64_t)given_up, __ATOMIC_RELEASE);
            served = bell;
            since  = cg_time_now();
            spins  = 0;
        } else if (++spins % 64 == 0 && bell == served && cg_time_now() - since > idle) {
            break;
        } else if (spins > 256) {
            sched_yield(); /* ranks share cores here: the peers must run */
        }
    }
    cg_dev_host_t *host = cg_host_impl(server->dev);
    __atomic_store_n(&words->left, server->gen, __ATOMIC_RELEASE); /* then nothing of it read */
    __atomic_sub_fetch(&host->servers, 1, __ATOMIC_ACQ_REL);
    return NULL;
}

/* The protocol's start: the thread before has left (or none was started); a new one. */
static cg_status_t cg_host_server_start(cg_ll_server_t *proto, uint64_t gen, uint64_t served)
{
    cg_host_server_t *server = proto->ctx;
    cg_dev_host_t    *host   = cg_host_impl(server->dev);
    cg_status_t       failed = __atomic_load_n(&server->failed, __ATOMIC_ACQUIRE);

    if (failed != CG_OK) { /* it left after a call it could not run: never run it again */
        return failed;
    }
    if (server->joinable) {
        pthread_join(server->thread, NULL);
        server->joinable = 0;
    }
    server->gen    = gen;
    server->served = served;
    __atomic_add_fetch(&host->servers, 1, __ATOMIC_ACQ_REL);
    if (pthread_create(&server->thread, NULL, cg_host_server_main, server) != 0) {
        __atomic_sub_fetch(&host->servers, 1, __ATOMIC_ACQ_REL);
        cg_error(CG_SUB_DEV, "cannot start an LL server thread");
        return CG_ERR_INTERNAL;
    }
    server->joinable = 1;
    return CG_OK;
}

static cg_status_t cg_host_server_create(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    cg_host_server_t *server = calloc(1, sizeof(*server));
    void             *words  = NULL;

    if (server == NULL || cg_host_host_alloc(dev, sizeof(cg_host_server_pinned_t), &words) != CG_OK) {
        free(server);
        return CG_ERR_NO_MEMORY;
    }
    memset(words, 0, sizeof(cg_host_server_pinned_t));
    *(uint64_t *)stream->ll_word = 0;
    server->proto.words = words;
    server->proto.done  = stream->ll_word;
    server->proto.start = cg_host_server_start;
    server->proto.ctx   = server;
    server->dev         = dev;
    server->stream      = stream;
    stream->server      = server;
    return CG_OK;
}

cg_status_t cg_host_server_run(cg_dev_t *dev, cg_dev_stream_t *stream, const cg_ll_args_t *args)
{
    cg_host_server_t      *server = stream->server;
    cg_host_server_block_t block;
    cg_status_t            status;

    if (cg_dev_lost(dev)) { /* its words went with the reset */
        return CG_ERR_DEVICE;
    }
    if (server == NULL) {
        if ((status = cg_host_server_create(dev, stream)) != CG_OK) {
            return status;
        }
        server = stream->server;
    }
    if ((status = __atomic_load_n(&server->failed, __ATOMIC_ACQUIRE)) != CG_OK) {
        return status;
    }
    if (server->rung) { /* the last call was never seen to end: the server may read its
                         * arguments still */
        cg_error(CG_SUB_DEV, "an LL call rung while the last one had not ended");
        return CG_ERR_INTERNAL;
    }
    memset(&block, 0, sizeof(block)); /* the padding too: every posted word defined */
    block.args = *args;
    if (args->coll == CG_LL_REDUCE_SCATTER) { /* kept until the call ends */
        memcpy(stream->counts, args->counts, (size_t)args->size * sizeof(size_t));
        memcpy(stream->displs, args->displs, (size_t)args->size * sizeof(size_t));
        block.args.counts = stream->counts;
        block.args.displs = stream->displs;
    }
    cg_ll_server_post(((cg_host_server_pinned_t *)(void *)server->proto.words)->lines, block.words,
                      CG_HOST_SERVER_WORDS, server->calls + 1);
    server->owner = cg_host_peer_wait_start(cg_host_impl(dev));
    server->rung  = 1;
    status        = cg_ll_server_ring(&server->proto, ++server->calls);
    if (status != CG_OK) {
        server->rung = 0;
        cg_host_peer_wait_stop(cg_host_impl(dev), server->owner);
    }
    return status;
}

int cg_host_server_alive(const cg_dev_stream_t *stream)
{
    return stream->server != NULL && cg_ll_server_alive(&stream->server->proto);
}

static int cg_host_server_rung(const cg_dev_stream_t *stream)
{
    return stream->server != NULL && stream->server->rung;
}

int cg_host_server_usable(const cg_dev_stream_t *stream)
{
    return stream->server == NULL || !stream->server->deaf;
}

/* The rung call, which no server could read (cg_ll_server_test: CG_ERR_UNSUPPORTED), taken
 * back from its posted lines and launched on the stream, as the CUDA layer does. */
static cg_status_t cg_host_server_relaunch(cg_dev_t *dev, cg_host_server_t *server)
{
    const uint64_t        *lines = ((const cg_host_server_pinned_t *)(void *)server->proto.words)->lines;
    cg_host_server_block_t block;

    cg_status_t            status = __atomic_load_n(&server->failed, __ATOMIC_ACQUIRE);

    /* a server that ran the call and failed stored that before it left: not relaunched */
    if (status != CG_OK || cg_dev_lost(dev)) {
        return status != CG_OK ? status : CG_ERR_DEVICE;
    }
    server->deaf = 1;
    if (!cg_ll_server_decode(lines, block.words, CG_HOST_SERVER_WORDS, server->proto.rung)) {
        __atomic_store_n(&server->failed, CG_ERR_INTERNAL, __ATOMIC_RELEASE); /* its own lines */
        return CG_ERR_INTERNAL;
    }
    /* behind the stream's work, as a kernel launched on it */
    status = cg_host_stream_drain(dev, server->stream);
    return status == CG_OK ? cg_host_ll_launch(dev, server->stream, &block.args) : status;
}

cg_status_t cg_host_server_test(cg_dev_t *dev, cg_dev_stream_t *stream, int *done)
{
    cg_host_server_t *server = stream->server;
    cg_status_t       status = __atomic_load_n(&server->failed, __ATOMIC_ACQUIRE);

    *done = 0;
    if (status == CG_OK && cg_dev_lost(dev)) { /* its words went with the reset */
        status = CG_ERR_DEVICE;
    }
    if (status == CG_OK) {
        status = cg_ll_server_test(&server->proto, done);
    }
    if (server->rung && (*done != 0 || status != CG_OK)) {
        server->rung = 0;
        cg_host_peer_wait_stop(cg_host_impl(dev), server->owner);
    }
    return status == CG_ERR_UNSUPPORTED ? cg_host_server_relaunch(dev, server) : status;
}

/* The caller's wait is bounded (CG_HOST_FLAG_TIMEOUT), as every wait of this layer; the
 * server's is not and goes on (the next ring is refused until the call ends). */
cg_status_t cg_host_server_sync(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    cg_pace_t   pace   = {.quiet = 1}; /* part of the stream's synchronisation */
    double      t0     = 0;
    cg_status_t status = stream->server != NULL ? __atomic_load_n(&stream->server->failed, __ATOMIC_ACQUIRE)
                                                : CG_OK; /* sticky, as a GPU's fault */
    int         done   = 0;

    while (status == CG_OK && cg_host_server_rung(stream) &&
           (status = cg_host_server_test(dev, stream, &done)) == CG_OK && done == 0) {
        if (cg_pace(&pace)) {
            t0 = t0 ? t0 : cg_time_now();
            if (cg_time_now() - t0 > CG_HOST_FLAG_TIMEOUT) {
                cg_error(CG_SUB_DEV, "an LL server's call waited %d s for a peer: stopped waiting",
                         CG_HOST_FLAG_TIMEOUT);
                return CG_ERR_TIMEOUT;
            }
        }
    }
    return status;
}

void cg_host_server_stop(cg_dev_stream_t *stream)
{
    if (stream->server != NULL) {
        (void)cg_ll_server_stop(&stream->server->proto);
    }
}

void cg_host_server_fini(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    cg_host_server_t *server = stream->server;

    if (server == NULL) {
        return;
    }
    if (server->rung) { /* given up by the caller: no longer counted */
        server->rung = 0;
        cg_host_peer_wait_stop(cg_host_impl(dev), server->owner);
    }
    if (!cg_dev_lost(dev)) { /* after a reset the thread has left (cg_host_reset_hook), and
                              * its words are gone: no store */
        (void)cg_ll_server_stop(&server->proto);
    }
    if (server->joinable && cg_dev_abandoned(dev)) {
        /* a call that never ends was left (the device is abandoned: nothing is freed, the
         * layer's close included): the thread keeps what it uses */
        pthread_detach(server->thread);
        stream->server = NULL;
        return;
    }
    if (server->joinable) {
        pthread_join(server->thread, NULL);
    }
    cg_dev_host_release(dev, server->proto.words);
    free(server->wait.taken);
    free(server);
    stream->server = NULL;
}
