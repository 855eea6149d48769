/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_coverage: the collectives that coll/gpu stages (every blocking collective without a
 * fast path, and the nonblocking and persistent forms of all of them) on memory under
 * test, against references computed on the host (check_types.c's arithmetic).
 *
 * A call (cv_call_t) is described by host images of its device buffers: what is written
 * to the device before the call (init), what the device must hold after it (want) and,
 * byte by byte, what is checked (check): the first byte of an element (compared as the
 * element's type, so padding never matters), bytes outside the data (holes between
 * blocks, gaps of derived datatypes: the poison written before must survive), bytes the
 * standard leaves undefined (not checked). Send buffers must come back byte for byte.
 */
#ifndef CG_CHECK_COVERAGE_H
#define CG_CHECK_COVERAGE_H

#include "check_colls.h"

#include <mpi.h>
/* Persistent collectives: MPI_<Coll>_init from MPI 4.0 on and in Open MPI 5.0 (which still
 * says MPI_VERSION 3); Open MPI 4.1 has them as MPIX_<Coll>_init in <mpi-ext.h>. */
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define CV_INIT(name) MPI_##name##_init
#else
#include <mpi-ext.h>
#define CV_INIT(name) MPIX_##name##_init
#endif

typedef enum { CV_BLOCKING, CV_NONBLOCKING, CV_PERSISTENT, CV_NUM_MODES } cv_mode_t;

/* How the base elements of one element of the call's datatype lie in memory. */
typedef struct {
    const char  *name;   /* plain, vector, neg_lb, matrix */
    MPI_Datatype base;   /* the predefined type it is made of */
    MPI_Datatype dt;     /* the datatype of the call */
    int          nb;     /* base elements (of the case's predefined type) per element */
    ptrdiff_t    off[4]; /* their byte offsets from the element's address */
    size_t       extent; /* bytes from one element to the next */
    ptrdiff_t    lo, hi; /* an element's bytes, relative to its address: [lo, hi) */
    int          matmul; /* the user op: 2x2 matrix product of the 4 ints, in rank order */
} cv_layout_t;

enum { CV_HOLE = 0, CV_ELEM = 1, CV_SKIP = 2 };

/* One device buffer of a call and its host images. */
typedef struct {
    char  *init;   /* written to the device before the call */
    char  *want;   /* what the device must hold after it */
    char  *check;  /* per byte: CV_HOLE (poison survives), CV_ELEM (an element starts), CV_SKIP */
    size_t size;   /* bytes of the allocation */
    size_t shift;  /* the call gets dev + shift (layouts with a negative lower bound) */
    void  *dev;    /* NULL: no buffer (the call gets NULL) */
    int    exact;  /* a send buffer: every byte must come back unchanged */
} cv_buf_t;

typedef struct cv_coll cv_coll_t;

typedef struct {
    /* the case */
    tc_ctx_t          *ctx;
    const cv_coll_t   *coll;
    const tc_type_t   *type;
    const cv_layout_t *lay;
    int                op;     /* tc_ops index; -1: no op (or the layout's user op) */
    MPI_Op             mpi_op;
    size_t             count;
    int                in_place;
    int                root;
    int                null_ignored; /* NULL where the call ignores a buffer on this rank */
    int                completion;   /* how requests complete (cv_complete) */
    cv_mode_t          mode;
    uint64_t           seed;
    /* the call */
    int                round;  /* persistent: each start is a round with new inputs */
    cv_buf_t           send, recv;
    void              *sarg, *rarg; /* what the call gets (MPI_IN_PLACE, NULL, dev + shift) */
    int               *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Datatype      *stypes, *rtypes;
    MPI_Request        req;
} cv_call_t;

struct cv_coll {
    const char *name;     /* of the blocking form: "reduce" */
    int         reduces;  /* takes an op */
    int         rooted;
    int         in_place; /* has an MPI_IN_PLACE form */
    int         fast;     /* blocking form has fast paths (tested by coll_check) */
    void (*prepare)(cv_call_t *k); /* buffers, arguments and expectations of this round */
    int  (*call)(cv_call_t *k);    /* the call in k->mode (persistent: the init) */
};

extern const cv_coll_t cv_colls[];
extern const int       cv_num_colls;

/* A layout of base type t (check_coverage.c): plain, vector, neg_lb, matrix (MPI_INT). */
const cv_layout_t *cv_layout(const char *kind, const tc_type_t *t);

/* Buffers and expectations (check_coverage.c). */
void  cv_buf_alloc(cv_call_t *k, cv_buf_t *b, size_t elements);
void *cv_ptr(const cv_buf_t *b);
/* Element pos of buffer b holds element idx of rank's input (init; want too for send). */
void  cv_input(cv_call_t *k, cv_buf_t *b, size_t pos, int rank, size_t idx);
/* After the call, element pos of b must hold element idx of rank's input. */
void  cv_expect(cv_call_t *k, cv_buf_t *b, size_t pos, int rank, size_t idx);
/* ... the reduction of element idx over ranks lo..hi, in rank order. */
void  cv_expect_reduced(cv_call_t *k, cv_buf_t *b, size_t pos, int lo, int hi, size_t idx);
/* ... anything (the standard leaves it undefined). */
void  cv_expect_any(cv_call_t *k, cv_buf_t *b, size_t pos);
/* Counts per rank around count (uneven, an empty one when count is small), and
 * displacements placing the blocks in reverse rank order with a hole after each;
 * returns the elements the blocks span. */
int   cv_vcount(const cv_call_t *k, int rank);
size_t cv_vdispls(const int *counts, int *displs, int n);

/* One call from start to end: prepare, issue, complete, verify (persistent: two rounds). */
void cv_run(cv_call_t *k);
/* The steps, for the overlap tests (check_coverage_overlap.c). */
/* --queued: the device buffers' inputs are written on the default stream of their device,
 * queued (em_to_dev_queued), just before each call: every mode must wait for them */
extern int cv_queued_inputs;
void cv_prepare(cv_call_t *k);       /* prepare this round and write the device buffers */
int  cv_issue(cv_call_t *k);         /* call (persistent: init at round 0, then start) */
void cv_verify(cv_call_t *k);        /* read back and compare */
void cv_release(cv_call_t *k);       /* buffers, arrays, persistent request */
void cv_check_rc(cv_call_t *k, const char *what, int rc);
const char *cv_name(const cv_call_t *k); /* "ireduce", "reduce_init", "reduce" */

void cv_run_overlap(tc_ctx_t *world, tc_ctx_t *dup, tc_ctx_t *reversed, uint64_t seed);
/* n persistent allreduces with a user op (sum), started together, freed in a row. */
void cv_run_many_persistent(tc_ctx_t *ctx, MPI_Op user_sum, int n);
/* Layouts with gaps staged piece by piece (check_coverage_pieces.c). */
void cv_run_pieces(tc_ctx_t *ctx, uint64_t seed);
/* How many of its calls had a type over device memory and host memory over 64 MiB apart. */
int  cv_pieces_far_cases(void);

/* For main (check_coverage_main.c): the proof line, the layouts' datatypes, the user ops
 * (element-wise sum, commutative; 2x2 matrix product, not commutative). */
void cv_print_staged_names(void);
void cv_layouts_free(void);
void cv_user_ops(MPI_Op *sum, MPI_Op *matmul);

#endif
