/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll/gpu's inter-node layer over UCX, in two levels:
 *   UCX      one UCP context and worker per process (and one worker per lane), one
 *            endpoint per peer worker with peer error handling (a peer that fails turns
 *            into an error, never a hang), tagged nonblocking send and receive, and the
 *            memory types this UCX can move (ucx_transport.c);
 *   inter    the inter-node phase of the collectives: exchanges between comm ranks on
 *            device buffers (staged through host chunks when UCX cannot move device
 *            memory) and ring / recursive doubling / binomial collectives on a group of
 *            ranks, one per node (inter_setup.c, inter_transport.c, inter_algs.c).
 */
#ifndef CG_UCX_H
#define CG_UCX_H

#include "base/cg_base.h"
#include "kernels/cg_dev.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cg_ucx    cg_ucx_t;
typedef struct cg_ucx_ep cg_ucx_ep_t;

typedef struct {
    int         thread_multi; /* MPI_THREAD_MULTIPLE: the worker is shared by threads */
    const char *net_devices;  /* UCX_NET_DEVICES for this process (the rank's rail); NULL or
                                 "": UCX's own choice. An explicit UCX_NET_DEVICES wins. */
} cg_ucx_config_t;

cg_status_t cg_ucx_create(const cg_ucx_config_t *config, cg_ucx_t **ucx_out);
/* Another worker on ucx's context (a lane: one more thread may drive the network at the
 * same time, with endpoints and tags of its own). Destroy lanes before their parent. */
cg_status_t cg_ucx_create_lane(cg_ucx_t *parent, cg_ucx_t **lane_out);
void        cg_ucx_destroy(cg_ucx_t *ucx);
/* Can UCX move CUDA device memory itself (GPUDirect RDMA or its own staging)? */
int         cg_ucx_supports_cuda(const cg_ucx_t *ucx);
const char *cg_ucx_describe(const cg_ucx_t *ucx);
/* This worker's address, to be exchanged with the peers. */
cg_status_t cg_ucx_address(cg_ucx_t *ucx, const void **addr, size_t *len);
/* The endpoint to the worker at peer_addr: one per peer for the life of this worker,
 * shared by every communicator over that peer (closing one per communicator would disturb
 * the others' transfers and wait on peers). A failed one is replaced. same_host: the peer
 * runs on this host (virtual nodes): no UCX peer failure handling, so that UCX may carry
 * the messages through shared memory (its shared-memory transports cannot tell a failed
 * peer and are refused with it); the caller watches the peer's pid instead. Peers on
 * other hosts get UCX's peer failure handling. The same peer must always be given the
 * same same_host. */
cg_status_t cg_ucx_ep_create(cg_ucx_t *ucx, const void *peer_addr, size_t addr_len, int same_host,
                             cg_ucx_ep_t **ep_out);
/* A communicator is done with it: it stays open for others (closed with the worker). */
void        cg_ucx_ep_release(cg_ucx_t *ucx, cg_ucx_ep_t *ep);

/* Nonblocking tagged operations. *req is NULL when the operation completed at once;
 * otherwise progress the worker (cg_ucx_progress) until cg_ucx_test says it is done.
 * device: the buffer is CUDA memory. */
cg_status_t cg_ucx_isend(cg_ucx_t *ucx, cg_ucx_ep_t *ep, const void *buf, size_t len,
                         uint64_t tag, int device, void **req);
cg_status_t cg_ucx_irecv(cg_ucx_t *ucx, void *buf, size_t len, uint64_t tag, uint64_t mask,
                         int device, void **req);
/* *done when req finished (req is then released); does not progress the worker. An error
 * of the operation (a peer UCX cannot reach, a transport error) is CG_ERR_TRANSPORT. */
cg_status_t cg_ucx_test(cg_ucx_t *ucx, void *req, int *done);
/* Progress the worker once: how many events it handled (0: nothing moved, time to pace). */
unsigned    cg_ucx_progress(cg_ucx_t *ucx);
/* Cancel an operation that will not be waited for (an error path): it must not write into
 * memory that is released afterwards. Bounded: gives up after a second. */
void        cg_ucx_cancel(cg_ucx_t *ucx, void *req);
/* Stop tracking a send that may still be in flight (its buffer must outlive it): UCX
 * completes and frees it as the worker progresses. */
void        cg_ucx_release(cg_ucx_t *ucx, void *req);
/* Is a message whose tag matches (tag, mask) waiting, unreceived, in this worker? remove:
 * receive it (up to 8 bytes) so that it is gone, its first 8 bytes into word (may be NULL;
 * 0 for a shorter message). */
int         cg_ucx_probe(cg_ucx_t *ucx, uint64_t tag, uint64_t mask, int remove, uint64_t *word);
/* What the process holds of UCX, for leak checks (MPI_T: coll_gpu_ucx_endpoints...). */
typedef struct {
    unsigned long workers;           /* open now: the process's and its lanes' */
    unsigned long endpoints;         /* open now, on every worker */
    unsigned long endpoints_created; /* since the process started (reuse keeps it flat) */
} cg_ucx_counters_t;
void        cg_ucx_counters(cg_ucx_counters_t *counters);
/* Start completing every operation of this worker remotely (eager data left in a
 * transport's buffer needs the sender's progress: done before a collective returns); *req
 * as of cg_ucx_isend (NULL: done already). */
cg_status_t cg_ucx_flush_start(cg_ucx_t *ucx, void **req);
/* UCX's memory events (ucx_events.c): call release(arg, addr, bytes) before every release
 * of address space of the process, with its range (munmap, mremap, madvise, brk, shmdt), from any thread and inside
 * the allocator (release must not allocate nor lock). One watcher per process.
 * CG_ERR_UNSUPPORTED when UCX installs no memory hooks (UCX_MEM_EVENTS=no, a build without
 * UCX). cg_ucx_unwatch_releases removes it (before the component is unloaded). */
cg_status_t cg_ucx_watch_releases(void (*release)(void *arg, const void *addr, size_t bytes),
                                  void *arg);
void        cg_ucx_unwatch_releases(void);


/* ==== The inter-node transport (inter_setup.c, inter_transport.c, inter_algs.c) ==========
 * Point-to-point exchanges between the ranks of different nodes over UCX, and the
 * collectives built from them on a group of ranks (one per node: a rail, or the node
 * leaders). Buffers are device memory; when UCX cannot move device memory itself (Debian's
 * UCX has no CUDA transport) the data goes through a pipeline of page-locked host chunks:
 * the copy of chunk i+1 overlaps the network transfer of chunk i.
 *
 * Tags: comm id (24 bits) | call sequence (8) | step (12) | source rank (20), so that calls,
 * steps and communicators never match each other's messages (inter_transport.c).
 */
typedef struct {
    int  n;     /* members */
    int  me;    /* this rank's index */
    int *ranks; /* comm ranks of the members, in order */
} cg_inter_group_t;

/* cg_inter_config_t.staging (the same values as the collective layer's setting) */
enum { CG_INTER_STAGING_AUTO = 0, CG_INTER_STAGING_ALWAYS = 1, CG_INTER_STAGING_NEVER = 2 };

#define CG_INTER_MAX_DEPTH 32 /* chunks in flight each way, at most */

typedef struct {
    size_t chunk_bytes; /* staging chunk */
    int    depth;       /* chunks in flight each way (at most CG_INTER_MAX_DEPTH) */
    int    staging;     /* CG_STAGING_* of coll/cg_coll.h: 0 auto (when UCX cannot move
                           device memory), 1 always, 2 never */
    double timeout_s;
    const int *pids;    /* size entries: the pid of every comm rank on this host, 0 for the
                           others (copied): a failure names a dead peer only when its pid
                           is gone */
} cg_inter_config_t;

typedef struct cg_inter {
    cg_ucx_t        *ucx;
    cg_dev_t        *dev;
    cg_dev_stream_t *stream;
    int              rank, size;
    uint32_t         tag_id;      /* the communicator's id in the tags (cg_inter_tag_id) */
    uint16_t         seq;         /* inter-node calls so far (the same on every rank) */
    uint64_t         call;        /* the communicator's hierarchical call under way, the same
                                     on every lane (cg_inter_set_call): what aborts name */
    uint64_t         failed_call; /* the earliest call that an abort received here named
                                     (UINT64_MAX: none) */
    cg_ucx_ep_t    **eps;         /* by comm rank, created at first use */
    int             *pids;        /* by comm rank: on this host, its pid; elsewhere 0 */
    char            *addrs;       /* every rank's worker address */
    size_t           addr_stride;
    int              staged;      /* device data through host chunks */
    int              unsettled;   /* staged: reductions queued on stream since its last
                                     synchronisation (the collective's end waits once) */
    int              ucx_device;  /* hand CUDA memory to UCX */
    cg_inter_config_t config;
    char            *pinned;      /* 2 x depth chunks: sends, then receives */
    cg_dev_event_t  *events[2 * CG_INTER_MAX_DEPTH];
    void            *tmp;         /* device memory for received blocks */
    size_t           tmp_bytes;
    int              failed;
    int              used;        /* exchanged since the last flush (cg_inter_flush) */
} cg_inter_t;

/* ---- transport (inter_setup.c, inter_transport.c) ------------------------------------- */
/* The peers' worker addresses come later (cg_inter_addresses), before the first exchange. */
cg_status_t cg_inter_create(cg_ucx_t *ucx, cg_dev_t *dev, int rank, int size, uint32_t comm_id,
                            const cg_inter_config_t *config, cg_inter_t **inter_out);
/* Room for every rank's worker address, slots of stride bytes (each: an 8-byte length, then
 * the address), owned by the transport, for the caller to fill before the first exchange;
 * stride the same on every rank (the largest address any rank has, not a fixed maximum:
 * size slots per lane of every communicator spanning nodes). NULL: no memory. */
char       *cg_inter_addresses(cg_inter_t *inter, size_t stride);
/* Send device data through page-locked host chunks from now on (a transport made direct,
 * whose peers stage: the messages of the two ways are cut differently, so every rank of a
 * communicator must use one way; cg_comm_create agrees on it before any exchange). */
cg_status_t cg_inter_stage(cg_inter_t *inter);
/* Staging chunks and device memory of a destroyed transport are kept for the next one
 * (a communicator created and freed in a loop allocates them once). */
void        cg_inter_destroy(cg_inter_t *inter);
/* Remove from ucx the messages tagged with comm_id: what freed communicators of that id
 * left (aborts that came after their context was kept or destroyed, data of a failed call
 * never received). A new communicator's setup does it for its id before the exchange
 * that lets any rank start a call, so that nothing older reaches its calls (Open MPI gives
 * a freed communicator's id to the next one). Returns how many were removed. */
int         cg_inter_forget(cg_ucx_t *ucx, uint32_t comm_id);
/* A communicator's id (mca_coll_gpu_comm_id: 32 bits) as the 24 bits of the tags: ids below
 * 2^23 (agreed context ids) as they are, the others mixed into the upper half. */
uint32_t    cg_inter_tag_id(uint32_t comm_id);
#define CG_INTER_AGREED_IDS (1u << 23) /* ids below: in the tags as they are */
/* A live communicator's hold on its tag id: CG_OK, or CG_ERR_UNSUPPORTED when another live
 * communicator of this process holds it (two ids of the PMIx kind whose hashes collide:
 * their messages would meet, so the second gets no inter-node transport). Agreed ids: always
 * CG_OK, nothing held. cg_inter_tag_release when the communicator is freed or kept. */
cg_status_t cg_inter_tag_claim(uint32_t comm_id);
void        cg_inter_tag_release(uint32_t comm_id);
/* At the end of the process: free what destroyed transports left for their successors. */
void        cg_inter_release_kept(void);
/* Start an inter-node phase of a new call (advances the sequence number of the tags). */
void        cg_inter_begin(cg_inter_t *inter);
/* The communicator's hierarchical call under way (counted once per call, the same on every
 * rank and lane): aborts carry it, and a wait gives up for an abort of this call or of an
 * earlier one, not for one of a later call (a rank that completed this call and failed its
 * next). */
void        cg_inter_set_call(cg_inter_t *inter, uint64_t call);
/* A kept transport goes to a new communicator: its id in the tags, no abort recorded. */
void        cg_inter_retag(cg_inter_t *inter, uint32_t comm_id);
/* Send sbytes of sbuf to comm rank dst and receive rbytes into rbuf from comm rank src
 * (either may be -1: no send, no receive), both tagged with step. Device buffers. */
cg_status_t cg_inter_sendrecv(cg_inter_t *inter, int dst, const void *sbuf, size_t sbytes, int src,
                              void *rbuf, size_t rbytes, unsigned step);
/* The same with a step of its own for each direction. */
cg_status_t cg_inter_exchange(cg_inter_t *inter, int dst, const void *sbuf, size_t sbytes,
                              unsigned sstep, int src, void *rbuf, size_t rbytes, unsigned rstep);
/* This rank's collective failed: tell ranks (comm ranks) that may be waiting for its data;
 * their waits give up with CG_ERR_PEER, and they tell others in turn. Waits at most
 * seconds for the messages to leave (those still in flight go on without being tracked). */
void        cg_inter_abort(cg_inter_t *inter, const int *ranks, int n, double seconds);
/* The end of a call: complete remotely what this transport's exchanges left (eager data in
 * a transport's buffer, a rendezvous acknowledgement), so that no peer needs this rank's
 * progress after the call. Nothing to do, no flush, when it exchanged nothing. */
cg_status_t cg_inter_flush(cg_inter_t *inter);
/* Device scratch of at least bytes for received blocks. */
cg_status_t cg_inter_tmp(cg_inter_t *inter, size_t bytes, void **tmp);

/* ---- collectives on a group (inter_algs.c); buffers are device memory ----------------- */
cg_status_t cg_inter_allreduce_ring(cg_inter_t *inter, const cg_inter_group_t *g, void *buf,
                                    size_t count, cg_dtype_t dtype, cg_op_t op);
cg_status_t cg_inter_allreduce_rd(cg_inter_t *inter, const cg_inter_group_t *g, void *buf,
                                  size_t count, cg_dtype_t dtype, cg_op_t op);
/* Member i's block is counts[i] elements at element offset offs[i] of buf. */
cg_status_t cg_inter_reduce_scatter_ring(cg_inter_t *inter, const cg_inter_group_t *g, void *buf,
                                         const size_t *offs, const size_t *counts,
                                         cg_dtype_t dtype, cg_op_t op);
/* Member i's block is bytes[i] at byte offset offs[i] of buf. */
cg_status_t cg_inter_allgather_ring(cg_inter_t *inter, const cg_inter_group_t *g, void *buf,
                                    const size_t *offs, const size_t *bytes);
cg_status_t cg_inter_bcast_binomial(cg_inter_t *inter, const cg_inter_group_t *g, void *buf,
                                    size_t bytes, int root);

#ifdef __cplusplus
}
#endif
#endif /* CG_UCX_H */
