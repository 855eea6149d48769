/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll_gpu_info: what coll/gpu sees on this node (or in an hwloc XML file) and what it
 * would do there: the build, the GPU/NIC matrix (like nvidia-smi topo -m), the node's
 * classification, the rail map and ring order, and the plan for a collective and size.
 *
 *   coll_gpu_info [--xml FILE] [--ranks N] [--nodes M] [--coll NAME] [--size BYTES] [--scale]
 *                 [--net-bw GBS] [--lanes N]
 *   coll_gpu_info --algorithms     every algorithm of the registry and what it needs
 *   coll_gpu_info --version
 *
 * Exit status: 0, 1 when the --xml file cannot be used (the message names it), 2 on a usage
 * error.
 */
#include "coll/cg_coll.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CG_BUILD_CONFIG
#define CG_BUILD_CONFIG "unknown"
#endif
#ifndef CG_PACKAGE_VERSION
#define CG_PACKAGE_VERSION "unknown"
#endif

typedef struct {
    const char *xml;
    int         ranks;
    int         nodes;
    const char *coll;
    size_t      size;
    int         scale;
    double      net_bw;
    int         lanes;
    int         algorithms;
    int         version;
} info_opts_t;

static void info_usage(void)
{
    fprintf(stderr, "usage: coll_gpu_info [--xml FILE] [--ranks N] [--nodes M] [--coll NAME] "
                    "[--size BYTES] [--scale] [--net-bw GBS] [--lanes N] [--verbose N]\n"
                    "       coll_gpu_info --version\n"
                    "  --xml    an hwloc XML topology instead of this machine\n"
                    "  --ranks  ranks per node (default: one per GPU); rank r drives GPU r mod GPUs\n"
                    "  --nodes  nodes for the plans (default 1)\n"
                    "  --coll   allreduce|bcast|allgather|reduce_scatter|reduce_scatter_block\n"
                    "  --size   message size in bytes (k, M, G suffixes)\n"
                    "  --scale  predicted time and bandwidth from 1 to 1024 nodes\n"
                    "  --net-bw NIC bandwidth for the model, GB/s per direction (default 48)\n"
                    "  --lanes  inter-node lanes (coll_gpu_hier_lanes, default 4)\n"
                    "  --algorithms  list the algorithm registry and exit\n");
}

static int info_parse(int argc, char **argv, info_opts_t *o)
{
    *o = (info_opts_t){"", 0, 1, NULL, 0, 0, 0, 4, 0};
    for (int i = 1; i < argc; i++) {
        const char *v = (i + 1 < argc) ? argv[i + 1] : "";
        if (!strcmp(argv[i], "--xml")) {
            o->xml = v;
        } else if (!strcmp(argv[i], "--ranks")) {
            o->ranks = atoi(v);
        } else if (!strcmp(argv[i], "--nodes")) {
            o->nodes = atoi(v);
        } else if (!strcmp(argv[i], "--coll")) {
            o->coll = v;
        } else if (!strcmp(argv[i], "--size")) {
            if (cg_size_parse(v, &o->size) != CG_OK) {
                return -1;
            }
        } else if (!strcmp(argv[i], "--algorithms")) {
            o->algorithms = 1;
            continue;
        } else if (!strcmp(argv[i], "--scale")) {
            o->scale = 1;
            continue;
        } else if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-V")) {
            o->version = 1;
            continue;
        } else if (!strcmp(argv[i], "--net-bw")) {
            o->net_bw = atof(v);
        } else if (!strcmp(argv[i], "--lanes")) {
            o->lanes = atoi(v);
        } else if (!strcmp(argv[i], "--verbose")) {
            cg_log_configure(atoi(v), "all");
        } else {
            return -1;
        }
        i++;
    }
    return (o->ranks < 0 || o->ranks > CG_TOPO_MAX_RANKS || o->nodes < 1 || o->lanes < 1 ||
            o->lanes > CG_MAX_LANES) ? -1 : 0;
}

/* Plan of a collective of bytes (nccl-tests size) on nodes x the summary's ranks, and the
 * model's prediction: time, algbw, busbw. */
static void info_plan(const info_opts_t *o, const cg_topo_summary_t *s, int nodes, cg_coll_t coll,
                      size_t bytes, int table)
{
    cg_planner_config_t config;
    cg_cost_params_t    p;
    cg_plan_t           plan;
    cg_shape_t          shape = {.size = s->local_size * nodes, .num_nodes = nodes,
                                 .local_size = s->local_size, .max_local = s->local_size,
                                 .intra_ok = 1, .inter_ok = 1, .uniform = 1, .lanes = o->lanes,
                                 .topo_class = s->cls};
    cg_call_t           call = {.coll = coll, .bytes = bytes, .dtype = CG_DT_FLOAT, .op = CG_OP_SUM,
                                .comm_size = shape.size};
    double              t, algbw;

    if (coll == CG_COLL_ALLGATHER) { /* the planner sees per-rank blocks */
        call.bytes = bytes / (size_t)shape.size;
    }
    if (coll == CG_COLL_BCAST || coll == CG_COLL_ALLGATHER) {
        call.dtype = CG_DT_NONE, call.op = CG_OP_NONE;
    }
    call.count = call.bytes / 4;
    cg_planner_config_default(&config);
    config.net_bw_gbs = o->net_bw;
    cg_plan_select(&config, &call, &shape, &plan);
    cg_cost_defaults(&p, s->cls, s->local_size);
    p.lanes = o->lanes;
    if (o->net_bw > 0) {
        p.net_bw_gbs = o->net_bw;
    }
    t     = cg_cost_predict(&p, plan.alg, coll, (double)bytes, nodes, s->local_size);
    algbw = t > 0 ? (double)bytes / t / 1e9 : 0;
    if (table) {
        char chunk[32] = "-";
        if (plan.chunk_bytes > 0) {
            snprintf(chunk, sizeof(chunk), "%zu", plan.chunk_bytes);
        }
        printf("  %6d %8d  %-11s %12.1f %9.1f %9.1f %12s\n", nodes, shape.size,
               cg_alg_name(plan.alg), t * 1e6, algbw, algbw * cg_cost_busbw_factor(coll, shape.size),
               chunk);
    } else {
        printf("  %-21s %10zu B  %-11s %10.1f us  %s\n", cg_coll_name(coll), bytes,
               cg_alg_name(plan.alg), t * 1e6, plan.reason);
    }
}

/* The registry: what coll_gpu_<coll>_algorithm accepts, where each algorithm runs, what it
 * needs of the communicator. */
static int info_algorithms(void)
{
    static const char *const scopes[] = {"staged", "one node", "across nodes"};
    const cg_alg_info_t     *rows;
    int                      n;

    rows = cg_alg_table(&n);
    printf("%-21s %-18s %-12s %-22s %s\n", "collective", "algorithm", "scope", "needs",
           "what it does");
    for (int i = 0; i < n; i++) {
        const cg_alg_info_t *r = &rows[i];
        char                 needs[64];
        snprintf(needs, sizeof(needs), "%s%s%s", r->needs & CG_NEEDS_ONE_NODE ? "one node " : "",
                 r->needs & CG_NEEDS_NODES ? "nodes+UCX " : "",
                 r->needs & CG_NEEDS_UNIFORM ? "equal ranks/node" : "");
        printf("%-21s %-18s %-12s %-22s %s\n", cg_coll_name(r->coll), r->name, scopes[r->scope],
               needs[0] ? needs : "-", r->summary);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static char       matrix[16384];
    info_opts_t       o;
    cg_topo_t        *topo = NULL;
    cg_topo_summary_t s;
    const char       *bus[CG_TOPO_MAX_RANKS];
    char              reason[200] = "";
    cg_status_t       status;
    int               n;

    if (info_parse(argc, argv, &o) != 0) {
        info_usage();
        return 2;
    }
    if (o.version) {
        printf("coll_gpu_info (coll/gpu) %s\n  build: %s\n", CG_PACKAGE_VERSION, CG_BUILD_CONFIG);
        return 0;
    }
    if (o.algorithms) {
        return info_algorithms();
    }
    printf("coll/gpu %s\n  build: %s\n  hwloc API: %s\n", CG_PACKAGE_VERSION, CG_BUILD_CONFIG,
           cg_topo_hwloc_version());
    if (cg_dev_cuda_probe(reason, sizeof(reason)) == CG_OK) {
        const int mps = cg_dev_cuda_mps(0);
        printf("  CUDA here: driver and GPU present; MPS on GPU 0: %s\n\n",
               mps < 0 ? "unknown (driver)" : mps ? "on (processes' kernels run at once)" : "off");
    } else {
        printf("  CUDA here: %s\n\n", reason);
    }

    status = cg_topo_load(o.xml, &topo);
    if (status != CG_OK && o.xml[0] != '\0') { /* a file the user named: an error */
        fflush(stdout);
        fprintf(stderr, "coll_gpu_info: cannot use the topology file %s: %s\n", o.xml,
                access(o.xml, R_OK) != 0 ? strerror(errno)
                : (status == CG_ERR_PARSE || status == CG_ERR_IO)
                    ? "not a valid hwloc XML topology (truncated?)"
                    : cg_status_string(status));
        return 1;
    }
    if (status != CG_OK) {
        printf("topology: unavailable (%s): the component uses safe defaults\n",
               cg_status_string(status));
    } else {
        cg_topo_render(topo, matrix, sizeof(matrix));
        printf("topology: %s\n\n%s\n", topo->source, matrix);
    }
    n = o.ranks ? o.ranks : (topo && topo->num_gpus ? topo->num_gpus : 1);
    for (int r = 0; r < n; r++) {
        bus[r] = (topo && topo->num_gpus) ? topo->gpu[r % topo->num_gpus].bus_id : "host";
    }
    cg_topo_summarize(topo, bus, n, &s);
    printf("node of %d ranks: %s (%s)\n", n, cg_topo_class_name(s.cls), s.reason);
    printf("  ring order:");
    for (int r = 0; r < n; r++) {
        printf(" %d", s.ring[r]);
    }
    printf("\n  rails (local rank -> GPU -> NIC):\n");
    for (int r = 0; r < n; r++) {
        printf("    %2d -> %-14s -> %s\n", r, bus[r], s.rail[r][0] ? s.rail[r] : "(none)");
    }
    if (o.scale) {
        cg_coll_t coll = CG_COLL_ALLREDUCE;
        size_t    size = o.size ? o.size : (size_t)1 << 30;
        for (int c = 0; o.coll && c < CG_COLL_COUNT; c++) {
            coll = strcmp(o.coll, cg_coll_name((cg_coll_t)c)) == 0 ? (cg_coll_t)c : coll;
        }
        printf("\npredicted %s of %zu bytes (model: hier_ring overlaps its phases in chunks, "
               "%d inter-node lanes):\n", cg_coll_name(coll), size, o.lanes);
        printf("  %6s %8s  %-11s %12s %9s %9s %12s\n", "nodes", "ranks", "algorithm", "time (us)",
               "algbw", "busbw", "chunk (B)");
        for (int nodes = 1; nodes <= 1024; nodes *= 2) {
            info_plan(&o, &s, nodes, coll, size, 1);
        }
        cg_topo_free(topo);
        return 0;
    }
    printf("\nplans on %d node%s of %d ranks (float sum; time predicted by the model):\n", o.nodes,
           o.nodes > 1 ? "s" : "", n);
    for (int c = 0; c < CG_COLL_COUNT; c++) {
        static const size_t sizes[] = {1024, 1u << 20, 64u << 20};
        if (o.coll && strcmp(o.coll, cg_coll_name((cg_coll_t)c)) != 0) {
            continue;
        }
        for (size_t k = 0; k < 3; k++) {
            if (o.size == 0 || k == 0) {
                info_plan(&o, &s, o.nodes, (cg_coll_t)c, o.size ? o.size : sizes[k], 0);
            }
        }
    }
    cg_topo_free(topo);
    return 0;
}
