/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Setting up and tearing down a local group: scratch, control pages, peers' mappings. */
#include "coll/intra/intra.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CG_INTRA_CTL_BYTES 4096

static void cg_intra_reap(int force);

cg_status_t cg_intra_prepare(cg_dev_t *dev, const cg_intra_config_t *config, cg_intra_t **g_out,
                             cg_intra_peer_info_t *info)
{
    cg_intra_t          *group;
    cg_status_t          status;
    void                *ctl;

    cg_intra_reap(0); /* groups of communicators freed earlier whose peers have closed */
    memset(info, 0, sizeof(*info));
    if (cg_dev_abandoned(dev)) {
        return CG_ERR_DEVICE; /* cg_dev_abandon: no new fast paths (their memory would leak) */
    }
    info->proc_id = cg_process_id();
    info->pid     = (int)getpid();
    info->pid_namespace = cg_process_pid_namespace();
    info->status = CG_ERR_INTERNAL;
    group = calloc(1, sizeof(*group));
    if (group == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    group->dev           = dev;
    group->timeout_s     = config->timeout_s;
    group->sync          = config->sync;
    group->copy          = config->copy;
    group->copy_asked    = config->copy;
    /* 3 at least: calls k and k + 2 use the same inbox half with different flags */
    group->ll_period     = config->ll_flag_period >= 3 && config->ll_flag_period < CG_INTRA_LL_PERIOD
                               ? config->ll_flag_period : CG_INTRA_LL_PERIOD;
    group->scratch_bytes = CG_ALIGN_UP(CG_MAX(config->scratch_bytes, (size_t)64 << 10), 4096);
    /* flags, then the LL inbox (a quarter), then the two halves of the pipelined steps */
    group->ll_bytes      = CG_ALIGN_UP(group->scratch_bytes / 4, 4096);
    group->half_bytes    = ((group->scratch_bytes - CG_INTRA_FLAG_BYTES - group->ll_bytes) / 2) &
                           ~(size_t)255;
    *g_out           = group;

    status = dev->ops->stream_create(dev, &group->stream);
    if (status != CG_OK) {
        group->stream = NULL;
        return status;
    }
    if (dev->ops->flag_watch != NULL) {
        dev->ops->flag_watch(dev, group->stream, cg_intra_flag_watch, group);
    }
    status = dev->ops->event_create(dev, &group->event);
    if (status != CG_OK) {
        group->event = NULL;
        return status;
    }
    status = dev->ops->mem_alloc(dev, group->scratch_bytes, (void **)&group->scratch[0]);
    if (status != CG_OK) {
        group->scratch[0] = NULL;
        return status;
    }
    /* flags start at epoch 0, the LL inbox's lines at flag 0 (no call has that flag): one
     * fill, not a copy per page */
    status = dev->ops->fill(dev, group->scratch[0], 0, CG_INTRA_FLAG_BYTES + group->ll_bytes,
                            group->stream);
    status = status == CG_OK ? dev->ops->stream_sync(dev, group->stream) : status;
    if (status != CG_OK) {
        return status;
    }
    status = dev->ops->ipc_export(dev, group->scratch[0], group->scratch_bytes, &info->scratch);
    if (status != CG_OK) {
        cg_error(CG_SUB_IPC, "cannot export the scratch buffer: %s", cg_status_string(status));
        return status;
    }
    status = cg_shm_create(CG_INTRA_CTL_BYTES, group->ctl_name, &ctl);
    if (status != CG_OK) {
        return status;
    }
    group->ctl[0] = ctl;
    snprintf(info->ctl_name, sizeof(info->ctl_name), "%s", group->ctl_name);
    snprintf(info->pci_bus_id, sizeof(info->pci_bus_id), "%s", dev->pci_bus_id);
    info->sync_asked = dev->caps.device_flags ? config->sync : CG_SYNC_HOST;
    info->status = CG_OK;
    return CG_OK;
}

static int cg_intra_gpu_shared; /* cg_intra_gpu_shared_note: once set, for good */

void cg_intra_gpu_shared_note(void)
{
    __atomic_store_n(&cg_intra_gpu_shared, 1, __ATOMIC_RELAXED);
}

int cg_intra_gpu_shared_seen(void)
{
    return __atomic_load_n(&cg_intra_gpu_shared, __ATOMIC_RELAXED);
}

int cg_intra_ll_launch_only(const cg_dev_t *dev)
{
    return cg_intra_gpu_shared_seen() && !dev->caps.mps;
}

static int cg_intra_sync_told; /* the warning below, once per process */
static int cg_intra_no_p2p_told; /* no peer-to-peer access: said once per process */

/* From what every rank asked and can do (the same answer on every rank: a rank waiting on
 * the host while its peers wait on the device would never see their flags): host when any
 * rank asks for it or has no device-side flags (GPUs of a node may differ), device when every
 * rank asks for it, else auto's rule. */
static cg_sync_mode_t cg_intra_resolve_sync(const cg_intra_t *group, const cg_intra_peer_info_t *infos,
                                            int size)
{
    int all_device = 1;

    for (int i = 0; i < size; i++) {
        if (infos[i].sync_asked == CG_SYNC_HOST) {
            return CG_SYNC_HOST;
        }
        all_device &= infos[i].sync_asked == CG_SYNC_DEVICE;
    }
    if (all_device) {
        return CG_SYNC_DEVICE;
    }
    /* auto: device-side waits only when every rank has its own GPU (they run at the same
     * time); ranks sharing a GPU may be time-sliced unless MPS runs, which we cannot see. */
    if (group->dev->kind != CG_DEV_KIND_CUDA) {
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

/* The copy method each group of GPUs timed, for the process's later groups over the same
 * GPUs (the choice depends on the hardware, not on the communicator): a communicator
 * created and freed in a loop times its copies once. Key: the group's GPUs in rank order. */
#define CG_INTRA_COPY_CACHE 16
static pthread_mutex_t cg_intra_copy_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t         key;
    cg_copy_method_t copy;
} cg_intra_copy_cache[CG_INTRA_COPY_CACHE];
static unsigned cg_intra_copy_cached;

static uint64_t cg_intra_copy_key(const cg_intra_peer_info_t *infos, int size, int me)
{
    uint64_t key = 1469598103934665603ull ^ (uint64_t)size ^ ((uint64_t)me << 32); /* FNV-1a */

    for (int p = 0; p < size; p++) {
        for (const char *c = infos[p].pci_bus_id; *c != '\0'; c++) {
            key = (key ^ (uint8_t)*c) * 1099511628211ull;
        }
        key = (key ^ 0xff) * 1099511628211ull;
    }
    return key | 1;
}

static int cg_intra_copy_lookup(uint64_t key, cg_copy_method_t *copy)
{
    int found = 0;

    pthread_mutex_lock(&cg_intra_copy_lock);
    for (unsigned i = 0; i < CG_INTRA_COPY_CACHE && !found; i++) {
        if (cg_intra_copy_cache[i].key == key) {
            *copy = cg_intra_copy_cache[i].copy;
            found = 1;
        }
    }
    pthread_mutex_unlock(&cg_intra_copy_lock);
    return found;
}

static void cg_intra_copy_remember(uint64_t key, cg_copy_method_t copy)
{
    pthread_mutex_lock(&cg_intra_copy_lock);
    cg_intra_copy_cache[cg_intra_copy_cached % CG_INTRA_COPY_CACHE].key  = key;
    cg_intra_copy_cache[cg_intra_copy_cached % CG_INTRA_COPY_CACHE].copy = copy;
    cg_intra_copy_cached++;
    pthread_mutex_unlock(&cg_intra_copy_lock);
}

/* coll_gpu_copy_method auto: time both ways of writing one buffer into every peer (one
 * copy-engine copy per peer, or the multi-destination kernel) on the peers' scratch, and
 * keep the faster (once per process and set of GPUs). The peers are still setting up: their
 * scratch is not in use yet. One destination goes to the copy engine unless the kernel was
 * asked for (cg_intra_copy_multi): the timing does not cover it. */
static cg_status_t cg_intra_pick_copy(cg_intra_t *group, uint64_t key)
{
    const size_t bytes = CG_MIN(group->half_bytes, (size_t)1 << 20);
    char        *dsts[CG_INTRA_MAX];
    double       best[2] = {0, 0};
    int          n = 0;
    cg_status_t  status = CG_OK;

    if (group->copy != CG_COPY_AUTO || group->size < 3 || cg_intra_copy_lookup(key, &group->copy)) {
        return CG_OK;
    }
    for (int p = 0; p < group->size; p++) {
        if (p != group->rank) {
            dsts[n++] = cg_intra_half(group, p, 0);
        }
    }
    for (int m = 0; m < 2 && status == CG_OK; m++) {
        group->copy = m == 0 ? CG_COPY_ENGINE : CG_COPY_KERNEL;
        for (int rep = 0; rep < 4 && status == CG_OK; rep++) { /* the first one warms up */
            double t0 = cg_time_now(), t;
            status    = cg_intra_copy_multi(group, dsts, n, cg_intra_half(group, group->rank, 1), bytes);
            status    = status == CG_OK ? group->dev->ops->stream_sync(group->dev, group->stream) : status;
            t         = CG_MAX(cg_time_now() - t0, 1e-9);
            best[m]   = (rep == 1 || (rep > 1 && t < best[m])) ? t : best[m];
        }
    }
    if (status != CG_OK) {
        return status;
    }
    group->copy = best[0] < best[1] ? CG_COPY_ENGINE : CG_COPY_KERNEL;
    cg_intra_copy_remember(key, group->copy);
    cg_detail(CG_SUB_IPC, "copy to %d peers, %zu bytes each: copy engines %.2f GB/s, kernel "
              "%.2f GB/s: %s", n, bytes, (double)bytes * n / best[0] / 1e9,
              (double)bytes * n / best[1] / 1e9, group->copy == CG_COPY_ENGINE ? "copy engines" : "kernel");
    return CG_OK;
}

cg_status_t cg_intra_connect(cg_intra_t *group, const int *ranks, const cg_intra_peer_info_t *infos,
                             int size, int me, cg_sync_mode_t requested)
{
    char           *own_scratch = group->scratch[0];
    cg_intra_ctl_t *own_ctl     = group->ctl[0];
    cg_status_t     status;

    if (size > CG_INTRA_MAX) {
        return CG_ERR_UNSUPPORTED;
    }
    group->scratch[0] = NULL;
    group->ctl[0]     = NULL;
    group->size       = size;
    group->rank       = me;
    group->scratch[me] = own_scratch;
    group->ctl[me]     = own_ctl;
    for (int p = 0; p < size; p++) {
        group->comm_ranks[p] = ranks[p];
        group->proc_ids[p]   = infos[p].proc_id;
        /* A peer in another PID namespace cannot be watched: 0 disables the check. */
        group->pids[p] = cg_process_watchable(infos[p].pid, infos[p].pid_namespace);
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
        group->ctl[p] = base;
        /* through the process's IPC registry: a stale mapping of this peer over the same
         * range (memory it freed) is closed first, never "already mapped" */
        status = cg_ipc_acquire(group->dev, infos[p].proc_id, &infos[p].scratch, &group->scratch[p],
                                &group->scratch_map[p]);
        if (status != CG_OK) {
            group->scratch[p] = NULL;
            if (status != CG_ERR_UNSUPPORTED) {
                cg_warn(CG_SUB_IPC, "cannot map the scratch buffer of local rank %d (%s)", p,
                        infos[p].pci_bus_id);
            } else if (cg_once(&cg_intra_no_p2p_told)) { /* the layer cannot reach that GPU */
                cg_warn(CG_SUB_IPC, "this rank's GPU (%s) cannot map the memory of local rank "
                        "%d's GPU (%s): no peer-to-peer access between them; collectives on "
                        "device memory of communicators with both run staged",
                        infos[me].pci_bus_id, p, infos[p].pci_bus_id);
            }
            return status;
        }
    }
    group->sync = cg_intra_resolve_sync(group, infos, size);
    if (group->sync != requested && requested != CG_SYNC_AUTO &&
        cg_once(&cg_intra_sync_told)) {
        cg_warn(CG_SUB_IPC, "coll_gpu_intra_sync %s: %s barriers, as some rank of the node asks "
                "or its GPU allows", requested == CG_SYNC_DEVICE ? "device" : "host",
                group->sync == CG_SYNC_DEVICE ? "device" : "host");
    }
    /* the LL inbox: two parities of one slot per rank, whole lines */
    group->ll_slot_bytes = (group->ll_bytes / 2 / (size_t)size) & ~(size_t)255;
    status  = cg_intra_pick_copy(group, cg_intra_copy_key(infos, size, me));
    if (status != CG_OK) {
        return status;
    }
    cg_detail(CG_SUB_IPC, "local group of %d ranks (this is %d), %s barriers, scratch %zu bytes",
              size, me, group->sync == CG_SYNC_DEVICE ? "device" : "host", group->scratch_bytes);
    return CG_OK;
}

void cg_intra_seal(cg_intra_t *group)
{
    if (group->ctl_name[0] != '\0') {
        cg_shm_unlink(group->ctl_name);
        group->ctl_name[0] = '\0';
    }
}

/* Has every peer started its teardown (or died)? Until then a peer may still read this
 * rank's scratch (the tail of the communicator's last call), which must not be freed. */
static int cg_intra_peers_closed(const cg_intra_t *group)
{
    for (int p = 0; p < group->size; p++) {
        if (p != group->rank && group->ctl[p] != NULL &&
            !__atomic_load_n(&group->ctl[p]->closing, __ATOMIC_ACQUIRE) &&
            !cg_intra_peer_dead(group, p)) {
            return 0;
        }
    }
    return 1;
}

static void cg_intra_release(cg_intra_t *group);

/* Groups freed while peers were still in their communicator (MPI_Comm_free does not
 * synchronise, and a rank must not wait for its peers there: they may be blocked in another
 * call that needs this rank). Their memory goes once every peer has closed too, checked
 * whenever a group is set up or torn down; at the end of the process, after a bounded wait. */
static pthread_mutex_t cg_intra_pending_lock = PTHREAD_MUTEX_INITIALIZER;
static cg_intra_t     *cg_intra_pending;
static unsigned long   cg_intra_pending_count;

/* Release the pending groups whose peers have all closed (all of them when force). */
static void cg_intra_reap(int force)
{
    cg_intra_t *ready = NULL, **link;

    pthread_mutex_lock(&cg_intra_pending_lock);
    for (link = &cg_intra_pending; *link != NULL;) {
        cg_intra_t *group = *link;
        if (force || cg_intra_peers_closed(group)) {
            *link       = group->next_pending;
            group->next_pending = ready;
            ready       = group;
            cg_intra_pending_count--;
        } else {
            link = &group->next_pending;
        }
    }
    pthread_mutex_unlock(&cg_intra_pending_lock);
    while (ready != NULL) {
        cg_intra_t *group = ready;
        ready             = group->next_pending;
        cg_intra_release(group);
    }
}

unsigned long cg_intra_pending_groups(void)
{
    return __atomic_load_n(&cg_intra_pending_count, __ATOMIC_RELAXED);
}

void cg_intra_cleanup(void)
{
    double t0 = cg_time_now();

    /* the end of the process: every peer is finishing too (MPI_Finalize) */
    while (__atomic_load_n(&cg_intra_pending_count, __ATOMIC_RELAXED) > 0 && cg_time_now() - t0 < 2.0) {
        cg_intra_reap(0);
        sched_yield();
    }
    if (__atomic_load_n(&cg_intra_pending_count, __ATOMIC_RELAXED) > 0) {
        cg_debug(CG_SUB_IPC, "%lu local groups still open by peers at the end: freed",
                 cg_intra_pending_count);
    }
    cg_intra_reap(1);
}

void cg_intra_destroy(cg_intra_t *group)
{
    if (group == NULL) {
        return;
    }
    cg_intra_reap(0);
    if (group->size > 0 && group->ctl[group->rank] != NULL) {
        __atomic_store_n(&group->ctl[group->rank]->closing, 1, __ATOMIC_RELEASE);
        if (!cg_intra_peers_closed(group)) {
            pthread_mutex_lock(&cg_intra_pending_lock);
            group->next_pending = cg_intra_pending;
            cg_intra_pending    = group;
            cg_intra_pending_count++;
            pthread_mutex_unlock(&cg_intra_pending_lock);
            return;
        }
    }
    cg_intra_release(group);
}

/* The group's device work that never ended (an LL kernel whose abort could not be written,
 * a stream that did not drain after a failure) may still wait and read: freeing what it
 * uses would wait for it for ever (cudaFree waits for the whole device), and so would any
 * other free of the process; unmapping could fault it. The device is marked abandoned
 * (nothing of the component is freed or unmapped from now on); the group's memory, stream,
 * pins and mappings are left; its bracket of peer-waiting work stays open. */
static void cg_intra_abandon(cg_intra_t *group)
{
    cg_dev_abandon(group->dev);
    for (int p = 0; p < CG_INTRA_MAX; p++) {
        if (group->ctl[p] != NULL) {
            cg_shm_detach(group->ctl[p], CG_INTRA_CTL_BYTES);
        }
    }
    cg_intra_seal(group);
    free(group);
}

static void cg_intra_release(cg_intra_t *group)
{
    cg_dev_t *dev = group->dev;

    /* after a reset (cg_dev_lost) the stream and its work are gone: nothing to drain */
    if (group->size > 0 && group->scratch[group->rank] != NULL && !cg_dev_lost(dev)) {
        int drained = !group->ll_kernel_left;
        if (drained && group->sync == CG_SYNC_DEVICE) {
            /* a healthy peer's flag write queued before a failure may have landed after the
             * release: release again, so that freeing memory never waits for the stream */
            cg_intra_release_waits(group);
            drained = cg_intra_drain(group);
        }
        if (!drained) {
            cg_intra_abandon(group);
            return;
        }
    }
    cg_intra_peer_wait_done(group);
    /* the stream first (drained): its LL server leaves now, and the frees below do not
     * wait for it to leave on its own, as every free waits for a kernel */
    if (group->event != NULL) {
        dev->ops->event_destroy(dev, group->event);
        group->event = NULL;
    }
    if (group->stream != NULL) {
        dev->ops->stream_destroy(dev, group->stream);
        group->stream = NULL;
    }
    for (int i = 0; i < group->num_pins; i++) {
        cg_ipc_release(group->pins[i], 0);
    }
    cg_intra_known_clear(group);
    for (int p = 0; p < CG_INTRA_MAX; p++) {
        int own = (group->size == 0) ? (p == 0) : (p == group->rank);
        if (own && group->scratch[p] != NULL) {
            cg_dev_mem_release(dev, group->scratch[p]);
        } else if (!own && group->scratch_map[p] != NULL) {
            cg_ipc_release(group->scratch_map[p], 1); /* the peer frees it now */
        }
        if (group->ctl[p] != NULL) {
            cg_shm_detach(group->ctl[p], CG_INTRA_CTL_BYTES);
        }
    }
    cg_intra_seal(group);
    free(group);
}
