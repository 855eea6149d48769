/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The MPI integration suite (coll_check): shared declarations.
 *
 * Inputs are generated from (seed, rank, element) so that every rank can compute every
 * other rank's input and hence the expected output, with reference arithmetic written
 * here independently of the component's reduction code.
 */
#ifndef CG_CHECK_H
#define CG_CHECK_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "examples/example_mem.h"

typedef enum {
    TC_CHAR,    /* characters: no reduction */
    TC_INT,     /* C signed integers */
    TC_UINT,    /* C unsigned integers */
    TC_FINT,    /* Fortran INTEGER: arithmetic and bitwise ops */
    TC_BYTE,    /* MPI_BYTE: bitwise ops */
    TC_FLOAT,   /* float, double, long double, Fortran REAL/DOUBLE PRECISION */
    TC_COMPLEX, /* SUM and PROD */
    TC_BOOL,    /* C bool, Fortran LOGICAL: logical ops */
    TC_PAIR     /* value/index pairs: MINLOC, MAXLOC */
} tc_class_t;

typedef enum { TB_I, TB_U, TB_F, TB_LD } tc_base_t; /* how one scalar is stored */

typedef struct {
    MPI_Datatype dt;
    const char  *name;
    tc_class_t   cls;
    tc_base_t    base;   /* scalar kind of the value (and of re/im for complex) */
    size_t       vsize;  /* bytes of the value (of re for complex) */
    size_t       extent; /* bytes of one element */
    size_t       ioff;   /* pairs: offset of the int index */
} tc_type_t;

typedef struct {
    MPI_Op      op;
    const char *name;
} tc_op_t;

extern const tc_type_t tc_types[];
extern const int       tc_num_types;
extern const tc_op_t   tc_ops[];
extern const int       tc_num_ops;

/* Is op defined on type by the MPI standard? */
int tc_op_valid(const tc_type_t *t, int op_index);
const tc_type_t *tc_type_by_name(const char *name);
int tc_op_by_name(const char *name);
/* Is name in the comma-separated list ("all": everything)? Command-line selections. */
int tc_listed(const char *list, const char *name);

/* Write element i of rank's input for (seed, op) into dst (one extent; padding is left). */
void tc_gen(const tc_type_t *t, int op_index, uint64_t seed, int rank, size_t i, void *dst);
/* acc = acc op x, element-wise, one element, in the standard's semantics. */
void tc_combine(const tc_type_t *t, int op_index, void *acc, const void *x);
/* Compare the significant bytes of two elements; 0 when equal. */
int tc_compare(const tc_type_t *t, const void *a, const void *b);
/* Print one element. */
void tc_format(const tc_type_t *t, const void *elem, char *out, size_t len);

/* Failures and counters (check_main.c). */
extern int  tc_verbose;
extern long tc_tests, tc_failures;
void tc_fail(const char *what, const char *detail);

#endif
