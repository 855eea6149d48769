/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Derived datatypes and user-defined ops: layouts with gaps (which must survive), a negative
 * true lower bound, different but matching send/receive types, a non-commutative op, and
 * MPI_BOTTOM with absolute addresses of device memory.
 */
#include "check_colls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TD_POISON 0x5A
#define TD_MAXF 4

typedef enum { TD_SUM, TD_STRUCT, TD_MATMUL } td_opkind_t;

typedef struct {
    const char  *name;
    MPI_Datatype dt;
    size_t       extent;
    ptrdiff_t    shift; /* first byte of element 0 relative to the buffer pointer */
    size_t       body;  /* bytes from that first byte to the end of element 0's data */
    int          nf;
    size_t       off[TD_MAXF]; /* field offsets relative to the buffer pointer */
    int          is_double[TD_MAXF];
    td_opkind_t  opkind;
    MPI_Op       op;
} td_layout_t;

static int32_t td_get_i(const char *p) { int32_t v; memcpy(&v, p, 4); return v; }
static double  td_get_d(const char *p) { double v; memcpy(&v, p, 8); return v; }
static void    td_put_i(char *p, int32_t v) { memcpy(p, &v, 4); }
static void    td_put_d(char *p, double v) { memcpy(p, &v, 8); }

/* The user ops see the buffer pointers MPI passes; fields sit at the layout's offsets. */
static const td_layout_t *td_current;

static void td_combine(const td_layout_t *l, const char *in, char *inout)
{
    switch (l->opkind) {
    case TD_SUM:
        for (int f = 0; f < l->nf; f++) {
            if (l->is_double[f]) {
                td_put_d(inout + l->off[f], td_get_d(inout + l->off[f]) + td_get_d(in + l->off[f]));
            } else {
                td_put_i(inout + l->off[f], (int32_t)((uint32_t)td_get_i(inout + l->off[f]) +
                                                      (uint32_t)td_get_i(in + l->off[f])));
            }
        }
        break;
    case TD_STRUCT: {
        double a = td_get_d(in + l->off[1]), b = td_get_d(inout + l->off[1]);
        td_put_i(inout + l->off[0], td_get_i(inout + l->off[0]) + td_get_i(in + l->off[0]));
        td_put_d(inout + l->off[1], a > b ? a : b);
        break;
    }
    case TD_MATMUL: { /* inout = in x inout, 2x2 row-major, arithmetic mod 2^32 */
        uint32_t x[4], y[4];
        for (int f = 0; f < 4; f++) {
            x[f] = (uint32_t)td_get_i(in + l->off[f]);
            y[f] = (uint32_t)td_get_i(inout + l->off[f]);
        }
        td_put_i(inout + l->off[0], (int32_t)(x[0] * y[0] + x[1] * y[2]));
        td_put_i(inout + l->off[1], (int32_t)(x[0] * y[1] + x[1] * y[3]));
        td_put_i(inout + l->off[2], (int32_t)(x[2] * y[0] + x[3] * y[2]));
        td_put_i(inout + l->off[3], (int32_t)(x[2] * y[1] + x[3] * y[3]));
        break;
    }
    }
}

/* Reference: acc = acc op x, in rank order (the op may not commute). */
static void td_accumulate(const td_layout_t *l, char *acc, char *x)
{
    td_combine(l, acc, x); /* x = acc op x */
    for (int f = 0; f < l->nf; f++) {
        memcpy(acc + l->off[f], x + l->off[f], l->is_double[f] ? 8 : 4);
    }
}

static void td_user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int k = 0; k < *len; k++) {
        td_combine(td_current, (char *)in + (size_t)k * td_current->extent,
                   (char *)inout + (size_t)k * td_current->extent);
    }
}

static size_t td_region(const td_layout_t *l, size_t count)
{
    return count ? (count - 1) * l->extent + l->body : 0;
}

/* Rank's element k, written as element pos of buf. */
static void td_gen_at(const td_layout_t *l, uint64_t seed, int rank, size_t k, size_t pos, char *buf)
{
    for (int f = 0; f < l->nf; f++) {
        uint64_t h = (seed ^ (rank * 0x9e3779b97f4a7c15ull) ^ ((k * 4 + f) * 0xbf58476d1ce4e5b9ull));
        h ^= h >> 31;
        h *= 0x94d049bb133111ebull;
        h ^= h >> 29;
        char *p = buf + pos * l->extent + l->off[f];
        if (l->is_double[f]) {
            td_put_d(p, (double)(int)(h % 201) - 100.0);
        } else {
            td_put_i(p, l->opkind == TD_MATMUL ? (int32_t)(h % 7) - 3 : (int32_t)(h % 2001) - 1000);
        }
    }
}

static void td_gen(const td_layout_t *l, uint64_t seed, int rank, size_t k, char *buf)
{
    td_gen_at(l, seed, rank, k, k, buf);
}

/* Fields equal to want; every other byte of the region still holds poison (if poisoned). */
static size_t td_verify(const td_layout_t *l, const char *what, const char *got, const char *want,
                        size_t count, int poisoned, tc_ctx_t *ctx)
{
    size_t bytes = td_region(l, count), bad = 0;
    char  *field = calloc(bytes + 1, 1);

    for (size_t k = 0; k < count; k++) {
        for (int f = 0; f < l->nf; f++) {
            size_t o = k * l->extent + l->off[f] - (size_t)l->shift;
            size_t n = l->is_double[f] ? 8 : 4;
            memset(field + o, 1, n);
            if (memcmp(got + o, want + o, n) != 0 && bad++ == 0) {
                char d[256];
                snprintf(d, sizeof(d), "%s %s count=%zu comm=%s rank=%d: element %zu field %d wrong",
                         what, l->name, count, ctx->comm_name, ctx->rank, k, f);
                tc_fail(what, d);
            }
        }
    }
    for (size_t b = 0; poisoned && b < bytes; b++) {
        if (!field[b] && (unsigned char)got[b] != TD_POISON && bad++ == 0) {
            char d[256];
            snprintf(d, sizeof(d), "%s %s count=%zu comm=%s rank=%d: gap byte %zu overwritten",
                     what, l->name, count, ctx->comm_name, ctx->rank, b);
            tc_fail(what, d);
        }
    }
    free(field);
    tc_tests++;
    return bad;
}

/* Device region for count elements; returns the MPI buffer pointer (region - shift). */
static char *td_dev(const td_layout_t *l, size_t count, const char *host, em_kind_t kind, char **region)
{
    size_t bytes = td_region(l, count);
    *region      = em_alloc(bytes + 1, kind);
    em_to_dev(*region, host, bytes, kind);
    return *region - l->shift;
}

static void td_allreduce(tc_ctx_t *ctx, const td_layout_t *l, size_t count, uint64_t seed)
{
    size_t bytes = td_region(l, count);
    char  *in = malloc(bytes + 1), *want = malloc(bytes + 1), *got = malloc(bytes + 1), *x = malloc(bytes + 1);
    char  *rs, *rr;

    memset(in, TD_POISON, bytes), memset(want, TD_POISON, bytes), memset(got, TD_POISON, bytes);
    memset(x, TD_POISON, bytes);
    for (size_t k = 0; k < count; k++) {
        td_gen(l, seed, ctx->rank, k, in - l->shift);
        td_gen(l, seed, 0, k, want - l->shift);
        for (int r = 1; r < ctx->size; r++) {
            td_gen(l, seed, r, k, x - l->shift);
            td_accumulate(l, want - l->shift + k * l->extent, x - l->shift + k * l->extent);
        }
    }
    char *sbuf = td_dev(l, count, in, ctx->kind, &rs);
    char *rbuf = td_dev(l, count, got, ctx->kind, &rr);
    td_current = l;
    MPI_Allreduce(sbuf, rbuf, (int)count, l->dt, l->op, ctx->comm);
    tc_count(TC_ALLREDUCE, bytes, ctx->kind);
    em_to_host(got, rr, bytes, ctx->kind);
    td_verify(l, "allreduce", got, want, count, 1, ctx);
    /* in place, on the same data */
    em_to_dev(rr, in, bytes, ctx->kind);
    MPI_Allreduce(MPI_IN_PLACE, rbuf, (int)count, l->dt, l->op, ctx->comm);
    tc_count(TC_ALLREDUCE, bytes, ctx->kind);
    em_to_host(got, rr, bytes, ctx->kind);
    td_verify(l, "allreduce", got, want, count, 0, ctx);
    em_free(rs, ctx->kind), em_free(rr, ctx->kind);
    free(in), free(want), free(got), free(x);
}

static void td_rsb(tc_ctx_t *ctx, const td_layout_t *l, size_t count, uint64_t seed)
{
    size_t total = count * (size_t)ctx->size, bytes = td_region(l, total), own = td_region(l, count);
    char  *in = malloc(bytes + 1), *want = malloc(bytes + 1), *got = malloc(bytes + 1), *x = malloc(bytes + 1);
    char  *rs, *rr;

    memset(in, TD_POISON, bytes), memset(want, TD_POISON, bytes), memset(got, TD_POISON, bytes);
    memset(x, TD_POISON, bytes);
    for (size_t k = 0; k < total; k++) {
        td_gen(l, seed, ctx->rank, k, in - l->shift);
        td_gen(l, seed, 0, k, want - l->shift);
        for (int r = 1; r < ctx->size; r++) {
            td_gen(l, seed, r, k, x - l->shift);
            td_accumulate(l, want - l->shift + k * l->extent, x - l->shift + k * l->extent);
        }
    }
    char *sbuf = td_dev(l, total, in, ctx->kind, &rs);
    char *rbuf = td_dev(l, count, got, ctx->kind, &rr);
    td_current = l;
    MPI_Reduce_scatter_block(sbuf, rbuf, (int)count, l->dt, l->op, ctx->comm);
    tc_count(TC_RSB, bytes, ctx->kind);
    em_to_host(got, rr, own, ctx->kind);
    td_verify(l, "reduce_scatter_block", got, want + (size_t)ctx->rank * count * l->extent, count, 1, ctx);
    em_free(rs, ctx->kind), em_free(rr, ctx->kind);
    free(in), free(want), free(got), free(x);
}

static void td_bcast_allgather(tc_ctx_t *ctx, const td_layout_t *l, size_t count, uint64_t seed)
{
    size_t all = count * (size_t)ctx->size, bytes = td_region(l, all);
    int    root = ctx->size - 1;
    char  *want = malloc(bytes + 1), *got = malloc(bytes + 1), *mine = malloc(bytes + 1);
    char  *rb, *rs, *rr;

    /* bcast from the last rank */
    memset(want, TD_POISON, bytes), memset(got, TD_POISON, bytes);
    for (size_t k = 0; k < count; k++) {
        td_gen(l, seed, root, k, want - l->shift);
    }
    char *buf = td_dev(l, count, ctx->rank == root ? want : got, ctx->kind, &rb);
    MPI_Bcast(buf, (int)count, l->dt, root, ctx->comm);
    tc_count(TC_BCAST, td_region(l, count), ctx->kind);
    em_to_host(got, rb, td_region(l, count), ctx->kind);
    td_verify(l, "bcast", got, want, count, 1, ctx);
    em_free(rb, ctx->kind);

    /* allgather */
    memset(want, TD_POISON, bytes), memset(got, TD_POISON, bytes), memset(mine, TD_POISON, bytes);
    for (size_t k = 0; k < all; k++) {
        td_gen_at(l, seed, (int)(k / count), k % count, k, want - l->shift);
    }
    for (size_t k = 0; k < count; k++) {
        td_gen(l, seed, ctx->rank, k, mine - l->shift);
    }
    char *sbuf = td_dev(l, count, mine, ctx->kind, &rs);
    char *rbuf = td_dev(l, all, got, ctx->kind, &rr);
    MPI_Allgather(sbuf, (int)count, l->dt, rbuf, (int)count, l->dt, ctx->comm);
    tc_count(TC_ALLGATHER, bytes, ctx->kind);
    em_to_host(got, rr, bytes, ctx->kind);
    td_verify(l, "allgather", got, want, all, 1, ctx);
    em_free(rs, ctx->kind), em_free(rr, ctx->kind);
    free(want), free(got), free(mine);
}

/* Senders describe the data as 4k MPI_INTs, receivers as k contiguous(4, MPI_INT). */
static void td_mixed_types(tc_ctx_t *ctx, MPI_Datatype quad, size_t k, uint64_t seed)
{
    size_t   n = 4 * k, all = n * (size_t)ctx->size;
    int32_t *want = malloc(all * 4 + 4), *got = malloc(all * 4 + 4);
    void    *d, *s;

    for (size_t i = 0; i < all; i++) {
        want[i] = (int32_t)((seed >> 7) ^ (i * 2654435761u));
    }
    s = em_alloc(n * 4, ctx->kind);
    em_to_dev(s, want + (size_t)ctx->rank * n, n * 4, ctx->kind);
    memset(got, TD_POISON, all * 4);
    d = em_alloc(all * 4, ctx->kind);
    em_to_dev(d, got, all * 4, ctx->kind);
    MPI_Allgather(s, (int)n, MPI_INT, d, (int)k, quad, ctx->comm);
    tc_count(TC_ALLGATHER, all * 4, ctx->kind);
    em_to_host(got, d, all * 4, ctx->kind);
    if (memcmp(got, want, all * 4) != 0) {
        tc_fail("allgather", "MPI_INT sender / contiguous(4) receiver: wrong result");
    }
    /* bcast: root sends ints, the others receive quads */
    if (ctx->rank == 0) {
        em_to_dev(d, want, n * 4, ctx->kind);
        MPI_Bcast(d, (int)n, MPI_INT, 0, ctx->comm);
    } else {
        MPI_Bcast(d, (int)k, quad, 0, ctx->comm);
    }
    tc_count(TC_BCAST, n * 4, ctx->kind);
    em_to_host(got, d, n * 4, ctx->kind);
    if (memcmp(got, want, n * 4) != 0) {
        tc_fail("bcast", "MPI_INT root / contiguous(4) receivers: wrong result");
    }
    tc_tests += 2;
    em_free(s, ctx->kind), em_free(d, ctx->kind);
    free(want), free(got);
}

/* User op for td_bottom: int32 sums over the datatype's true extent, wherever it lies. */
static void td_bottom_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    MPI_Aint lb, extent;

    MPI_Type_get_true_extent(*dt, &lb, &extent);
    for (MPI_Aint b = 0; b < extent * *len; b += 4) {
        int32_t x = td_get_i((const char *)in + lb + b), y = td_get_i((char *)inout + lb + b);
        td_put_i((char *)inout + lb + b, (int32_t)((uint32_t)x + (uint32_t)y));
    }
}

/* n int32s at an absolute address as one element (buffer MPI_BOTTOM): the component must
 * find the memory where the data is, not at the buffer pointer (NULL). */
static MPI_Datatype td_at(const void *where, int n)
{
    MPI_Datatype dt;
    MPI_Aint     addr;

    MPI_Get_address(where, &addr);
    MPI_Type_create_hindexed(1, &n, &addr, MPI_INT32_T, &dt);
    MPI_Type_commit(&dt);
    return dt;
}

static void td_expect(tc_ctx_t *ctx, const char *what, const int32_t *got, const int32_t *want,
                      size_t n)
{
    size_t wrong = 0;

    for (size_t i = 0; i < n; i++) {
        wrong += got[i] != want[i];
    }
    if (wrong) {
        char d[200];
        snprintf(d, sizeof(d), "%s MPI_BOTTOM n=%zu comm=%s rank=%d: %zu wrong elements", what,
                 n, ctx->comm_name, ctx->rank, wrong);
        tc_fail(what, d);
    }
    tc_tests++;
}

/* Bcast, allgather and allreduce (in place, user op) on MPI_BOTTOM and device memory. */
static void td_bottom(tc_ctx_t *ctx, int n, uint64_t seed)
{
    const size_t all = (size_t)n * (size_t)ctx->size, bytes = all * sizeof(int32_t);
    const int    root = ctx->size - 1;
    int32_t     *want = malloc(bytes), *got = malloc(bytes), *mine = malloc(bytes);
    char        *sdev = em_alloc(bytes, ctx->kind), *rdev = em_alloc(bytes, ctx->kind);
    MPI_Datatype st = td_at(sdev, n), rt = td_at(rdev, n);
    MPI_Op       sum;

    for (size_t i = 0; i < all; i++) { /* rank r's input: block r of want */
        want[i] = (int32_t)((seed + i * 2654435761u) % 100003);
    }
    /* bcast from the last rank */
    memset(got, TD_POISON, bytes);
    em_to_dev(rdev, ctx->rank == root ? want + (size_t)root * n : got, (size_t)n * 4, ctx->kind);
    MPI_Bcast(MPI_BOTTOM, 1, rt, root, ctx->comm);
    tc_count(TC_BCAST, (size_t)n * 4, ctx->kind);
    em_to_host(got, rdev, (size_t)n * 4, ctx->kind);
    td_expect(ctx, "bcast", got, want + (size_t)root * n, (size_t)n);

    /* allgather: rank r's block at block r of the receive memory (extent n int32s) */
    memset(got, TD_POISON, bytes);
    em_to_dev(sdev, want + (size_t)ctx->rank * n, (size_t)n * 4, ctx->kind);
    em_to_dev(rdev, got, bytes, ctx->kind);
    MPI_Allgather(MPI_BOTTOM, 1, st, MPI_BOTTOM, 1, rt, ctx->comm);
    tc_count(TC_ALLGATHER, bytes, ctx->kind);
    em_to_host(got, rdev, bytes, ctx->kind);
    td_expect(ctx, "allgather", got, want, all);

    /* allreduce in place: every rank's input is its block of want */
    for (size_t i = 0; i < (size_t)n; i++) {
        mine[i] = 0;
        for (int r = 0; r < ctx->size; r++) {
            mine[i] = (int32_t)((uint32_t)mine[i] + (uint32_t)want[(size_t)r * n + i]);
        }
    }
    em_to_dev(rdev, want + (size_t)ctx->rank * n, (size_t)n * 4, ctx->kind);
    MPI_Op_create(td_bottom_sum, 1, &sum);
    MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, rt, sum, ctx->comm);
    tc_count(TC_ALLREDUCE, (size_t)n * 4, ctx->kind);
    em_to_host(got, rdev, (size_t)n * 4, ctx->kind);
    td_expect(ctx, "allreduce", got, mine, (size_t)n);

    MPI_Op_free(&sum);
    MPI_Type_free(&st), MPI_Type_free(&rt);
    em_free(sdev, ctx->kind), em_free(rdev, ctx->kind);
    free(want), free(got), free(mine);
}

void tc_run_derived(tc_ctx_t *ctx, uint64_t seed)
{
    MPI_Datatype vec, st, quad, hidx, tmp;
    int          blens[2] = {1, 1};
    MPI_Aint     disp[2]  = {0, 8}, neg = -8;
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    static const size_t counts[] = {1, 7, 1000};

    MPI_Type_vector(2, 1, 2, MPI_INT, &vec); /* int, gap, int: extent 12 */
    MPI_Type_create_struct(2, blens, disp, types, &tmp); /* int, gap, double: extent 16 */
    MPI_Type_create_resized(tmp, 0, 16, &st);
    MPI_Type_free(&tmp);
    MPI_Type_contiguous(4, MPI_INT, &quad);
    MPI_Type_create_hindexed(1, blens, &neg, MPI_DOUBLE, &hidx); /* data 8 bytes before buf */
    MPI_Type_commit(&vec), MPI_Type_commit(&st), MPI_Type_commit(&quad), MPI_Type_commit(&hidx);

    td_layout_t layouts[] = {
        {"vector(2,1,2,int)", vec, 12, 0, 12, 2, {0, 8}, {0, 0}, TD_SUM, MPI_OP_NULL},
        {"struct{int;double}", st, 16, 0, 16, 2, {0, 8}, {0, 1}, TD_STRUCT, MPI_OP_NULL},
        {"contiguous(4,int) matmul", quad, 16, 0, 16, 4, {0, 4, 8, 12}, {0, 0, 0, 0}, TD_MATMUL, MPI_OP_NULL},
        {"hindexed(-8,double)", hidx, 8, -8, 8, 1, {(size_t)-8}, {1}, TD_SUM, MPI_OP_NULL},
    };
    for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
        MPI_Op_create(td_user_fn, layouts[i].opkind != TD_MATMUL, &layouts[i].op);
    }
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
            uint64_t s = seed ^ (c * 131 + i * 7);
            /* Open MPI 4.1.4's ring allreduce ignores a negative true lower bound in its
             * temporary buffers (it hands the op memory before them): reductions on such a
             * type would test the layer underneath, not this component. */
            if (layouts[i].shift >= 0) {
                td_allreduce(ctx, &layouts[i], counts[c], s);
                td_rsb(ctx, &layouts[i], counts[c], s ^ 0x55);
            }
            td_bcast_allgather(ctx, &layouts[i], counts[c], s ^ 0xaa);
        }
        td_mixed_types(ctx, quad, counts[c], seed ^ c);
        td_bottom(ctx, (int)counts[c], seed ^ (c + 99));
    }
    for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
        MPI_Op_free(&layouts[i].op);
    }
    MPI_Type_free(&vec), MPI_Type_free(&st), MPI_Type_free(&quad), MPI_Type_free(&hidx);
}
