/* Algorithm names and selection. */
#include "coll/cg_coll.h"

#include <stdio.h>
#include <string.h>

static const char *const cg_coll_names[CG_COLL_COUNT] = {
    [CG_COLL_ALLREDUCE]            = "allreduce",
    [CG_COLL_BCAST]                = "bcast",
    [CG_COLL_ALLGATHER]            = "allgather",
    [CG_COLL_REDUCE_SCATTER]       = "reduce_scatter",
    [CG_COLL_REDUCE_SCATTER_BLOCK] = "reduce_scatter_block",
};

static const char *const cg_alg_names[CG_ALG_COUNT] = {
    [CG_ALG_AUTO]     = "auto",
    [CG_ALG_STAGED]   = "staged",
    [CG_ALG_ONE_SHOT] = "one_shot",
    [CG_ALG_TWO_SHOT] = "two_shot",
    [CG_ALG_DIRECT]   = "direct",
    [CG_ALG_RING]     = "ring",
};

static const cg_alg_t cg_algs_allreduce[] = {CG_ALG_AUTO, CG_ALG_STAGED, CG_ALG_ONE_SHOT,
                                             CG_ALG_TWO_SHOT, CG_ALG_RING, (cg_alg_t)-1};
static const cg_alg_t cg_algs_bcast[]     = {CG_ALG_AUTO, CG_ALG_STAGED, CG_ALG_DIRECT,
                                             (cg_alg_t)-1};
static const cg_alg_t cg_algs_allgather[] = {CG_ALG_AUTO, CG_ALG_STAGED, CG_ALG_DIRECT,
                                             (cg_alg_t)-1};
static const cg_alg_t cg_algs_rs[]        = {CG_ALG_AUTO, CG_ALG_STAGED, CG_ALG_DIRECT,
                                             (cg_alg_t)-1};

static const cg_alg_t *const cg_coll_alg_lists[CG_COLL_COUNT] = {
    [CG_COLL_ALLREDUCE]            = cg_algs_allreduce,
    [CG_COLL_BCAST]                = cg_algs_bcast,
    [CG_COLL_ALLGATHER]            = cg_algs_allgather,
    [CG_COLL_REDUCE_SCATTER]       = cg_algs_rs,
    [CG_COLL_REDUCE_SCATTER_BLOCK] = cg_algs_rs,
};

const char *cg_coll_name(cg_coll_t coll)
{
    return (coll >= 0 && coll < CG_COLL_COUNT) ? cg_coll_names[coll] : "unknown";
}

const char *cg_alg_name(cg_alg_t alg)
{
    return (alg >= 0 && alg < CG_ALG_COUNT && cg_alg_names[alg]) ? cg_alg_names[alg] : "unknown";
}

const cg_alg_t *cg_coll_algs(cg_coll_t coll)
{
    return cg_coll_alg_lists[coll];
}

int cg_alg_valid(cg_coll_t coll, cg_alg_t alg)
{
    if (coll < 0 || coll >= CG_COLL_COUNT) {
        return 0;
    }
    for (const cg_alg_t *a = cg_coll_alg_lists[coll]; *a != (cg_alg_t)-1; a++) {
        if (*a == alg) {
            return 1;
        }
    }
    return 0;
}

void cg_planner_config_default(cg_planner_config_t *config)
{
    memset(config, 0, sizeof(*config));
    for (int c = 0; c < CG_COLL_COUNT; c++) {
        config->forced[c] = CG_ALG_AUTO;
    }
    config->one_shot_max = 64u << 10;
}

static int cg_plan_staged(cg_plan_t *plan, const char *why)
{
    memset(plan, 0, sizeof(*plan));
    plan->alg = CG_ALG_STAGED;
    snprintf(plan->reason, sizeof(plan->reason), "%s", why);
    return 0;
}

static int cg_coll_reduces(cg_coll_t coll)
{
    return coll == CG_COLL_ALLREDUCE || coll == CG_COLL_REDUCE_SCATTER ||
           coll == CG_COLL_REDUCE_SCATTER_BLOCK;
}

int cg_plan_prefilter(const cg_planner_config_t *config, const cg_call_t *call, cg_plan_t *plan)
{
    memset(plan, 0, sizeof(*plan));
    if (config->forced[call->coll] == CG_ALG_STAGED) {
        return cg_plan_staged(plan, "forced");
    }
    if (call->count == 0 || call->bytes == 0) {
        return cg_plan_staged(plan, "no data");
    }
    if (cg_coll_reduces(call->coll)) {
        if (call->op == CG_OP_NONE) {
            return cg_plan_staged(plan, "user-defined op");
        }
        if (call->dtype == CG_DT_NONE) {
            return cg_plan_staged(plan, "datatype not reducible on the device");
        }
        if (!cg_reduce_supported(call->dtype, call->op)) {
            return cg_plan_staged(plan, "op not defined on this datatype");
        }
    }
    plan->alg = CG_ALG_AUTO;
    return 1;
}

/* The algorithm auto picks on one node, from the size and how its GPUs are connected. */
static cg_alg_t cg_plan_intra_auto(const cg_planner_config_t *config, const cg_call_t *call,
                                   const cg_shape_t *shape, char *why, size_t len)
{
    const char *cls = cg_topo_class_name(shape->topo_class);

    if (shape->topo_class == CG_TOPO_CLASS_NO_P2P) {
        snprintf(why, len, "topology %s: GPUs cannot reach each other, through host memory", cls);
        return CG_ALG_STAGED;
    }
    if (call->coll == CG_COLL_ALLREDUCE && shape->topo_class == CG_TOPO_CLASS_NVLINK_PARTIAL &&
        call->bytes > config->one_shot_max) {
        snprintf(why, len, "topology %s: ring along the NVLink pairs", cls);
        return CG_ALG_RING;
    }
    if (call->coll == CG_COLL_ALLREDUCE) {
        if (call->bytes <= config->one_shot_max) {
            snprintf(why, len, "topology %s, %zu bytes <= one-shot limit %zu", cls, call->bytes,
                     config->one_shot_max);
            return CG_ALG_ONE_SHOT;
        }
        snprintf(why, len, "topology %s, %zu bytes > one-shot limit %zu", cls, call->bytes,
                 config->one_shot_max);
        return CG_ALG_TWO_SHOT;
    }
    snprintf(why, len, "topology %s, one node", cls);
    return CG_ALG_DIRECT;
}

void cg_plan_select(const cg_planner_config_t *config, const cg_call_t *call,
                    const cg_shape_t *shape, cg_plan_t *plan)
{
    cg_alg_t forced = (cg_alg_t)config->forced[call->coll];
    char     why[128];

    if (!cg_plan_prefilter(config, call, plan)) {
        return;
    }
    if (!shape->intra_ok) {
        cg_plan_staged(plan, "local group not connected");
        return;
    }
    if (shape->num_nodes > 1) {
        snprintf(why, sizeof(why), "%d nodes: no inter-node path", shape->num_nodes);
        cg_plan_staged(plan, why);
        return;
    }
    plan->alg = cg_plan_intra_auto(config, call, shape, why, sizeof(why));
    if (forced != CG_ALG_AUTO) {
        if (!cg_alg_valid(call->coll, forced)) {
            snprintf(plan->reason, sizeof(plan->reason), "forced %s is not an algorithm of %s: staged",
                     cg_alg_name(forced), cg_coll_name(call->coll));
            plan->alg = CG_ALG_STAGED;
            return;
        }
        plan->alg = forced;
        snprintf(plan->reason, sizeof(plan->reason), "forced");
        return;
    }
    snprintf(plan->reason, sizeof(plan->reason), "%s", why);
}
