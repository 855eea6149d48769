/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The planner across nodes: which algorithm applies to which shape, what a forced
 * algorithm does where it cannot run, the rules file (matching, order, parse errors with
 * file and line), and the cost model's shape (bandwidth and latency regimes).
 */
#include "coll/cg_coll.h"
#include "tests/unit/unit.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static cg_shape_t nodes(int n, int local, int uniform)
{
    cg_shape_t s = {.size = n * local, .num_nodes = n, .local_size = local, .max_local = local,
                    .intra_ok = 1, .inter_ok = 1, .uniform = uniform,
                    .topo_class = CG_TOPO_CLASS_NVSWITCH};
    return s;
}

static cg_alg_t pick(const cg_planner_config_t *config, cg_coll_t coll, size_t bytes,
                     cg_shape_t shape, char *reason)
{
    cg_plan_t p;
    cg_call_t call = {.coll = coll, .count = bytes / 4, .bytes = bytes, .dtype = CG_DT_FLOAT,
                      .op = CG_OP_SUM, .comm_size = shape.size};
    if (coll == CG_COLL_BCAST || coll == CG_COLL_ALLGATHER) {
        call.dtype = CG_DT_NONE;
        call.op    = CG_OP_NONE;
    }
    cg_plan_select(config, &call, &shape, &p);
    if (reason) {
        strcpy(reason, p.reason);
    }
    return p.alg;
}

static const char *write_rules(const char *text)
{
    static char path[64];
    FILE       *f;
    snprintf(path, sizeof(path), "/tmp/cg-rules-%d.txt", (int)getpid());
    f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

START_TEST(test_multi_node_auto)
{
    cg_planner_config_t c;
    char                why[200];

    cg_planner_config_default(&c);
    ck_assert_int_eq(pick(&c, CG_COLL_ALLREDUCE, 256u << 20, nodes(4, 8, 1), why), CG_ALG_HIER_RING);
    ck_assert_int_eq(pick(&c, CG_COLL_ALLREDUCE, 8, nodes(4, 8, 1), why), CG_ALG_HIER_RD);
    ck_assert_ptr_nonnull(strstr(why, "model"));
    ck_assert_int_eq(pick(&c, CG_COLL_ALLREDUCE, 256u << 20, nodes(3, 3, 0), why), CG_ALG_HIER_LEADER);
    ck_assert_int_eq(pick(&c, CG_COLL_BCAST, 1u << 20, nodes(3, 3, 0), why), CG_ALG_HIER_TREE);
    ck_assert_int_eq(pick(&c, CG_COLL_ALLGATHER, 1u << 20, nodes(4, 2, 1), why), CG_ALG_HIER_RING);
    ck_assert_int_eq(pick(&c, CG_COLL_ALLGATHER, 1u << 20, nodes(3, 3, 0), why), CG_ALG_HIER_LEADER);
    ck_assert_int_eq(pick(&c, CG_COLL_REDUCE_SCATTER, 1u << 20, nodes(3, 3, 0), why), CG_ALG_HIER_LEADER);
    ck_assert_int_eq(pick(&c, CG_COLL_REDUCE_SCATTER_BLOCK, 256u << 20, nodes(4, 8, 1), why),
                     CG_ALG_HIER_RING); /* even: every rail carries its part */
    ck_assert_int_eq(pick(&c, CG_COLL_REDUCE_SCATTER_BLOCK, 1u << 20, nodes(2, 4, 1), why), CG_ALG_HIER_RING);
    cg_shape_t no_ucx = nodes(2, 4, 1);
    no_ucx.inter_ok   = 0;
    ck_assert_int_eq(pick(&c, CG_COLL_ALLREDUCE, 1u << 20, no_ucx, why), CG_ALG_STAGED);
    ck_assert_ptr_nonnull(strstr(why, "UCX"));
}
END_TEST

START_TEST(test_forced_where_it_cannot_run)
{
    cg_planner_config_t c;
    char                why[200];

    cg_planner_config_default(&c);
    c.forced[CG_COLL_ALLREDUCE] = CG_ALG_TWO_SHOT; /* one node only */
    ck_assert_int_eq(pick(&c, CG_COLL_ALLREDUCE, 1u << 20, nodes(2, 4, 1), why), CG_ALG_STAGED);
    ck_assert_ptr_nonnull(strstr(why, "one node"));
    c.forced[CG_COLL_ALLREDUCE] = CG_ALG_HIER_RING; /* several nodes, even layout only */
    ck_assert_int_eq(pick(&c, CG_COLL_ALLREDUCE, 1u << 20, nodes(1, 4, 1), why), CG_ALG_STAGED);
    ck_assert_int_eq(pick(&c, CG_COLL_ALLREDUCE, 1u << 20, nodes(3, 3, 0), why), CG_ALG_STAGED);
    ck_assert_int_eq(pick(&c, CG_COLL_ALLREDUCE, 1u << 20, nodes(3, 3, 1), why), CG_ALG_HIER_RING);
    c.forced[CG_COLL_ALLREDUCE] = CG_ALG_HIER_LEADER;
    ck_assert_int_eq(pick(&c, CG_COLL_ALLREDUCE, 8, nodes(3, 3, 0), why), CG_ALG_HIER_LEADER);
}
END_TEST

START_TEST(test_rules)
{
    cg_planner_config_t c;
    cg_rules_t         *rules = NULL;
    char                error[300], why[200];
    const char         *path = write_rules(
        "# test rules\n"
        "allreduce  0    64k  2  *   hier_leader   # small: leaders\n"
        "allreduce  *    *    1  1   ring\n"
        "allgather  *    *    2  *   hier_ring     # uneven nodes: not applicable\n"
        "allgather  *    *    *  *   staged\n"
        "bcast      1M   *    2  8   auto\n"
        "bcast      *    *    2  *   staged\n");

    ck_assert_int_eq(cg_rules_load(path, &rules, error, sizeof(error)), CG_OK);
    ck_assert_int_eq(cg_rules_count(rules), 6);
    ck_assert_int_eq(cg_rules_get(rules, 0)->line, 2);
    ck_assert_uint_eq(cg_rules_get(rules, 0)->max_bytes, 65536);
    cg_planner_config_default(&c);
    c.rules = rules;
    ck_assert_int_eq(pick(&c, CG_COLL_ALLREDUCE, 4096, nodes(2, 4, 1), why), CG_ALG_HIER_LEADER);
    ck_assert_str_eq(why, "rule at line 2");
    ck_assert_int_eq(pick(&c, CG_COLL_ALLREDUCE, 64u << 20, nodes(2, 4, 1), why), CG_ALG_HIER_RING);
    ck_assert_ptr_nonnull(strstr(why, "model")); /* no rule matched: the model */
    ck_assert_int_eq(pick(&c, CG_COLL_ALLREDUCE, 1u << 20, nodes(1, 4, 1), why), CG_ALG_RING);
    ck_assert_int_eq(pick(&c, CG_COLL_ALLGATHER, 64, nodes(1, 4, 1), why), CG_ALG_STAGED);
    ck_assert_int_eq(pick(&c, CG_COLL_BCAST, 4u << 20, nodes(4, 2, 1), why), CG_ALG_HIER_RING); /* auto */
    ck_assert_int_eq(pick(&c, CG_COLL_BCAST, 4096, nodes(4, 2, 1), why), CG_ALG_STAGED);
    { /* ranks whose rules differ follow none: the model, as with no file, also before the
       * agreement (staged_first) */
        cg_shape_t          differ = nodes(2, 4, 1);
        cg_planner_config_t none   = c;
        cg_call_t           call   = {.coll = CG_COLL_BCAST, .count = 4096, .bytes = 4096,
                                      .dtype = CG_DT_NONE, .op = CG_OP_NONE, .comm_size = 8};
        none.rules          = NULL;
        differ.rules_differ = 1;
        ck_assert_int_eq(pick(&c, CG_COLL_ALLREDUCE, 4096, differ, why),
                         pick(&none, CG_COLL_ALLREDUCE, 4096, nodes(2, 4, 1), NULL));
        ck_assert_ptr_null(strstr(why, "rule"));
        ck_assert_int_eq(cg_plan_staged_first(&c, &call, &differ),
                         cg_plan_staged_first(&none, &call, &differ));
        differ.rules_differ = 0;
        ck_assert_int_eq(cg_plan_staged_first(&c, &call, &differ), 1); /* bcast * * 2 * staged */
        /* a rule whose algorithm cannot run is passed over, as the plan passes it over */
        call.coll = CG_COLL_ALLGATHER, differ.uniform = 0;
        ck_assert_int_eq(cg_plan_staged_first(&c, &call, &differ), 1); /* allgather staged */
    }
    ck_assert_uint_ne(cg_rules_digest(rules), 0);
    ck_assert_uint_eq(cg_rules_digest(NULL), 0);
    cg_rules_free(rules);
    unlink(path);
    { /* the digest: what the rules decide (not comments, spacing, lines) */
        cg_rules_t *same = NULL, *other = NULL, *first = NULL;
        path = write_rules("allreduce 0 64k 2 * hier_leader\nbcast * * 2 * staged\n");
        ck_assert_int_eq(cg_rules_load(path, &first, error, sizeof(error)), CG_OK);
        path = write_rules("# the same\n\nallreduce   0  65536 2 *  hier_leader\nbcast * * 2 * staged\n");
        ck_assert_int_eq(cg_rules_load(path, &same, error, sizeof(error)), CG_OK);
        path = write_rules("allreduce 0 64k 2 * hier_rd\nbcast * * 2 * staged\n");
        ck_assert_int_eq(cg_rules_load(path, &other, error, sizeof(error)), CG_OK);
        ck_assert_uint_eq(cg_rules_digest(first), cg_rules_digest(same));
        ck_assert_uint_ne(cg_rules_digest(first), cg_rules_digest(other));
        cg_rules_free(first), cg_rules_free(same), cg_rules_free(other);
        unlink(path);
    }
}
END_TEST

START_TEST(test_rules_errors)
{
    static const struct {
        const char *text, *expect;
    } bad[] = {
        {"allreduce 0 1k 1 1\n", ":1: 5 fields"},
        {"# ok\nallreduces 0 1k 1 1 one_shot\n", ":2: unknown collective"},
        {"allreduce 0 12q 1 1 one_shot\n", ":1: bad size"},
        {"allreduce 0 1k x 1 one_shot\n", ":1: bad node count"},
        {"allreduce 8k 1k 1 1 one_shot\n", ":1: empty range"},
        {"bcast 0 1k 1 1 two_shot\n", ":1: \"two_shot\" is not an algorithm of bcast"},
    };
    cg_rules_t *rules;
    char        error[300];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *path = write_rules(bad[i].text);
        ck_assert_int_eq(cg_rules_load(path, &rules, error, sizeof(error)), CG_ERR_PARSE);
        ck_assert_msg(strstr(error, bad[i].expect) && strstr(error, path), "case %zu: %s", i, error);
        unlink(path);
    }
    ck_assert_int_eq(cg_rules_load("/nonexistent/rules", &rules, error, sizeof(error)), CG_ERR_IO);
    { /* a line longer than the reader's buffer: an error at its own line, never its tail
       * read as a rule (a commented-out rule coming alive) */
        char        text[1400];
        const char *path;
        int         n = snprintf(text, sizeof(text), "bcast * * 2 * staged\n#");
        memset(text + n, ' ', 1100);
        snprintf(text + n + 1100, sizeof(text) - (size_t)n - 1100, "allreduce 0 * 1 * one_shot\n");
        path = write_rules(text);
        ck_assert_int_eq(cg_rules_load(path, &rules, error, sizeof(error)), CG_ERR_PARSE);
        ck_assert_msg(strstr(error, ":2: longer than") != NULL, "%s", error);
        unlink(path);
    }
}
END_TEST

START_TEST(test_cost_model)
{
    cg_cost_params_t p;
    double           small_rd, small_ring, big_rd, big_ring, t1, t16, t1024;

    cg_cost_defaults(&p, CG_TOPO_CLASS_NVSWITCH, 8);
    small_rd   = cg_cost_predict(&p, CG_ALG_HIER_RD, CG_COLL_ALLREDUCE, 8, 16, 8);
    small_ring = cg_cost_predict(&p, CG_ALG_HIER_RING, CG_COLL_ALLREDUCE, 8, 16, 8);
    big_rd     = cg_cost_predict(&p, CG_ALG_HIER_RD, CG_COLL_ALLREDUCE, 1 << 30, 16, 8);
    big_ring   = cg_cost_predict(&p, CG_ALG_HIER_RING, CG_COLL_ALLREDUCE, 1 << 30, 16, 8);
    ck_assert(small_rd < small_ring); /* latency regime */
    ck_assert(big_ring < big_rd);     /* bandwidth regime */
    /* 1 GiB on 16 nodes of 8 x 400G rails: the NICs bound it (8 x 48 GB/s for 2 S) */
    t16 = cg_cost_predict(&p, CG_ALG_HIER_RING, CG_COLL_ALLREDUCE, 1 << 30, 16, 8);
    ck_assert(t16 > 2.0 * (1 << 30) * 15 / 16 / (8 * 48e9) && t16 < (1 << 30) / 80e9);
    /* at 1024 nodes the ring's 2(N-1) latencies show */
    t1024 = cg_cost_predict(&p, CG_ALG_HIER_RING, CG_COLL_ALLREDUCE, 1 << 30, 1024, 8);
    ck_assert(t1024 > t16 + 2 * 1000 * 5e-6);
    t1 = cg_cost_predict(&p, CG_ALG_TWO_SHOT, CG_COLL_ALLREDUCE, 1 << 30, 1, 8);
    ck_assert(t1 < t16);
    ck_assert_double_eq_tol(cg_cost_busbw_factor(CG_COLL_ALLREDUCE, 8), 1.75, 1e-12);
    ck_assert_double_eq_tol(cg_cost_busbw_factor(CG_COLL_ALLGATHER, 4), 0.75, 1e-12);
}
END_TEST

/* hier_ring overlaps its phases: the model picks a chunk size, a user's wins, small
 * messages run in one piece, and the pipelined prediction lies between the slowest phase
 * and the sum of the phases. */
START_TEST(test_pipeline_chunks)
{
    const double        S = 1u << 30;
    cg_planner_config_t c;
    cg_cost_params_t    p;
    cg_call_t           call = {.coll = CG_COLL_ALLREDUCE, .count = (1u << 30) / 4, .bytes = 1u << 30,
                                .dtype = CG_DT_FLOAT, .op = CG_OP_SUM, .comm_size = 128};
    cg_shape_t          shape = nodes(16, 8, 1);
    cg_plan_t           plan;
    size_t              chunk = 0;
    double              t, rs, net, ag;

    cg_planner_config_default(&c);
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_HIER_RING);
    ck_assert(plan.chunk_bytes >= (256u << 10) && plan.chunk_bytes <= (1u << 29));
    ck_assert_ptr_nonnull(strstr(plan.reason, "overlapped in chunks of"));

    c.hier_chunk_bytes = 1u << 20; /* the user's */
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_uint_eq(plan.chunk_bytes, 1u << 20);
    ck_assert_ptr_nonnull(strstr(plan.reason, "(set)"));
    c.hier_chunk_bytes = 2u << 30; /* larger than the message: no overlap */
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_uint_eq(plan.chunk_bytes, 0);

    c.hier_chunk_bytes = 0; /* too small to cut */
    c.forced[CG_COLL_ALLREDUCE] = CG_ALG_HIER_RING;
    call.count = 16384, call.bytes = 65536;
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_HIER_RING);
    ck_assert_uint_eq(plan.chunk_bytes, 0);
    c.forced[CG_COLL_ALLREDUCE] = CG_ALG_HIER_LEADER; /* other algorithms: never cut */
    call.count = (1u << 30) / 4, call.bytes = 1u << 30;
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_uint_eq(plan.chunk_bytes, 0);

    /* by hand: RS and AG inside at 370 GB/s, the rails' ring at 8 x 48 GB/s */
    cg_cost_defaults(&p, CG_TOPO_CLASS_NVSWITCH, 8);
    t   = cg_cost_predict_chunked(&p, CG_ALG_HIER_RING, CG_COLL_ALLREDUCE, S, 16, 8, &chunk);
    rs  = S * 7 / 8 / 370e9;
    ag  = rs;
    net = 2 * (S / 8) * 15 / 16 / 48e9;
    ck_assert_msg(t > net && t < rs + net + ag, "t %g net %g sum %g", t, net, rs + net + ag);
    ck_assert(t < 0.8 * (rs + net + ag)); /* the intra-node phases hide behind the network */
    ck_assert(chunk > 0);
    p.lanes = 1; /* one chunk on the network at a time: its ring's latencies add up */
    ck_assert(cg_cost_predict(&p, CG_ALG_HIER_RING, CG_COLL_ALLREDUCE, S, 16, 8) > 1.1 * t);

    /* bcast on one node: the root's links carry it L - 1 times with direct, about once with
     * scatter_allgather; on one GPU, direct moves no more and takes fewer steps */
    shape = nodes(1, 8, 1);
    ck_assert_int_eq(pick(&c, CG_COLL_BCAST, 64u << 20, shape, NULL), CG_ALG_SCATTER_ALLGATHER);
    ck_assert_int_eq(pick(&c, CG_COLL_BCAST, 4096, shape, NULL), CG_ALG_DIRECT);
    shape.topo_class = CG_TOPO_CLASS_SHARED_GPU;
    ck_assert_int_eq(pick(&c, CG_COLL_BCAST, 64u << 20, shape, NULL), CG_ALG_DIRECT);
    c.forced[CG_COLL_BCAST] = CG_ALG_SCATTER_ALLGATHER; /* one node only */
    ck_assert_int_eq(pick(&c, CG_COLL_BCAST, 64u << 20, nodes(2, 4, 1), NULL), CG_ALG_STAGED);
    c.forced[CG_COLL_BCAST] = CG_ALG_AUTO;

    /* bcast: large and even, the rails' chains; small or uneven, the tree */
    cg_planner_config_default(&c);
    ck_assert_int_eq(pick(&c, CG_COLL_BCAST, 64u << 20, nodes(8, 8, 1), NULL), CG_ALG_HIER_RING);
    ck_assert_int_eq(pick(&c, CG_COLL_BCAST, 4096, nodes(8, 8, 1), NULL), CG_ALG_HIER_TREE);
    ck_assert_int_eq(pick(&c, CG_COLL_BCAST, 64u << 20, nodes(3, 3, 0), NULL), CG_ALG_HIER_TREE);
    ck_assert(cg_cost_predict(&p, CG_ALG_HIER_RING, CG_COLL_BCAST, 256.0 * (1 << 20), 64, 8) <
              cg_cost_predict(&p, CG_ALG_HIER_TREE, CG_COLL_BCAST, 256.0 * (1 << 20), 64, 8) / 5);
}
END_TEST

/* A hierarchical allreduce's node phase runs as one LL operation where the one-node choice
 * would be LL: small, fits the inbox, several ranks on the node; never for other rows. */
START_TEST(test_node_phase)
{
    cg_planner_config_t c;
    cg_plan_t           plan;
    cg_shape_t          shape = nodes(4, 8, 1);
    cg_call_t           call  = {.coll = CG_COLL_ALLREDUCE, .count = 2, .bytes = 8,
                                 .dtype = CG_DT_FLOAT, .op = CG_OP_SUM, .comm_size = 32};

    cg_planner_config_default(&c);
    shape.ll_capacity = 64 << 10;
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_HIER_RD);
    ck_assert_int_eq(plan.node_ll, 1);
    ck_assert_ptr_nonnull(strstr(plan.reason, "node phase ll"));
    shape.ll_capacity = 4 << 20;
    call.count = 1 << 20, call.bytes = 4 << 20; /* fits, but one_shot is cheaper */
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_int_eq(plan.node_ll, 0);
    call.count = 2, call.bytes = 8;
    shape.ll_capacity = 0; /* no LL on this device layer */
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_int_eq(plan.node_ll, 0);
    shape = nodes(4, 1, 1); /* one rank per node: no node phase */
    shape.ll_capacity = 64 << 10;
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_int_eq(plan.node_ll, 0);
    shape = nodes(1, 8, 1); /* one node: the ll row itself, not a node phase */
    shape.ll_capacity = 64 << 10;
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_LL);
    ck_assert_int_eq(plan.node_ll, 0);
    /* ranks sharing a GPU without MPS take turns on it: no LL kernel waiting for another's,
     * as a call of its own or as a node phase (host-synchronised algorithms instead) */
    shape = nodes(1, 4, 1);
    shape.topo_class = CG_TOPO_CLASS_SHARED_GPU, shape.ll_capacity = 64 << 10;
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_LL);
    shape.time_sliced = 1;
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert(plan.alg == CG_ALG_ONE_SHOT || plan.alg == CG_ALG_TWO_SHOT);
    shape = nodes(4, 8, 1);
    shape.ll_capacity = 64 << 10, shape.time_sliced = 1;
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_int_eq(plan.node_ll, 0);
    /* bcast hier_tree: the node's share at the end, LL when small */
    call.coll = CG_COLL_BCAST, call.dtype = CG_DT_NONE, call.op = CG_OP_NONE;
    shape = nodes(4, 8, 1);
    shape.ll_capacity = 64 << 10;
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_HIER_TREE);
    ck_assert_int_eq(plan.node_ll, 1);
    ck_assert_ptr_nonnull(strstr(plan.reason, "node phase ll"));
    c.forced[CG_COLL_BCAST] = CG_ALG_HIER_RING; /* its own node phases */
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_int_eq(plan.node_ll, 0);
    c.forced[CG_COLL_BCAST] = CG_ALG_AUTO;
    call.coll = CG_COLL_ALLGATHER;
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_int_eq(plan.node_ll, 0);
    /* one GPU shared by the node's ranks: direct is measured cheaper than LL there */
    call.coll = CG_COLL_BCAST;
    shape.topo_class = CG_TOPO_CLASS_SHARED_GPU;
    cg_plan_select(&c, &call, &shape, &plan);
    ck_assert_int_eq(plan.node_ll, 0);
}
END_TEST

/* Across nodes, before any agreement: small calls are staged (the agreement alone costs
 * what the staged collective costs), large ones are not; the measured latencies move the
 * crossover; never on one node, with a forced algorithm or a rule other than staged; the
 * ranks' health does not enter (it may differ between ranks). */
static int staged_first(const cg_planner_config_t *config, cg_coll_t coll, size_t bytes, cg_shape_t shape)
{
    cg_call_t call = {.coll = coll, .count = bytes / 4, .bytes = bytes, .dtype = CG_DT_FLOAT,
                      .op = CG_OP_SUM, .comm_size = shape.size};
    if (coll == CG_COLL_BCAST || coll == CG_COLL_ALLGATHER) {
        call.dtype = CG_DT_NONE, call.op = CG_OP_NONE;
    }
    return cg_plan_staged_first(config, &call, &shape);
}

START_TEST(test_staged_first)
{
    static const cg_coll_t colls[] = {CG_COLL_ALLREDUCE, CG_COLL_BCAST, CG_COLL_ALLGATHER,
                                      CG_COLL_REDUCE_SCATTER_BLOCK};
    cg_planner_config_t    c;
    cg_rules_t            *rules = NULL;
    char                   error[300];
    cg_shape_t             shape = nodes(4, 8, 1), sick, inbox, slow_copies, staged_inter, host = nodes(2, 2, 1);
    size_t                 cross = 0;

    cg_planner_config_default(&c);
    for (size_t i = 0; i < CG_ARRAY_SIZE(colls); i++) {
        ck_assert_msg(staged_first(&c, colls[i], 8, shape), "%s 8 B", cg_coll_name(colls[i]));
        ck_assert_msg(!staged_first(&c, colls[i], 256u << 20, shape), "%s 256 MiB",
                      cg_coll_name(colls[i]));
    }
    ck_assert(!staged_first(&c, CG_COLL_ALLREDUCE, 8, nodes(1, 8, 1))); /* one node */
    sick          = shape;
    sick.inter_ok = 0, sick.intra_ok = 0;
    inbox             = shape; /* a node's LL inbox differs with its size: no part of it */
    inbox.ll_capacity = 1 << 20;
    for (size_t bytes = 8; bytes <= (64u << 20); bytes *= 2) {
        ck_assert_int_eq(staged_first(&c, CG_COLL_ALLREDUCE, bytes, shape),
                         staged_first(&c, CG_COLL_ALLREDUCE, bytes, sick));
        for (size_t i = 0; i < CG_ARRAY_SIZE(colls); i++) {
            ck_assert_int_eq(staged_first(&c, colls[i], bytes, shape),
                             staged_first(&c, colls[i], bytes, inbox));
        }
        cross = (!cross && !staged_first(&c, CG_COLL_ALLREDUCE, bytes, shape)) ? bytes : cross;
    }
    ck_assert(cross > 8 && cross < (64u << 20)); /* one crossover, then never staged */
    for (size_t bytes = cross; bytes <= (64u << 20); bytes *= 2) {
        ck_assert(!staged_first(&c, CG_COLL_ALLREDUCE, bytes, shape));
    }
    /* the measured copy enters: where UCX stages device data, every network step waits
     * for two copies and the staged path for two in all, so slow copies push the
     * crossover up */
    staged_inter              = shape;
    staged_inter.inter_staged = 1;
    for (cross = 8; cross <= (64u << 20) && staged_first(&c, CG_COLL_ALLREDUCE, cross, staged_inter);) {
        cross *= 2;
    }
    ck_assert(cross > 8 && cross < (64u << 20));
    slow_copies         = staged_inter;
    slow_copies.copy_us = 200;
    ck_assert(staged_first(&c, CG_COLL_ALLREDUCE, cross * 2, slow_copies));
    /* the host device layer's virtual nodes: staged below a few KiB, hier above 64 KiB */
    host.topo_class = CG_TOPO_CLASS_HOST;
    host.copy_us = 0.3, host.under_us = 5;
    ck_assert(staged_first(&c, CG_COLL_ALLREDUCE, 512, host));
    ck_assert(!staged_first(&c, CG_COLL_ALLREDUCE, 256u << 10, host));
    /* forced, or a rule: the agreement and the planner decide; a staged rule: staged */
    c.forced[CG_COLL_ALLREDUCE] = CG_ALG_HIER_RD;
    ck_assert(!staged_first(&c, CG_COLL_ALLREDUCE, 8, shape));
    c.forced[CG_COLL_ALLREDUCE] = CG_ALG_AUTO;
    const char *path = write_rules("allreduce 0 64k 2 * hier_rd\n"
                                   "bcast * * * * staged\n"
                                   "allgather * * * * auto\n");
    ck_assert_int_eq(cg_rules_load(path, &rules, error, sizeof(error)), CG_OK);
    unlink(path);
    c.rules = rules;
    ck_assert(!staged_first(&c, CG_COLL_ALLREDUCE, 8, shape));
    ck_assert(staged_first(&c, CG_COLL_BCAST, 256u << 20, shape));
    ck_assert(staged_first(&c, CG_COLL_ALLGATHER, 8, shape)); /* auto: the model */
    cg_rules_free(rules);
}
END_TEST

/* Against a measurement: coll_gpu_bench on an H100 (2026-11-26, build ee51c72,
 * docs/gpu-run-2026-11-26-second.md), 2 virtual nodes x 2 ranks on one GPU under MPS, UCX
 * staging device data through host memory: the hierarchical algorithm's time over the staged
 * path's in the same run. Where one path was faster by 1.5x or more, the model must take
 * it, for any measured copy (4-10 us: one device round trip there was 6.2-6.8 us) and
 * collective underneath (1-6 us) in the range that machine shows. */
START_TEST(test_staged_steps_measured)
{
    static const struct {
        cg_coll_t coll;
        size_t    bytes;
        double    hier_over_staged; /* measured */
    } rows[] = {
        {CG_COLL_ALLREDUCE, 16, 56.7 / 23.3},      {CG_COLL_ALLREDUCE, 1024, 63.3 / 27.8},
        {CG_COLL_ALLREDUCE, 4096, 70.7 / 35.1},    {CG_COLL_ALLREDUCE, 16384, 81.9 / 51.9},
        {CG_COLL_ALLREDUCE, 65536, 103.1 / 100.4}, {CG_COLL_ALLREDUCE, 262144, 184.1 / 275.1},
        {CG_COLL_ALLREDUCE, 1 << 20, 318.1 / 859.2}, {CG_COLL_ALLREDUCE, 64 << 20, 5362.3 / 101988.5},
        {CG_COLL_BCAST, 16, 32.1 / 11.4},          {CG_COLL_BCAST, 1024, 37.0 / 15.7},
        {CG_COLL_BCAST, 4096, 43.7 / 16.3},        {CG_COLL_BCAST, 16384, 41.3 / 22.9},
        {CG_COLL_BCAST, 65536, 49.6 / 46.9},       {CG_COLL_BCAST, 262144, 85.5 / 119.9},
        {CG_COLL_BCAST, 1 << 20, 214.9 / 470.4},   {CG_COLL_BCAST, 64 << 20, 5245.3 / 26887.4},
    };
    static const double copies[] = {4, 7, 10}, unders[] = {1, 3, 6};
    cg_planner_config_t c;
    cg_shape_t          gpu = nodes(2, 2, 1);
    int                 decided = 0;

    cg_planner_config_default(&c);
    gpu.topo_class   = CG_TOPO_CLASS_SHARED_GPU;
    gpu.inter_staged = 1;
    gpu.ll_capacity  = 4096;
    for (size_t ci = 0; ci < CG_ARRAY_SIZE(copies); ci++) {
        for (size_t ui = 0; ui < CG_ARRAY_SIZE(unders); ui++) {
            gpu.copy_us = copies[ci], gpu.under_us = unders[ui];
            for (size_t i = 0; i < CG_ARRAY_SIZE(rows); i++) {
                const double ratio = rows[i].hier_over_staged;
                if (ratio > 1 / 1.5 && ratio < 1.5) {
                    continue; /* close: either */
                }
                ck_assert_msg(staged_first(&c, rows[i].coll, rows[i].bytes, gpu) == (ratio > 1),
                              "%s %zu B, copy %.0f us, underneath %.0f us: measured %.2fx",
                              cg_coll_name(rows[i].coll), rows[i].bytes, copies[ci], unders[ui], ratio);
                decided++;
            }
        }
    }
    ck_assert_int_eq(decided, 9 * 12); /* 12 rows decided */
}
END_TEST

/* The memo of the last plan: the same inputs give the same plan; a forced algorithm set at
 * run time, another size, another shape, another largest block of per-rank counts or an
 * explained call plan afresh. */
START_TEST(test_plan_memo)
{
    cg_planner_config_t c;
    cg_plan_memo_t      memo;
    cg_plan_t           plan, fresh;
    cg_shape_t          one = nodes(1, 8, 1), two = nodes(2, 4, 1);
    cg_call_t           call = {.coll = CG_COLL_ALLREDUCE, .count = 1 << 18, .bytes = 1 << 20,
                                .dtype = CG_DT_FLOAT, .op = CG_OP_SUM, .comm_size = 8};
    size_t              even[8] = {100, 100, 100, 100, 100, 100, 100, 100};
    size_t              uneven[8] = {744, 8, 8, 8, 8, 8, 8, 8};
    size_t              uneven2[8] = {8, 8, 744, 8, 8, 8, 8, 8};

    memset(&memo, 0, sizeof(memo));
    cg_planner_config_default(&c);
    c.explain = 0;
    one.ll_capacity = two.ll_capacity = 4096;
    cg_plan_select_memo(&memo, &c, &call, &one, &plan);
    cg_plan_select(&c, &call, &one, &fresh);
    ck_assert_int_eq(plan.alg, fresh.alg);
    ck_assert_int_eq(memo.valid, 1);
    cg_plan_select_memo(&memo, &c, &call, &one, &plan);
    ck_assert_int_eq(plan.alg, fresh.alg);
    c.forced[CG_COLL_ALLREDUCE] = CG_ALG_ONE_SHOT; /* MPI_T, between two calls */
    cg_plan_select_memo(&memo, &c, &call, &one, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_ONE_SHOT);
    c.forced[CG_COLL_ALLREDUCE] = CG_ALG_AUTO;
    cg_plan_select_memo(&memo, &c, &call, &two, &plan);
    cg_plan_select(&c, &call, &two, &fresh);
    ck_assert_int_eq(plan.alg, fresh.alg);
    ck_assert_int_ne(plan.alg, CG_ALG_ONE_SHOT);
    call.count = 2, call.bytes = 8;
    cg_plan_select_memo(&memo, &c, &call, &one, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_LL);
    /* counts: memoised by their largest block, all the plan reads of them; blocks of 400 B
     * fit a 1 KiB LL inbox, one of 2976 B with the same total does not */
    one.ll_capacity = 1024;
    call.coll = CG_COLL_REDUCE_SCATTER, call.counts = even, call.count = 800, call.bytes = 3200;
    cg_plan_select_memo(&memo, &c, &call, &one, &plan);
    cg_plan_select(&c, &call, &one, &fresh);
    ck_assert_int_eq(memo.valid, 1);
    ck_assert_int_eq(plan.alg, fresh.alg);
    ck_assert_int_eq(plan.alg, CG_ALG_LL);
    call.counts = uneven;
    cg_plan_select_memo(&memo, &c, &call, &one, &plan);
    cg_plan_select(&c, &call, &one, &fresh);
    ck_assert_int_eq(plan.alg, fresh.alg);
    ck_assert_int_ne(plan.alg, CG_ALG_LL);
    call.counts = uneven2; /* another array, the same largest block: the memo's plan */
    memo.plan.alg = CG_ALG_STAGED;
    cg_plan_select_memo(&memo, &c, &call, &one, &plan);
    ck_assert_int_eq(plan.alg, CG_ALG_STAGED);
    memo.valid = 0;
    c.explain = 1;
    call.coll = CG_COLL_ALLREDUCE, call.counts = NULL, call.count = 2, call.bytes = 8;
    cg_plan_select_memo(&memo, &c, &call, &one, &plan);
    ck_assert_int_eq(memo.valid, 0);
    ck_assert(plan.reason[0] != '\0');
}
END_TEST

/* A call that is not logged formats no reason (config.explain 0) and gets the same plan. */
START_TEST(test_explain_off)
{
    static const cg_coll_t colls[] = {CG_COLL_ALLREDUCE, CG_COLL_BCAST, CG_COLL_ALLGATHER,
                                      CG_COLL_REDUCE_SCATTER_BLOCK};
    cg_planner_config_t    loud, quiet;
    cg_plan_t              said, silent;
    int                    compared = 0;

    cg_planner_config_default(&loud);
    quiet         = loud;
    quiet.explain = 0;
    for (int forced = 0; forced < 2; forced++) {
        for (size_t c = 0; c < CG_ARRAY_SIZE(colls); c++) {
            /* forced: hier_ring runs across nodes only; on one node the reason says why not */
            loud.forced[colls[c]] = quiet.forced[colls[c]] = forced ? CG_ALG_HIER_RING : CG_ALG_AUTO;
            for (size_t bytes = 8; bytes <= (1u << 30); bytes *= 32) {
                for (int n = 1; n <= 16; n *= 4) {
                    cg_shape_t shape = nodes(n, n == 4 ? 3 : 8, n != 4);
                    cg_call_t  call  = {.coll = colls[c], .count = bytes / 4, .bytes = bytes,
                                        .dtype = CG_DT_FLOAT, .op = CG_OP_SUM,
                                        .comm_size = shape.size};
                    shape.ll_capacity = 4096;
                    memset(&said, 0x5a, sizeof(said));
                    memset(&silent, 0x5a, sizeof(silent));
                    cg_plan_select(&loud, &call, &shape, &said);
                    cg_plan_select(&quiet, &call, &shape, &silent);
                    ck_assert_int_eq(said.alg, silent.alg);
                    ck_assert_uint_eq(said.chunk_bytes, silent.chunk_bytes);
                    ck_assert_int_eq(said.node_ll, silent.node_ll);
                    ck_assert_msg(said.reason[0] != '\0', "no reason for %s %zu",
                                  cg_coll_name(colls[c]), bytes);
                    ck_assert_msg(silent.reason[0] == '\0', "formatted \"%s\"", silent.reason);
                    compared++;
                }
            }
        }
    }
    ck_assert_int_gt(compared, 100);
}
END_TEST

CG_UNIT_MAIN("planner", 30, test_multi_node_auto, test_forced_where_it_cannot_run, test_rules,
             test_rules_errors, test_cost_model, test_pipeline_chunks, test_explain_off,
             test_node_phase, test_staged_first, test_staged_steps_measured,
             test_plan_memo)
