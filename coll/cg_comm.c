/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Per-communicator context: which ranks share a node, the local group that connects them,
 * the inter-node transport between nodes, and the node's topology summary.
 *
 * Creation is collective and every rank ends with the same answer:
 *   1. allgather of every rank's part (host, scratch handle, control page, GPU)
 *   2. ranks of a node connect their local group; with several nodes, UCX is set up
 *   3. allgather of success, the length of each worker address and the node summaries:
 *      if anything failed anywhere, every rank tears down (staged path from then on)
 *   4. with several nodes: allgather of the worker addresses
 */
#include "coll/cg_comm_int.h"
#include "coll/hier/hier.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CG_UCX_ADDR_MAX 4096

typedef struct {
    char                 host[64];
    cg_intra_peer_info_t intra;
} cg_rank_info_t;

typedef struct {
    int               ok;
    int               inter_staged; /* its device data crosses the network through host memory */
    int               lanes;        /* inter-node lanes it could set up */
    cg_topo_summary_t topo;
} cg_rank_result_t;

/* ---- what a process has once: its topology, its UCX worker ------------------------- */
static pthread_mutex_t cg_process_lock = PTHREAD_MUTEX_INITIALIZER;
static cg_topo_t      *cg_process_topo;
static int             cg_process_topo_tried;
static cg_ucx_t       *cg_process_ucx;
static int             cg_process_ucx_tried;
static cg_ucx_t       *cg_process_lane_ucx[CG_MAX_LANES]; /* [0]: cg_process_ucx */

const cg_topo_t *cg_topo_process(const char *topo_file)
{
    pthread_mutex_lock(&cg_process_lock);
    if (!cg_process_topo_tried) {
        cg_process_topo_tried = 1;
        if (cg_topo_load(topo_file, &cg_process_topo) != CG_OK) {
            cg_process_topo = NULL; /* safe defaults: reported where it failed */
        }
    }
    pthread_mutex_unlock(&cg_process_lock);
    return cg_process_topo;
}

/* UCX for this process, on the rank's rail NIC (the first communicator that spans nodes
 * decides it; the rail follows the GPU, which does not change). */
static cg_ucx_t *cg_ucx_process(const cg_comm_config_t *config, const char *rail)
{
    char devices[48] = "";

    pthread_mutex_lock(&cg_process_lock);
    if (!cg_process_ucx_tried) {
        cg_ucx_config_t ucx_config = {config->thread_multi, devices};
        cg_process_ucx_tried = 1;
        if (rail != NULL && rail[0] != '\0') {
            /* RDMA devices are named device:port for UCX */
            snprintf(devices, sizeof(devices), strncmp(rail, "mlx", 3) ? "%s" : "%s:1", rail);
        }
        if (cg_ucx_create(&ucx_config, &cg_process_ucx) != CG_OK) {
            cg_process_ucx = NULL;
        }
    }
    pthread_mutex_unlock(&cg_process_lock);
    return cg_process_ucx;
}

/* The worker of lane m (> 0): another worker on the process's UCX context. */
static cg_ucx_t *cg_ucx_process_lane(int m)
{
    pthread_mutex_lock(&cg_process_lock);
    if (cg_process_lane_ucx[m] == NULL && cg_process_ucx != NULL &&
        cg_ucx_create_lane(cg_process_ucx, &cg_process_lane_ucx[m]) != CG_OK) {
        cg_process_lane_ucx[m] = NULL;
    }
    pthread_mutex_unlock(&cg_process_lock);
    return cg_process_lane_ucx[m];
}

void cg_comm_process_cleanup(void)
{
    pthread_mutex_lock(&cg_process_lock);
    for (int m = 1; m < CG_MAX_LANES; m++) {
        cg_ucx_destroy(cg_process_lane_ucx[m]);
        cg_process_lane_ucx[m] = NULL;
    }
    cg_ucx_destroy(cg_process_ucx);
    cg_topo_free(cg_process_topo);
    cg_process_ucx        = NULL;
    cg_process_topo       = NULL;
    cg_process_ucx_tried  = 0;
    cg_process_topo_tried = 0;
    pthread_mutex_unlock(&cg_process_lock);
}

/* ---- layout ------------------------------------------------------------------------ */
/* Node of every rank (consecutive blocks of node_size ranks; -node_size nodes dealt rank by
 * rank in turn, as mpirun --map-by node places them; or equal host names), nodes numbered
 * in the order of their first rank; members grouped by node in rank order. */
static cg_status_t cg_comm_layout(cg_comm_t *c, const cg_rank_info_t *infos)
{
    const int size = c->config.size, me = c->config.rank;

    c->num_nodes = 0;
    for (int r = 0; r < size; r++) {
        c->node_of[r] = -1;
        if (c->config.node_size > 0) {
            c->node_of[r] = r / c->config.node_size;
            c->num_nodes  = c->node_of[r] + 1;
            continue;
        }
        if (c->config.node_size < 0) {
            c->node_of[r] = r % -c->config.node_size;
            c->num_nodes  = CG_MAX(c->num_nodes, c->node_of[r] + 1);
            continue;
        }
        for (int q = 0; q < r; q++) {
            if (strncmp(infos[q].host, infos[r].host, sizeof(infos[r].host)) == 0) {
                c->node_of[r] = c->node_of[q];
                break;
            }
        }
        if (c->node_of[r] < 0) {
            c->node_of[r] = c->num_nodes++;
        }
    }
    c->node_start = calloc((size_t)c->num_nodes + 1, sizeof(int));
    c->node_size  = calloc((size_t)c->num_nodes, sizeof(int));
    c->members    = calloc((size_t)size, sizeof(int));
    if (c->node_start == NULL || c->node_size == NULL || c->members == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    for (int r = 0; r < size; r++) {
        c->node_size[c->node_of[r]]++;
    }
    c->max_local = 0;
    c->uniform   = 1;
    for (int n = 0; n < c->num_nodes; n++) {
        c->node_start[n + 1] = c->node_start[n] + c->node_size[n];
        c->max_local         = CG_MAX(c->max_local, c->node_size[n]);
        c->uniform          &= (c->node_size[n] == c->node_size[0]);
    }
    for (int n = 0; n < c->num_nodes; n++) {
        c->node_size[n] = 0; /* refilled below, with the members */
    }
    for (int r = 0; r < size; r++) {
        int n = c->node_of[r];
        if (r == me) {
            c->local_rank = c->node_size[n];
        }
        c->members[c->node_start[n] + c->node_size[n]++] = r;
    }
    c->my_node    = c->node_of[me];
    c->local_size = c->node_size[c->my_node];
    return CG_OK;
}

/* The node summary from this rank's view: which GPU every local rank drives. On the host
 * device layer with a topology file, local rank i plays the file's GPU i (simulation of
 * that node, for tests and for coll_gpu_info). */
static void cg_comm_summarize(cg_comm_t *c, const cg_rank_info_t *infos)
{
    const cg_topo_t *topo = cg_topo_process(c->config.topo_file);
    const char      *bus[CG_INTRA_MAX];
    int              n = CG_MIN(c->local_size, CG_INTRA_MAX);
    int              simulate = topo && topo->num_gpus > 0 && c->dev->kind == CG_DEV_KIND_HOST &&
                                c->config.topo_file && c->config.topo_file[0];

    for (int i = 0; i < n; i++) {
        int r  = c->members[c->node_start[c->my_node] + i];
        bus[i] = simulate ? topo->gpu[i % topo->num_gpus].bus_id : infos[r].intra.pci_bus_id;
    }
    cg_topo_summarize(topo, bus, n, &c->topo);
}

static cg_status_t cg_comm_connect_local(cg_comm_t *c, const cg_rank_info_t *infos)
{
    int                  ranks[CG_INTRA_MAX];
    cg_intra_peer_info_t peers[CG_INTRA_MAX];

    if (c->local_size == 1) {
        cg_intra_destroy(c->intra);
        c->intra = NULL;
        return CG_OK;
    }
    if (c->local_size > CG_INTRA_MAX) {
        cg_warn(CG_SUB_INIT, "%d ranks on one node: more than %d, the fast paths are off",
                c->local_size, CG_INTRA_MAX);
        return CG_ERR_UNSUPPORTED;
    }
    for (int i = 0; i < c->local_size; i++) {
        ranks[i] = c->members[c->node_start[c->my_node] + i];
        peers[i] = infos[ranks[i]].intra;
    }
    return cg_intra_connect(c->intra, ranks, peers, c->local_size, c->local_rank,
                            (cg_sync_mode_t)c->config.sync);
}

/* The inter-node transport of one lane on a worker (the addresses come later). */
static cg_status_t cg_comm_prepare_lane(cg_comm_t *c, cg_ucx_t *ucx, cg_inter_t **lane)
{
    cg_inter_config_t config = {c->config.chunk_bytes, c->config.depth, c->config.staging,
                                c->config.timeout_s};
    const void       *addr;
    size_t            len;
    char             *addrs;

    if (ucx == NULL || cg_ucx_address(ucx, &addr, &len) != CG_OK) {
        return CG_ERR_TRANSPORT;
    }
    if (len > CG_UCX_ADDR_MAX) {
        cg_warn(CG_SUB_UCX, "UCX worker address of %zu bytes: more than %d", len, CG_UCX_ADDR_MAX);
        return CG_ERR_UNSUPPORTED;
    }
    addrs = malloc((size_t)c->config.size * (CG_UCX_ADDR_MAX + sizeof(uint64_t)));
    if (addrs == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    return cg_inter_create(ucx, c->dev, c->config.rank, c->config.size,
                           (uint16_t)c->config.comm_id, addrs, CG_UCX_ADDR_MAX + sizeof(uint64_t),
                           &config, lane);
}

/* UCX and this communicator's inter-node lanes: lane 0 (c->inter) is required, the others
 * are set up as far as they go (the ranks agree on the count afterwards). */
static cg_status_t cg_comm_prepare_inter(cg_comm_t *c, int *lanes)
{
    cg_status_t status;

    status = cg_comm_prepare_lane(c, cg_ucx_process(&c->config, c->topo.rail[c->local_rank]),
                                  &c->inter);
    if (status != CG_OK) {
        c->inter = NULL;
        return status;
    }
    c->lane[0] = c->inter;
    for (*lanes = 1; *lanes < CG_MIN(c->config.lanes, CG_MAX_LANES); (*lanes)++) {
        if (cg_comm_prepare_lane(c, cg_ucx_process_lane(*lanes), &c->lane[*lanes]) != CG_OK) {
            c->lane[*lanes] = NULL;
            cg_warn(CG_SUB_UCX, "inter-node lane %d could not be set up: %d lanes", *lanes, *lanes);
            break;
        }
    }
    return CG_OK;
}

/* Keep the lanes every rank has. */
static void cg_comm_agree_lanes(cg_comm_t *c, const cg_rank_result_t *results)
{
    c->num_lanes = c->inter != NULL ? CG_MAX_LANES : 0;
    for (int r = 0; r < c->config.size; r++) {
        c->num_lanes = CG_MIN(c->num_lanes, results[r].lanes);
    }
    for (int m = CG_MAX(c->num_lanes, 1); m < CG_MAX_LANES; m++) {
        cg_inter_destroy(c->lane[m]);
        c->lane[m] = NULL;
    }
}

/* What the planner's model assumes of the whole communicator, the same on every rank: the
 * slowest node class (nodes may differ) and staging when any rank stages. */
static void cg_comm_agree_model(cg_comm_t *c, const cg_rank_result_t *results)
{
    double slowest = 0;

    c->model_class  = c->topo.cls;
    c->model_staged = 0;
    for (int r = 0; r < c->config.size; r++) {
        cg_cost_params_t p;
        cg_cost_defaults(&p, results[r].topo.cls, c->node_size[c->node_of[r]]);
        if (r == 0 || p.intra_bw_gbs < slowest ||
            (p.intra_bw_gbs == slowest && results[r].topo.cls < c->model_class)) {
            slowest        = p.intra_bw_gbs;
            c->model_class = results[r].topo.cls;
        }
        c->model_staged |= results[r].inter_staged;
    }
}

/* Every rank's worker address, each slot [length][address]. */
static cg_status_t cg_comm_exchange_addresses(cg_comm_t *c, const cg_oob_t *oob)
{
    char        mine[CG_UCX_ADDR_MAX + sizeof(uint64_t)];
    const void *addr;
    size_t      len;
    cg_status_t status = CG_OK;

    for (int m = 0; m < c->num_lanes && status == CG_OK; m++) {
        cg_inter_t *lane = c->lane[m];
        cg_ucx_address(lane->ucx, &addr, &len);
        memcpy(mine, &(uint64_t){len}, sizeof(uint64_t));
        memcpy(mine + sizeof(uint64_t), addr, len);
        status = oob->allgather(oob->ctx, mine, lane->addrs, lane->addr_stride);
    }
    return status;
}

cg_status_t cg_comm_create(cg_dev_t *dev, const cg_oob_t *oob, const cg_comm_config_t *config,
                           cg_comm_t **comm_out)
{
    cg_intra_config_t intra_config = {config->scratch_bytes, (cg_sync_mode_t)config->sync,
                                      config->timeout_s, (cg_copy_method_t)config->copy};
    cg_rank_info_t    mine, *infos = NULL;
    cg_rank_result_t  result, *results = NULL;
    cg_comm_t        *c = calloc(1, sizeof(*c));
    cg_status_t       status, exchange;
    int               ok, leader = -1;

    memset(&mine, 0, sizeof(mine));
    memset(&result, 0, sizeof(result));
    if (c == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    c->dev     = dev;
    c->config  = *config;
    c->oob     = *oob;
    c->node_of = calloc((size_t)config->size, sizeof(int));
    c->votes   = calloc((size_t)config->size, sizeof(int));
    infos      = calloc((size_t)config->size, sizeof(*infos));
    results    = calloc((size_t)config->size, sizeof(*results));
    gethostname(mine.host, sizeof(mine.host) - 1);
    status = (c->node_of && c->votes && infos && results) ? CG_OK : CG_ERR_NO_MEMORY;
    if (status == CG_OK) {
        status = cg_intra_prepare(dev, &intra_config, &c->intra, &mine.intra);
    }
    mine.intra.status = status;

    /* Every rank joins every exchange, whatever happened locally. */
    exchange = oob->allgather(oob->ctx, &mine, infos, sizeof(mine));
    if (exchange == CG_OK && status == CG_OK && (status = cg_comm_layout(c, infos)) == CG_OK) {
        cg_comm_summarize(c, infos);
        status = cg_comm_connect_local(c, infos);
        if (status == CG_OK && c->num_nodes > 1) {
            status = cg_comm_prepare_inter(c, &result.lanes);
        }
    }
    result.ok   = (exchange == CG_OK && status == CG_OK);
    result.topo = c->topo;
    result.inter_staged = c->inter != NULL && c->inter->staged;
    ok          = result.ok;
    exchange    = oob->allgather(oob->ctx, &result, results, sizeof(result));
    for (int r = 0; exchange == CG_OK && r < config->size; r++) {
        ok &= results[r].ok;
        if (ok && leader < 0 && c->node_of[r] == c->my_node) {
            leader = r; /* the node's first rank: its summary is the node's */
        }
    }
    if (exchange == CG_OK && ok && c->num_nodes > 1) {
        cg_comm_agree_lanes(c, results);
        exchange = cg_comm_exchange_addresses(c, oob);
    }
    free(infos);
    if (exchange != CG_OK || !ok) {
        free(results);
        cg_warn(CG_SUB_INIT, "fast-path setup failed on some rank (here: %s): staged path",
                cg_status_string(status));
        cg_comm_destroy(c);
        return exchange != CG_OK ? exchange : (status != CG_OK ? status : CG_ERR_PEER);
    }
    c->topo = results[leader].topo;
    cg_comm_agree_model(c, results);
    free(results);
    if (c->intra != NULL) {
        cg_intra_seal(c->intra);
        for (int i = 0; i < c->local_size; i++) {
            c->intra->ring[i] = c->topo.ring[i];
            c->intra->ring_pos = (c->topo.ring[i] == c->local_rank) ? i : c->intra->ring_pos;
        }
    }
    cg_detail(CG_SUB_INIT, "context: %d ranks on %d nodes%s, %d here (local rank %d), topology %s "
              "(%s), rail %s, %d inter-node lanes", config->size, c->num_nodes,
              c->uniform ? "" : " (uneven)", c->local_size, c->local_rank,
              cg_topo_class_name(c->topo.cls), c->topo.reason,
              c->topo.rail[c->local_rank][0] ? c->topo.rail[c->local_rank] : "none", c->num_lanes);
    *comm_out = c;
    return CG_OK;
}

void cg_comm_destroy(cg_comm_t *c)
{
    if (c == NULL) {
        return;
    }
    cg_hier_pipe_destroy(c->pipe); /* its threads use the transport: first */
    cg_intra_destroy(c->intra);
    for (int m = 1; m < CG_MAX_LANES; m++) {
        cg_inter_destroy(c->lane[m]);
    }
    cg_inter_destroy(c->inter);
    if (c->work != NULL) {
        c->dev->ops->mem_free(c->dev, c->work);
    }
    free(c->node_of);
    free(c->votes);
    free(c->node_start);
    free(c->node_size);
    free(c->members);
    free(c);
}
