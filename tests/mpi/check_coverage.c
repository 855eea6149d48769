/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_coverage: every collective coll/gpu stages, in every mode, on memory under test
 * (the simulated GPU's without a GPU): the blocking collectives without fast paths
 * (reduce, scan, exscan, gather(v), scatter(v), allgatherv, alltoall(v,w)), and the
 * nonblocking and persistent forms of those and of allreduce, bcast, allgather,
 * reduce_scatter(_block) -- over predefined types and ops, derived datatypes (gaps, a
 * negative lower bound) with user ops (one not commutative), counts 0/1/7/1000, in place,
 * roots other than 0, several communicators (single-rank ones included), requests
 * completed with Wait, Test loops, Waitall, Waitany, Testall, Waitsome, Testany; then
 * several requests in flight on several communicators, completed in any order
 * (check_coverage_overlap.c). Exit status 0 only when every rank passed.
 *
 * World rank 0 prints "coll_coverage: window end staged=NAME,..." with every call it made
 * on device memory with data (communicators of more than one rank), so that the suite can
 * match them with the component's verbose log.
 *
 * This file: layouts and user ops, buffers and their expectations, one call from start to
 * end; the matrix and main are in check_coverage_main.c.
 */
#include "check_coverage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CV_POISON 0xA5

int  tc_verbose;
long tc_tests, tc_failures;

void tc_fail(const char *what, const char *detail)
{
    tc_failures++;
    if (tc_failures <= 20) {
        fprintf(stderr, "coll_coverage: FAIL %s: %s\n", what, detail);
    } else if (tc_failures == 21) {
        fprintf(stderr, "coll_coverage: (further failures not printed)\n");
    }
}

/* ---- names of the calls made on device memory (the proof) ---------------------------- */

static char cv_staged_names[64][64];
static int  cv_num_staged_names;

static void cv_note_call(const cv_call_t *k)
{
    if (k->ctx->kind != EM_DEVICE || k->ctx->size < 2 || k->count == 0 || k->round > 0 ||
        (k->coll->fast && k->mode == CV_BLOCKING)) {
        return;
    }
    for (int i = 0; i < cv_num_staged_names; i++) {
        if (strcmp(cv_staged_names[i], cv_name(k)) == 0) {
            return;
        }
    }
    if (cv_num_staged_names < 64) {
        snprintf(cv_staged_names[cv_num_staged_names++], sizeof(cv_staged_names[0]), "%s",
                 cv_name(k));
    }
}

const char *cv_name(const cv_call_t *k)
{
    static char name[64];

    snprintf(name, sizeof(name), "%s%s%s", k->mode == CV_NONBLOCKING ? "i" : "", k->coll->name,
             k->mode == CV_PERSISTENT ? "_init" : "");
    return name;
}

/* ---- layouts and user ops ------------------------------------------------------------ */

#define CV_MAX_LAYOUTS 32
static cv_layout_t cv_layouts[CV_MAX_LAYOUTS];
static int         cv_num_layouts;

static const cv_layout_t *cv_layout_of(MPI_Datatype dt)
{
    for (int i = 0; i < cv_num_layouts; i++) {
        if (cv_layouts[i].dt == dt) {
            return &cv_layouts[i];
        }
    }
    return NULL;
}

/* The user ops on derived layouts of MPI_INT: element-wise sum, or the 2x2 matrix product
 * inout = in x inout (not commutative), arithmetic modulo 2^32. */
static void cv_user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const cv_layout_t *l = cv_layout_of(*dt);

    for (int e = 0; e < *len && l != NULL; e++) {
        char    *a = (char *)in + (ptrdiff_t)e * (ptrdiff_t)l->extent;
        char    *b = (char *)inout + (ptrdiff_t)e * (ptrdiff_t)l->extent;
        uint32_t x[4], y[4], r[4];
        for (int f = 0; f < l->nb; f++) {
            memcpy(&x[f], a + l->off[f], 4);
            memcpy(&y[f], b + l->off[f], 4);
        }
        if (l->matmul) {
            r[0] = x[0] * y[0] + x[1] * y[2];
            r[1] = x[0] * y[1] + x[1] * y[3];
            r[2] = x[2] * y[0] + x[3] * y[2];
            r[3] = x[2] * y[1] + x[3] * y[3];
        } else {
            for (int f = 0; f < l->nb; f++) {
                r[f] = x[f] + y[f];
            }
        }
        for (int f = 0; f < l->nb; f++) {
            memcpy(b + l->off[f], &r[f], 4);
        }
    }
}

/* A layout of base type t: plain (t itself), vector (2 of t with a hole of one between),
 * neg_lb (t at -extent and +extent: a negative true lower bound, a hole at 0), matrix
 * (4 ints, with the matrix product). */
const cv_layout_t *cv_layout(const char *kind, const tc_type_t *t)
{
    const ptrdiff_t e = (ptrdiff_t)t->extent;
    cv_layout_t     l = {.name = kind, .base = t->dt, .nb = 1, .extent = t->extent, .hi = e};

    for (int i = 0; i < cv_num_layouts; i++) {
        if (strcmp(cv_layouts[i].name, kind) == 0 && cv_layouts[i].base == t->dt) {
            return &cv_layouts[i];
        }
    }
    if (strcmp(kind, "plain") == 0) {
        l.dt = t->dt;
    } else if (strcmp(kind, "vector") == 0) {
        MPI_Type_vector(2, 1, 2, t->dt, &l.dt);
        l.nb = 2, l.off[1] = 2 * e, l.extent = 3 * t->extent, l.hi = 3 * e;
    } else if (strcmp(kind, "neg_lb") == 0) {
        int          lens[2]  = {1, 1};
        MPI_Aint     disps[2] = {-e, e};
        MPI_Datatype types[2] = {t->dt, t->dt};
        MPI_Type_create_struct(2, lens, disps, types, &l.dt);
        l.nb = 2, l.off[0] = -e, l.off[1] = e, l.extent = 3 * t->extent, l.lo = -e, l.hi = 2 * e;
    } else { /* matrix */
        MPI_Type_contiguous(4, MPI_INT, &l.dt);
        l.nb = 4, l.matmul = 1, l.extent = 16, l.hi = 16;
        for (int f = 0; f < 4; f++) {
            l.off[f] = 4 * f;
        }
    }
    if (strcmp(kind, "plain") != 0) {
        MPI_Type_commit(&l.dt);
    }
    if (cv_num_layouts == CV_MAX_LAYOUTS) {
        fprintf(stderr, "coll_coverage: too many layouts\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    cv_layouts[cv_num_layouts] = l;
    return &cv_layouts[cv_num_layouts++];
}

/* ---- buffers and expectations -------------------------------------------------------- */

static uint64_t cv_seed(const cv_call_t *k)
{
    return k->seed + (uint64_t)k->round * 0x632be59bd9b4e019ull;
}

void cv_buf_alloc(cv_call_t *k, cv_buf_t *b, size_t elements)
{
    const cv_layout_t *l     = k->lay;
    const size_t       shift = (size_t)(-l->lo);
    const size_t       size  = elements ? shift + (elements - 1) * l->extent + (size_t)l->hi : 1;

    if (b->dev != NULL && b->size != size) {
        fprintf(stderr, "coll_coverage: a persistent call's buffer changed size\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (b->dev == NULL) {
        b->init  = malloc(size);
        b->want  = malloc(size);
        b->check = malloc(size);
        b->dev   = em_alloc(size, k->ctx->kind);
        b->size  = size;
        b->shift = elements ? shift : 0;
    }
    memset(b->init, CV_POISON, size);
    memset(b->want, CV_POISON, size);
    memset(b->check, CV_HOLE, size);
    b->exact = (b == &k->send);
}

void *cv_ptr(const cv_buf_t *b)
{
    return b->dev != NULL ? (char *)b->dev + b->shift : NULL;
}

static void cv_buf_free(cv_call_t *k, cv_buf_t *b)
{
    if (b->dev != NULL) {
        em_free(b->dev, k->ctx->kind);
        free(b->init), free(b->want), free(b->check);
    }
    memset(b, 0, sizeof(*b));
}

/* Byte offset of base element f of element pos. */
static size_t cv_at(const cv_call_t *k, const cv_buf_t *b, size_t pos, int f)
{
    return (size_t)((ptrdiff_t)b->shift + (ptrdiff_t)(pos * k->lay->extent) + k->lay->off[f]);
}

static void cv_gen(const cv_call_t *k, int rank, size_t idx, int f, void *dst)
{
    tc_gen(k->type, k->op, cv_seed(k), rank, idx * (size_t)k->lay->nb + (size_t)f, dst);
}

static void cv_mark(const cv_call_t *k, cv_buf_t *b, size_t at, int what)
{
    b->check[at] = (char)what;
    memset(b->check + at + 1, CV_SKIP, k->type->extent - 1);
}

void cv_input(cv_call_t *k, cv_buf_t *b, size_t pos, int rank, size_t idx)
{
    for (int f = 0; f < k->lay->nb; f++) {
        cv_gen(k, rank, idx, f, b->init + cv_at(k, b, pos, f));
    }
}

void cv_expect(cv_call_t *k, cv_buf_t *b, size_t pos, int rank, size_t idx)
{
    for (int f = 0; f < k->lay->nb; f++) {
        cv_gen(k, rank, idx, f, b->want + cv_at(k, b, pos, f));
        cv_mark(k, b, cv_at(k, b, pos, f), CV_ELEM);
    }
}

void cv_expect_any(cv_call_t *k, cv_buf_t *b, size_t pos)
{
    for (int f = 0; f < k->lay->nb; f++) {
        cv_mark(k, b, cv_at(k, b, pos, f), CV_SKIP);
    }
}

void cv_expect_reduced(cv_call_t *k, cv_buf_t *b, size_t pos, int lo, int hi, size_t idx)
{
    char acc[4][64], x[64];

    for (int f = 0; f < k->lay->nb; f++) {
        cv_gen(k, lo, idx, f, acc[f]);
    }
    for (int r = lo + 1; r <= hi; r++) {
        if (k->lay->matmul) { /* acc = acc x x_r */
            uint32_t a[4], y[4];
            for (int f = 0; f < 4; f++) {
                memcpy(&a[f], acc[f], 4);
                cv_gen(k, r, idx, f, x);
                memcpy(&y[f], x, 4);
            }
            uint32_t p[4] = {a[0] * y[0] + a[1] * y[2], a[0] * y[1] + a[1] * y[3],
                             a[2] * y[0] + a[3] * y[2], a[2] * y[1] + a[3] * y[3]};
            for (int f = 0; f < 4; f++) {
                memcpy(acc[f], &p[f], 4);
            }
            continue;
        }
        for (int f = 0; f < k->lay->nb; f++) {
            cv_gen(k, r, idx, f, x);
            tc_combine(k->type, k->op, acc[f], x);
        }
    }
    for (int f = 0; f < k->lay->nb; f++) {
        memcpy(b->want + cv_at(k, b, pos, f), acc[f], k->type->extent);
        cv_mark(k, b, cv_at(k, b, pos, f), CV_ELEM);
    }
}

int cv_vcount(const cv_call_t *k, int rank)
{
    long v = (long)k->count + rank % 3 - 1;
    return k->count == 0 || v < 0 ? 0 : (int)v;
}

size_t cv_vdispls(const int *counts, int *displs, int n)
{
    size_t at = 0;

    for (int r = n - 1; r >= 0; r--) {
        displs[r] = (int)at;
        at += (size_t)counts[r] + 1;
    }
    return at;
}

/* ---- one call ------------------------------------------------------------------------- */

static void cv_report(const cv_call_t *k, const char *what)
{
    char detail[512];

    snprintf(detail, sizeof(detail), "%s %s/%s op=%s count=%zu %s root=%d comm=%s rank=%d "
             "round=%d completion=%d: %s", cv_name(k), k->type->name, k->lay->name,
             k->lay->matmul ? "matmul" : k->op >= 0 ? tc_ops[k->op].name : "-", k->count,
             k->in_place ? "in-place" : "out-of-place", k->root, k->ctx->comm_name,
             k->ctx->rank, k->round, k->completion, what);
    tc_fail(cv_name(k), detail);
}

void cv_check_rc(cv_call_t *k, const char *what, int rc)
{
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING], detail[MPI_MAX_ERROR_STRING + 64];
        int  len = 0;
        MPI_Error_string(rc, msg, &len);
        snprintf(detail, sizeof(detail), "%s returned %s", what, msg);
        cv_report(k, detail);
    }
}

int cv_queued_inputs;

void cv_prepare(cv_call_t *k)
{
    void (*write)(void *, const void *, size_t, em_kind_t) =
        cv_queued_inputs ? em_to_dev_queued : em_to_dev;
    const int n = k->ctx->size;

    if (k->rcounts == NULL) {
        k->scounts = calloc((size_t)n, sizeof(int)), k->sdispls = calloc((size_t)n, sizeof(int));
        k->rcounts = calloc((size_t)n, sizeof(int)), k->rdispls = calloc((size_t)n, sizeof(int));
        k->stypes  = calloc((size_t)n, sizeof(MPI_Datatype));
        k->rtypes  = calloc((size_t)n, sizeof(MPI_Datatype));
        k->req     = MPI_REQUEST_NULL;
    }
    k->sarg = k->rarg = NULL;
    k->coll->prepare(k);
    if (k->send.dev != NULL) {
        write(k->send.dev, k->send.init, k->send.size, k->ctx->kind);
    }
    if (k->recv.dev != NULL) {
        write(k->recv.dev, k->recv.init, k->recv.size, k->ctx->kind);
    }
}

int cv_issue(cv_call_t *k)
{
    int rc = MPI_SUCCESS;

    if (k->mode != CV_PERSISTENT || k->round == 0) {
        rc = k->coll->call(k);
        cv_note_call(k);
    }
    if (rc == MPI_SUCCESS && k->mode == CV_PERSISTENT) {
        rc = MPI_Start(&k->req);
    }
    return rc;
}

/* Complete one request in one of several ways (MPI_Wait, Test loops, the array forms). */
static int cv_complete(int how, MPI_Request *req)
{
    int flag = 0, index, count, rc = MPI_SUCCESS;

    switch (how % 7) {
    case 0: return MPI_Wait(req, MPI_STATUS_IGNORE);
    case 1:
        while (rc == MPI_SUCCESS && !flag) {
            rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        }
        return rc;
    case 2: return MPI_Waitall(1, req, MPI_STATUSES_IGNORE);
    case 3: return MPI_Waitany(1, req, &index, MPI_STATUS_IGNORE);
    case 4:
        while (rc == MPI_SUCCESS && !flag) {
            rc = MPI_Testall(1, req, &flag, MPI_STATUSES_IGNORE);
        }
        return rc;
    case 5: return MPI_Waitsome(1, req, &count, &index, MPI_STATUSES_IGNORE);
    default:
        while (rc == MPI_SUCCESS && !flag) {
            rc = MPI_Testany(1, req, &index, &flag, MPI_STATUS_IGNORE);
        }
        return rc;
    }
}

static void cv_verify_buf(cv_call_t *k, cv_buf_t *b, const char *which)
{
    char  *got = malloc(b->size), what[160];
    size_t bad = 0;

    em_to_host(got, b->dev, b->size, k->ctx->kind);
    if (b->exact) {
        if (memcmp(got, b->init, b->size) != 0) {
            snprintf(what, sizeof(what), "%s buffer modified", which);
            cv_report(k, what);
        }
        free(got);
        return;
    }
    for (size_t i = 0; i < b->size; i++) {
        int wrong = (b->check[i] == CV_ELEM && tc_compare(k->type, got + i, b->want + i) != 0) ||
                    (b->check[i] == CV_HOLE && (unsigned char)got[i] != CV_POISON);
        if (wrong && bad++ == 0) {
            char g[96] = "", w[96] = "";
            if (b->check[i] == CV_ELEM) {
                tc_format(k->type, got + i, g, sizeof(g));
                tc_format(k->type, b->want + i, w, sizeof(w));
                snprintf(what, sizeof(what), "%s buffer: wrong element at byte %zu (got %s, want %s)",
                         which, i, g, w);
            } else {
                snprintf(what, sizeof(what), "%s buffer: byte %zu outside the data changed (0x%02x)",
                         which, i, (unsigned char)got[i]);
            }
            cv_report(k, what);
        }
    }
    free(got);
}

void cv_verify(cv_call_t *k)
{
    if (k->send.dev != NULL) {
        cv_verify_buf(k, &k->send, "send");
    }
    if (k->recv.dev != NULL) {
        cv_verify_buf(k, &k->recv, "receive");
    }
    tc_tests++;
}

void cv_release(cv_call_t *k)
{
    if (k->mode == CV_PERSISTENT && k->req != MPI_REQUEST_NULL) {
        cv_check_rc(k, "MPI_Request_free", MPI_Request_free(&k->req));
    }
    cv_buf_free(k, &k->send);
    cv_buf_free(k, &k->recv);
    free(k->scounts), free(k->sdispls), free(k->rcounts), free(k->rdispls);
    free(k->stypes), free(k->rtypes);
    k->scounts = k->sdispls = k->rcounts = k->rdispls = NULL;
    k->stypes = k->rtypes = NULL;
}

void cv_run(cv_call_t *k)
{
    const int rounds = k->mode == CV_PERSISTENT ? 2 : 1;

    for (k->round = 0; k->round < rounds; k->round++) {
        int rc;
        if (tc_verbose > 1) { /* --trace: the case before the call */
            fprintf(stderr, "coll_coverage: %s %s/%s op=%s count=%zu %s root=%d comm=%s "
                    "rank=%d round=%d completion=%d\n", cv_name(k), k->type->name,
                    k->lay->name, k->lay->matmul ? "matmul" : k->op >= 0 ? tc_ops[k->op].name
                    : "-", k->count, k->in_place ? "in-place" : "out-of-place", k->root,
                    k->ctx->comm_name, k->ctx->rank, k->round, k->completion);
        }
        cv_prepare(k);
        rc = cv_issue(k);
        cv_check_rc(k, k->mode == CV_BLOCKING ? "the call" : "the start", rc);
        if (rc == MPI_SUCCESS && k->mode != CV_BLOCKING) {
            cv_check_rc(k, "the completion", cv_complete(k->completion + k->round, &k->req));
        }
        cv_verify(k);
    }
    cv_release(k);
}

/* One write of the whole line: stderr is unbuffered, and pieces written one by one came
 * back from mpirun with another line of the run between them. */
void cv_print_staged_names(void)
{
    char   line[4000];
    size_t at = (size_t)snprintf(line, sizeof(line), "coll_coverage: window end staged=");

    for (int i = 0; i < cv_num_staged_names && at < sizeof(line); i++) {
        at += (size_t)snprintf(line + at, sizeof(line) - at, "%s%s", i ? "," : "", cv_staged_names[i]);
    }
    if (at >= sizeof(line) - 1) {
        at = sizeof(line) - 2;
    }
    line[at++] = '\n';
    (void)!write(STDERR_FILENO, line, at);
}

void cv_layouts_free(void)
{
    for (int i = 0; i < cv_num_layouts; i++) {
        if (strcmp(cv_layouts[i].name, "plain") != 0) {
            MPI_Type_free(&cv_layouts[i].dt);
        }
    }
    cv_num_layouts = 0;
}

void cv_user_ops(MPI_Op *sum, MPI_Op *matmul)
{
    MPI_Op_create(cv_user_fn, 1, sum);
    MPI_Op_create(cv_user_fn, 0, matmul);
}

