/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Every (type, op) of the device reductions, run through the host layer, against a
 * reference written here with the natural C types: random inputs, 1 to 5 sources, several
 * destinations, unaligned pointers, in place, padding bytes of pair types untouched.
 */
#include "kernels/cg_dev.h"

#include "tests/unit/unit.h"

#include <check.h>
#include <complex.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x1234567887654321ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Random element of dt for op: full range for integers, moderate floats, 0/1 for bool. */
static void fill_random(cg_dtype_t dt, cg_op_t op, char *p, size_t count)
{
    size_t size = cg_dtype_size(dt);
    for (size_t i = 0; i < count; i++) {
        char    *e = p + i * size;
        uint64_t r = rng();
        switch (dt) {
        case CG_DT_FLOAT: { float v = (float)((int64_t)(r % 2001) - 1000) / 7.0f; memcpy(e, &v, 4); break; }
        case CG_DT_DOUBLE: { double v = (double)((int64_t)(r % 20001) - 10000) / 7.0; memcpy(e, &v, 8); break; }
        case CG_DT_CFLOAT: { float v[2] = {(float)(r % 13) - 6.0f, (float)((r >> 8) % 13) - 6.0f}; memcpy(e, v, 8); break; }
        case CG_DT_CDOUBLE: { double v[2] = {(double)(r % 13) - 6.0, (double)((r >> 8) % 13) - 6.0}; memcpy(e, v, 16); break; }
        case CG_DT_BOOL: e[0] = (char)(r % 4 != 0); break;
        case CG_DT_FLOAT_INT: { cg_float_int_t v = {(float)(r % 5), (int)((r >> 20) % 100)}; memcpy(e, &v, sizeof(v)); break; }
        case CG_DT_DOUBLE_INT: { double v = (double)(r % 5); int k = (int)((r >> 20) % 100); memcpy(e, &v, 8); memcpy(e + 8, &k, 4); break; }
        case CG_DT_LONG_INT: { long v = (long)(r % 5) - 2; int k = (int)((r >> 20) % 100); memcpy(e, &v, 8); memcpy(e + 8, &k, 4); break; }
        case CG_DT_2INT: { int v[2] = {(int)(r % 5), (int)((r >> 20) % 100)}; memcpy(e, v, 8); break; }
        case CG_DT_SHORT_INT: { short v = (short)(r % 5); int k = (int)((r >> 20) % 100); memcpy(e, &v, 2); memcpy(e + 4, &k, 4); break; }
        default:
            if (op == CG_OP_LAND || op == CG_OP_LOR || op == CG_OP_LXOR) {
                r = (r % 3 == 0) ? 0 : r; /* zeros matter for the logical ops */
            }
            memcpy(e, &r, size);
            break;
        }
    }
}

/* ---- the reference: natural C types ------------------------------------------------- */
#define REF_INT(T, U, a, b, op)                                                                 \
    do {                                                                                        \
        T x_, y_;                                                                               \
        memcpy(&x_, a, sizeof(T));                                                              \
        memcpy(&y_, b, sizeof(T));                                                              \
        switch (op) {                                                                           \
        case CG_OP_SUM: x_ = (T)((U)x_ + (U)y_); break;                                         \
        case CG_OP_PROD: x_ = (T)((U)x_ * (U)y_); break;                                        \
        case CG_OP_MIN: x_ = y_ < x_ ? y_ : x_; break;                                          \
        case CG_OP_MAX: x_ = y_ > x_ ? y_ : x_; break;                                          \
        case CG_OP_LAND: x_ = (T)(x_ && y_); break;                                             \
        case CG_OP_LOR: x_ = (T)(x_ || y_); break;                                              \
        case CG_OP_LXOR: x_ = (T)(!x_ != !y_); break;                                           \
        case CG_OP_BAND: x_ = x_ & y_; break;                                                   \
        case CG_OP_BOR: x_ = x_ | y_; break;                                                    \
        case CG_OP_BXOR: x_ = x_ ^ y_; break;                                                   \
        default: break;                                                                         \
        }                                                                                       \
        memcpy(a, &x_, sizeof(T));                                                              \
    } while (0)

#define REF_FLT(T, a, b, op)                                                                    \
    do {                                                                                        \
        T x_, y_;                                                                               \
        memcpy(&x_, a, sizeof(T));                                                              \
        memcpy(&y_, b, sizeof(T));                                                              \
        x_ = op == CG_OP_SUM ? x_ + y_ : op == CG_OP_PROD ? x_ * y_                              \
           : op == CG_OP_MIN ? (y_ < x_ ? y_ : x_) : (y_ > x_ ? y_ : x_);                        \
        memcpy(a, &x_, sizeof(T));                                                              \
    } while (0)

#define REF_CPLX(T, a, b, op)                                                                   \
    do {                                                                                        \
        T x_, y_;                                                                               \
        memcpy(&x_, a, sizeof(T));                                                              \
        memcpy(&y_, b, sizeof(T));                                                              \
        x_ = op == CG_OP_SUM ? x_ + y_ : x_ * y_;                                               \
        memcpy(a, &x_, sizeof(T));                                                              \
    } while (0)

#define REF_PAIR(VT, IOFF, a, b, op)                                                            \
    do {                                                                                        \
        VT  va_, vb_;                                                                           \
        int ia_, ib_;                                                                           \
        memcpy(&va_, a, sizeof(VT)); memcpy(&vb_, b, sizeof(VT));                               \
        memcpy(&ia_, a + IOFF, 4); memcpy(&ib_, b + IOFF, 4);                                   \
        if ((op == CG_OP_MINLOC ? vb_ < va_ : vb_ > va_) || (vb_ == va_ && ib_ < ia_)) {        \
            memcpy(a, &vb_, sizeof(VT)); memcpy(a + IOFF, &ib_, 4);                             \
        }                                                                                       \
    } while (0)

static void ref_combine(cg_dtype_t dt, cg_op_t op, char *a, const char *b)
{
    switch (dt) {
    case CG_DT_INT8: REF_INT(int8_t, uint8_t, a, b, op); break;
    case CG_DT_UINT8: REF_INT(uint8_t, uint8_t, a, b, op); break;
    case CG_DT_INT16: REF_INT(int16_t, uint32_t, a, b, op); break;
    case CG_DT_UINT16: REF_INT(uint16_t, uint32_t, a, b, op); break;
    case CG_DT_INT32: REF_INT(int32_t, uint32_t, a, b, op); break;
    case CG_DT_UINT32: REF_INT(uint32_t, uint32_t, a, b, op); break;
    case CG_DT_INT64: REF_INT(int64_t, uint64_t, a, b, op); break;
    case CG_DT_UINT64: REF_INT(uint64_t, uint64_t, a, b, op); break;
    case CG_DT_FLOAT: REF_FLT(float, a, b, op); break;
    case CG_DT_DOUBLE: REF_FLT(double, a, b, op); break;
    case CG_DT_CFLOAT: REF_CPLX(float complex, a, b, op); break;
    case CG_DT_CDOUBLE: REF_CPLX(double complex, a, b, op); break;
    case CG_DT_BOOL: {
        bool x = a[0], y = b[0];
        a[0] = (char)(op == CG_OP_LAND ? (x && y) : op == CG_OP_LOR ? (x || y) : (x != y));
        break;
    }
    case CG_DT_FLOAT_INT: REF_PAIR(float, 4, a, b, op); break;
    case CG_DT_DOUBLE_INT: REF_PAIR(double, 8, a, b, op); break;
    case CG_DT_LONG_INT: REF_PAIR(long, 8, a, b, op); break;
    case CG_DT_2INT: REF_PAIR(int, 4, a, b, op); break;
    case CG_DT_SHORT_INT: REF_PAIR(short, 4, a, b, op); break;
    default: break;
    }
}

/* Bytes of an element that the reduction owns (pairs: value and index only). */
static int owned_byte(cg_dtype_t dt, size_t b)
{
    switch (dt) {
    case CG_DT_DOUBLE_INT:
    case CG_DT_LONG_INT: return b < 12;
    case CG_DT_SHORT_INT: return b < 2 || (b >= 4 && b < 8);
    default: return 1;
    }
}

static void check_one(cg_dev_t *dev, cg_dtype_t dt, cg_op_t op, int nsrc, int ndst, size_t count,
                      size_t misalign, int in_place)
{
    size_t           size = cg_dtype_size(dt), bytes = count * size;
    char            *src[CG_DEV_MAX_FANIN], *dst[4], *want = malloc(bytes + 1);
    cg_reduce_args_t a = {.dtype = dt, .op = op, .count = count, .nsrc = nsrc, .ndst = ndst};

    for (int s = 0; s < nsrc; s++) {
        src[s] = malloc(bytes + 16);
        fill_random(dt, op, src[s] + misalign, count);
        a.srcs[s] = src[s] + misalign;
    }
    memcpy(want, src[0] + misalign, bytes);
    for (size_t i = 0; i < count; i++) {
        for (int s = 1; s < nsrc; s++) {
            ref_combine(dt, op, want + i * size, src[s] + misalign + i * size);
        }
    }
    for (int d = 0; d < ndst; d++) {
        dst[d] = malloc(bytes + 16);
        memset(dst[d], 0xEE, bytes + 16);
        a.dsts[d] = dst[d] + misalign;
    }
    if (in_place) { /* the first destination is the first source */
        memcpy(dst[0] + misalign, src[0] + misalign, bytes);
        a.srcs[0] = a.dsts[0];
    }
    ck_assert_int_eq(dev->ops->reduce(dev, &a, NULL), CG_OK);
    for (int d = 0; d < ndst; d++) {
        const char *got = dst[d] + misalign;
        for (size_t i = 0; i < count; i++) {
            for (size_t b = 0; b < size; b++) {
                unsigned char g = (unsigned char)got[i * size + b];
                if (owned_byte(dt, b)) {
                    ck_assert_msg(g == (unsigned char)want[i * size + b],
                                  "%s %s nsrc=%d count=%zu misalign=%zu: element %zu byte %zu differs",
                                  cg_dtype_name(dt), cg_op_name(op), nsrc, count, misalign, i, b);
                } else if (!(in_place && d == 0)) {
                    ck_assert_msg(g == 0xEE, "%s %s: padding byte %zu of element %zu written",
                                  cg_dtype_name(dt), cg_op_name(op), b, i);
                }
            }
        }
        ck_assert_msg((unsigned char)dst[d][misalign + bytes] == 0xEE, "%s %s: wrote past the end",
                      cg_dtype_name(dt), cg_op_name(op));
    }
    for (int s = 0; s < nsrc; s++) {
        free(src[s]);
    }
    for (int d = 0; d < ndst; d++) {
        free(dst[d]);
    }
    free(want);
}

START_TEST(test_every_type_and_op)
{
    cg_dev_t *dev;
    static const size_t counts[] = {0, 1, 7, 1000, 4099};
    int       combos = 0;

    ck_assert_int_eq(cg_dev_host_open(NULL, &dev), CG_OK);
    for (int dt = 0; dt < CG_DT_COUNT; dt++) {
        for (int op = 0; op < CG_OP_COUNT; op++) {
            if (!cg_reduce_supported((cg_dtype_t)dt, (cg_op_t)op)) {
                continue;
            }
            combos++;
            for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
                check_one(dev, (cg_dtype_t)dt, (cg_op_t)op, 1 + (int)(c % 5), 1 + (int)(c % 3),
                          counts[c], c % 2, 0);
                check_one(dev, (cg_dtype_t)dt, (cg_op_t)op, 2 + (int)(c % 3), 1, counts[c], 0, 1);
            }
        }
    }
    /* 8 integer types x 10 ops, 2 floats x 4, 2 complex x 2, bool x 3, 5 pairs x 2 */
    ck_assert_int_eq(combos, 80 + 8 + 4 + 3 + 10);
    cg_dev_close(dev);
}
END_TEST

START_TEST(test_support_matches_mpi)
{
    /* Exactly the combinations MPI defines: no MINLOC on integers, no bitwise on floats... */
    ck_assert(cg_reduce_supported(CG_DT_INT32, CG_OP_LXOR));
    ck_assert(!cg_reduce_supported(CG_DT_INT32, CG_OP_MINLOC));
    ck_assert(!cg_reduce_supported(CG_DT_FLOAT, CG_OP_BAND));
    ck_assert(!cg_reduce_supported(CG_DT_CDOUBLE, CG_OP_MAX));
    ck_assert(!cg_reduce_supported(CG_DT_BOOL, CG_OP_SUM));
    ck_assert(!cg_reduce_supported(CG_DT_2INT, CG_OP_SUM));
    ck_assert(cg_reduce_supported(CG_DT_SHORT_INT, CG_OP_MAXLOC));
    ck_assert(!cg_reduce_supported(CG_DT_NONE, CG_OP_SUM));
    ck_assert_uint_eq(cg_dtype_size(CG_DT_DOUBLE_INT), 16);
    ck_assert_uint_eq(cg_dtype_size(CG_DT_SHORT_INT), 8);
    ck_assert_str_eq(cg_dtype_name(CG_DT_CDOUBLE), "cdouble");
    ck_assert_str_eq(cg_op_name(CG_OP_MAXLOC), "maxloc");
}
END_TEST

START_TEST(test_unsupported_is_refused)
{
    cg_dev_t        *dev;
    int              x = 0;
    cg_reduce_args_t a = {.dtype = CG_DT_FLOAT, .op = CG_OP_BXOR, .count = 1, .nsrc = 1, .ndst = 1};

    a.srcs[0] = &x;
    a.dsts[0] = &x;
    ck_assert_int_eq(cg_dev_host_open(NULL, &dev), CG_OK);
    ck_assert_int_eq(dev->ops->reduce(dev, &a, NULL), CG_ERR_UNSUPPORTED);
    a.op   = CG_OP_SUM;
    a.nsrc = CG_DEV_MAX_FANIN + 1;
    ck_assert_int_eq(dev->ops->reduce(dev, &a, NULL), CG_ERR_UNSUPPORTED);
    cg_dev_close(dev);
}
END_TEST

CG_UNIT_MAIN("reduce", 120, test_every_type_and_op, test_support_matches_mpi, test_unsupported_is_refused)
