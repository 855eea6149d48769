/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Contexts of freed communicators, kept for the next communicator over the same processes
 * (coll_gpu_context_keep). Applications create and free communicators over the same ranks
 * again and again (MPI_Comm_dup per library call, per solver, per training step); a fresh
 * context costs device memory to allocate and clear, IPC export and import, shared control
 * pages, UCX endpoints and wire-up, and three exchanges. A kept one costs one exchange.
 *
 * Which context: every context has a uid that all its ranks share (rank 0's process id
 * and its serial). A new communicator's rank r offers the kept contexts in which it was
 * rank r of a communicator of the same size and configuration; when every rank offers the
 * same uid, every rank r of the new communicator was rank r of that one: the same
 * processes in the same order, so the context fits as it is. The uid chosen is the first
 * of rank 0's offers that every rank made (the same answer everywhere). Anything else, a
 * new context is made and the kept ones stay (a later communicator may fit them). A kept
 * context planned before this rank's GPU was seen shared without MPS (LL allowed where
 * the GPU's processes take turns) is stale: destroyed here, as an evicted one is, so that
 * no communicator takes it (cg_intra_gpu_shared_seen).
 *
 * Why continuing is safe: a context is kept when its communicator is freed, after this
 * rank's last call on it returned, and taken only when every rank offers it, so every
 * rank has freed it: the new communicator's first call follows the old one's last call
 * on every rank, exactly as the next call on one communicator does (sequence numbers,
 * flags and epochs carry on). The inter-node tags take the new communicator's id.
 */
#include "coll/cg_comm_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CG_KEEP_MAX 16 /* upper bound of coll_gpu_context_keep */

static pthread_mutex_t cg_keep_lock = PTHREAD_MUTEX_INITIALIZER;
static cg_comm_t      *cg_keep_list[CG_KEEP_MAX]; /* oldest first */
static int             cg_keep_count;

typedef struct {
    uint64_t uid[CG_KEEP_MAX][2]; /* {0, 0}: no offer in that slot */
} cg_keep_offer_t;

static int cg_keep_str_equal(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

/* Would a context made with kept's configuration be made the same with config? */
static int cg_keep_fits(const cg_comm_config_t *kept, const cg_comm_config_t *config)
{
    return kept->rank == config->rank && kept->size == config->size &&
           kept->node_size == config->node_size && kept->scratch_bytes == config->scratch_bytes &&
           kept->sync == config->sync && kept->copy == config->copy &&
           kept->timeout_s == config->timeout_s && cg_keep_str_equal(kept->topo_file, config->topo_file) &&
           kept->thread_multi == config->thread_multi && kept->one_shot_max == config->one_shot_max &&
           kept->chunk_bytes == config->chunk_bytes && kept->depth == config->depth &&
           kept->staging == config->staging && kept->lanes == config->lanes &&
           kept->ll_flag_period == config->ll_flag_period &&
           kept->params_digest == config->params_digest;
}

/* Put contexts back (newest last); beyond max the oldest go, destroyed outside the lock. */
static void cg_keep_put(cg_comm_t **comms, int n, int max)
{
    cg_comm_t *evicted[2 * CG_KEEP_MAX];
    int        num_evicted = 0;

    pthread_mutex_lock(&cg_keep_lock);
    for (int i = 0; i < n; i++) {
        if (cg_keep_count == CG_KEEP_MAX) {
            evicted[num_evicted++] = cg_keep_list[0];
            memmove(cg_keep_list, cg_keep_list + 1, (size_t)(CG_KEEP_MAX - 1) * sizeof(cg_keep_list[0]));
            cg_keep_count--;
        }
        cg_keep_list[cg_keep_count++] = comms[i];
    }
    while (cg_keep_count > max) {
        evicted[num_evicted++] = cg_keep_list[0];
        memmove(cg_keep_list, cg_keep_list + 1, (size_t)(cg_keep_count - 1) * sizeof(cg_keep_list[0]));
        cg_keep_count--;
    }
    pthread_mutex_unlock(&cg_keep_lock);
    for (int i = 0; i < num_evicted; i++) {
        cg_detail(CG_SUB_INIT, "kept context %016llx:%llu destroyed (more than %d kept)",
                  (unsigned long long)evicted[i]->uid[0], (unsigned long long)evicted[i]->uid[1], max);
        cg_comm_destroy(evicted[i]);
    }
}

void cg_comm_release(cg_comm_t *comm, int keep_max)
{
    if (comm == NULL) {
        return;
    }
    keep_max = CG_MIN(keep_max, CG_KEEP_MAX);
    if (keep_max <= 0 || cg_comm_failed(comm)) {
        cg_comm_destroy(comm);
        return;
    }
    for (int m = 0; m < CG_MAX_LANES; m++) {
        if (comm->lane[m] != NULL && comm->lane[m]->failed) {
            cg_comm_destroy(comm);
            return;
        }
    }
    comm->oob = (cg_oob_t){NULL, NULL}; /* its communicator is gone */
    cg_comm_unclaim(comm);
    cg_keep_put(&comm, 1, keep_max);
}

/* Planned without time slicing on a time-sliced device (so before this rank's GPU was seen
 * shared, which would have made its own vote time-sliced), and now it is: its plans may
 * let LL spin for turns. */
static int cg_keep_stale(const cg_comm_t *comm)
{
    return comm->dev->caps.time_sliced && !comm->time_sliced && cg_intra_gpu_shared_seen();
}

/* Take this rank's candidates out of the list (a thread freeing another communicator
 * meanwhile cannot evict them), oldest first; destroy the stale ones. */
static int cg_keep_reserve(const cg_comm_config_t *config, cg_comm_t **mine, cg_keep_offer_t *offer)
{
    cg_comm_t *stale[CG_KEEP_MAX];
    int        n = 0, kept = 0, num_stale = 0;

    memset(offer, 0, sizeof(*offer));
    pthread_mutex_lock(&cg_keep_lock);
    for (int i = 0; i < cg_keep_count; i++) {
        cg_comm_t *comm = cg_keep_list[i];
        if (cg_keep_stale(comm)) {
            stale[num_stale++] = comm;
        } else if (cg_keep_fits(&comm->config, config)) {
            offer->uid[n][0] = comm->uid[0];
            offer->uid[n][1] = comm->uid[1];
            mine[n++]        = comm;
        } else {
            cg_keep_list[kept++] = comm;
        }
    }
    cg_keep_count = kept;
    pthread_mutex_unlock(&cg_keep_lock);
    for (int i = 0; i < num_stale; i++) {
        cg_detail(CG_SUB_INIT, "kept context %016llx:%llu destroyed (planned before this rank's "
                  "GPU was seen shared)", (unsigned long long)stale[i]->uid[0],
                  (unsigned long long)stale[i]->uid[1]);
        cg_comm_destroy(stale[i]);
    }
    return n;
}

static int cg_keep_offered(const cg_keep_offer_t *offer, const uint64_t *uid)
{
    for (int i = 0; i < CG_KEEP_MAX; i++) {
        if (offer->uid[i][0] == uid[0] && offer->uid[i][1] == uid[1]) {
            return 1;
        }
    }
    return 0;
}

/* Collective: a kept context that every rank holds, made ready for oob and config (CG_OK),
 * or none (CG_ERR_NOT_FOUND): every rank gets the same answer. */
static cg_status_t cg_comm_keep_take(const cg_oob_t *oob, const cg_comm_config_t *config,
                                     cg_comm_t **comm_out)
{
    cg_comm_t       *mine[CG_KEEP_MAX], *chosen = NULL;
    cg_keep_offer_t  offer, *offers = malloc((size_t)config->size * sizeof(*offers));
    uint64_t         uid[2] = {0, 0};
    int              n   = cg_keep_reserve(config, mine, &offer);
    int              claimed = 0, refused = 0; /* config->comm_id's tag id held here, or not */
    cg_status_t      status;

    /* a kept context with transports takes the new id in its tags: held first (one that
     * another live communicator holds: this rank offers nothing, and its setup fails) */
    for (int i = 0; i < n && !claimed; i++) {
        claimed = mine[i]->inter != NULL;
    }
    if (claimed && cg_inter_tag_claim(config->comm_id) != CG_OK) {
        memset(&offer, 0, sizeof(offer));
        claimed = 0;
        refused = 1;
    }
    /* nothing a freed communicator of the new id left may reach the new one's calls, which
     * no rank can start before this exchange (the workers are the process's: shared) */
    for (int i = 0; i < n && !refused; i++) {
        for (int m = 0; m < CG_MAX_LANES; m++) { /* lane 0 is mine[i]->inter */
            if (mine[i]->lane[m] != NULL) {
                (void)cg_inter_forget(mine[i]->lane[m]->ucx, config->comm_id);
            }
        }
    }
    /* every rank joins the exchange, whatever it holds (without memory for the answers
     * the process is about to fail anyway) */
    status = offers != NULL ? oob->allgather(oob->ctx, &offer, offers, sizeof(offer)) : CG_ERR_NO_MEMORY;
    for (int k = 0; status == CG_OK && uid[0] == 0 && k < CG_KEEP_MAX && offers[0].uid[k][0] != 0; k++) {
        int everyone = 1;
        for (int r = 1; r < config->size && everyone; r++) {
            everyone = cg_keep_offered(&offers[r], offers[0].uid[k]);
        }
        if (everyone) {
            uid[0] = offers[0].uid[k][0];
            uid[1] = offers[0].uid[k][1];
        }
    }
    for (int i = 0; uid[0] != 0 && i < n; i++) {
        if (mine[i]->uid[0] == uid[0] && mine[i]->uid[1] == uid[1]) {
            chosen  = mine[i];
            mine[i] = mine[--n];
            break;
        }
    }
    free(offers);
    cg_keep_put(mine, n, CG_MIN(config->keep_max, CG_KEEP_MAX));
    if (claimed && (chosen == NULL || chosen->inter == NULL)) {
        /* not used here (cg_comm_create holds it again; one node has no tags) */
        cg_inter_tag_release(config->comm_id);
        claimed = 0;
    }
    if (chosen == NULL) {
        return status == CG_OK ? CG_ERR_NOT_FOUND : status;
    }
    chosen->oob            = *oob;
    chosen->config.comm_id = config->comm_id;
    chosen->tag_claimed    = claimed;
    for (int m = 0; m < CG_MAX_LANES; m++) { /* lane 0 is chosen->inter */
        if (chosen->lane[m] != NULL) {
            cg_inter_retag(chosen->lane[m], config->comm_id);
        }
    }
    cg_count(CG_CNT_CONTEXTS_KEPT, 1);
    cg_detail(CG_SUB_INIT, "context %016llx:%llu reused (%d ranks)", (unsigned long long)uid[0],
              (unsigned long long)uid[1], config->size);
    *comm_out = chosen;
    return CG_OK;
}

cg_status_t cg_comm_acquire(cg_dev_t *dev, const cg_oob_t *oob, const cg_comm_config_t *config,
                            cg_comm_t **comm_out)
{
    if (config->keep_max > 0) {
        cg_status_t status = cg_comm_keep_take(oob, config, comm_out);
        if (status != CG_ERR_NOT_FOUND) {
            return status;
        }
    }
    return cg_comm_create(dev, oob, config, comm_out);
}

void cg_comm_keep_drain(void)
{
    cg_keep_put(NULL, 0, 0);
}
