/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Setting up and tearing down a local group: scratch, control pages, peers' mappings. */
#include "coll/intra/intra.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CG_INTRA_CTL_BYTES 4096

cg_status_t cg_intra_prepare(cg_dev_t *dev, const cg_intra_config_t *config, cg_intra_t **g_out,
                             cg_intra_peer_info_t *info)
{
    static const uint8_t zeros[CG_INTRA_FLAG_BYTES];
    cg_intra_t          *g;
    cg_status_t          status;
    void                *ctl;

    memset(info, 0, sizeof(*info));
    info->pid    = (int)getpid();
    info->status = CG_ERR_INTERNAL;
    g = calloc(1, sizeof(*g));
    if (g == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    g->dev           = dev;
    g->timeout_s     = config->timeout_s;
    g->sync          = config->sync;
    g->copy          = config->copy;
    g->scratch_bytes = CG_ALIGN_UP(CG_MAX(config->scratch_bytes, (size_t)64 << 10), 4096);
    g->half_bytes    = ((g->scratch_bytes - CG_INTRA_FLAG_BYTES) / 2) & ~(size_t)255;
    *g_out           = g;

    status = dev->ops->stream_create(dev, &g->stream);
    if (status != CG_OK) {
        g->stream = NULL;
        return status;
    }
    status = dev->ops->event_create(dev, &g->event);
    if (status != CG_OK) {
        g->event = NULL;
        return status;
    }
    status = dev->ops->mem_alloc(dev, g->scratch_bytes, (void **)&g->scratch[0]);
    if (status != CG_OK) {
        g->scratch[0] = NULL;
        return status;
    }
    /* flags start at epoch 0 */
    status = cg_dev_copy_sync(dev, g->scratch[0], zeros, sizeof(zeros), g->stream);
    if (status != CG_OK) {
        return status;
    }
    status = dev->ops->ipc_export(dev, g->scratch[0], g->scratch_bytes, &info->scratch);
    if (status != CG_OK) {
        cg_error(CG_SUB_IPC, "cannot export the scratch buffer: %s", cg_status_string(status));
        return status;
    }
    status = cg_shm_create(CG_INTRA_CTL_BYTES, g->ctl_name, &ctl);
    if (status != CG_OK) {
        return status;
    }
    g->ctl[0] = ctl;
    snprintf(info->ctl_name, sizeof(info->ctl_name), "%s", g->ctl_name);
    snprintf(info->pci_bus_id, sizeof(info->pci_bus_id), "%s", dev->pci_bus_id);
    info->status = CG_OK;
    return CG_OK;
}

static cg_sync_mode_t cg_intra_resolve_sync(const cg_intra_t *g, const cg_intra_peer_info_t *infos,
                                            int size, cg_sync_mode_t requested)
{
    if (requested == CG_SYNC_HOST || !g->dev->caps.device_flags) {
        return CG_SYNC_HOST;
    }
    if (requested == CG_SYNC_DEVICE) {
        return CG_SYNC_DEVICE;
    }
    /* auto: device-side waits only when every rank has its own GPU (they run at the same
     * time); ranks sharing a GPU may be time-sliced unless MPS runs, which we cannot see. */
    if (g->dev->kind != CG_DEV_KIND_CUDA) {
        return CG_SYNC_HOST;
    }
    for (int i = 0; i < size; i++) {
        for (int j = i + 1; j < size; j++) {
            if (strcmp(infos[i].pci_bus_id, infos[j].pci_bus_id) == 0) {
                return CG_SYNC_HOST;
            }
        }
    }
    return CG_SYNC_DEVICE;
}

/* coll_gpu_copy_method auto: time both ways of writing one buffer into every peer (one
 * copy-engine copy per peer, or the multi-destination kernel) on the peers' scratch, and
 * keep the faster. The peers are still setting up: their scratch is not in use yet. One
 * destination always goes to the copy engine (cg_intra_copy_multi). */
static cg_status_t cg_intra_pick_copy(cg_intra_t *g)
{
    const size_t bytes = CG_MIN(g->half_bytes, (size_t)1 << 20);
    char        *dsts[CG_INTRA_MAX];
    double       best[2] = {0, 0};
    int          n = 0;
    cg_status_t  status = CG_OK;

    if (g->copy != CG_COPY_AUTO || g->size < 3) {
        return CG_OK;
    }
    for (int p = 0; p < g->size; p++) {
        if (p != g->rank) {
            dsts[n++] = cg_intra_half(g, p, 0);
        }
    }
    for (int m = 0; m < 2 && status == CG_OK; m++) {
        g->copy = m == 0 ? CG_COPY_ENGINE : CG_COPY_KERNEL;
        for (int rep = 0; rep < 4 && status == CG_OK; rep++) { /* the first one warms up */
            double t0 = cg_time_now(), t;
            status    = cg_intra_copy_multi(g, dsts, n, cg_intra_half(g, g->rank, 1), bytes);
            status    = status == CG_OK ? g->dev->ops->stream_sync(g->dev, g->stream) : status;
            t         = CG_MAX(cg_time_now() - t0, 1e-9);
            best[m]   = (rep == 1 || (rep > 1 && t < best[m])) ? t : best[m];
        }
    }
    if (status != CG_OK) {
        return status;
    }
    g->copy = best[0] < best[1] ? CG_COPY_ENGINE : CG_COPY_KERNEL;
    cg_detail(CG_SUB_IPC, "copy to %d peers, %zu bytes each: copy engines %.2f GB/s, kernel "
              "%.2f GB/s: %s", n, bytes, (double)bytes * n / best[0] / 1e9,
              (double)bytes * n / best[1] / 1e9, g->copy == CG_COPY_ENGINE ? "copy engines" : "kernel");
    return CG_OK;
}

cg_status_t cg_intra_connect(cg_intra_t *g, const int *ranks, const cg_intra_peer_info_t *infos,
                             int size, int me, cg_sync_mode_t requested)
{
    char           *own_scratch = g->scratch[0];
    cg_intra_ctl_t *own_ctl     = g->ctl[0];
    cg_status_t     status;

    if (size > CG_INTRA_MAX) {
        return CG_ERR_UNSUPPORTED;
    }
    g->scratch[0] = NULL;
    g->ctl[0]     = NULL;
    g->size       = size;
    g->rank       = me;
    g->scratch[me] = own_scratch;
    g->ctl[me]     = own_ctl;
    for (int p = 0; p < size; p++) {
        g->comm_ranks[p] = ranks[p];
        /* A peer in another PID namespace cannot be watched: 0 disables the check. */
        g->pids[p] = cg_process_alive(infos[p].pid) ? infos[p].pid : 0;
        if (infos[p].status != CG_OK) {
            return CG_ERR_PEER;
        }
    }
    for (int p = 0; p < size; p++) {
        void *base;
        if (p == me) {
            continue;
        }
        status = cg_shm_attach(infos[p].ctl_name, CG_INTRA_CTL_BYTES, &base);
        if (status != CG_OK) {
            return status;
        }
        g->ctl[p] = base;
        status = g->dev->ops->ipc_import(g->dev, &infos[p].scratch, &base);
        if (status != CG_OK) {
            cg_warn(CG_SUB_IPC, "cannot map the scratch buffer of local rank %d (%s)", p,
                    infos[p].pci_bus_id);
            return status;
        }
        g->scratch_map[p] = base;
        g->scratch[p]     = (char *)base + infos[p].scratch.offset;
    }
    g->sync = cg_intra_resolve_sync(g, infos, size, requested);
    status  = cg_ipc_cache_create(g->dev, size, 64, &g->cache);
    if (status == CG_OK) {
        status = cg_intra_pick_copy(g);
    }
    if (status != CG_OK) {
        return status;
    }
    cg_detail(CG_SUB_IPC, "local group of %d ranks (this is %d), %s barriers, scratch %zu bytes",
              size, me, g->sync == CG_SYNC_DEVICE ? "device" : "host", g->scratch_bytes);
    return CG_OK;
}

void cg_intra_seal(cg_intra_t *g)
{
    if (g->ctl_name[0] != '\0') {
        cg_shm_unlink(g->ctl_name);
        g->ctl_name[0] = '\0';
    }
}

/* Wait until every peer has started its teardown (or died), so that nobody still reads
 * this rank's scratch when it is freed. Bounded: a peer that never tears down costs 30 s. */
static void cg_intra_wait_closing(cg_intra_t *g)
{
    double t0 = cg_time_now();

    __atomic_store_n(&g->ctl[g->rank]->closing, 1, __ATOMIC_RELEASE);
    for (int p = 0; p < g->size; p++) {
        while (p != g->rank && g->ctl[p] != NULL &&
               !__atomic_load_n(&g->ctl[p]->closing, __ATOMIC_ACQUIRE)) {
            if ((g->pids[p] != 0 && !cg_process_alive(g->pids[p])) || cg_time_now() - t0 > 30.0) {
                cg_warn(CG_SUB_IPC, "local rank %d did not tear down its group in time", p);
                break;
            }
            sched_yield();
        }
    }
}

void cg_intra_destroy(cg_intra_t *g)
{
    cg_dev_t *dev;

    if (g == NULL) {
        return;
    }
    dev = g->dev;
    if (g->size > 0 && g->ctl[g->rank] != NULL) {
        cg_intra_wait_closing(g);
    }
    if (g->sync == CG_SYNC_DEVICE && g->size > 0 && g->scratch[g->rank] != NULL) {
        /* a healthy peer's flag write queued before a failure may have landed after the
         * release: release again, so that freeing memory never waits for the stream */
        cg_intra_release_waits(g);
        (void)dev->ops->stream_sync(dev, g->stream);
    }
    cg_ipc_cache_destroy(g->cache);
    for (int p = 0; p < CG_INTRA_MAX; p++) {
        int own = (g->size == 0) ? (p == 0) : (p == g->rank);
        if (g->scratch[p] != NULL) {
            if (own) {
                dev->ops->mem_free(dev, g->scratch[p]);
            } else if (g->scratch_map[p] != NULL) {
                dev->ops->ipc_close(dev, g->scratch_map[p]);
            }
        }
        if (g->ctl[p] != NULL) {
            cg_shm_detach(g->ctl[p], CG_INTRA_CTL_BYTES);
        }
    }
    cg_intra_seal(g);
    if (g->event != NULL) {
        dev->ops->event_destroy(dev, g->event);
    }
    if (g->stream != NULL) {
        dev->ops->stream_destroy(dev, g->stream);
    }
    free(g);
}
