/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Topology fixtures (the XML files of tests/topo): the classification, the rail map, the ring order and
 * the intra-node algorithm the planner picks for each node shape; bad input gives the safe
 * class.
 */
#include "coll/cg_coll.h"
#include "tests/unit/unit.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CG_TOPO_DIR
#define CG_TOPO_DIR "tests/topo"
#endif

/* The fixtures: $CG_TOPO_DIR when set (a build carried to another machine), else the
 * source tree's. */
static const char *topo_dir(void)
{
    const char *dir = getenv("CG_TOPO_DIR");
    return dir != NULL && *dir ? dir : CG_TOPO_DIR;
}

static cg_topo_t *load(const char *name)
{
    char       path[512];
    cg_topo_t *t = NULL;

    snprintf(path, sizeof(path), "%s/%s", topo_dir(), name);
    ck_assert_msg(cg_topo_load(path, &t) == CG_OK, "cannot load %s", path);
    return t;
}

/* Summary of n ranks, rank r on GPU gpus[r] of t. */
static void summarize(const cg_topo_t *t, const int *gpus, int n, cg_topo_summary_t *s)
{
    const char *bus[CG_TOPO_MAX_RANKS];
    for (int r = 0; r < n; r++) {
        bus[r] = gpus[r] >= 0 ? t->gpu[gpus[r]].bus_id : "host";
    }
    cg_topo_summarize(t, bus, n, s);
}

static cg_alg_t plan(const cg_topo_summary_t *s, cg_coll_t coll, size_t bytes)
{
    cg_planner_config_t config;
    cg_plan_t           p;
    cg_shape_t          shape = {.size = s->local_size, .num_nodes = 1, .local_size = s->local_size,
                                 .max_local = s->local_size, .intra_ok = 1, .topo_class = s->cls};
    cg_call_t           call = {.coll = coll, .count = bytes / 4, .bytes = bytes, .dtype = CG_DT_FLOAT,
                                .op = CG_OP_SUM, .comm_size = s->local_size};

    cg_planner_config_default(&config);
    cg_plan_select(&config, &call, &shape, &p);
    return p.alg;
}

START_TEST(test_dgx_h100)
{
    cg_topo_t        *t = load("dgx-h100.xml");
    cg_topo_summary_t s;
    int               one_each[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int               shared[4] = {2, 2, 2, 2}, far[2] = {0, 4};

    ck_assert_int_eq(t->num_gpus, 8);
    ck_assert_int_eq(t->num_nics, 8);
    ck_assert_int_eq(t->gpu_path[0][1], CG_PATH_PIX);
    ck_assert_int_eq(t->gpu_path[0][2], CG_PATH_NODE);
    ck_assert_int_eq(t->gpu_path[0][4], CG_PATH_SYS);
    ck_assert(t->nvswitch[0][7]);
    ck_assert_uint_eq(t->nvlink_mbps[3][6], 450000); /* 18 links x 25 GB/s through 4 switches */
    summarize(t, one_each, 8, &s);
    ck_assert_int_eq(s.cls, CG_TOPO_CLASS_NVSWITCH);
    ck_assert_int_eq(s.shared, 0); /* one rank per GPU: none waits for a turn */
    for (int r = 0; r < 8; r++) { /* every GPU its own NIC behind its PCIe switch */
        char want[16];
        snprintf(want, sizeof(want), "mlx5_%d", r);
        ck_assert_str_eq(s.rail[r], want);
    }
    ck_assert_int_eq(plan(&s, CG_COLL_ALLREDUCE, 64u << 20), CG_ALG_TWO_SHOT);
    ck_assert_int_eq(plan(&s, CG_COLL_ALLREDUCE, 1024), CG_ALG_ONE_SHOT);
    ck_assert_int_eq(plan(&s, CG_COLL_ALLGATHER, 64u << 20), CG_ALG_DIRECT);
    ck_assert_int_eq(plan(&s, CG_COLL_BCAST, 64u << 20), CG_ALG_SCATTER_ALLGATHER);
    ck_assert_int_eq(plan(&s, CG_COLL_BCAST, 1024), CG_ALG_DIRECT);
    summarize(t, shared, 4, &s);
    ck_assert_int_eq(s.cls, CG_TOPO_CLASS_SHARED_GPU);
    ck_assert_int_eq(s.shared, 1);
    ck_assert_int_eq(plan(&s, CG_COLL_BCAST, 64u << 20), CG_ALG_DIRECT); /* one memory */
    ck_assert_str_eq(s.rail[3], "mlx5_2");
    summarize(t, far, 2, &s);
    ck_assert_int_eq(s.cls, CG_TOPO_CLASS_NVSWITCH);
    ck_assert_int_eq(s.shared, 0);
    ck_assert_str_eq(s.rail[1], "mlx5_4");
    for (int g = 0; g < 8; g++) { /* one rank of the node (a communicator of one rank per
                                   * node): its GPU's NIC, as in the whole node */
        char want[16];
        snprintf(want, sizeof(want), "mlx5_%d", g);
        summarize(t, &one_each[g], 1, &s);
        ck_assert_str_eq(s.rail[0], want);
    }
    cg_topo_free(t);
}
END_TEST

START_TEST(test_hgx_a100)
{
    cg_topo_t        *t = load("hgx-a100.xml");
    cg_topo_summary_t s;
    int               one_each[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int               two_each[16] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7};

    ck_assert_int_eq(t->gpu_path[0][2], CG_PATH_PXB); /* nested PCIe switches */
    ck_assert_uint_eq(t->nvlink_mbps[0][5], 300000);
    summarize(t, one_each, 8, &s);
    ck_assert_int_eq(s.cls, CG_TOPO_CLASS_NVSWITCH);
    ck_assert_str_eq(s.rail[0], "mlx5_0");
    ck_assert_str_eq(s.rail[5], "mlx5_5");
    summarize(t, two_each, 16, &s); /* more ranks than GPUs: ranks share their GPU's NIC */
    ck_assert_int_eq(s.cls, CG_TOPO_CLASS_NVSWITCH);
    ck_assert_int_eq(s.shared, 1); /* and take turns on it without MPS, NVSwitch or not */
    ck_assert_int_eq(s.num_gpus, 8);
    ck_assert_str_eq(s.rail[6], s.rail[7]);
    ck_assert_str_eq(s.rail[6], "mlx5_3");
    cg_topo_free(t);
}
END_TEST

START_TEST(test_workstation_pairs)
{
    cg_topo_t        *t = load("workstation-4gpu-nvlink-pairs.xml");
    cg_topo_summary_t s;
    int               gpus[4] = {0, 2, 1, 3}; /* ranks not in link order */

    ck_assert_uint_eq(t->nvlink_mbps[0][1], 56250);
    ck_assert_uint_eq(t->nvlink_mbps[1][2], 0);
    summarize(t, gpus, 4, &s);
    ck_assert_int_eq(s.cls, CG_TOPO_CLASS_NVLINK_PARTIAL);
    /* the ring keeps the NVLink pairs adjacent: rank 0 (GPU0) -> rank 2 (GPU1) */
    ck_assert_int_eq(s.ring[0], 0);
    ck_assert_int_eq(s.ring[1], 2);
    ck_assert_int_eq(s.ring[3], 3);
    for (int r = 0; r < 4; r++) {
        ck_assert_str_eq(s.rail[r], "eno1"); /* the only NIC, without RDMA */
    }
    ck_assert_int_eq(plan(&s, CG_COLL_ALLREDUCE, 64u << 20), CG_ALG_RING);
    ck_assert_int_eq(plan(&s, CG_COLL_ALLREDUCE, 1024), CG_ALG_ONE_SHOT);
    /* the root's two links would carry a direct bcast three times */
    ck_assert_int_eq(plan(&s, CG_COLL_BCAST, 64u << 20), CG_ALG_SCATTER_ALLGATHER);
    cg_topo_free(t);
}
END_TEST

START_TEST(test_pcie_boxes)
{
    cg_topo_t        *t = load("pcie-2gpu-2socket.xml");
    cg_topo_summary_t s;
    int               two[2] = {0, 1}, four[4] = {0, 1, 2, 3};

    summarize(t, two, 2, &s);
    ck_assert_int_eq(s.cls, CG_TOPO_CLASS_NO_P2P);
    ck_assert_str_eq(s.rail[0], "mlx5_0");
    ck_assert_str_eq(s.rail[1], "mlx5_0");
    ck_assert_int_eq(plan(&s, CG_COLL_ALLREDUCE, 64u << 20), CG_ALG_STAGED);
    cg_topo_free(t);

    /* an Ethernet port beside GPU 0, the RDMA NIC on the other socket: both take the RDMA
     * NIC (nearness decides among NICs of one kind) */
    t = load("ethernet-near-2gpu.xml");
    summarize(t, two, 2, &s);
    ck_assert_str_eq(s.rail[0], "mlx5_0");
    ck_assert_str_eq(s.rail[1], "mlx5_0");
    cg_topo_free(t);

    t = load("fewer-nics-4gpu.xml");
    summarize(t, four, 4, &s);
    ck_assert_int_eq(s.cls, CG_TOPO_CLASS_PCIE_P2P);
    for (int r = 0; r < 4; r++) {
        ck_assert_str_eq(s.rail[r], "mlx5_0");
    }
    ck_assert_int_eq(plan(&s, CG_COLL_ALLREDUCE, 64u << 20), CG_ALG_TWO_SHOT);
    cg_topo_free(t);
}
END_TEST

START_TEST(test_gpuless)
{
    cg_topo_t        *t = load("gpuless.xml");
    cg_topo_summary_t s;
    int               none[3] = {-1, -1, -1};

    ck_assert_int_eq(t->num_gpus, 0);
    summarize(t, none, 3, &s);
    ck_assert_int_eq(s.cls, CG_TOPO_CLASS_HOST);
    ck_assert_int_eq(s.shared, 1); /* the host layer's ranks share its one GPU */
    ck_assert_str_eq(s.rail[2], "mlx5_0");
    ck_assert_int_eq(plan(&s, CG_COLL_ALLREDUCE, 64u << 20), CG_ALG_TWO_SHOT);
    summarize(t, none, 1, &s);
    ck_assert_int_eq(s.shared, 0);
    cg_topo_free(t);
}
END_TEST

START_TEST(test_bad_input)
{
    cg_topo_t        *t = NULL;
    cg_topo_summary_t s;
    const char       *bus[2] = {"0000:18:00.0", "0000:19:00.0"};
    char              path[512];

    snprintf(path, sizeof(path), "%s/bad-truncated.xml", topo_dir());
    ck_assert_int_ne(cg_topo_load(path, &t), CG_OK);
    ck_assert_int_ne(cg_topo_load("/nonexistent/topology.xml", &t), CG_OK);
    cg_topo_summarize(NULL, bus, 2, &s); /* no topology: safe class */
    ck_assert_int_eq(s.cls, CG_TOPO_CLASS_NO_P2P);
    ck_assert_int_eq(s.shared, 0);
    bus[1] = "18:00.0"; /* the same GPU, written without its domain: shared */
    cg_topo_summarize(NULL, bus, 2, &s);
    ck_assert_int_eq(s.shared, 1);
    {   /* whose GPU serves another rank: both of the pair, not the third; none alone */
        const char *three[3] = {"0000:18:00.0", "0000:19:00.0", "18:00.0"};
        ck_assert_int_eq(cg_topo_gpu_shared_by(three, 3, 0), 1);
        ck_assert_int_eq(cg_topo_gpu_shared_by(three, 3, 2), 1);
        ck_assert_int_eq(cg_topo_gpu_shared_by(three, 3, 1), 0);
        ck_assert_int_eq(cg_topo_gpu_shared_by(three, 1, 0), 0);
        ck_assert_int_eq(cg_topo_gpu_shared_by(three, 3, 3), 0); /* out of range */
    }
    bus[1] = "0000:19:00.0";
    ck_assert_str_eq(s.rail[0], "");
    t = load("fewer-nics-4gpu.xml"); /* a GPU the topology does not have */
    bus[1] = "0000:99:00.0";
    cg_topo_summarize(t, bus, 2, &s);
    ck_assert_int_eq(s.cls, CG_TOPO_CLASS_NO_P2P);
    ck_assert_ptr_nonnull(strstr(s.reason, "0000:99:00.0"));
    ck_assert_int_eq(cg_topo_find_gpu(t, "82:00.0"), 0); /* short and NVML-style ids */
    ck_assert_int_eq(cg_topo_find_gpu(t, "00000000:83:00.0"), 1);
    ck_assert_int_eq(cg_topo_find_gpu(t, "garbage"), -1);
    cg_topo_free(t);
}
END_TEST

START_TEST(test_nvswitch_closure)
{
    static cg_topo_t t; /* 3 GPUs, one switch: GPU 2 has half the links */
    int              kind[4] = {0, 1, 2, -1};
    uint64_t         v[16]   = {1000000, 0, 0, 200000, 0, 1000000, 0, 200000,
                                0, 0, 1000000, 100000, 200000, 200000, 100000, 1000000};

    memset(&t, 0, sizeof(t));
    t.num_gpus = 3;
    cg_topo_set_nvlink(&t, 4, kind, v);
    ck_assert_uint_eq(t.nvlink_mbps[0][1], 200000);
    ck_assert_uint_eq(t.nvlink_mbps[0][2], 100000); /* the slower GPU's rate */
    ck_assert(t.nvswitch[2][1]);
    ck_assert_uint_eq(t.nvlink_mbps[1][1], 0);
}
END_TEST

CG_UNIT_MAIN("topo", 30, test_dgx_h100, test_hgx_a100, test_workstation_pairs, test_pcie_boxes,
             test_gpuless, test_bad_input, test_nvswitch_closure)
