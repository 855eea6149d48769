/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Element-wise reductions for every MPI predefined op over the C types it is defined for.
 * One header compiled by gcc (host layer, unit tests) and by nvcc (CUDA kernels), so the
 * arithmetic that runs on the GPU is the arithmetic that the CPU tests check.
 *
 * Semantics follow C on two's-complement machines (what Open MPI's host ops compute):
 * integer SUM and PROD wrap, logical ops yield 0 or 1, MINLOC/MAXLOC keep the smaller
 * index on ties. Sources are combined in order: acc = s0; acc = acc op s1; ...
 */
#ifndef CG_REDUCE_OPS_H
#define CG_REDUCE_OPS_H

#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define CG_HD static __host__ __device__ __forceinline__
#else
#define CG_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CG_DT_INT8, CG_DT_UINT8, CG_DT_INT16, CG_DT_UINT16,
    CG_DT_INT32, CG_DT_UINT32, CG_DT_INT64, CG_DT_UINT64,
    CG_DT_FLOAT, CG_DT_DOUBLE, CG_DT_CFLOAT, CG_DT_CDOUBLE, CG_DT_BOOL,
    CG_DT_FLOAT_INT, CG_DT_DOUBLE_INT, CG_DT_LONG_INT, CG_DT_2INT, CG_DT_SHORT_INT,
    CG_DT_COUNT,
    CG_DT_NONE = -1 /* not reducible on the device */
} cg_dtype_t;

typedef enum {
    CG_OP_SUM, CG_OP_PROD, CG_OP_MIN, CG_OP_MAX,
    CG_OP_LAND, CG_OP_LOR, CG_OP_LXOR, CG_OP_BAND, CG_OP_BOR, CG_OP_BXOR,
    CG_OP_MINLOC, CG_OP_MAXLOC,
    CG_OP_COUNT,
    CG_OP_NONE = -1
} cg_op_t;

typedef struct { float re, im; } cg_cfloat_t;
typedef struct { double re, im; } cg_cdouble_t;
typedef struct { float v; int i; } cg_float_int_t;
typedef struct { double v; int i; } cg_double_int_t;
typedef struct { long v; int i; } cg_long_int_t;
typedef struct { int v; int i; } cg_2int_t;
typedef struct { short v; int i; } cg_short_int_t;

/* ---- integer types: every op but MINLOC/MAXLOC ---------------------------------------- */
#define CG_INT_OPS(N, T)                                                                      \
    CG_HD T cg_sum_##N(T a, T b) { return (T)((uint64_t)a + (uint64_t)b); }                   \
    CG_HD T cg_prod_##N(T a, T b) { return (T)((uint64_t)a * (uint64_t)b); }                  \
    CG_HD T cg_min_##N(T a, T b) { return b < a ? b : a; }                                    \
    CG_HD T cg_max_##N(T a, T b) { return b > a ? b : a; }                                    \
    CG_HD T cg_land_##N(T a, T b) { return (T)((a != 0) && (b != 0)); }                       \
    CG_HD T cg_lor_##N(T a, T b) { return (T)((a != 0) || (b != 0)); }                        \
    CG_HD T cg_lxor_##N(T a, T b) { return (T)((a == 0) != (b == 0)); }                       \
    CG_HD T cg_band_##N(T a, T b) { return (T)(a & b); }                                      \
    CG_HD T cg_bor_##N(T a, T b) { return (T)(a | b); }                                       \
    CG_HD T cg_bxor_##N(T a, T b) { return (T)(a ^ b); }

CG_INT_OPS(int8, int8_t)
CG_INT_OPS(uint8, uint8_t)
CG_INT_OPS(int16, int16_t)
CG_INT_OPS(uint16, uint16_t)
CG_INT_OPS(int32, int32_t)
CG_INT_OPS(uint32, uint32_t)
CG_INT_OPS(int64, int64_t)
CG_INT_OPS(uint64, uint64_t)

/* ---- floating point: SUM PROD MIN MAX ------------------------------------------------ */
#define CG_FLOAT_OPS(N, T)                                                                    \
    CG_HD T cg_sum_##N(T a, T b) { return a + b; }                                            \
    CG_HD T cg_prod_##N(T a, T b) { return a * b; }                                           \
    CG_HD T cg_min_##N(T a, T b) { return b < a ? b : a; }                                    \
    CG_HD T cg_max_##N(T a, T b) { return b > a ? b : a; }

CG_FLOAT_OPS(float, float)
CG_FLOAT_OPS(double, double)

/* ---- complex: SUM PROD --------------------------------------------------------------- */
#define CG_COMPLEX_OPS(N, T)                                                                  \
    CG_HD T cg_sum_##N(T a, T b) { T r; r.re = a.re + b.re; r.im = a.im + b.im; return r; }   \
    CG_HD T cg_prod_##N(T a, T b)                                                             \
    {                                                                                         \
        T r;                                                                                  \
        r.re = a.re * b.re - a.im * b.im;                                                     \
        r.im = a.re * b.im + a.im * b.re;                                                     \
        return r;                                                                             \
    }

CG_COMPLEX_OPS(cfloat, cg_cfloat_t)
CG_COMPLEX_OPS(cdouble, cg_cdouble_t)

/* ---- C bool (one byte holding 0 or 1): LAND LOR LXOR ------------------------------- */
CG_HD uint8_t cg_land_bool(uint8_t a, uint8_t b) { return (uint8_t)((a != 0) && (b != 0)); }
CG_HD uint8_t cg_lor_bool(uint8_t a, uint8_t b) { return (uint8_t)((a != 0) || (b != 0)); }
CG_HD uint8_t cg_lxor_bool(uint8_t a, uint8_t b) { return (uint8_t)((a == 0) != (b == 0)); }

/* ---- value/index pairs: MINLOC MAXLOC -------------------------------------------------- */
#define CG_PAIR_OPS(N, T)                                                                     \
    CG_HD T cg_minloc_##N(T a, T b)                                                           \
    {                                                                                         \
        if (b.v < a.v || (b.v == a.v && b.i < a.i)) {                                         \
            return b;                                                                         \
        }                                                                                     \
        return a;                                                                             \
    }                                                                                         \
    CG_HD T cg_maxloc_##N(T a, T b)                                                           \
    {                                                                                         \
        if (b.v > a.v || (b.v == a.v && b.i < a.i)) {                                         \
            return b;                                                                         \
        }                                                                                     \
        return a;                                                                             \
    }

CG_PAIR_OPS(float_int, cg_float_int_t)
CG_PAIR_OPS(double_int, cg_double_int_t)
CG_PAIR_OPS(long_int, cg_long_int_t)
CG_PAIR_OPS(2int, cg_2int_t)
CG_PAIR_OPS(short_int, cg_short_int_t)

/*
 * The table of every supported (type, op): X(DT, OP, T, FN, STORE) where FN combines two
 * values and STORE is 1 when the element must be stored field by field (types with
 * padding bytes that belong to the user, never written).
 */
#define CG_REDUCE_INT_ROWS(X, DT, T, N)                                                       \
    X(DT, CG_OP_SUM, T, cg_sum_##N, 0)                                                        \
    X(DT, CG_OP_PROD, T, cg_prod_##N, 0)                                                      \
    X(DT, CG_OP_MIN, T, cg_min_##N, 0)                                                        \
    X(DT, CG_OP_MAX, T, cg_max_##N, 0)                                                        \
    X(DT, CG_OP_LAND, T, cg_land_##N, 0)                                                      \
    X(DT, CG_OP_LOR, T, cg_lor_##N, 0)                                                        \
    X(DT, CG_OP_LXOR, T, cg_lxor_##N, 0)                                                      \
    X(DT, CG_OP_BAND, T, cg_band_##N, 0)                                                      \
    X(DT, CG_OP_BOR, T, cg_bor_##N, 0)                                                        \
    X(DT, CG_OP_BXOR, T, cg_bxor_##N, 0)

#define CG_REDUCE_TABLE(X)                                                                    \
    CG_REDUCE_INT_ROWS(X, CG_DT_INT8, int8_t, int8)                                           \
    CG_REDUCE_INT_ROWS(X, CG_DT_UINT8, uint8_t, uint8)                                        \
    CG_REDUCE_INT_ROWS(X, CG_DT_INT16, int16_t, int16)                                        \
    CG_REDUCE_INT_ROWS(X, CG_DT_UINT16, uint16_t, uint16)                                     \
    CG_REDUCE_INT_ROWS(X, CG_DT_INT32, int32_t, int32)                                        \
    CG_REDUCE_INT_ROWS(X, CG_DT_UINT32, uint32_t, uint32)                                     \
    CG_REDUCE_INT_ROWS(X, CG_DT_INT64, int64_t, int64)                                        \
    CG_REDUCE_INT_ROWS(X, CG_DT_UINT64, uint64_t, uint64)                                     \
    X(CG_DT_FLOAT, CG_OP_SUM, float, cg_sum_float, 0)                                         \
    X(CG_DT_FLOAT, CG_OP_PROD, float, cg_prod_float, 0)                                       \
    X(CG_DT_FLOAT, CG_OP_MIN, float, cg_min_float, 0)                                         \
    X(CG_DT_FLOAT, CG_OP_MAX, float, cg_max_float, 0)                                         \
    X(CG_DT_DOUBLE, CG_OP_SUM, double, cg_sum_double, 0)                                      \
    X(CG_DT_DOUBLE, CG_OP_PROD, double, cg_prod_double, 0)                                    \
    X(CG_DT_DOUBLE, CG_OP_MIN, double, cg_min_double, 0)                                      \
    X(CG_DT_DOUBLE, CG_OP_MAX, double, cg_max_double, 0)                                      \
    X(CG_DT_CFLOAT, CG_OP_SUM, cg_cfloat_t, cg_sum_cfloat, 0)                                 \
    X(CG_DT_CFLOAT, CG_OP_PROD, cg_cfloat_t, cg_prod_cfloat, 0)                               \
    X(CG_DT_CDOUBLE, CG_OP_SUM, cg_cdouble_t, cg_sum_cdouble, 0)                              \
    X(CG_DT_CDOUBLE, CG_OP_PROD, cg_cdouble_t, cg_prod_cdouble, 0)                            \
    X(CG_DT_BOOL, CG_OP_LAND, uint8_t, cg_land_bool, 0)                                       \
    X(CG_DT_BOOL, CG_OP_LOR, uint8_t, cg_lor_bool, 0)                                         \
    X(CG_DT_BOOL, CG_OP_LXOR, uint8_t, cg_lxor_bool, 0)                                       \
    X(CG_DT_FLOAT_INT, CG_OP_MINLOC, cg_float_int_t, cg_minloc_float_int, 0)                  \
    X(CG_DT_FLOAT_INT, CG_OP_MAXLOC, cg_float_int_t, cg_maxloc_float_int, 0)                  \
    X(CG_DT_DOUBLE_INT, CG_OP_MINLOC, cg_double_int_t, cg_minloc_double_int, 1)               \
    X(CG_DT_DOUBLE_INT, CG_OP_MAXLOC, cg_double_int_t, cg_maxloc_double_int, 1)               \
    X(CG_DT_LONG_INT, CG_OP_MINLOC, cg_long_int_t, cg_minloc_long_int, 1)                     \
    X(CG_DT_LONG_INT, CG_OP_MAXLOC, cg_long_int_t, cg_maxloc_long_int, 1)                     \
    X(CG_DT_2INT, CG_OP_MINLOC, cg_2int_t, cg_minloc_2int, 0)                                 \
    X(CG_DT_2INT, CG_OP_MAXLOC, cg_2int_t, cg_maxloc_2int, 0)                                 \
    X(CG_DT_SHORT_INT, CG_OP_MINLOC, cg_short_int_t, cg_minloc_short_int, 1)                  \
    X(CG_DT_SHORT_INT, CG_OP_MAXLOC, cg_short_int_t, cg_maxloc_short_int, 1)

/* Size in bytes of one element (its extent, padding included). */
CG_HD size_t cg_dtype_size(cg_dtype_t dt)
{
    switch (dt) {
    case CG_DT_INT8: case CG_DT_UINT8: case CG_DT_BOOL: return 1;
    case CG_DT_INT16: case CG_DT_UINT16: return 2;
    case CG_DT_INT32: case CG_DT_UINT32: case CG_DT_FLOAT: return 4;
    case CG_DT_INT64: case CG_DT_UINT64: case CG_DT_DOUBLE: return 8;
    case CG_DT_CFLOAT: return sizeof(cg_cfloat_t);
    case CG_DT_CDOUBLE: return sizeof(cg_cdouble_t);
    case CG_DT_FLOAT_INT: return sizeof(cg_float_int_t);
    case CG_DT_DOUBLE_INT: return sizeof(cg_double_int_t);
    case CG_DT_LONG_INT: return sizeof(cg_long_int_t);
    case CG_DT_2INT: return sizeof(cg_2int_t);
    case CG_DT_SHORT_INT: return sizeof(cg_short_int_t);
    default: return 0;
    }
}

/* Does the element have padding bytes (which a reduction must not write)? */
CG_HD int cg_dtype_has_padding(cg_dtype_t dt)
{
    return dt == CG_DT_DOUBLE_INT || dt == CG_DT_LONG_INT || dt == CG_DT_SHORT_INT;
}

CG_HD int cg_reduce_supported(cg_dtype_t dt, cg_op_t op)
{
#define CG_X_SUPPORTED(DT, OP, T, FN, STORE) if (dt == (DT) && op == (OP)) return 1;
    CG_REDUCE_TABLE(CG_X_SUPPORTED)
#undef CG_X_SUPPORTED
    return 0;
}

/* Store a pair field by field, leaving the padding bytes of the destination untouched. */
#define CG_STORE_FIELDS(dst, val) do { (dst)->v = (val).v; (dst)->i = (val).i; } while (0)

const char *cg_dtype_name(cg_dtype_t dt);
const char *cg_op_name(cg_op_t op);

#ifdef __cplusplus
}
#endif
#endif /* CG_REDUCE_OPS_H */
