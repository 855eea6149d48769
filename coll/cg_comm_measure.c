/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * What the planner's cost model measures when a context spanning nodes is made, so that
 * the crossover between the staged path and the hierarchical algorithms sits where this
 * machine puts it rather than at typical figures:
 *   copy   a small copy to device memory and back, each synchronised (the staged path's
 *          fixed cost; half of it is the model's copy latency)
 *   under  one small collective of the layer underneath (the agreement, or the staged
 *          path's network part; over log2 P, the model's network latency)
 * Each is the best of three on every rank; then one exchange, and every rank takes the
 * slowest rank's values, so that every rank plans alike. A value a rank could not measure
 * (-1) leaves it unmeasured everywhere (0: the model's default).
 */
#include "coll/cg_comm_int.h"

#include <stdint.h>

#define CG_MEASURE_TRIES 3

static double cg_measure_copy(cg_comm_t *comm, void *device)
{
    uint64_t probe = 1, back = 0;
    double   best  = -1;

    if (comm->inter == NULL || device == NULL) {
        return -1;
    }
    for (int i = 0; i < CG_MEASURE_TRIES; i++) {
        double t0 = cg_time_now(), t;
        if (cg_dev_copy_sync(comm->dev, device, &probe, sizeof(probe), comm->inter->stream) != CG_OK ||
            cg_dev_copy_sync(comm->dev, &back, device, sizeof(back), comm->inter->stream) != CG_OK) {
            return -1;
        }
        t    = (cg_time_now() - t0) / 2;
        best = (best < 0 || t < best) ? t : best;
    }
    return best;
}

/* Every rank calls it the same number of times (several nodes: the same on every rank). */
static cg_status_t cg_measure_under(const cg_oob_t *oob, double *all, double *best)
{
    const uint64_t probe = 1;
    cg_status_t    status = CG_OK;

    *best = -1;
    for (int i = 0; i < CG_MEASURE_TRIES && status == CG_OK; i++) {
        double t0 = cg_time_now(), t;
        status    = oob->allgather(oob->ctx, &probe, all, sizeof(probe));
        t         = cg_time_now() - t0;
        *best     = (*best < 0 || t < *best) ? t : *best;
    }
    return status;
}

cg_status_t cg_comm_measure(cg_comm_t *comm, const cg_oob_t *oob, double *all, void *device)
{
    double      mine[CG_COMM_MEASURES] = {-1, -1};
    double      most[CG_COMM_MEASURES] = {0, 0};
    int         missing[CG_COMM_MEASURES] = {0, 0};
    cg_status_t status;

    if (comm->num_nodes < 2) {
        return CG_OK; /* nothing the one-node planner uses */
    }
    mine[0] = cg_measure_copy(comm, device);
    status  = cg_measure_under(oob, all, &mine[1]);
    if (status == CG_OK) {
        status = oob->allgather(oob->ctx, mine, all, sizeof(mine));
    }
    for (int r = 0; status == CG_OK && r < comm->config.size; r++) {
        for (int k = 0; k < CG_COMM_MEASURES; k++) {
            double v = all[(size_t)r * CG_COMM_MEASURES + k];
            missing[k] |= v < 0;
            most[k] = CG_MAX(most[k], v);
        }
    }
    comm->copy_us  = (status == CG_OK && !missing[0]) ? most[0] * 1e6 : 0;
    comm->under_us = (status == CG_OK && !missing[1]) ? most[1] * 1e6 : 0;
    cg_detail(CG_SUB_INIT, "measured (the slowest rank's): copy %.1f us, collective "
              "underneath %.1f us", comm->copy_us, comm->under_us);
    return status;
}
