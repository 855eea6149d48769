/*
 * Per-communicator context: which ranks share a node, the local group that connects them,
 * and the entry points that run a planned fast path on it.
 *
 * Creation is collective: every rank prepares its part of the local group, one allgather
 * (through the layer underneath, host memory) tells everyone about everyone, ranks with the
 * same node key connect, and a second allgather makes sure every rank succeeded, so that
 * all ranks agree on whether the context exists.
 */
#include "coll/cg_coll.h"
#include "coll/allgather/allgather.h"
#include "coll/allreduce/allreduce.h"
#include "coll/bcast/bcast.h"
#include "coll/reduce_scatter/reduce_scatter.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cg_comm {
    cg_dev_t        *dev;
    cg_comm_config_t config;
    int              num_nodes;
    int              max_local;
    int             *node_of;   /* node index of every rank */
    int              local_size;
    int              local_rank;
    cg_intra_t      *intra;     /* NULL with one rank on the node */
    cg_topo_summary_t topo;     /* this node's, as its first rank computed it */
    int              failed;
};

/* What the second exchange carries: success, and the node summary. */
typedef struct {
    int               ok;
    cg_topo_summary_t topo;
} cg_rank_result_t;

static pthread_mutex_t cg_topo_lock = PTHREAD_MUTEX_INITIALIZER;
static cg_topo_t      *cg_topo_cached;
static int             cg_topo_tried;

const cg_topo_t *cg_topo_process(const char *topo_file)
{
    pthread_mutex_lock(&cg_topo_lock);
    if (!cg_topo_tried) {
        cg_topo_tried = 1;
        if (cg_topo_load(topo_file, &cg_topo_cached) != CG_OK) {
            cg_topo_cached = NULL; /* safe defaults: reported where it failed */
        }
    }
    pthread_mutex_unlock(&cg_topo_lock);
    return cg_topo_cached;
}

typedef struct {
    char                 host[64];
    cg_intra_peer_info_t intra;
} cg_rank_info_t;

/* Node of every rank: consecutive blocks of node_size ranks, or equal host names. Nodes
 * are numbered in the order of their first rank, the same on every rank. */
static void cg_comm_group_nodes(cg_comm_t *c, const cg_rank_info_t *infos)
{
    const int size = c->config.size;
    int      *count;

    c->num_nodes = 0;
    for (int r = 0; r < size; r++) {
        c->node_of[r] = -1;
        if (c->config.node_size > 0) {
            c->node_of[r] = r / c->config.node_size;
            c->num_nodes  = c->node_of[r] + 1;
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
    count = calloc((size_t)c->num_nodes, sizeof(int));
    c->max_local = 0;
    for (int r = 0; count != NULL && r < size; r++) {
        c->max_local = CG_MAX(c->max_local, ++count[c->node_of[r]]);
    }
    free(count);
}

/* The node summary from this rank's view: which GPU every local rank drives. On the host
 * device layer with a topology file, local rank i plays the file's GPU i (simulation of
 * that node, for tests and for coll_gpu_info). */
static void cg_comm_summarize(cg_comm_t *c, const cg_rank_info_t *infos, const int *ranks)
{
    const cg_topo_t *topo = cg_topo_process(c->config.topo_file);
    const char      *bus[CG_INTRA_MAX];
    int              simulate = topo && topo->num_gpus > 0 && c->dev->kind == CG_DEV_KIND_HOST &&
                                c->config.topo_file && c->config.topo_file[0];

    for (int i = 0; i < c->local_size && i < CG_INTRA_MAX; i++) {
        bus[i] = simulate ? topo->gpu[i % topo->num_gpus].bus_id : infos[ranks[i]].intra.pci_bus_id;
    }
    cg_topo_summarize(topo, bus, CG_MIN(c->local_size, CG_INTRA_MAX), &c->topo);
}

static cg_status_t cg_comm_connect_local(cg_comm_t *c, const cg_rank_info_t *infos)
{
    const int            me = c->config.rank;
    int                  ranks[CG_INTRA_MAX];
    cg_intra_peer_info_t peers[CG_INTRA_MAX];

    c->local_size = 0;
    for (int r = 0; r < c->config.size; r++) {
        if (c->node_of[r] != c->node_of[me]) {
            continue;
        }
        if (r == me) {
            c->local_rank = c->local_size;
        }
        if (c->local_size < CG_INTRA_MAX) {
            ranks[c->local_size] = r;
            peers[c->local_size] = infos[r].intra;
        }
        c->local_size++;
    }
    cg_comm_summarize(c, infos, ranks);
    if (c->local_size == 1) {
        cg_intra_destroy(c->intra);
        c->intra = NULL;
        return CG_OK;
    }
    if (c->local_size > CG_INTRA_MAX) {
        cg_warn(CG_SUB_INIT, "%d ranks on one node: more than %d, the local fast paths are off",
                c->local_size, CG_INTRA_MAX);
        return CG_ERR_UNSUPPORTED;
    }
    return cg_intra_connect(c->intra, ranks, peers, c->local_size, c->local_rank,
                            (cg_sync_mode_t)c->config.sync);
}

cg_status_t cg_comm_create(cg_dev_t *dev, const cg_oob_t *oob, const cg_comm_config_t *config,
                           cg_comm_t **comm_out)
{
    cg_intra_config_t intra_config = {config->scratch_bytes, (cg_sync_mode_t)config->sync,
                                      config->timeout_s, (cg_copy_method_t)config->copy};
    cg_rank_info_t    mine, *infos = NULL;
    cg_rank_result_t  result, *results = NULL;
    cg_comm_t        *c;
    cg_status_t       status, exchange;
    int               ok, leader = -1;

    c = calloc(1, sizeof(*c));
    memset(&mine, 0, sizeof(mine));
    if (c == NULL) {
        return CG_ERR_NO_MEMORY; /* every rank is in the same situation only by luck: the
                                    caller aborts the fast path for this communicator */
    }
    c->dev     = dev;
    c->config  = *config;
    c->node_of = calloc((size_t)config->size, sizeof(int));
    infos      = calloc((size_t)config->size, sizeof(*infos));
    results    = calloc((size_t)config->size, sizeof(*results));
    gethostname(mine.host, sizeof(mine.host) - 1);
    status = (c->node_of && infos && results) ? CG_OK : CG_ERR_NO_MEMORY;
    if (status == CG_OK) {
        status = cg_intra_prepare(dev, &intra_config, &c->intra, &mine.intra);
    }
    mine.intra.status = status;

    /* Everyone joins both exchanges, whatever happened locally. */
    exchange = oob->allgather(oob->ctx, &mine, infos, sizeof(mine));
    if (exchange == CG_OK && status == CG_OK) {
        cg_comm_group_nodes(c, infos);
        status = cg_comm_connect_local(c, infos);
    }
    memset(&result, 0, sizeof(result));
    result.ok   = (exchange == CG_OK && status == CG_OK);
    result.topo = c->topo;
    ok          = result.ok;
    exchange    = oob->allgather(oob->ctx, &result, results, sizeof(result));
    for (int r = 0; exchange == CG_OK && r < config->size; r++) {
        ok &= results[r].ok;
        if (ok && leader < 0 && c->node_of[r] == c->node_of[config->rank]) {
            leader = r; /* the node's first rank: its summary is the node's */
        }
    }
    if (exchange == CG_OK && ok && leader >= 0) {
        c->topo = results[leader].topo;
    }
    free(infos);
    free(results);
    if (exchange != CG_OK || !ok) {
        cg_warn(CG_SUB_INIT, "fast-path setup failed on some rank (here: %s): staged path",
                cg_status_string(status));
        cg_comm_destroy(c);
        return exchange != CG_OK ? exchange : (status != CG_OK ? status : CG_ERR_PEER);
    }
    if (c->intra != NULL) {
        cg_intra_seal(c->intra);
        for (int i = 0; i < c->local_size; i++) {
            c->intra->ring[i] = c->topo.ring[i];
            if (c->topo.ring[i] == c->local_rank) {
                c->intra->ring_pos = i;
            }
        }
    }
    cg_detail(CG_SUB_TOPO, "node topology %s (%s); ring order starts %d,%d; rail %s",
              cg_topo_class_name(c->topo.cls), c->topo.reason, c->topo.ring[0],
              c->topo.ring[c->local_size > 1 ? 1 : 0],
              c->topo.rail[c->local_rank][0] ? c->topo.rail[c->local_rank] : "none");
    cg_detail(CG_SUB_INIT, "context: %d ranks on %d nodes, %d on this node (local rank %d)",
              config->size, c->num_nodes, c->local_size, c->local_rank);
    *comm_out = c;
    return CG_OK;
}

void cg_comm_destroy(cg_comm_t *c)
{
    if (c == NULL) {
        return;
    }
    cg_intra_destroy(c->intra);
    free(c->node_of);
    free(c);
}

void cg_comm_shape(const cg_comm_t *c, cg_shape_t *shape)
{
    shape->size       = c->config.size;
    shape->num_nodes  = c->num_nodes;
    shape->local_size = c->local_size;
    shape->max_local  = c->max_local;
    shape->intra_ok   = !c->failed && (c->local_size == 1 || (c->intra && !c->intra->failed));
    shape->topo_class = c->topo.cls;
}

const cg_topo_summary_t *cg_comm_topo(const cg_comm_t *c)
{
    return &c->topo;
}

int cg_comm_failed(const cg_comm_t *c)
{
    return c->failed || (c->intra != NULL && c->intra->failed);
}

static cg_status_t cg_comm_done(cg_comm_t *c, cg_status_t status)
{
    if (status != CG_OK) {
        c->failed = 1;
    }
    return status;
}

cg_status_t cg_comm_allreduce(cg_comm_t *c, const cg_plan_t *plan, const void *sbuf, void *rbuf,
                              size_t count, cg_dtype_t dtype, cg_op_t op)
{
    switch (plan->alg) {
    case CG_ALG_ONE_SHOT:
        return cg_comm_done(c, cg_allreduce_one_shot(c->intra, sbuf, rbuf, count, dtype, op));
    case CG_ALG_TWO_SHOT:
        return cg_comm_done(c, cg_allreduce_two_shot(c->intra, sbuf, rbuf, count, dtype, op));
    case CG_ALG_RING:
        return cg_comm_done(c, cg_allreduce_ring(c->intra, sbuf, rbuf, count, dtype, op));
    default:
        return CG_ERR_UNSUPPORTED;
    }
}

cg_status_t cg_comm_reduce_scatter(cg_comm_t *c, const cg_plan_t *plan, const void *sbuf,
                                   void *rbuf, const size_t *counts, cg_dtype_t dtype, cg_op_t op)
{
    if (plan->alg != CG_ALG_DIRECT) {
        return CG_ERR_UNSUPPORTED;
    }
    return cg_comm_done(c, cg_reduce_scatter_direct(c->intra, sbuf, rbuf, counts, dtype, op));
}

cg_status_t cg_comm_allgather(cg_comm_t *c, const cg_plan_t *plan, const void *sbuf, void *rbuf,
                              size_t bytes)
{
    if (plan->alg != CG_ALG_DIRECT) {
        return CG_ERR_UNSUPPORTED;
    }
    return cg_comm_done(c, cg_allgather_direct(c->intra, sbuf, rbuf, bytes));
}

cg_status_t cg_comm_bcast(cg_comm_t *c, const cg_plan_t *plan, void *buf, size_t bytes, int root)
{
    if (plan->alg != CG_ALG_DIRECT) {
        return CG_ERR_UNSUPPORTED;
    }
    return cg_comm_done(c, cg_bcast_direct(c->intra, buf, bytes, root));
}
