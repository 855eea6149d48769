/*
 * coll/gpu collectives layer: plain C, no Open MPI headers. The collectives, their
 * algorithms and the planner that picks one; the per-communicator context that the fast
 * paths run on.
 */
#ifndef CG_COLL_H
#define CG_COLL_H

#include "base/cg_base.h"
#include "kernels/cg_dev.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CG_COLL_ALLREDUCE = 0,
    CG_COLL_BCAST,
    CG_COLL_ALLGATHER,
    CG_COLL_REDUCE_SCATTER,
    CG_COLL_REDUCE_SCATTER_BLOCK,
    CG_COLL_COUNT
} cg_coll_t;

/* Algorithm ids are stable: they are the values of the coll_gpu_*_algorithm parameters. */
typedef enum {
    CG_ALG_AUTO   = 0,
    CG_ALG_STAGED = 1, /* copy to host, run the collective underneath, copy back */
    CG_ALG_COUNT
} cg_alg_t;

const char *cg_coll_name(cg_coll_t coll);
const char *cg_alg_name(cg_alg_t alg);
/* Is alg one of coll's algorithms (AUTO included)? */
int cg_alg_valid(cg_coll_t coll, cg_alg_t alg);
/* The algorithms of coll, AUTO first, terminated by -1. */
const cg_alg_t *cg_coll_algs(cg_coll_t coll);

/* What the planner knows of a call. Everything here is identical on every rank. */
typedef struct {
    cg_coll_t  coll;
    size_t     count;  /* elements: allreduce/bcast count; allgather per-rank count;
                          reduce_scatter total count */
    size_t     bytes;  /* payload bytes per rank of the same extent */
    cg_dtype_t dtype;  /* CG_DT_NONE: not reducible on the device */
    cg_op_t    op;     /* CG_OP_NONE: not a predefined op */
    int        comm_size;
} cg_call_t;

typedef struct {
    cg_alg_t alg;
    size_t   chunk_bytes;
    char     reason[160];
} cg_plan_t;

typedef struct {
    int forced[CG_COLL_COUNT]; /* CG_ALG_AUTO or the algorithm a user forced */
} cg_planner_config_t;

void cg_planner_config_default(cg_planner_config_t *config);

/*
 * Choose the algorithm from what every rank knows identically (no topology, no buffers).
 * The result is the same on every rank for the same call.
 */
void cg_plan_select(const cg_planner_config_t *config, const cg_call_t *call, cg_plan_t *plan);

/* Per-communicator fast-path context (filled in by the intra-node and network layers). */
typedef struct cg_comm cg_comm_t;

#ifdef __cplusplus
}
#endif
#endif /* CG_COLL_H */
