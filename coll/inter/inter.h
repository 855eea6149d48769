/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The inter-node phase: point-to-point exchanges between the ranks of different nodes over
 * UCX, and the collectives built from them on a group of ranks (one per node: a rail, or
 * the node leaders). Buffers are device memory; when UCX cannot move device memory itself
 * (Debian's UCX has no CUDA transport) the data goes through a pipeline of page-locked host
 * chunks: the copy of chunk i+1 overlaps the network transfer of chunk i.
 *
 * Tags: comm id (16 bits) | call sequence (16) | step (12) | source rank (20), so that calls,
 * steps and communicators never match each other's messages.
 */
#ifndef CG_INTER_H
#define CG_INTER_H

#include "base/cg_base.h"
#include "kernels/cg_dev.h"
#include "ucx_glue/cg_ucx.h"

#include <stdint.h>

typedef struct {
    int  n;     /* members */
    int  me;    /* this rank's index */
    int *ranks; /* comm ranks of the members, in order */
} cg_inter_group_t;

typedef struct {
    size_t chunk_bytes; /* staging chunk */
    int    depth;       /* chunks in flight each way */
    int    staging;     /* 0 auto (when UCX cannot move device memory), 1 always, 2 never */
    double timeout_s;
} cg_inter_config_t;

typedef struct cg_inter {
    cg_ucx_t        *ucx;
    cg_dev_t        *dev;
    cg_dev_stream_t *stream;
    int              rank, size;
    uint16_t         comm_id;
    uint16_t         seq;         /* inter-node calls so far (the same on every rank) */
    cg_ucx_ep_t    **eps;         /* by comm rank, created at first use */
    char            *addrs;       /* every rank's worker address */
    size_t           addr_stride;
    int              staged;      /* device data through host chunks */
    int              ucx_device;  /* hand CUDA memory to UCX */
    cg_inter_config_t config;
    char            *pinned;      /* 2 x depth chunks: sends, then receives */
    cg_dev_event_t  *events[64];
    void            *tmp;         /* device memory for received blocks */
    size_t           tmp_bytes;
    int              failed;
} cg_inter_t;

/* ---- transport (inter_transport.c) ----------------------------------------------------- */
/* addrs: room for size addresses of addr_stride bytes (each slot: 8-byte length, then the
 * address), owned by the transport from now on and filled by the caller before the first
 * exchange. */
cg_status_t cg_inter_create(cg_ucx_t *ucx, cg_dev_t *dev, int rank, int size, uint16_t comm_id,
                            const char *addrs, size_t addr_stride, const cg_inter_config_t *config,
                            cg_inter_t **inter_out);
void        cg_inter_destroy(cg_inter_t *x);
/* Start an inter-node phase of a new call (advances the sequence number of the tags). */
void        cg_inter_begin(cg_inter_t *x);
/* Send sbytes of sbuf to comm rank dst and receive rbytes into rbuf from comm rank src
 * (either may be -1: no send, no receive), both tagged with step. Device buffers. */
cg_status_t cg_inter_sendrecv(cg_inter_t *x, int dst, const void *sbuf, size_t sbytes, int src,
                              void *rbuf, size_t rbytes, unsigned step);
/* The same with a step of its own for each direction. */
cg_status_t cg_inter_exchange(cg_inter_t *x, int dst, const void *sbuf, size_t sbytes,
                              unsigned sstep, int src, void *rbuf, size_t rbytes, unsigned rstep);
/* This rank's collective failed: tell ranks (comm ranks) that may be waiting for its data;
 * their waits give up with CG_ERR_PEER, and they tell others in turn. Waits at most
 * seconds for the messages to leave (those still in flight go on without being tracked). */
void        cg_inter_abort(cg_inter_t *x, const int *ranks, int n, double seconds);
/* Device scratch of at least bytes for received blocks. */
cg_status_t cg_inter_tmp(cg_inter_t *x, size_t bytes, void **tmp);

/* ---- collectives on a group (inter_algs.c); buffers are device memory ----------------- */
cg_status_t cg_inter_allreduce_ring(cg_inter_t *x, const cg_inter_group_t *g, void *buf,
                                    size_t count, cg_dtype_t dtype, cg_op_t op);
cg_status_t cg_inter_allreduce_rd(cg_inter_t *x, const cg_inter_group_t *g, void *buf,
                                  size_t count, cg_dtype_t dtype, cg_op_t op);
/* Member i's block is counts[i] elements at element offset offs[i] of buf. */
cg_status_t cg_inter_reduce_scatter_ring(cg_inter_t *x, const cg_inter_group_t *g, void *buf,
                                         const size_t *offs, const size_t *counts,
                                         cg_dtype_t dtype, cg_op_t op);
/* Member i's block is bytes[i] at byte offset offs[i] of buf. */
cg_status_t cg_inter_allgather_ring(cg_inter_t *x, const cg_inter_group_t *g, void *buf,
                                    const size_t *offs, const size_t *bytes);
cg_status_t cg_inter_bcast_binomial(cg_inter_t *x, const cg_inter_group_t *g, void *buf,
                                    size_t bytes, int root);

#endif /* CG_INTER_H */
