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
    [CG_ALG_AUTO]   = "auto",
    [CG_ALG_STAGED] = "staged",
};

static const cg_alg_t cg_algs_allreduce[] = {CG_ALG_AUTO, CG_ALG_STAGED, (cg_alg_t)-1};
static const cg_alg_t cg_algs_bcast[]     = {CG_ALG_AUTO, CG_ALG_STAGED, (cg_alg_t)-1};
static const cg_alg_t cg_algs_allgather[] = {CG_ALG_AUTO, CG_ALG_STAGED, (cg_alg_t)-1};
static const cg_alg_t cg_algs_rs[]        = {CG_ALG_AUTO, CG_ALG_STAGED, (cg_alg_t)-1};

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
}

void cg_plan_select(const cg_planner_config_t *config, const cg_call_t *call, cg_plan_t *plan)
{
    cg_alg_t forced = (cg_alg_t)config->forced[call->coll];

    memset(plan, 0, sizeof(*plan));
    plan->alg = CG_ALG_STAGED;
    if (forced != CG_ALG_AUTO && forced != CG_ALG_STAGED) {
        snprintf(plan->reason, sizeof(plan->reason), "forced %s is not available: staged",
                 cg_alg_name(forced));
        return;
    }
    snprintf(plan->reason, sizeof(plan->reason), "%s",
             forced == CG_ALG_STAGED ? "forced" : "only path");
}
