/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll/gpu's UCX transport: one UCP context and worker per process, endpoints created on
 * demand with peer error handling (a peer that fails turns into an error, never a hang),
 * tagged nonblocking send and receive, and the memory types this UCX can move.
 */
#ifndef CG_UCX_H
#define CG_UCX_H

#include "base/cg_base.h"

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

int         cg_ucx_built(void);
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
cg_status_t cg_ucx_ep_create(cg_ucx_t *ucx, const void *peer_addr, cg_ucx_ep_t **ep_out);
/* Close with a flush of what is in flight; force: without (after a failure, when peers may
 * never answer). */
void        cg_ucx_ep_destroy(cg_ucx_t *ucx, cg_ucx_ep_t *ep, int force);

/* Nonblocking tagged operations. *req is NULL when the operation completed at once;
 * otherwise wait for it with cg_ucx_test. device: the buffer is CUDA memory. */
cg_status_t cg_ucx_isend(cg_ucx_t *ucx, cg_ucx_ep_t *ep, const void *buf, size_t len,
                         uint64_t tag, int device, void **req);
cg_status_t cg_ucx_irecv(cg_ucx_t *ucx, void *buf, size_t len, uint64_t tag, uint64_t mask,
                         int device, void **req);
/* Progress the worker once; *done when req finished (req is then released). An error of
 * the operation (peer failure, transport error) is returned as CG_ERR_PEER/TRANSPORT. */
cg_status_t cg_ucx_test(cg_ucx_t *ucx, void *req, int *done);
void        cg_ucx_progress(cg_ucx_t *ucx);
/* Cancel an operation that will not be waited for (an error path): it must not write into
 * memory that is released afterwards. Bounded: gives up after a second. */
void        cg_ucx_cancel(cg_ucx_t *ucx, void *req);
/* Stop tracking a send that may still be in flight (its buffer must outlive it): UCX
 * completes and frees it as the worker progresses. */
void        cg_ucx_release(cg_ucx_t *ucx, void *req);
/* Is a message whose tag matches (tag, mask) waiting, unreceived, in this worker? remove:
 * receive it (a zero-length message) so that it is gone. */
int         cg_ucx_probe(cg_ucx_t *ucx, uint64_t tag, uint64_t mask, int remove);
/* Complete every operation of this worker remotely (eager data left in a transport's
 * buffer needs the sender's progress: done before a collective returns). */
cg_status_t cg_ucx_flush(cg_ucx_t *ucx);

#ifdef __cplusplus
}
#endif
#endif /* CG_UCX_H */
