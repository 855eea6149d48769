/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * plan_grid: the planner's choice for every topology fixture given on the command line, over
 * a grid of collectives, message sizes, node counts and layouts, one line each. The suite
 * compares it with tests/topo/plan_grid.golden (check_golden.sh), so that any change of
 * choice is a visible diff that its commit must explain.
 */
#include "coll/cg_coll.h"
#include "topo/cg_topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void grid_line(const char *fixture, const cg_topo_summary_t *s, int nodes, int uniform,
                      cg_coll_t coll, size_t size)
{
    cg_planner_config_t config;
    cg_plan_t           plan;
    cg_shape_t          shape = {.size = s->local_size * nodes, .num_nodes = nodes,
                                 .local_size = s->local_size, .max_local = s->local_size,
                                 .intra_ok = 1, .inter_ok = 1, .uniform = uniform, .lanes = 4,
                                 .topo_class = s->cls};
    /* the LL inbox of the default scratch (16 MiB: a quarter, two parities of one slot per
     * rank, half of a slot is payload) */
    shape.ll_capacity = (((size_t)4 << 20) / 2 / (size_t)s->local_size & ~(size_t)255) / 2;
    cg_call_t           call = {.coll = coll, .bytes = size, .dtype = CG_DT_FLOAT,
                                .op = CG_OP_SUM, .comm_size = shape.size};

    if (coll == CG_COLL_ALLGATHER) { /* the planner sees per-rank blocks */
        call.bytes = size / (size_t)shape.size;
    }
    if (coll == CG_COLL_BCAST || coll == CG_COLL_ALLGATHER) {
        call.dtype = CG_DT_NONE;
        call.op    = CG_OP_NONE;
    }
    call.count = call.bytes / 4;
    cg_planner_config_default(&config);
    cg_plan_select(&config, &call, &shape, &plan);
    printf("%-36s nodes=%-4d %-7s %-21s %11zu B  %-17s chunk=%zu\n", fixture, nodes,
           uniform ? "uniform" : "uneven", cg_coll_name(coll), size, cg_alg_name(plan.alg),
           plan.chunk_bytes);
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {8, 1024, 65536, 1u << 20, 16u << 20, 256u << 20, 1u << 30};
    static const int    node_counts[] = {1, 2, 4, 16, 128};

    int shared = 0; /* --shared N: N ranks on the fixture's first GPU (a shared GPU) */

    for (int a = 1; a < argc; a++) {
        cg_topo_t        *topo = NULL;
        cg_topo_summary_t s;
        const char       *bus[CG_TOPO_MAX_RANKS];
        char              name[256];
        int               ranks;

        if (strcmp(argv[a], "--shared") == 0 && a + 1 < argc) {
            shared = atoi(argv[++a]);
            continue;
        }
        snprintf(name, sizeof(name), "%s", strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a]);
        if (cg_topo_load(argv[a], &topo) != CG_OK) {
            topo = NULL; /* a broken file: the safe defaults */
        }
        ranks = (topo && topo->num_gpus) ? topo->num_gpus : 2;
        if (shared > 0 && shared <= CG_TOPO_MAX_RANKS && topo && topo->num_gpus) {
            ranks = shared;
            snprintf(name + strlen(name), sizeof(name) - strlen(name), ":%d-on-gpu0", shared);
        }
        for (int r = 0; r < ranks; r++) {
            bus[r] = (topo && topo->num_gpus) ? topo->gpu[shared > 0 ? 0 : r].bus_id : "host";
        }
        cg_topo_summarize(topo, bus, ranks, &s);
        for (size_t n = 0; n < sizeof(node_counts) / sizeof(node_counts[0]); n++) {
            for (int uniform = 1; uniform >= (node_counts[n] > 1 ? 0 : 1); uniform--) {
                for (int c = 0; c < CG_COLL_COUNT; c++) {
                    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
                        grid_line(name, &s, node_counts[n], uniform, (cg_coll_t)c, sizes[k]);
                    }
                }
            }
        }
        cg_topo_free(topo);
    }
    return 0;
}
