/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Per-communicator context: which ranks share a node, the local group that connects them,
 * the inter-node transport between nodes, and the node's topology summary.
 *
 * Creation is collective and every rank ends with the same answer:
 *   1. allgather of every rank's part (host, scratch handle, control page, GPU)
 *   2. ranks of a node connect their local group; with several nodes, UCX is set up
 *   3. allgather of success, the length of its longest worker address and the node
 *      summaries: if anything failed anywhere, every rank tears down (staged path from then on)
 *   4. with several nodes: allgather of the worker addresses, in slots of the longest
 */
#include "coll/cg_comm_int.h"
#include "coll/hier/hier.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char                 host[64];
    uint64_t             serial; /* contexts this process made before (rank 0's: the uid) */
    uint64_t             params_digest; /* cg_comm_config_t's */
    int                  sim_gpu;       /* cg_comm_config_t's */
    cg_intra_peer_info_t intra;
} cg_rank_info_t;

typedef struct {
    int               ok;
    int               inter_staged; /* its device data crosses the network through host memory */
    int               lanes;        /* inter-node lanes it could set up */
    uint32_t          addr_bytes;   /* its longest worker address of those lanes */
    uint64_t          rules_digest; /* its rules (cg_rules_digest) */
    int               time_sliced;  /* it shares its GPU with a rank of its node (of this
                                       communicator or, cg_intra_gpu_shared_seen, of one
                                       before), and the GPU's processes take turns on it
                                       (no MPS) */
    cg_topo_summary_t topo;
} cg_rank_result_t;

/* ---- what a process has once: its topology, its UCX worker ------------------------- */
static pthread_mutex_t cg_process_lock = PTHREAD_MUTEX_INITIALIZER;
static cg_topo_t      *cg_process_topo;
static int             cg_process_topo_tried;
static cg_ucx_t       *cg_process_ucx;
static int             cg_process_ucx_tried;
static cg_ucx_t       *cg_process_lane_ucx[CG_MAX_LANES]; /* [0]: cg_process_ucx */
static uint64_t        cg_process_serial = 1;

static const cg_topo_t *cg_topo_process(const char *topo_file)
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

/* Is NIC name an RDMA (OpenFabrics) device in this process's topology? Without one, the
 * names of Mellanox's driver. */
static int cg_process_nic_rdma(const char *name)
{
    if (cg_process_topo == NULL) {
        return strncmp(name, "mlx", 3) == 0;
    }
    for (int n = 0; n < cg_process_topo->num_nics; n++) {
        if (strcmp(cg_process_topo->nic[n].name, name) == 0) {
            return cg_process_topo->nic[n].rdma;
        }
    }
    return 0;
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
            /* RDMA devices (mlx5_0, irdma0, bnxt_re0, ...) are named device:port for UCX */
            snprintf(devices, sizeof(devices), cg_process_nic_rdma(rail) ? "%s:1" : "%s", rail);
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
    cg_intra_cleanup();
    cg_inter_release_kept();
    cg_ipc_registry_cleanup();
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
static cg_status_t cg_comm_layout(cg_comm_t *comm, const cg_rank_info_t *infos)
{
    const int size = comm->config.size, me = comm->config.rank;

    comm->num_nodes = 0;
    for (int r = 0; r < size; r++) {
        comm->node_of[r] = -1;
        if (comm->config.node_size > 0) {
            comm->node_of[r] = r / comm->config.node_size;
            comm->num_nodes  = comm->node_of[r] + 1;
            continue;
        }
        if (comm->config.node_size < 0) {
            comm->node_of[r] = r % -comm->config.node_size;
            comm->num_nodes  = CG_MAX(comm->num_nodes, comm->node_of[r] + 1);
            continue;
        }
        for (int q = 0; q < r; q++) {
            if (strncmp(infos[q].host, infos[r].host, sizeof(infos[r].host)) == 0) {
                comm->node_of[r] = comm->node_of[q];
                break;
            }
        }
        if (comm->node_of[r] < 0) {
            comm->node_of[r] = comm->num_nodes++;
        }
    }
    comm->node_start = calloc((size_t)comm->num_nodes + 1, sizeof(int));
    comm->node_size  = calloc((size_t)comm->num_nodes, sizeof(int));
    comm->members    = calloc((size_t)size, sizeof(int));
    if (comm->node_start == NULL || comm->node_size == NULL || comm->members == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    for (int r = 0; r < size; r++) {
        comm->node_size[comm->node_of[r]]++;
    }
    comm->max_local = 0;
    comm->uniform   = 1;
    for (int n = 0; n < comm->num_nodes; n++) {
        comm->node_start[n + 1] = comm->node_start[n] + comm->node_size[n];
        comm->max_local         = CG_MAX(comm->max_local, comm->node_size[n]);
        comm->uniform          &= (comm->node_size[n] == comm->node_size[0]);
    }
    for (int n = 0; n < comm->num_nodes; n++) {
        comm->node_size[n] = 0; /* refilled below, with the members */
    }
    for (int r = 0; r < size; r++) {
        int n = comm->node_of[r];
        if (r == me) {
            comm->local_rank = comm->node_size[n];
        }
        comm->members[comm->node_start[n] + comm->node_size[n]++] = r;
    }
    comm->my_node    = comm->node_of[me];
    comm->local_size = comm->node_size[comm->my_node];
    return CG_OK;
}

/* The node summary from this rank's view: which GPU every local rank drives. On the host
 * device layer with a topology file, the node's i-th rank of the job plays the file's GPU
 * i, modulo their number (cg_comm_config_t sim_gpu: simulation of that node, for tests
 * and for coll_gpu_info). */
static void cg_comm_summarize(cg_comm_t *comm, const cg_rank_info_t *infos)
{
    const cg_topo_t *topo = cg_topo_process(comm->config.topo_file);
    const char      *bus[CG_INTRA_MAX];
    int              n = CG_MIN(comm->local_size, CG_INTRA_MAX);
    int              simulate = topo && topo->num_gpus > 0 && comm->dev->kind == CG_DEV_KIND_HOST &&
                                comm->config.topo_file && comm->config.topo_file[0];

    for (int i = 0; i < n; i++) {
        int r   = comm->members[comm->node_start[comm->my_node] + i];
        int gpu = infos[r].sim_gpu >= 0 ? infos[r].sim_gpu : i;
        bus[i]  = simulate ? topo->gpu[gpu % topo->num_gpus].bus_id : infos[r].intra.pci_bus_id;
    }
    cg_topo_summarize(topo, bus, n, &comm->topo);
    if (cg_topo_gpu_shared_by(bus, n, comm->local_rank)) {
        cg_intra_gpu_shared_note();
    }
}

static cg_status_t cg_comm_connect_local(cg_comm_t *comm, const cg_rank_info_t *infos)
{
    int                  ranks[CG_INTRA_MAX];
    cg_intra_peer_info_t peers[CG_INTRA_MAX];

    if (comm->local_size == 1) {
        cg_intra_destroy(comm->intra);
        comm->intra = NULL;
        return CG_OK;
    }
    if (comm->local_size > CG_INTRA_MAX) {
        cg_warn(CG_SUB_INIT, "%d ranks on one node: more than %d, the fast paths are off",
                comm->local_size, CG_INTRA_MAX);
        return CG_ERR_UNSUPPORTED;
    }
    for (int i = 0; i < comm->local_size; i++) {
        ranks[i] = comm->members[comm->node_start[comm->my_node] + i];
        peers[i] = infos[ranks[i]].intra;
    }
    return cg_intra_connect(comm->intra, ranks, peers, comm->local_size, comm->local_rank,
                            comm->config.sync);
}

/* The inter-node transport of one lane on a worker (the addresses come later). */
static cg_status_t cg_comm_prepare_lane(cg_comm_t *comm, cg_ucx_t *ucx, const int *pids,
                                        cg_inter_t **lane)
{
    cg_inter_config_t config = {comm->config.chunk_bytes, comm->config.depth, comm->config.staging,
                                comm->config.timeout_s, pids};
    const void       *addr;
    size_t            len;

    if (ucx == NULL || cg_ucx_address(ucx, &addr, &len) != CG_OK) {
        return CG_ERR_TRANSPORT;
    }
    if (len > CG_UCX_ADDR_MAX) {
        cg_warn(CG_SUB_UCX, "UCX worker address of %zu bytes: more than %d", len, CG_UCX_ADDR_MAX);
        return CG_ERR_UNSUPPORTED;
    }
    return cg_inter_create(ucx, comm->dev, comm->config.rank, comm->config.size,
                           comm->config.comm_id, &config, lane);
}

/* UCX and this communicator's inter-node lanes: lane 0 (c->inter) is required, the others
 * are set up as far as they go (the ranks agree on the count afterwards). */
static cg_status_t cg_comm_prepare_inter(cg_comm_t *comm, const cg_rank_info_t *infos, int *lanes)
{
    const char *host = infos[comm->config.rank].host;
    int        *pids = calloc((size_t)comm->config.size, sizeof(int));
    cg_status_t status;

    if (pids == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    if ((status = cg_inter_tag_claim(comm->config.comm_id)) != CG_OK) {
        static int told; /* warned once: a program that makes many may collide often */
        const int  level = cg_once(&told) ? CG_LOG_WARN : CG_LOG_DEBUG; /* cg_log reads it twice */
        cg_log(level, CG_SUB_UCX, "communicator id %u has the inter-node tags of another one alive"
               " here (hashed ids that collide): no fast path", (unsigned)comm->config.comm_id);
        free(pids);
        return status;
    }
    comm->tag_claimed = 1;
    for (int r = 0; r < comm->config.size; r++) { /* peers whose liveness this rank can see */
        const int here = strncmp(infos[r].host, host, sizeof(infos[r].host)) == 0;
        pids[r] = here ? cg_process_watchable(infos[r].intra.pid, infos[r].intra.pid_namespace) : 0;
    }
    status = cg_comm_prepare_lane(comm, cg_ucx_process(&comm->config, comm->topo.rail[comm->local_rank]),
                                  pids, &comm->inter);
    if (status != CG_OK) {
        comm->inter = NULL;
        free(pids);
        return status;
    }
    comm->lane[0] = comm->inter;
    for (*lanes = 1; *lanes < CG_MIN(comm->config.lanes, CG_MAX_LANES); (*lanes)++) {
        if (cg_comm_prepare_lane(comm, cg_ucx_process_lane(*lanes), pids, &comm->lane[*lanes]) != CG_OK) {
            comm->lane[*lanes] = NULL;
            cg_warn(CG_SUB_UCX, "inter-node lane %d could not be set up: %d lanes", *lanes, *lanes);
            break;
        }
    }
    free(pids);
    return CG_OK;
}

/* Settings that every rank must make alike (the scratch layout, chunk sizes, forced
 * algorithms...): a rank with others would read and write its peers' memory at the wrong
 * places, or pair its exchanges with the wrong ones. Checked before anything of a peer is
 * used; the communicator then runs staged (every rank sees the same infos). */
static cg_status_t cg_comm_check_params(const cg_comm_config_t *config, const cg_rank_info_t *infos)
{
    static int told;

    for (int r = 0; r < config->size; r++) {
        if (infos[r].params_digest != infos[0].params_digest) {
            if (cg_once(&told)) {
                cg_warn(CG_SUB_INIT, "the coll_gpu parameters that every rank must set alike "
                        "(scope all-equal in ompi_info: coll_gpu_scratch_size, "
                        "coll_gpu_node_size, the chunk sizes, the forced algorithms...) differ "
                        "between ranks %d and %d: staged path on such communicators", 0, r);
            }
            return CG_ERR_MISMATCH;
        }
    }
    return CG_OK;
}

/* Keep the lanes every rank has. */
static void cg_comm_agree_lanes(cg_comm_t *comm, const cg_rank_result_t *results)
{
    comm->num_lanes = comm->inter != NULL ? CG_MAX_LANES : 0;
    for (int r = 0; r < comm->config.size; r++) {
        comm->num_lanes = CG_MIN(comm->num_lanes, results[r].lanes);
    }
    for (int m = CG_MAX(comm->num_lanes, 1); m < CG_MAX_LANES; m++) {
        cg_inter_destroy(comm->lane[m]);
        comm->lane[m] = NULL;
    }
}

/* What the planner's model assumes of the whole communicator, the same on every rank: the
 * slowest node class (nodes may differ) and staging when any rank stages. */
static void cg_comm_agree_model(cg_comm_t *comm, const cg_rank_result_t *results)
{
    static int told;
    double     slowest = 0;

    comm->model_class  = comm->topo.cls;
    comm->model_staged = 0;
    for (int r = 0; r < comm->config.size; r++) {
        cg_cost_params_t p;
        cg_cost_defaults(&p, results[r].topo.cls, comm->node_size[comm->node_of[r]]);
        if (r == 0 || p.intra_bw_gbs < slowest ||
            (p.intra_bw_gbs == slowest && results[r].topo.cls < comm->model_class)) {
            slowest        = p.intra_bw_gbs;
            comm->model_class = results[r].topo.cls;
        }
        comm->model_staged |= results[r].inter_staged;
        comm->rules_differ |= results[r].rules_digest != comm->config.rules_digest;
        comm->time_sliced |= results[r].time_sliced; /* any rank's: one answer everywhere */
    }
    if (comm->rules_differ && cg_once(&told)) {
        cg_warn(CG_SUB_INIT, "coll_gpu_rules_file: the rules differ between ranks (the file is "
                "missing, unreadable or different on some nodes): a communicator whose ranks "
                "disagree follows none");
    }
}

/* Device data crosses the network one way on every rank: a staged sender cuts a message
 * into chunks that a direct receiver would take as one (truncated, or a partial message and
 * a sender waiting forever). Where ranks differ (their UCX moves device memory or not,
 * coll_gpu_ucx_staging), every direct transport stages too; whether that worked is agreed.
 * Every rank of the communicator takes part, or none (results are the same everywhere). */
static cg_status_t cg_comm_agree_staging(cg_comm_t *comm, const cg_rank_result_t *results,
                                         int *ok)
{
    static int  told;
    int         staged = 0, direct = 0, mine = 1, switched = 0;
    cg_status_t exchange;

    for (int r = 0; r < comm->config.size; r++) {
        staged |= results[r].inter_staged;
        direct |= !results[r].inter_staged;
    }
    if (!staged || !direct) {
        return CG_OK;
    }
    for (int m = 0; m < comm->num_lanes && mine; m++) {
        switched |= !comm->lane[m]->staged;
        mine = comm->lane[m]->staged || cg_inter_stage(comm->lane[m]) == CG_OK;
    }
    if (!mine) {
        cg_warn(CG_SUB_UCX, "could not stage device data through host memory as other ranks "
                "do: staged path");
    } else if (switched && cg_once(&told)) {
        cg_warn(CG_SUB_UCX, "UCX moves device memory here but not on some other ranks (or "
                "coll_gpu_ucx_staging differs): device data goes through host memory on every "
                "rank of this communicator");
    }
    exchange = cg_comm_vote(comm, &mine);
    *ok &= mine;
    return exchange;
}

cg_status_t cg_comm_create(cg_dev_t *dev, const cg_oob_t *oob, const cg_comm_config_t *config,
                           cg_comm_t **comm_out)
{
    cg_intra_config_t intra_config = {config->scratch_bytes, config->sync, config->timeout_s,
                                      config->copy, config->ll_flag_period};
    cg_rank_info_t    mine, *infos = NULL;
    cg_rank_result_t  result, *results = NULL;
    double           *measured = NULL;
    cg_comm_t        *comm = calloc(1, sizeof(*comm));
    cg_status_t       status, exchange;
    int               ok, leader = -1;
    size_t            longest = 0; /* the longest worker address of any rank */

    memset(&mine, 0, sizeof(mine));
    memset(&result, 0, sizeof(result));
    if (comm == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    comm->dev     = dev;
    comm->config  = *config;
    comm->oob     = *oob;
    comm->node_of = calloc((size_t)config->size, sizeof(int));
    comm->votes   = calloc((size_t)config->size, sizeof(int));
    infos      = calloc((size_t)config->size, sizeof(*infos));
    results    = calloc((size_t)config->size, sizeof(*results));
    measured   = calloc((size_t)config->size * CG_COMM_MEASURES, sizeof(double));
    gethostname(mine.host, sizeof(mine.host) - 1);
    mine.serial = __atomic_fetch_add(&cg_process_serial, 1, __ATOMIC_RELAXED);
    status = (comm->node_of && comm->votes && infos && results && measured) ? CG_OK : CG_ERR_NO_MEMORY;
    if (status == CG_OK) {
        status = cg_intra_prepare(dev, &intra_config, &comm->intra, &mine.intra);
    }
    mine.intra.status = status;

    mine.params_digest = config->params_digest;
    mine.sim_gpu       = config->sim_gpu;

    /* Every rank joins every exchange, whatever happened locally. */
    exchange = oob->allgather(oob->ctx, &mine, infos, sizeof(mine));
    if (exchange == CG_OK && status == CG_OK) {
        status = cg_comm_check_params(config, infos);
    }
    if (exchange == CG_OK && status == CG_OK && (status = cg_comm_layout(comm, infos)) == CG_OK) {
        cg_comm_summarize(comm, infos);
        status = cg_comm_connect_local(comm, infos);
        if (status == CG_OK && comm->num_nodes > 1) {
            status = cg_comm_prepare_inter(comm, infos, &result.lanes);
            result.addr_bytes = cg_comm_addr_bytes(comm, result.lanes);
        }
    }
    result.ok   = (exchange == CG_OK && status == CG_OK);
    result.topo = comm->topo;
    result.inter_staged = comm->inter != NULL && comm->inter->staged;
    result.rules_digest = config->rules_digest;
    /* a GPU without MPS that this node gives to more than one rank, whatever the class
     * (8 ranks on 4 GPUs take turns on each GPU; the model's slice per peer is an upper
     * bound that keeps LL out either way), or this rank's GPU, which served another rank
     * in a communicator before (cg_comm_keep.c destroys contexts kept from before that);
     * one rank per GPU never waits for a turn */
    result.time_sliced  = dev->caps.time_sliced &&
                          (comm->topo.shared || cg_intra_gpu_shared_seen());
    ok          = result.ok;
    exchange    = oob->allgather(oob->ctx, &result, results, sizeof(result));
    for (int r = 0; exchange == CG_OK && r < config->size; r++) {
        ok &= results[r].ok;
        longest = CG_MAX(longest, (size_t)results[r].addr_bytes);
        if (ok && leader < 0 && comm->node_of[r] == comm->my_node) {
            leader = r; /* the node's first rank: its summary is the node's */
        }
    }
    if (exchange == CG_OK && ok && comm->num_nodes > 1) {
        cg_comm_agree_lanes(comm, results);
        exchange = cg_comm_agree_staging(comm, results, &ok);
    }
    if (exchange == CG_OK && ok && comm->num_nodes > 1) {
        exchange = cg_comm_exchange_addresses(comm, longest, &ok);
    }
    if (exchange == CG_OK && ok) {
        void *probe = NULL;
        if (comm->num_nodes > 1 && cg_comm_work(comm, sizeof(uint64_t), &probe) != CG_OK) {
            probe = NULL; /* the copy is not measured (every rank learns it) */
        }
        exchange = cg_comm_measure(comm, oob, measured, probe);
    }
    if (exchange == CG_OK) {
        comm->uid[0] = infos[0].intra.proc_id;
        comm->uid[1] = infos[0].serial;
    }
    free(infos);
    free(measured);
    if (exchange != CG_OK || !ok) {
        free(results);
        cg_warn(CG_SUB_INIT, "fast-path setup failed on some rank (here: %s): staged path",
                cg_status_string(status));
        cg_comm_destroy(comm);
        return exchange != CG_OK ? exchange : (status != CG_OK ? status : CG_ERR_PEER);
    }
    comm->topo = results[leader].topo;
    cg_comm_agree_model(comm, results);
    free(results);
    if (comm->intra != NULL) {
        cg_intra_seal(comm->intra);
        for (int i = 0; i < comm->local_size; i++) {
            comm->intra->ring[i] = comm->topo.ring[i];
            comm->intra->ring_pos = (comm->topo.ring[i] == comm->local_rank) ? i : comm->intra->ring_pos;
        }
    }
    cg_detail(CG_SUB_INIT, "context: %d ranks on %d nodes%s, %d here (local rank %d), topology %s "
              "(%s), rail %s, %d inter-node lanes", config->size, comm->num_nodes,
              comm->uniform ? "" : " (uneven)", comm->local_size, comm->local_rank,
              cg_topo_class_name(comm->topo.cls), comm->topo.reason,
              comm->topo.rail[comm->local_rank][0] ? comm->topo.rail[comm->local_rank] : "none", comm->num_lanes);
    cg_count(CG_CNT_CONTEXTS_MADE, 1);
    *comm_out = comm;
    return CG_OK;
}

void cg_comm_destroy(cg_comm_t *comm)
{
    if (comm == NULL) {
        return;
    }
    cg_hier_pipe_destroy(comm->pipe); /* its threads use the transport: first */
    cg_intra_destroy(comm->intra);
    for (int m = 1; m < CG_MAX_LANES; m++) {
        cg_inter_destroy(comm->lane[m]);
    }
    cg_inter_destroy(comm->inter);
    cg_comm_unclaim(comm);
    if (comm->work != NULL) {
        cg_dev_mem_release(comm->dev, comm->work);
    }
    if (comm->result != NULL) {
        cg_dev_mem_release(comm->dev, comm->result);
    }
    free(comm->node_of);
    free(comm->votes);
    free(comm->node_start);
    free(comm->node_size);
    free(comm->members);
    free(comm);
}

/* Device memory owned by the context, grown on demand. */
static cg_status_t cg_comm_grow(cg_comm_t *comm, size_t bytes, void **memory, size_t *have)
{
    if (bytes > *have) {
        if (*memory != NULL) {
            cg_dev_mem_release(comm->dev, *memory);
            *memory = NULL;
            *have   = 0;
        }
        if (comm->dev->ops->mem_alloc(comm->dev, bytes, memory) != CG_OK) {
            *memory = NULL;
            return CG_ERR_NO_MEMORY;
        }
        *have = bytes;
    }
    return CG_OK;
}

cg_status_t cg_comm_work(cg_comm_t *comm, size_t bytes, void **work)
{
    cg_status_t status = cg_comm_grow(comm, bytes, &comm->work, &comm->work_bytes);

    *work = comm->work;
    return status;
}

cg_status_t cg_comm_result(cg_comm_t *comm, size_t bytes, void **result)
{
    cg_status_t status = cg_comm_grow(comm, bytes, &comm->result, &comm->result_bytes);

    *result = comm->result;
    return status;
}
