/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The collectives that run through host staging only: the blocking collectives without a
 * fast path (reduce, scan, exscan, gather(v), scatter(v), allgatherv, alltoall(v,w)) and
 * the nonblocking and persistent forms of every collective the component intercepts.
 *
 * One description serves them all: a call's arguments (mca_coll_gpu_args_t) tell which
 * bytes of its send and receive buffers this rank's part of the collective touches
 * (mca_coll_gpu_describe); device buffers among them are staged through page-locked host
 * memory and the same collective of the layer underneath runs on the host copies, with
 * the application's counts, displacements and datatypes, in the same mode (blocking,
 * nonblocking, persistent). Host buffers go to the layer underneath untouched. Every rank
 * decides alone (no agreement round): staged or not, each rank ends in the same
 * collective of the layer underneath, so ranks may mix memory kinds.
 *
 * Nonblocking and persistent calls return a request of the component
 * (mca_coll_gpu_request_t) that wraps the layer underneath's request: the staging arena
 * lives until it completes, a progress callback (called by MPI_Test, MPI_Wait and any
 * other progress) copies the results back once the layer underneath's request has
 * completed and completes the request when that copy has.
 */
#ifndef MCA_COLL_GPU_STAGED_CALLS_H
#define MCA_COLL_GPU_STAGED_CALLS_H

#include "ompi_coll_gpu/coll_gpu.h"

#include "ompi/request/request.h"

BEGIN_C_DECLS

/* The collectives, whatever their mode. */
typedef enum {
    MCA_COLL_GPU_ID_ALLREDUCE,
    MCA_COLL_GPU_ID_BCAST,
    MCA_COLL_GPU_ID_ALLGATHER,
    MCA_COLL_GPU_ID_REDUCE_SCATTER,
    MCA_COLL_GPU_ID_REDUCE_SCATTER_BLOCK,
    MCA_COLL_GPU_ID_ALLGATHERV,
    MCA_COLL_GPU_ID_ALLTOALL,
    MCA_COLL_GPU_ID_ALLTOALLV,
    MCA_COLL_GPU_ID_ALLTOALLW,
    MCA_COLL_GPU_ID_EXSCAN,
    MCA_COLL_GPU_ID_GATHER,
    MCA_COLL_GPU_ID_GATHERV,
    MCA_COLL_GPU_ID_REDUCE,
    MCA_COLL_GPU_ID_SCAN,
    MCA_COLL_GPU_ID_SCATTER,
    MCA_COLL_GPU_ID_SCATTERV
} mca_coll_gpu_coll_id_t;

typedef enum {
    MCA_COLL_GPU_BLOCKING,
    MCA_COLL_GPU_NONBLOCKING, /* MPI_I<coll> */
    MCA_COLL_GPU_PERSISTENT   /* MPI_<Coll>_init (Open MPI 4.1: MPIX_<Coll>_init) */
} mca_coll_gpu_mode_t;

/* One call as the application made it. Reductions and bcast use count and dtype; the
 * others scount/sdtype and rcount/rdtype, the v forms the arrays (w: arrays of types,
 * displacements in bytes). */
typedef struct {
    mca_coll_gpu_coll_id_t       id;
    mca_coll_gpu_mode_t          mode;
    const void                  *sbuf;
    void                        *rbuf; /* bcast: the buffer */
    int                          count;
    struct ompi_datatype_t      *dtype;
    int                          scount, rcount;
    struct ompi_datatype_t      *sdtype, *rdtype;
    const int                   *scounts, *sdispls, *rcounts, *rdispls;
    struct ompi_datatype_t *const *sdtypes, *const *rdtypes;
    struct ompi_op_t            *op;
    int                          root;
    struct ompi_communicator_t  *comm;
    struct ompi_info_t          *info; /* persistent */
} mca_coll_gpu_args_t;

/* The bytes of one buffer that this rank's part of a call touches. */
typedef struct {
    void     *user;     /* as passed (MPI_IN_PLACE, or whatever a rank passes where the
                           buffer is not significant: span 0) */
    ptrdiff_t gap;      /* first byte touched, relative to user */
    size_t    span;     /* bytes from there to the last byte touched; 0: nothing */
    int       kind;     /* MCA_COLL_GPU_KIND_* of those bytes (0 when span is 0) */
    int       copy_in;  /* copied in before the call: read by it (or, staged as one span,
                           holding bytes between its data that must survive) */
    int       copy_out; /* written by the call on this rank */
    size_t    data_bytes; /* of its data: less than span when its layout has gaps */
    cg_mem_attr_t attr; /* of its first byte */
    /* its layout, to list its pieces: count elements of dtype from user, or nblocks
     * blocks of counts[i] elements at displs[i] (in extents of dtype, or in bytes of
     * dtypes[i]) */
    struct ompi_datatype_t        *dtype;
    struct ompi_datatype_t *const *dtypes;
    const int                     *counts, *displs;
    int                            nblocks;
    size_t                         count;
    int                            moved;    /* the call only moves its data (no reduction
                                                with an op that sees its layout) */
    mca_coll_gpu_compact_t         plan;     /* its compact staging (coll_gpu_compact.c),
                                                made and freed by mca_coll_gpu_stage_regions */
} mca_coll_gpu_region_t;

/* A request of the component: the layer underneath's request on staged host buffers. It
 * is a collective request of Open MPI's base (mca_coll_gpu_nbc_request_t, coll_gpu_compat.h):
 * the MPI bindings keep user ops and derived datatypes alive through fields of that type,
 * and their callbacks use the request after its free function has returned, so a released
 * request goes to a cache, never straight back to the heap. */
typedef struct mca_coll_gpu_request_t {
    mca_coll_gpu_nbc_request_t      super;
    struct mca_coll_gpu_request_t  *next;    /* in the list in flight, or of unused ones */
    mca_coll_gpu_module_t          *module;  /* retained: its stream carries the copies */
    ompi_request_t                 *under;   /* the layer underneath's request */
    mca_coll_gpu_staging_t          st;      /* the arena: lives until completion
                                                (persistent: until freed) */
    mca_coll_gpu_stage_t            send, recv;
    int                             send_copy_in, recv_copy_in, recv_copy_out;
    cg_dev_event_t                 *copied;  /* recorded after the copy back */
    int                             phase;   /* MCA_COLL_GPU_REQUEST_* */
    int                             error;   /* OMPI error of the round in flight */
    int                             freeing; /* MCA_COLL_GPU_FREE_*: who destroys it, decided
                                                by one atomic change between the thread that
                                                completes it and the one that frees it */
} mca_coll_gpu_request_t;

enum {
    MCA_COLL_GPU_FREE_NONE = 0, /* in flight, not freed */
    MCA_COLL_GPU_FREE_ASKED = 1, /* freed by the application while in flight: completion
                                   destroys it */
    MCA_COLL_GPU_FREE_DONE = 2   /* its round completes (or completed): the application's
                                   free destroys it */
};

OBJ_CLASS_DECLARATION(mca_coll_gpu_request_t);

/* coll_gpu_args.c: a call's buffers on this rank, staging them, the layer underneath. */
/* Describe the send and receive buffers of a call on this rank; returns the memory kinds
 * of the bytes it touches (MCA_COLL_GPU_KIND_* bits, 0 when none). */
int  mca_coll_gpu_describe(const mca_coll_gpu_args_t *a, mca_coll_gpu_region_t *send,
                           mca_coll_gpu_region_t *recv);
/* Take an arena for both regions and give each device region its place there (copy: copy
 * the inputs in now and wait for them). A layout with gaps is staged piece by piece where
 * it is written or leaves its first byte's allocation; where its pieces cannot be listed,
 * as one span, read first (its copy_in set). Host regions keep the user's pointer. On
 * failure the arena is given back. blocking: as mca_coll_gpu_staging_begin's. */
int  mca_coll_gpu_stage_regions(mca_coll_gpu_staging_t *st, mca_coll_gpu_module_t *m,
                                mca_coll_gpu_region_t *send, mca_coll_gpu_region_t *recv,
                                mca_coll_gpu_stage_t *s, mca_coll_gpu_stage_t *r, int copy,
                                int blocking);
/* The call's arguments as passed underneath with staged buffers s and r: a itself, or, where
 * one was staged compactly, copy with its type in place of the application's. */
const mca_coll_gpu_args_t *mca_coll_gpu_args_staged(const mca_coll_gpu_args_t *a,
                                                    const mca_coll_gpu_stage_t *s,
                                                    const mca_coll_gpu_stage_t *r,
                                                    mca_coll_gpu_args_t *copy);
/* The layer underneath's function for the call, on sbuf and rbuf (request: nonblocking
 * and persistent modes). */
int  mca_coll_gpu_under_call(mca_coll_gpu_module_t *m, const mca_coll_gpu_args_t *a,
                             const void *sbuf, void *rbuf, ompi_request_t **request);
/* The call's verbose line (coll_gpu_verbose 2): alg=staged or underlying. */
void mca_coll_gpu_log_args(const mca_coll_gpu_args_t *a, int kinds);

/* Run a call staged, in its mode: blocking (coll_gpu_staged_others.c), nonblocking
 * (coll_gpu_nonblocking.c), persistent init (coll_gpu_persistent.c). */
int  mca_coll_gpu_staged_run(mca_coll_gpu_module_t *m, const mca_coll_gpu_args_t *a);
int  mca_coll_gpu_staged_start(mca_coll_gpu_module_t *m, const mca_coll_gpu_args_t *a,
                               ompi_request_t **request);
int  mca_coll_gpu_staged_init(mca_coll_gpu_module_t *m, const mca_coll_gpu_args_t *a,
                              ompi_request_t **request);

/* coll_gpu_request.c: requests of the component. */
mca_coll_gpu_request_t *mca_coll_gpu_request_new(mca_coll_gpu_module_t *m,
                                                 struct ompi_communicator_t *comm,
                                                 bool persistent);
/* The layer underneath's request is running: the request is active until it and the copy
 * back have completed (progress). */
void mca_coll_gpu_request_submit(mca_coll_gpu_request_t *req);
/* A persistent request whose start failed: complete at once with rc, which its wait
 * reports (MPI_Startall does not report what a start returns). */
void mca_coll_gpu_request_fail(mca_coll_gpu_request_t *req, int rc);
/* The common start of a nonblocking or persistent call (a and persistent: its mode).
 * Without device buffers the call goes to the layer underneath as it is (its request in
 * *request, *req NULL). Otherwise *req is a new request of the component: the regions
 * placed in staging (a nonblocking call's inputs copied in now, after the application's
 * device work), the layer underneath's request made on the host copies; send and recv
 * describe the regions (their copy steps). On failure *req is NULL. */
int  mca_coll_gpu_request_stage(mca_coll_gpu_module_t *m, const mca_coll_gpu_args_t *a,
                                bool persistent, ompi_request_t **request,
                                mca_coll_gpu_request_t **req, mca_coll_gpu_region_t *send,
                                mca_coll_gpu_region_t *recv);
/* A request that never started (its setup failed): release it; returns rc. */
int  mca_coll_gpu_request_abandon(mca_coll_gpu_request_t *req, int rc);
/* Component close: stop the progress callback, free the unused requests. */
void mca_coll_gpu_requests_fini(void);

/* Entry points (the module's table; ompi_coll_gpu/coll_gpu_module.c installs them). */
int mca_coll_gpu_allgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                            void *rbuf, const int *rcounts, const int *displs,
                            struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module);
int mca_coll_gpu_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                          void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                          struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_gpu_alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                           struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                           const int *rdispls, struct ompi_datatype_t *rdtype,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_gpu_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                           struct ompi_datatype_t *const *sdtypes, void *rbuf,
                           const int *rcounts, const int *rdispls,
                           struct ompi_datatype_t *const *rdtypes,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_gpu_exscan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                        struct ompi_op_t *op, struct ompi_communicator_t *comm,
                        mca_coll_base_module_t *module);
int mca_coll_gpu_gather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                        void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                        struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_gpu_gatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                         void *rbuf, const int *rcounts, const int *displs,
                         struct ompi_datatype_t *rdtype, int root,
                         struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_gpu_reduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                        struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                        mca_coll_base_module_t *module);
int mca_coll_gpu_scan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                      struct ompi_op_t *op, struct ompi_communicator_t *comm,
                      mca_coll_base_module_t *module);
int mca_coll_gpu_scatter(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                         void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                         struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_gpu_scatterv(const void *sbuf, const int *scounts, const int *displs,
                          struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                          struct ompi_datatype_t *rdtype, int root,
                          struct ompi_communicator_t *comm, mca_coll_base_module_t *module);

/* Nonblocking (coll_gpu_nonblocking.c): the blocking signature plus the request. */
int mca_coll_gpu_iallreduce(const void *sbuf, void *rbuf, int count,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                            struct ompi_communicator_t *comm, ompi_request_t **request,
                            mca_coll_base_module_t *module);
int mca_coll_gpu_ibcast(void *buf, int count, struct ompi_datatype_t *dtype, int root,
                        struct ompi_communicator_t *comm, ompi_request_t **request,
                        mca_coll_base_module_t *module);
int mca_coll_gpu_iallgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                            void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                            struct ompi_communicator_t *comm, ompi_request_t **request,
                            mca_coll_base_module_t *module);
int mca_coll_gpu_ireduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                                 struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                 struct ompi_communicator_t *comm, ompi_request_t **request,
                                 mca_coll_base_module_t *module);
int mca_coll_gpu_ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                       struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                       struct ompi_communicator_t *comm,
                                       ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_iallgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                             void *rbuf, const int *rcounts, const int *displs,
                             struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                             ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_ialltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                           void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                           struct ompi_communicator_t *comm, ompi_request_t **request,
                           mca_coll_base_module_t *module);
int mca_coll_gpu_ialltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                            struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                            const int *rdispls, struct ompi_datatype_t *rdtype,
                            struct ompi_communicator_t *comm, ompi_request_t **request,
                            mca_coll_base_module_t *module);
int mca_coll_gpu_ialltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                            struct ompi_datatype_t *const *sdtypes, void *rbuf,
                            const int *rcounts, const int *rdispls,
                            struct ompi_datatype_t *const *rdtypes,
                            struct ompi_communicator_t *comm, ompi_request_t **request,
                            mca_coll_base_module_t *module);
int mca_coll_gpu_iexscan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                         struct ompi_op_t *op, struct ompi_communicator_t *comm,
                         ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_igather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                         void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                         struct ompi_communicator_t *comm, ompi_request_t **request,
                         mca_coll_base_module_t *module);
int mca_coll_gpu_igatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                          void *rbuf, const int *rcounts, const int *displs,
                          struct ompi_datatype_t *rdtype, int root,
                          struct ompi_communicator_t *comm, ompi_request_t **request,
                          mca_coll_base_module_t *module);
int mca_coll_gpu_ireduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                         struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                         ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_iscan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                       struct ompi_op_t *op, struct ompi_communicator_t *comm,
                       ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_iscatter(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                          void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                          struct ompi_communicator_t *comm, ompi_request_t **request,
                          mca_coll_base_module_t *module);
int mca_coll_gpu_iscatterv(const void *sbuf, const int *scounts, const int *displs,
                           struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                           struct ompi_datatype_t *rdtype, int root,
                           struct ompi_communicator_t *comm, ompi_request_t **request,
                           mca_coll_base_module_t *module);

/* Persistent (coll_gpu_persistent.c): the blocking signature plus info and the request. */
int mca_coll_gpu_allreduce_init(const void *sbuf, void *rbuf, int count,
                                struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_bcast_init(void *buf, int count, struct ompi_datatype_t *dtype, int root,
                            struct ompi_communicator_t *comm, struct ompi_info_t *info,
                            ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_allgather_init(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                                void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                                struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_reduce_scatter_init(const void *sbuf, void *rbuf, const int *rcounts,
                                     struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                     struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                     ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_reduce_scatter_block_init(const void *sbuf, void *rbuf, int rcount,
                                           struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                           struct ompi_communicator_t *comm,
                                           struct ompi_info_t *info, ompi_request_t **request,
                                           mca_coll_base_module_t *module);
int mca_coll_gpu_allgatherv_init(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                                 void *rbuf, const int *rcounts, const int *displs,
                                 struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                                 struct ompi_info_t *info, ompi_request_t **request,
                                 mca_coll_base_module_t *module);
int mca_coll_gpu_alltoall_init(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                               void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                               struct ompi_communicator_t *comm, struct ompi_info_t *info,
                               ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_alltoallv_init(const void *sbuf, const int *scounts, const int *sdispls,
                                struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                                const int *rdispls, struct ompi_datatype_t *rdtype,
                                struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_alltoallw_init(const void *sbuf, const int *scounts, const int *sdispls,
                                struct ompi_datatype_t *const *sdtypes, void *rbuf,
                                const int *rcounts, const int *rdispls,
                                struct ompi_datatype_t *const *rdtypes,
                                struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_exscan_init(const void *sbuf, void *rbuf, int count,
                             struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                             struct ompi_communicator_t *comm, struct ompi_info_t *info,
                             ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_gather_init(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                             void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                             struct ompi_communicator_t *comm, struct ompi_info_t *info,
                             ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_gatherv_init(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                              void *rbuf, const int *rcounts, const int *displs,
                              struct ompi_datatype_t *rdtype, int root,
                              struct ompi_communicator_t *comm, struct ompi_info_t *info,
                              ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_reduce_init(const void *sbuf, void *rbuf, int count,
                             struct ompi_datatype_t *dtype, struct ompi_op_t *op, int root,
                             struct ompi_communicator_t *comm, struct ompi_info_t *info,
                             ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_scan_init(const void *sbuf, void *rbuf, int count,
                           struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                           struct ompi_communicator_t *comm, struct ompi_info_t *info,
                           ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_scatter_init(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                              void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                              struct ompi_communicator_t *comm, struct ompi_info_t *info,
                              ompi_request_t **request, mca_coll_base_module_t *module);
int mca_coll_gpu_scatterv_init(const void *sbuf, const int *scounts, const int *displs,
                               struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                               struct ompi_datatype_t *rdtype, int root,
                               struct ompi_communicator_t *comm, struct ompi_info_t *info,
                               ompi_request_t **request, mca_coll_base_module_t *module);

END_C_DECLS
#endif /* MCA_COLL_GPU_STAGED_CALLS_H */
