/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The planner: which algorithm runs a call, and why. Decided from what every rank knows
 * identically (the call's shape, the communicator's shape, the parameters), in this order:
 * can any fast path take the call at all; the forced parameter; the rules file; the node
 * class (no P2P: staged); on one node the size rules, across nodes the cost model over the
 * applicable rows of the registry.
 */
#include "coll/cg_coll.h"

#include <math.h>
#include <stdio.h>
#include <stdarg.h>
#include <string.h>

void cg_planner_config_default(cg_planner_config_t *config)
{
    memset(config, 0, sizeof(*config));
    for (int c = 0; c < CG_COLL_COUNT; c++) {
        config->forced[c] = CG_ALG_AUTO;
    }
    config->one_shot_max = 0; /* the cost model decides (cg_plan_intra_auto) */
    config->explain      = 1;
}

/* Why the planner chose what it did, into buf; nothing at all when len is 0 (a call that is
 * not logged formats no text: config->explain). */
static void cg_plan_note(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cg_plan_note(char *buf, size_t len, const char *fmt, ...)
{
    va_list args;

    if (len == 0) {
        return;
    }
    va_start(args, fmt);
    vsnprintf(buf, len, fmt, args);
    va_end(args);
}

static size_t cg_plan_reason_len(const cg_planner_config_t *config, const cg_plan_t *plan)
{
    return config->explain ? sizeof(plan->reason) : 0;
}

/* A plan with nothing chosen yet (the reason empty; its bytes beyond are not read). */
static void cg_plan_clear(cg_plan_t *plan)
{
    plan->alg         = CG_ALG_AUTO;
    plan->chunk_bytes = 0;
    plan->node_ll     = 0;
    plan->reason[0]   = '\0';
}

static int cg_plan_staged(const cg_planner_config_t *config, cg_plan_t *plan, const char *why)
{
    cg_plan_clear(plan);
    plan->alg = CG_ALG_STAGED;
    cg_plan_note(plan->reason, cg_plan_reason_len(config, plan), "%s", why);
    return 0;
}

static int cg_coll_reduces(cg_coll_t coll)
{
    return coll == CG_COLL_ALLREDUCE || coll == CG_COLL_REDUCE_SCATTER ||
           coll == CG_COLL_REDUCE_SCATTER_BLOCK;
}

int cg_plan_prefilter(const cg_planner_config_t *config, const cg_call_t *call, cg_plan_t *plan)
{
    cg_plan_clear(plan);
    if (config->forced[call->coll] == CG_ALG_STAGED) {
        return cg_plan_staged(config, plan, "forced");
    }
    if (call->count == 0 || call->bytes == 0) {
        return cg_plan_staged(config, plan, "no data");
    }
    if (cg_coll_reduces(call->coll)) {
        if (call->op == CG_OP_NONE) {
            return cg_plan_staged(config, plan, "user-defined op");
        }
        if (call->dtype == CG_DT_NONE) {
            return cg_plan_staged(config, plan, "datatype not reducible on the device");
        }
        if (!cg_reduce_supported(call->dtype, call->op)) {
            return cg_plan_staged(config, plan, "op not defined on this datatype");
        }
    }
    plan->alg = CG_ALG_AUTO;
    return 1;
}

/* The largest of a reduce_scatter's blocks (elements; 0 without counts): the only thing
 * of its counts that the plan depends on. */
static size_t cg_plan_largest_block(const cg_call_t *call)
{
    size_t largest = 0;

    for (int p = 0; call->counts != NULL && p < call->comm_size; p++) {
        largest = CG_MAX(largest, call->counts[p]);
    }
    return largest;
}

/* Bytes a rank sends one peer in an LL call of this call (the largest block). */
static size_t cg_plan_ll_payload(const cg_call_t *call)
{
    if (call->coll != CG_COLL_REDUCE_SCATTER && call->coll != CG_COLL_REDUCE_SCATTER_BLOCK) {
        return call->bytes; /* allreduce, bcast: the message; allgather: a rank's block */
    }
    if (call->counts == NULL || call->count == 0) { /* the planner's tools: even blocks */
        return (call->bytes + (size_t)call->comm_size - 1) / (size_t)CG_MAX(call->comm_size, 1);
    }
    return cg_plan_largest_block(call) * (call->bytes / call->count);
}

/* Can alg run this call on this communicator? When not, why. From the registry row. */
static int cg_plan_applicable(const cg_call_t *call, const cg_shape_t *shape, cg_alg_t alg,
                              char *why, size_t len)
{
    const cg_alg_info_t *info = cg_alg_info(call->coll, alg);

    if (alg == CG_ALG_AUTO) {
        return 1;
    }
    if (info == NULL) {
        cg_plan_note(why, len, "%s is not an algorithm of %s", cg_alg_name(alg), cg_coll_name(call->coll));
        return 0;
    }
    if ((info->needs & CG_NEEDS_ONE_NODE) && shape->num_nodes > 1) {
        cg_plan_note(why, len, "%s runs on one node, the communicator spans %d", info->name,
                 shape->num_nodes);
        return 0;
    }
    if (info->needs & CG_NEEDS_NODES) {
        if (shape->num_nodes < 2) {
            cg_plan_note(why, len, "%s needs several nodes", info->name);
            return 0;
        }
        if (!shape->inter_ok) {
            cg_plan_note(why, len, "no inter-node transport (UCX)");
            return 0;
        }
    }
    if ((info->needs & CG_NEEDS_UNIFORM) && !shape->uniform) {
        cg_plan_note(why, len, "%s needs the same number of ranks on every node", info->name);
        return 0;
    }
    if ((info->needs & CG_NEEDS_LL_FIT) && cg_plan_ll_payload(call) > shape->ll_capacity) {
        cg_plan_note(why, len, "%s: %zu bytes per peer do not fit the LL inbox (%zu)", info->name,
                 cg_plan_ll_payload(call), shape->ll_capacity);
        return 0;
    }
    return 1;
}

static void cg_plan_cost_params(const cg_planner_config_t *config, const cg_shape_t *shape,
                                cg_cost_params_t *p)
{
    cg_cost_defaults(p, shape->topo_class, shape->local_size);
    p->lanes = CG_MAX(shape->lanes, 1);
    p->ll_capacity = (double)shape->ll_capacity;
    p->time_sliced = shape->time_sliced;
    if (config->net_alpha_us > 0) {
        p->net_alpha_us = config->net_alpha_us;
    }
    if (config->net_bw_gbs > 0) {
        p->net_bw_gbs = config->net_bw_gbs;
    }
    if (shape->inter_staged) {
        p->stage_bw_gbs = 20.0; /* pipelined PCIe copies through page-locked memory */
    }
    /* measured when the context was made (several nodes): a small collective underneath
     * (about log2(ranks) messages) and the staged path's copies */
    if (config->net_alpha_us <= 0 && shape->under_us > 0) {
        p->net_alpha_us = shape->under_us / CG_MAX(1.0, ceil(log2((double)shape->size)));
    }
    if (config->copy_alpha_us > 0) {
        p->copy_alpha_us = config->copy_alpha_us;
    } else if (shape->copy_us > 0) {
        p->copy_alpha_us = shape->copy_us;
    }
}

/* The algorithm auto picks on one node, from the size and how its GPUs are connected:
 * allreduce by the model between one_shot and two_shot (the ring along NVLink pairs instead
 * of two_shot there), or by coll_gpu_allreduce_one_shot_max when set; bcast by the model
 * between direct and scatter_allgather, the others direct; then ll instead when it
 * applies and the model says it is faster (small messages). */
static cg_alg_t cg_plan_intra_auto(const cg_planner_config_t *config, const cg_call_t *call,
                                   const cg_shape_t *shape, char *why, size_t len)
{
    const char      *cls = cg_topo_class_name(shape->topo_class);
    cg_cost_params_t p;
    cg_alg_t         alg;

    cg_plan_cost_params(config, shape, &p);
    if (call->coll == CG_COLL_ALLREDUCE && config->one_shot_max > 0) {
        const cg_alg_t large = shape->topo_class == CG_TOPO_CLASS_NVLINK_PARTIAL ? CG_ALG_RING
                                                                                 : CG_ALG_TWO_SHOT;
        alg = call->bytes <= config->one_shot_max ? CG_ALG_ONE_SHOT : large;
        cg_plan_note(why, len, "topology %s, %zu bytes %s one-shot limit %zu", cls, call->bytes,
                 alg == CG_ALG_ONE_SHOT ? "<=" : ">", config->one_shot_max);
    } else if (call->coll == CG_COLL_ALLREDUCE) { /* one_shot_max 0: the model decides */
        /* NVLink pairs: the large algorithm is the ring along the pairs */
        const cg_alg_t large = shape->topo_class == CG_TOPO_CLASS_NVLINK_PARTIAL ? CG_ALG_RING
                                                                                 : CG_ALG_TWO_SHOT;
        double one = cg_cost_predict(&p, CG_ALG_ONE_SHOT, call->coll, (double)call->bytes, 1,
                                     shape->local_size);
        double other = cg_cost_predict(&p, large, call->coll, (double)call->bytes, 1,
                                       shape->local_size);
        alg = one <= other ? CG_ALG_ONE_SHOT : large;
        cg_plan_note(why, len, "topology %s, one node: model %.1f us", cls, CG_MIN(one, other) * 1e6);
    } else if (call->coll == CG_COLL_BCAST) { /* the root's links, or every GPU's */
        double direct = cg_cost_predict(&p, CG_ALG_DIRECT, call->coll, (double)call->bytes, 1,
                                        shape->local_size);
        double split  = cg_cost_predict(&p, CG_ALG_SCATTER_ALLGATHER, call->coll,
                                        (double)call->bytes, 1, shape->local_size);
        cg_plan_note(why, len, "topology %s, one node: model %.1f us", cls, CG_MIN(direct, split) * 1e6);
        alg = split < direct ? CG_ALG_SCATTER_ALLGATHER : CG_ALG_DIRECT;
    } else {
        cg_plan_note(why, len, "topology %s, one node", cls);
        alg = CG_ALG_DIRECT;
    }
    if (cg_plan_applicable(call, shape, CG_ALG_LL, NULL, 0)) {
        double size = cg_call_size(call), t_ll, t_alg;
        t_ll  = cg_cost_predict(&p, CG_ALG_LL, call->coll, size, 1, shape->local_size);
        t_alg = cg_cost_predict(&p, alg, call->coll, size, 1, shape->local_size);
        if (t_ll < t_alg) {
            cg_plan_note(why, len, "topology %s, one node, fits the LL inbox: model %.1f us (%s %.1f us)",
                     cls, t_ll * 1e6, cg_alg_name(alg), t_alg * 1e6);
            alg = CG_ALG_LL;
        }
    }
    return alg;
}

/* The fastest applicable hierarchical row by the model (the first of equals, in table
 * order); CG_ALG_STAGED when none applies. *seconds: its prediction. */
static cg_alg_t cg_plan_best_hier(const cg_cost_params_t *p, const cg_call_t *call,
                                  const cg_shape_t *shape, double *seconds)
{
    const cg_alg_info_t *rows;
    cg_alg_t             best = CG_ALG_STAGED;
    int                  nrows;

    *seconds = 0;
    rows     = cg_alg_table(&nrows);
    for (int i = 0; i < nrows; i++) {
        double t;
        if (rows[i].coll != call->coll || rows[i].scope != CG_SCOPE_HIER ||
            !cg_plan_applicable(call, shape, rows[i].alg, NULL, 0)) {
            continue;
        }
        t = rows[i].cost(p, call->coll, cg_call_size(call), shape->num_nodes, shape->local_size,
                         NULL);
        if (best == CG_ALG_STAGED || t < *seconds) {
            best     = rows[i].alg;
            *seconds = t;
        }
    }
    return best;
}

/* Several nodes: the fastest applicable algorithm by the cost model. */
static cg_alg_t cg_plan_inter_auto(const cg_planner_config_t *config, const cg_call_t *call,
                                   const cg_shape_t *shape, char *why, size_t len)
{
    cg_cost_params_t p;
    cg_alg_t         best;
    double           best_t;

    cg_plan_cost_params(config, shape, &p);
    best = cg_plan_best_hier(&p, call, shape, &best_t);
    if (best == CG_ALG_STAGED) {
        cg_plan_note(why, len, "%d nodes: %s", shape->num_nodes, shape->inter_ok ?
                 "no algorithm for uneven ranks per node" : "no inter-node transport (UCX)");
    } else {
        cg_plan_note(why, len, "%d nodes x %d: model %.1f us", shape->num_nodes, shape->local_size,
                 best_t * 1e6);
    }
    return best;
}

/* The rules the communicator follows: none where its ranks loaded different ones (every
 * rank must plan alike; the context compared them). */
static const cg_rules_t *cg_plan_rules(const cg_planner_config_t *config, const cg_shape_t *shape)
{
    return shape->rules_differ ? NULL : config->rules;
}

int cg_plan_staged_first(const cg_planner_config_t *config, const cg_call_t *call,
                         const cg_shape_t *shape)
{
    const double      size  = cg_call_size(call);
    const cg_rules_t *rules = cg_plan_rules(config, shape);
    cg_shape_t        alike = *shape;
    cg_cost_params_t  p;
    double            best, agree;

    if (shape->num_nodes < 2 || config->forced[call->coll] != CG_ALG_AUTO) {
        return 0;
    }
    alike.intra_ok = alike.inter_ok = 1; /* health may differ between ranks */
    alike.local_size = shape->max_local;
    alike.ll_capacity = 0; /* each node's inbox (LL node phases) differs with its size */
    /* the first matching rule the call can run decides, as in cg_plan_select_alg */
    for (int i = 0; i < cg_rules_count(rules); i++) {
        const cg_rule_t *r = cg_rules_get(rules, i);
        if (cg_rule_matches(r, call->coll, (size_t)size, shape->num_nodes)) {
            if (r->alg == CG_ALG_AUTO) {
                break;
            }
            if (r->alg == CG_ALG_STAGED || cg_plan_applicable(call, &alike, r->alg, NULL, 0)) {
                return r->alg == CG_ALG_STAGED;
            }
        }
    }
    cg_plan_cost_params(config, &alike, &p);
    if (cg_plan_best_hier(&p, call, &alike, &best) == CG_ALG_STAGED) {
        return 1; /* no hierarchical algorithm: the agreement would end in staged anyway */
    }
    /* one small allreduce underneath (the measured collective, when measured) */
    agree = CG_MAX(1.0, ceil(log2((double)shape->size))) * p.net_alpha_us * 1e-6;
    return cg_cost_predict(&p, CG_ALG_STAGED, call->coll, size, alike.num_nodes,
                           alike.local_size) <= best + agree;
}

/* hier_ring overlaps its phases chunk by chunk: the chunk size a user set, or the model's. */
static void cg_plan_chunk(const cg_planner_config_t *config, const cg_call_t *call,
                          const cg_shape_t *shape, cg_plan_t *plan)
{
    cg_cost_params_t p;
    size_t           len = config->explain ? strlen(plan->reason) : 0;

    plan->chunk_bytes = 0;
    if (plan->alg != CG_ALG_HIER_RING) {
        return;
    }
    if (config->hier_chunk_bytes > 0) {
        plan->chunk_bytes = config->hier_chunk_bytes;
    } else {
        cg_plan_cost_params(config, shape, &p);
        cg_cost_predict_chunked(&p, plan->alg, call->coll, cg_call_size(call), shape->num_nodes,
                                shape->local_size, &plan->chunk_bytes);
    }
    if (plan->chunk_bytes > 0 && plan->chunk_bytes < (size_t)cg_call_size(call)) {
        cg_plan_note(plan->reason + len, cg_plan_reason_len(config, plan) - len, "; overlapped in chunks of %zu%s",
                 plan->chunk_bytes, config->hier_chunk_bytes > 0 ? " (set)" : "");
    } else {
        plan->chunk_bytes = 0;
    }
}

static void cg_plan_select_alg(const cg_planner_config_t *config, const cg_call_t *call,
                               const cg_shape_t *shape, cg_plan_t *plan)
{
    const cg_rules_t *rules = cg_plan_rules(config, shape);
    cg_alg_t forced  = (cg_alg_t)config->forced[call->coll];
    size_t   why_len = config->explain ? 128 : 0;
    size_t   len     = cg_plan_reason_len(config, plan);
    char     why[128] = "";

    if (!cg_plan_prefilter(config, call, plan)) {
        return;
    }
    if (!shape->intra_ok) {
        cg_plan_staged(config, plan, "local group not connected");
        return;
    }
    if (forced != CG_ALG_AUTO) {
        if (!cg_plan_applicable(call, shape, forced, why, why_len)) {
            cg_plan_note(plan->reason, len, "forced: %s: staged", why);
            plan->alg = CG_ALG_STAGED;
            return;
        }
        plan->alg = forced;
        cg_plan_note(plan->reason, len, "forced");
        return;
    }
    for (int i = 0; i < cg_rules_count(rules); i++) {
        const cg_rule_t *r = cg_rules_get(rules, i);
        if (cg_rule_matches(r, call->coll, (size_t)cg_call_size(call), shape->num_nodes)) {
            if (r->alg == CG_ALG_AUTO) {
                break; /* the model decides */
            }
            if (cg_plan_applicable(call, shape, r->alg, NULL, 0)) {
                plan->alg = r->alg;
                cg_plan_note(plan->reason, len, "rule at line %d", r->line);
                return;
            }
        }
    }
    if (shape->topo_class == CG_TOPO_CLASS_NO_P2P) {
        cg_plan_note(why, why_len, "topology %s: GPUs cannot reach each other, through host memory",
                 cg_topo_class_name(shape->topo_class));
        plan->alg = CG_ALG_STAGED;
    } else if (shape->num_nodes > 1) {
        plan->alg = cg_plan_inter_auto(config, call, shape, why, why_len);
    } else {
        plan->alg = cg_plan_intra_auto(config, call, shape, why, why_len);
    }
    cg_plan_note(plan->reason, len, "%s", why);
}

/* A hierarchical allreduce (hier_rd, hier_leader) reduces inside the node first, and
 * hier_tree's bcast shares the message inside each node last: as one LL operation where the
 * model says so (cg_cost_node_ll: it fits the inbox and beats the copy algorithm; the same on
 * every rank of a node, which has one shape). */
static void cg_plan_node_phase(const cg_planner_config_t *config, const cg_call_t *call,
                               const cg_shape_t *shape, cg_plan_t *plan)
{
    cg_cost_params_t p;

    plan->node_ll = 0;
    if (shape->local_size < 2 || call->bytes == 0 || call->bytes > shape->ll_capacity) {
        return; /* the model's answer too: no parameters needed */
    }
    cg_plan_cost_params(config, shape, &p);
    plan->node_ll = cg_cost_node_ll(&p, plan->alg, call->coll, cg_call_size(call), shape->local_size);
    if (plan->node_ll && config->explain) {
        size_t len = strlen(plan->reason);
        cg_plan_note(plan->reason + len, sizeof(plan->reason) - len, "; node phase ll");
    }
}

void cg_plan_select_memo(cg_plan_memo_t *memo, const cg_planner_config_t *config,
                         const cg_call_t *call, const cg_shape_t *shape, cg_plan_t *plan)
{
    const cg_call_t *last    = &memo->call;
    const size_t     largest = cg_plan_largest_block(call);

    if (config->explain) {
        cg_plan_select(config, call, shape, plan);
        return;
    }
    if (memo->valid && last->coll == call->coll && last->count == call->count &&
        last->bytes == call->bytes && last->dtype == call->dtype && last->op == call->op &&
        last->comm_size == call->comm_size && (last->counts != NULL) == (call->counts != NULL) &&
        memo->largest_block == largest &&
        memcmp(&memo->config, config, sizeof(*config)) == 0 &&
        memcmp(&memo->shape, shape, sizeof(*shape)) == 0) {
        *plan = memo->plan;
        return;
    }
    cg_plan_select(config, call, shape, plan);
    memo->valid  = 1;
    memo->config = *config;
    memo->shape  = *shape;
    memo->call   = *call;
    memo->largest_block = largest;
    memo->plan   = *plan;
}

void cg_plan_select(const cg_planner_config_t *config, const cg_call_t *call,
                    const cg_shape_t *shape, cg_plan_t *plan)
{
    cg_plan_select_alg(config, call, shape, plan);
    cg_plan_chunk(config, call, shape, plan);
    cg_plan_node_phase(config, call, shape, plan);
}
