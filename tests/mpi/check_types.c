/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Types, ops, input generation and the reference arithmetic of the MPI suite. */
#include "check.h"

#include <complex.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <wchar.h>

struct tc_fi { float v; int i; };
struct tc_di { double v; int i; };
struct tc_li { long v; int i; };
struct tc_ii { int v; int i; };
struct tc_si { short v; int i; };
struct tc_ldi { long double v; int i; };

#define S(T) sizeof(T)
#define PAIR(DT, NAME, BASE, ST, VT) \
    {DT, NAME, TC_PAIR, BASE, S(VT), S(struct ST), offsetof(struct ST, i)}

const tc_type_t tc_types[] = {
    {MPI_CHAR, "MPI_CHAR", TC_CHAR, TB_I, 1, 1, 0},
    {MPI_WCHAR, "MPI_WCHAR", TC_CHAR, TB_U, S(wchar_t), S(wchar_t), 0},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", TC_INT, TB_I, 1, 1, 0},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", TC_UINT, TB_U, 1, 1, 0},
    {MPI_BYTE, "MPI_BYTE", TC_BYTE, TB_U, 1, 1, 0},
    {MPI_SHORT, "MPI_SHORT", TC_INT, TB_I, S(short), S(short), 0},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", TC_UINT, TB_U, S(short), S(short), 0},
    {MPI_INT, "MPI_INT", TC_INT, TB_I, S(int), S(int), 0},
    {MPI_UNSIGNED, "MPI_UNSIGNED", TC_UINT, TB_U, S(int), S(int), 0},
    {MPI_LONG, "MPI_LONG", TC_INT, TB_I, S(long), S(long), 0},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", TC_UINT, TB_U, S(long), S(long), 0},
    {MPI_LONG_LONG, "MPI_LONG_LONG", TC_INT, TB_I, S(long long), S(long long), 0},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", TC_UINT, TB_U, S(long long), S(long long), 0},
    {MPI_INT8_T, "MPI_INT8_T", TC_INT, TB_I, 1, 1, 0},
    {MPI_UINT8_T, "MPI_UINT8_T", TC_UINT, TB_U, 1, 1, 0},
    {MPI_INT16_T, "MPI_INT16_T", TC_INT, TB_I, 2, 2, 0},
    {MPI_UINT16_T, "MPI_UINT16_T", TC_UINT, TB_U, 2, 2, 0},
    {MPI_INT32_T, "MPI_INT32_T", TC_INT, TB_I, 4, 4, 0},
    {MPI_UINT32_T, "MPI_UINT32_T", TC_UINT, TB_U, 4, 4, 0},
    {MPI_INT64_T, "MPI_INT64_T", TC_INT, TB_I, 8, 8, 0},
    {MPI_UINT64_T, "MPI_UINT64_T", TC_UINT, TB_U, 8, 8, 0},
    {MPI_AINT, "MPI_AINT", TC_FINT, TB_I, S(MPI_Aint), S(MPI_Aint), 0},
    {MPI_OFFSET, "MPI_OFFSET", TC_FINT, TB_I, S(MPI_Offset), S(MPI_Offset), 0},
    {MPI_COUNT, "MPI_COUNT", TC_FINT, TB_I, S(MPI_Count), S(MPI_Count), 0},
    {MPI_FLOAT, "MPI_FLOAT", TC_FLOAT, TB_F, S(float), S(float), 0},
    {MPI_DOUBLE, "MPI_DOUBLE", TC_FLOAT, TB_F, S(double), S(double), 0},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", TC_FLOAT, TB_LD, S(long double), S(long double), 0},
    {MPI_C_BOOL, "MPI_C_BOOL", TC_BOOL, TB_U, S(bool), S(bool), 0},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", TC_COMPLEX, TB_F, S(float), S(float complex), 0},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", TC_COMPLEX, TB_F, S(double), S(double complex), 0},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", TC_COMPLEX, TB_LD, S(long double),
     S(long double complex), 0},
    PAIR(MPI_FLOAT_INT, "MPI_FLOAT_INT", TB_F, tc_fi, float),
    PAIR(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", TB_F, tc_di, double),
    PAIR(MPI_LONG_INT, "MPI_LONG_INT", TB_I, tc_li, long),
    PAIR(MPI_2INT, "MPI_2INT", TB_I, tc_ii, int),
    PAIR(MPI_SHORT_INT, "MPI_SHORT_INT", TB_I, tc_si, short),
    PAIR(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", TB_LD, tc_ldi, long double),
    {MPI_INTEGER, "MPI_INTEGER", TC_FINT, TB_I, 4, 4, 0},
    {MPI_REAL, "MPI_REAL", TC_FLOAT, TB_F, 4, 4, 0},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", TC_FLOAT, TB_F, 8, 8, 0},
    {MPI_COMPLEX, "MPI_COMPLEX", TC_COMPLEX, TB_F, 4, 8, 0},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", TC_COMPLEX, TB_F, 8, 16, 0},
    {MPI_2INTEGER, "MPI_2INTEGER", TC_PAIR, TB_I, 4, 8, 4},
};
const int tc_num_types = (int)(sizeof(tc_types) / sizeof(tc_types[0]));

enum { O_SUM, O_PROD, O_MIN, O_MAX, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, O_MINLOC,
       O_MAXLOC };

const tc_op_t tc_ops[] = {
    {MPI_SUM, "MPI_SUM"},   {MPI_PROD, "MPI_PROD"}, {MPI_MIN, "MPI_MIN"},
    {MPI_MAX, "MPI_MAX"},   {MPI_LAND, "MPI_LAND"}, {MPI_LOR, "MPI_LOR"},
    {MPI_LXOR, "MPI_LXOR"}, {MPI_BAND, "MPI_BAND"}, {MPI_BOR, "MPI_BOR"},
    {MPI_BXOR, "MPI_BXOR"}, {MPI_MINLOC, "MPI_MINLOC"}, {MPI_MAXLOC, "MPI_MAXLOC"},
};
const int tc_num_ops = (int)(sizeof(tc_ops) / sizeof(tc_ops[0]));

int tc_op_valid(const tc_type_t *t, int op)
{
    switch (t->cls) {
    case TC_INT:
    case TC_UINT:    return op <= O_BXOR;
    case TC_FINT:    return op <= O_MAX || (op >= O_BAND && op <= O_BXOR);
    case TC_BYTE:    return op >= O_BAND && op <= O_BXOR;
    case TC_FLOAT:   return op <= O_MAX;
    case TC_COMPLEX: return op <= O_PROD;
    case TC_BOOL:    return op >= O_LAND && op <= O_LXOR;
    case TC_PAIR:    return op == O_MINLOC || op == O_MAXLOC;
    default:         return 0;
    }
}

int tc_listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n) {
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) {
            return 1;
        }
    }
    return strcmp(list, "all") == 0;
}

const tc_type_t *tc_type_by_name(const char *name)
{
    for (int i = 0; i < tc_num_types; i++) {
        if (strcasecmp(tc_types[i].name, name) == 0 || strcasecmp(tc_types[i].name + 4, name) == 0) {
            return &tc_types[i];
        }
    }
    return NULL;
}

int tc_op_by_name(const char *name)
{
    for (int i = 0; i < tc_num_ops; i++) {
        if (strcasecmp(tc_ops[i].name, name) == 0 || strcasecmp(tc_ops[i].name + 4, name) == 0) {
            return i;
        }
    }
    return -1;
}

/* ---- scalars in a wide representation ------------------------------------------------ */
typedef union {
    int64_t     i;
    uint64_t    u;
    long double f;
} tc_wide_t;

static tc_wide_t tc_load(tc_base_t base, size_t size, const void *p)
{
    tc_wide_t w;
    memset(&w, 0, sizeof(w));
    switch (base) {
    case TB_I:
        switch (size) {
        case 1: { int8_t v; memcpy(&v, p, 1); w.i = v; break; }
        case 2: { int16_t v; memcpy(&v, p, 2); w.i = v; break; }
        case 4: { int32_t v; memcpy(&v, p, 4); w.i = v; break; }
        default: { int64_t v; memcpy(&v, p, 8); w.i = v; break; }
        }
        break;
    case TB_U:
        switch (size) {
        case 1: { uint8_t v; memcpy(&v, p, 1); w.u = v; break; }
        case 2: { uint16_t v; memcpy(&v, p, 2); w.u = v; break; }
        case 4: { uint32_t v; memcpy(&v, p, 4); w.u = v; break; }
        default: { uint64_t v; memcpy(&v, p, 8); w.u = v; break; }
        }
        break;
    case TB_F:
        if (size == 4) { float v; memcpy(&v, p, 4); w.f = v; }
        else { double v; memcpy(&v, p, 8); w.f = v; }
        break;
    case TB_LD: { long double v; memcpy(&v, p, sizeof(v)); w.f = v; break; }
    }
    return w;
}

static void tc_store(tc_base_t base, size_t size, void *p, tc_wide_t w)
{
    switch (base) {
    case TB_I:
    case TB_U: { uint64_t v = w.u; memcpy(p, &v, size); break; } /* low bytes: little endian */
    case TB_F:
        if (size == 4) { float v = (float)w.f; memcpy(p, &v, 4); }
        else { double v = (double)w.f; memcpy(p, &v, 8); }
        break;
    case TB_LD: { long double v = w.f; memcpy(p, &v, sizeof(v)); break; }
    }
}

static uint64_t tc_hash(uint64_t seed, int rank, size_t i)
{
    uint64_t z = seed ^ ((uint64_t)rank * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)i * 0xbf58476d1ce4e5b9ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* One input scalar for op; values keep integer and float results exact. */
static tc_wide_t tc_gen_scalar(const tc_type_t *t, int op, uint64_t h)
{
    tc_wide_t w;
    int       is_float = (t->base == TB_F || t->base == TB_LD);
    int64_t   small;

    memset(&w, 0, sizeof(w));
    switch (op) {
    case O_SUM:
        small = (int64_t)(h % 101) - 50;
        break;
    case O_PROD: {
        static const int64_t s[] = {1, -1, 2, 1};
        static const int64_t u[] = {1, 2, 3, 1};
        small = (t->base == TB_U) ? u[h % 4] : s[h % 4];
        break;
    }
    case O_LAND: case O_LOR: case O_LXOR:
        small = (t->cls == TC_BOOL) ? (h % 8 != 0) : (int64_t[]){0, 1, 7, -3}[h % 4];
        break;
    case O_MINLOC: case O_MAXLOC:
        small = (int64_t)(h % 5);
        break;
    default: /* MIN MAX and the bitwise ops: the full range of the type */
        if (is_float) {
            w.f = ((long double)(int64_t)(h % 2001) - 1000.0L) / 8.0L;
            return w;
        }
        w.u = h;
        /* Open MPI 4.1.4 compares MPI_UNSIGNED_LONG as signed and MPI_OFFSET as unsigned in
         * MPI_MIN/MPI_MAX (a defect of the layer underneath, see README): keep the top bit
         * clear there so that both comparisons agree. */
        if ((op == O_MIN || op == O_MAX) && (t->dt == MPI_UNSIGNED_LONG || t->dt == MPI_OFFSET)) {
            w.u &= ~(1ull << 63);
        }
        return w;
    }
    if (is_float) {
        w.f = (long double)small;
    } else {
        w.i = small;
    }
    return w;
}

void tc_gen(const tc_type_t *t, int op, uint64_t seed, int rank, size_t i, void *dst)
{
    uint64_t h = tc_hash(seed, rank, i);
    char    *d = dst;

    if (op < 0) { /* no op (bcast, allgather): arbitrary bytes of the value */
        op = O_BXOR;
    }
    switch (t->cls) {
    case TC_COMPLEX:
        tc_store(t->base, t->vsize, d, tc_gen_scalar(t, op, h));
        tc_store(t->base, t->vsize, d + t->vsize, tc_gen_scalar(t, op, h >> 17));
        break;
    case TC_PAIR: {
        int index = (int)((h >> 33) % 1000);
        tc_store(t->base, t->vsize, d, tc_gen_scalar(t, op, h));
        memcpy(d + t->ioff, &index, sizeof(int));
        break;
    }
    case TC_BOOL:
        tc_store(TB_U, t->vsize, d, (tc_wide_t){.u = (op < O_LAND || op > O_LXOR) ? (h & 1) : (uint64_t)tc_gen_scalar(t, op, h).i});
        break;
    default:
        tc_store(t->base, t->vsize, d, tc_gen_scalar(t, op, h));
        break;
    }
}

static tc_wide_t tc_scalar_op(tc_base_t base, int op, tc_wide_t a, tc_wide_t b)
{
    int f = (base == TB_F || base == TB_LD);
    int less = f ? (b.f < a.f) : (base == TB_I ? b.i < a.i : b.u < a.u);
    int more = f ? (b.f > a.f) : (base == TB_I ? b.i > a.i : b.u > a.u);
    int za = f ? (a.f == 0) : (a.u == 0), zb = f ? (b.f == 0) : (b.u == 0);
    tc_wide_t r = a;

    switch (op) {
    case O_SUM:  if (f) r.f = a.f + b.f; else r.u = a.u + b.u; break;
    case O_PROD: if (f) r.f = a.f * b.f; else r.u = a.u * b.u; break;
    case O_MIN:  r = less ? b : a; break;
    case O_MAX:  r = more ? b : a; break;
    case O_LAND: r.u = (!za && !zb); break;
    case O_LOR:  r.u = (!za || !zb); break;
    case O_LXOR: r.u = (za != zb); break;
    case O_BAND: r.u = a.u & b.u; break;
    case O_BOR:  r.u = a.u | b.u; break;
    case O_BXOR: r.u = a.u ^ b.u; break;
    }
    return r;
}

void tc_combine(const tc_type_t *t, int op, void *acc, const void *x)
{
    char       *a = acc;
    const char *b = x;

    if (t->cls == TC_COMPLEX) {
        tc_wide_t ar = tc_load(t->base, t->vsize, a), ai = tc_load(t->base, t->vsize, a + t->vsize);
        tc_wide_t br = tc_load(t->base, t->vsize, b), bi = tc_load(t->base, t->vsize, b + t->vsize);
        tc_wide_t rr, ri;
        if (op == O_SUM) {
            rr.f = ar.f + br.f;
            ri.f = ai.f + bi.f;
        } else {
            rr.f = ar.f * br.f - ai.f * bi.f;
            ri.f = ar.f * bi.f + ai.f * br.f;
        }
        tc_store(t->base, t->vsize, a, rr);
        tc_store(t->base, t->vsize, a + t->vsize, ri);
    } else if (t->cls == TC_PAIR) {
        tc_wide_t av = tc_load(t->base, t->vsize, a), bv = tc_load(t->base, t->vsize, b);
        int       ai, bi, f = (t->base != TB_I);
        memcpy(&ai, a + t->ioff, sizeof(int));
        memcpy(&bi, b + t->ioff, sizeof(int));
        int b_less = f ? bv.f < av.f : bv.i < av.i;
        int b_more = f ? bv.f > av.f : bv.i > av.i;
        int equal  = f ? bv.f == av.f : bv.i == av.i;
        if ((op == O_MINLOC && b_less) || (op == O_MAXLOC && b_more) || (equal && bi < ai)) {
            tc_store(t->base, t->vsize, a, bv);
            memcpy(a + t->ioff, &bi, sizeof(int));
        }
    } else {
        tc_base_t base = (t->cls == TC_BOOL) ? TB_U : t->base;
        tc_store(base, t->vsize, a,
                 tc_scalar_op(base, op, tc_load(base, t->vsize, a), tc_load(base, t->vsize, b)));
    }
}

/* Floating-point values compare by value (a product may round to -0 in one order of
 * evaluation and +0 in another); integers and indices byte for byte. */
int tc_compare(const tc_type_t *t, const void *a, const void *b)
{
    const char *x = a, *y = b;
    int         parts = (t->cls == TC_COMPLEX) ? 2 : 1;

    if (t->base == TB_F || t->base == TB_LD) {
        for (int p = 0; p < parts; p++) {
            if (tc_load(t->base, t->vsize, x + p * t->vsize).f != tc_load(t->base, t->vsize, y + p * t->vsize).f) {
                return 1;
            }
        }
    } else if (memcmp(x, y, (size_t)parts * t->vsize) != 0) {
        return 1;
    }
    return t->cls == TC_PAIR ? memcmp(x + t->ioff, y + t->ioff, sizeof(int)) : 0;
}

void tc_format(const tc_type_t *t, const void *elem, char *out, size_t len)
{
    const char *e = elem;
    tc_wide_t   v = tc_load(t->cls == TC_BOOL ? TB_U : t->base, t->vsize, e);
    int         n;

    if (t->base == TB_F || t->base == TB_LD) {
        n = snprintf(out, len, "%Lg", v.f);
    } else if (t->base == TB_I) {
        n = snprintf(out, len, "%lld", (long long)v.i);
    } else {
        n = snprintf(out, len, "%llu", (unsigned long long)v.u);
    }
    if (t->cls == TC_COMPLEX && n > 0 && (size_t)n < len) {
        snprintf(out + n, len - (size_t)n, "%+Lgi", tc_load(t->base, t->vsize, e + t->vsize).f);
    } else if (t->cls == TC_PAIR && n > 0 && (size_t)n < len) {
        int idx;
        memcpy(&idx, e + t->ioff, sizeof(int));
        snprintf(out + n, len - (size_t)n, "@%d", idx);
    }
}
