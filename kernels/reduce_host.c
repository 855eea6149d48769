/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* CPU reductions from the shared element-wise table; the host layer's "kernel". */
#include "kernels/cg_dev.h"

#include <stddef.h>
#include <string.h>

#define CG_HOST_BLOCK 512

static const char *const cg_dtype_names[CG_DT_COUNT] = {
    "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float", "double", "cfloat", "cdouble", "bool",
    "float_int", "double_int", "long_int", "2int", "short_int",
};

static const char *const cg_op_names[CG_OP_COUNT] = {
    "sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor", "minloc", "maxloc",
};

const char *cg_dtype_name(cg_dtype_t dt)
{
    return (dt >= 0 && dt < CG_DT_COUNT) ? cg_dtype_names[dt] : "none";
}

const char *cg_op_name(cg_op_t op)
{
    return (op >= 0 && op < CG_OP_COUNT) ? cg_op_names[op] : "none";
}

/* Elements are loaded and stored with memcpy: user buffers need not be aligned. Padded
 * pair types are stored field by field so that their padding bytes stay untouched. */
#define CG_X_HOST_FN(DT, OP, T, FN, STORE)                                                   \
    static void cg_host_##FN(const cg_reduce_args_t *a)                                     \
    {                                                                                       \
        T acc[CG_HOST_BLOCK], val[CG_HOST_BLOCK];                                           \
        for (size_t off = 0; off < a->count; off += CG_HOST_BLOCK) {                        \
            size_t n = CG_MIN((size_t)CG_HOST_BLOCK, a->count - off);                       \
            memcpy(acc, (const char *)a->srcs[0] + off * sizeof(T), n * sizeof(T));         \
            for (int s = 1; s < a->nsrc; s++) {                                             \
                memcpy(val, (const char *)a->srcs[s] + off * sizeof(T), n * sizeof(T));     \
                for (size_t j = 0; j < n; j++) {                                            \
                    acc[j] = FN(acc[j], val[j]);                                            \
                }                                                                           \
            }                                                                               \
            for (int d = 0; d < a->ndst; d++) {                                             \
                char *dst = (char *)a->dsts[d] + off * sizeof(T);                           \
                cg_host_store_##STORE(dst, acc, n, sizeof(T));                              \
            }                                                                               \
        }                                                                                   \
    }

static inline void cg_host_store_0(char *dst, const void *acc, size_t n, size_t size)
{
    memcpy(dst, acc, n * size);
}

/* Padded pairs: value first at offset 0, int index after it (see cg_reduce_ops.h). */
#define cg_host_store_1(dst, acc, n, size)                                                   \
    do {                                                                                    \
        for (size_t j_ = 0; j_ < (n); j_++) {                                               \
            memcpy((dst) + j_ * (size), &(acc)[j_].v, sizeof((acc)[j_].v));                 \
            memcpy((dst) + j_ * (size) + offsetof(__typeof__((acc)[0]), i), &(acc)[j_].i,   \
                   sizeof(int));                                                            \
        }                                                                                   \
    } while (0)

CG_REDUCE_TABLE(CG_X_HOST_FN)

typedef void (*cg_host_reduce_fn_t)(const cg_reduce_args_t *a);

static cg_host_reduce_fn_t cg_host_reduce_lookup(cg_dtype_t dt, cg_op_t op)
{
#define CG_X_HOST_CASE(DT, OP, T, FN, STORE) if (dt == (DT) && op == (OP)) return cg_host_##FN;
    CG_REDUCE_TABLE(CG_X_HOST_CASE)
#undef CG_X_HOST_CASE
    return NULL;
}

void cg_reduce_host(const cg_reduce_args_t *args)
{
    cg_host_reduce_fn_t fn;

    if (args->count == 0 || args->ndst == 0) {
        return;
    }
    fn = cg_host_reduce_lookup(args->dtype, args->op);
    if (fn != NULL) {
        fn(args);
    }
}
