/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
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
    [CG_ALG_HIER_RING]   = "hier_ring",
    [CG_ALG_HIER_RD]     = "hier_rd",
    [CG_ALG_HIER_LEADER] = "hier_leader",
    [CG_ALG_HIER_TREE]   = "hier_tree",
    [CG_ALG_SCATTER_ALLGATHER] = "scatter_allgather",
};

static const cg_alg_t cg_algs_allreduce[] = {CG_ALG_AUTO, CG_ALG_STAGED, CG_ALG_ONE_SHOT,
                                             CG_ALG_TWO_SHOT, CG_ALG_RING, CG_ALG_HIER_RING,
                                             CG_ALG_HIER_RD, CG_ALG_HIER_LEADER, (cg_alg_t)-1};
static const cg_alg_t cg_algs_bcast[]     = {CG_ALG_AUTO, CG_ALG_STAGED, CG_ALG_DIRECT,
                                             CG_ALG_SCATTER_ALLGATHER, CG_ALG_HIER_RING,
                                             CG_ALG_HIER_TREE, (cg_alg_t)-1};
static const cg_alg_t cg_algs_allgather[] = {CG_ALG_AUTO, CG_ALG_STAGED, CG_ALG_DIRECT,
                                             CG_ALG_HIER_RING, CG_ALG_HIER_LEADER, (cg_alg_t)-1};
static const cg_alg_t cg_algs_rs[]        = {CG_ALG_AUTO, CG_ALG_STAGED, CG_ALG_DIRECT,
                                             CG_ALG_HIER_RING, CG_ALG_HIER_LEADER, (cg_alg_t)-1};

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

/* nccl-tests' size of a call: the whole buffer (gathered, or scattered). */
static double cg_plan_size(const cg_call_t *call)
{
    return call->coll == CG_COLL_ALLGATHER ? (double)call->bytes * call->comm_size : (double)call->bytes;
}

/* Can alg run this call on this communicator? When not, why. */
static int cg_plan_applicable(const cg_call_t *call, const cg_shape_t *shape, cg_alg_t alg,
                              char *why, size_t len)
{
    if (!cg_alg_valid(call->coll, alg)) {
        snprintf(why, len, "%s is not an algorithm of %s", cg_alg_name(alg), cg_coll_name(call->coll));
        return 0;
    }
    if (alg == CG_ALG_STAGED || alg == CG_ALG_AUTO) {
        return 1;
    }
    if (!cg_alg_is_hier(alg)) {
        if (shape->num_nodes > 1) {
            snprintf(why, len, "%s runs on one node, the communicator spans %d", cg_alg_name(alg),
                     shape->num_nodes);
            return 0;
        }
        return 1;
    }
    if (shape->num_nodes < 2) {
        snprintf(why, len, "%s needs several nodes", cg_alg_name(alg));
        return 0;
    }
    if (!shape->inter_ok) {
        snprintf(why, len, "no inter-node transport (UCX)");
        return 0;
    }
    if (!shape->uniform && (alg == CG_ALG_HIER_RING || alg == CG_ALG_HIER_RD)) {
        snprintf(why, len, "%s needs the same number of ranks on every node", cg_alg_name(alg));
        return 0;
    }
    return 1;
}

static void cg_plan_cost_params(const cg_planner_config_t *config, const cg_shape_t *shape,
                                cg_cost_params_t *p)
{
    cg_cost_defaults(p, shape->topo_class, shape->local_size);
    p->lanes = CG_MAX(shape->lanes, 1);
    if (config->net_alpha_us > 0) {
        p->net_alpha_us = config->net_alpha_us;
    }
    if (config->net_bw_gbs > 0) {
        p->net_bw_gbs = config->net_bw_gbs;
    }
    if (shape->inter_staged) {
        p->stage_bw_gbs = 20.0; /* pipelined PCIe copies through page-locked memory */
    }
}

/* The algorithm auto picks on one node, from the size and how its GPUs are connected. */
static cg_alg_t cg_plan_intra_auto(const cg_planner_config_t *config, const cg_call_t *call,
                                   const cg_shape_t *shape, char *why, size_t len)
{
    const char *cls = cg_topo_class_name(shape->topo_class);

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
    if (call->coll == CG_COLL_BCAST) { /* the root's links, or every GPU's */
        cg_cost_params_t p;
        double           direct, split;
        cg_plan_cost_params(config, shape, &p);
        direct = cg_cost_predict(&p, CG_ALG_DIRECT, call->coll, (double)call->bytes, 1,
                                 shape->local_size);
        split  = cg_cost_predict(&p, CG_ALG_SCATTER_ALLGATHER, call->coll, (double)call->bytes, 1,
                                 shape->local_size);
        snprintf(why, len, "topology %s, one node: model %.1f us", cls, CG_MIN(direct, split) * 1e6);
        return split < direct ? CG_ALG_SCATTER_ALLGATHER : CG_ALG_DIRECT;
    }
    snprintf(why, len, "topology %s, one node", cls);
    return CG_ALG_DIRECT;
}

/* Several nodes: the fastest applicable algorithm by the cost model. */
static cg_alg_t cg_plan_inter_auto(const cg_planner_config_t *config, const cg_call_t *call,
                                   const cg_shape_t *shape, char *why, size_t len)
{
    static const cg_alg_t candidates[] = {CG_ALG_HIER_RING, CG_ALG_HIER_RD, CG_ALG_HIER_LEADER,
                                          CG_ALG_HIER_TREE};
    cg_cost_params_t p;
    cg_alg_t         best = CG_ALG_STAGED;
    double           best_t = 0, t;
    char             skip[96];

    cg_plan_cost_params(config, shape, &p);
    for (size_t i = 0; i < CG_ARRAY_SIZE(candidates); i++) {
        if (!cg_plan_applicable(call, shape, candidates[i], skip, sizeof(skip))) {
            continue;
        }
        t = cg_cost_predict(&p, candidates[i], call->coll, cg_plan_size(call), shape->num_nodes,
                            shape->local_size);
        if (best == CG_ALG_STAGED || t < best_t) {
            best   = candidates[i];
            best_t = t;
        }
    }
    if (best == CG_ALG_STAGED) {
        snprintf(why, len, "%d nodes: %s", shape->num_nodes, shape->inter_ok ?
                 "no algorithm for uneven ranks per node" : "no inter-node transport (UCX)");
    } else {
        snprintf(why, len, "%d nodes x %d: model %.1f us", shape->num_nodes, shape->local_size,
                 best_t * 1e6);
    }
    return best;
}

/* hier_ring overlaps its phases chunk by chunk: the chunk size a user set, or the model's. */
static void cg_plan_chunk(const cg_planner_config_t *config, const cg_call_t *call,
                          const cg_shape_t *shape, cg_plan_t *plan)
{
    cg_cost_params_t p;
    size_t           len = strlen(plan->reason);

    plan->chunk_bytes = 0;
    if (plan->alg != CG_ALG_HIER_RING) {
        return;
    }
    if (config->hier_chunk_bytes > 0) {
        plan->chunk_bytes = config->hier_chunk_bytes;
    } else {
        cg_plan_cost_params(config, shape, &p);
        cg_cost_predict_chunked(&p, plan->alg, call->coll, cg_plan_size(call), shape->num_nodes,
                                shape->local_size, &plan->chunk_bytes);
    }
    if (plan->chunk_bytes > 0 && plan->chunk_bytes < (size_t)cg_plan_size(call)) {
        snprintf(plan->reason + len, sizeof(plan->reason) - len, "; overlapped in chunks of %zu%s",
                 plan->chunk_bytes, config->hier_chunk_bytes > 0 ? " (set)" : "");
    } else {
        plan->chunk_bytes = 0;
    }
}

static void cg_plan_select_alg(const cg_planner_config_t *config, const cg_call_t *call,
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
    if (forced != CG_ALG_AUTO) {
        if (!cg_plan_applicable(call, shape, forced, why, sizeof(why))) {
            snprintf(plan->reason, sizeof(plan->reason), "forced: %s: staged", why);
            plan->alg = CG_ALG_STAGED;
            return;
        }
        plan->alg = forced;
        snprintf(plan->reason, sizeof(plan->reason), "forced");
        return;
    }
    for (int i = 0; i < cg_rules_count(config->rules); i++) {
        const cg_rule_t *r = cg_rules_get(config->rules, i);
        if (cg_rule_matches(r, call->coll, (size_t)cg_plan_size(call), shape->num_nodes)) {
            if (r->alg == CG_ALG_AUTO) {
                break; /* the model decides */
            }
            if (cg_plan_applicable(call, shape, r->alg, why, sizeof(why))) {
                plan->alg = r->alg;
                snprintf(plan->reason, sizeof(plan->reason), "rule at line %d", r->line);
                return;
            }
        }
    }
    if (shape->topo_class == CG_TOPO_CLASS_NO_P2P) {
        snprintf(why, sizeof(why), "topology %s: GPUs cannot reach each other, through host memory",
                 cg_topo_class_name(shape->topo_class));
        plan->alg = CG_ALG_STAGED;
    } else if (shape->num_nodes > 1) {
        plan->alg = cg_plan_inter_auto(config, call, shape, why, sizeof(why));
    } else {
        plan->alg = cg_plan_intra_auto(config, call, shape, why, sizeof(why));
    }
    snprintf(plan->reason, sizeof(plan->reason), "%s", why);
}

void cg_plan_select(const cg_planner_config_t *config, const cg_call_t *call,
                    const cg_shape_t *shape, cg_plan_t *plan)
{
    cg_plan_select_alg(config, call, shape, plan);
    cg_plan_chunk(config, call, shape, plan);
}
