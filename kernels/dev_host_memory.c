/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Host device layer: memory and IPC, in its two modes (see dev_host.c): strict, the
 * simulated GPU's memory and IPC; lenient, host memory, the layer's own allocations in
 * POSIX shared memory.
 */
#include "kernels/dev_host_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(cg_sim_ipc_handle_t) <= CG_IPC_HANDLE_BYTES, "IPC handle too large");

/* The CPU address of [ptr, ptr + bytes) as the device sees it, for a copy engine (kernel
 * 0) or a kernel (kernel 1: reductions, fills, flag operations, LL lines). Strict mode
 * translates simulated device memory and fails where a GPU would fault: a range that
 * overruns an allocation (an illegal address), and for a kernel, another device's memory
 * (no peer access) or host memory that is not page-locked (not mapped for the device; a
 * copy reaches any host memory). Lenient mode uses the pointer itself. After a reset
 * (cg_dev_lost) nothing: no device work runs any more. */
static cg_status_t cg_host_resolve_as(cg_dev_t *dev, const void *ptr, size_t bytes, int kernel,
                                      void **out)
{
    const cg_sim_api_t *sim = cg_host_impl(dev)->sim;
    cg_sim_attr_t       attr;

    *out = (void *)ptr;
    if (cg_dev_lost(dev)) {
        return CG_ERR_DEVICE;
    }
    if (sim == NULL || bytes == 0) {
        return CG_OK;
    }
    *out = kernel ? NULL : sim->access(ptr, bytes); /* a copy's common case first */
    if (*out != NULL) {
        return CG_OK;
    }
    if (sim->query(ptr, &attr) != CG_SIM_OK) { /* host memory */
        *out = (void *)ptr;
        if (kernel && sim->host_query(ptr, bytes) != CG_SIM_OK) {
            cg_error(CG_SUB_DEV, "illegal address: a kernel reaches %zu bytes of pageable host "
                     "memory at %p (only page-locked memory is mapped for the device)", bytes, ptr);
            return CG_ERR_DEVICE;
        }
        return CG_OK;
    }
    if (kernel && attr.device != dev->ordinal) {
        cg_error(CG_SUB_DEV, "illegal address: a kernel of device %d reaches device %d's "
                 "memory at %p (no peer access)", dev->ordinal, attr.device, ptr);
        return CG_ERR_DEVICE;
    }
    *out = kernel ? sim->access(ptr, bytes) : NULL;
    if (*out != NULL) {
        return CG_OK;
    }
    cg_error(CG_SUB_DEV, "illegal address: %zu bytes at %p overrun the device allocation "
             "[%#lx, +%zu)", bytes, ptr, (unsigned long)attr.base, attr.size);
    return CG_ERR_DEVICE;
}

cg_status_t cg_host_resolve(cg_dev_t *dev, const void *ptr, size_t bytes, void **out)
{
    return cg_host_resolve_as(dev, ptr, bytes, 0, out);
}

cg_status_t cg_host_resolve_kernel(cg_dev_t *dev, const void *ptr, size_t bytes, void **out)
{
    return cg_host_resolve_as(dev, ptr, bytes, 1, out);
}

/* ---- lenient mode's shared-memory allocations ------------------------------------------ */
static void cg_host_region_add(cg_dev_host_t *host, cg_host_region_t *r)
{
    pthread_mutex_lock(&host->lock);
    r->next    = host->regions;
    host->regions = r;
    pthread_mutex_unlock(&host->lock);
}

/* Remove the region starting at ptr from the list and return it (NULL if unknown). */
static cg_host_region_t *cg_host_region_take(cg_dev_host_t *host, void *ptr)
{
    cg_host_region_t **pp, *r = NULL;

    pthread_mutex_lock(&host->lock);
    for (pp = &host->regions; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->ptr == ptr) {
            r   = *pp;
            *pp = r->next;
            break;
        }
    }
    pthread_mutex_unlock(&host->lock);
    return r;
}

/* Unique id of a shared-memory object: its device and inode. */
static uint64_t cg_host_shm_id(const char *name)
{
    char        path[128];
    struct stat st;

    snprintf(path, sizeof(path), "/dev/shm%s", name);
    if (stat(path, &st) != 0) {
        return 0;
    }
    return ((uint64_t)st.st_dev << 40) ^ (uint64_t)st.st_ino;
}

static void cg_host_region_free(cg_host_region_t *r)
{
    cg_shm_detach(r->ptr, r->size);
    if (!r->imported) {
        cg_shm_unlink(r->name);
    }
    free(r);
}

void cg_host_regions_free(cg_dev_host_t *host)
{
    while (host->regions != NULL) {
        cg_host_region_t *r = host->regions;
        host->regions       = r->next;
        cg_host_region_free(r);
    }
}

/* ---- memory ------------------------------------------------------------------------------ */
cg_status_t cg_host_mem_query(cg_dev_t *dev, const void *ptr, cg_mem_attr_t *attr)
{
    cg_dev_host_t *host = cg_host_impl(dev);
    cg_sim_attr_t  sim_attr;

    memset(attr, 0, sizeof(*attr));
    attr->kind   = CG_MEM_HOST;
    attr->device = -1;
    if (ptr == NULL) {
        return CG_OK;
    }
    cg_count(CG_CNT_MEM_QUERIES, 1); /* what a GPU pays as a driver call */
    if (host->sim != NULL) {
        if (host->sim->query(ptr, &sim_attr) == CG_SIM_OK) {
            attr->kind      = CG_MEM_DEVICE;
            attr->device    = sim_attr.device;
            attr->base      = sim_attr.base;
            attr->size      = sim_attr.size;
            attr->buffer_id = sim_attr.buffer_id;
            /* as the driver reports them: pool and cuMemCreate memory has no context,
             * cudaMalloc memory and legacy IPC mappings the primary one */
            attr->foreign = cg_dev_mem_is_foreign(
                attr->device,
                (sim_attr.flags & (CG_SIM_ALLOC_POOL | CG_SIM_ALLOC_VMM)) ? 0
                                                                         : CG_HOST_PRIMARY_CONTEXT,
                dev->ordinal, CG_HOST_PRIMARY_CONTEXT);
        }
        return CG_OK;
    }
    if (!host->classify_as_host) {
        attr->kind   = CG_MEM_DEVICE;
        attr->device = 0;
    }
    return CG_OK;
}

cg_status_t cg_host_mem_alloc(cg_dev_t *dev, size_t size, void **ptr)
{
    cg_dev_host_t    *host = cg_host_impl(dev);
    cg_host_region_t *r;
    cg_status_t       status;
    int               rc;

    if (cg_dev_lost(dev)) {
        return CG_ERR_DEVICE;
    }
    if (host->sim != NULL) {
        rc = host->sim->malloc_fn(ptr, size, CG_SIM_ALLOC_DEFAULT);
        if (rc != CG_SIM_OK) {
            cg_error(CG_SUB_DEV, "simulated device allocation of %zu bytes failed: %s", size,
                     host->sim->status_string(rc));
            return rc == CG_SIM_ERR_NO_MEMORY ? CG_ERR_NO_MEMORY : CG_ERR_DEVICE;
        }
        return CG_OK;
    }
    r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    size   = size ? size : 1;
    status = cg_shm_create(size, r->name, &r->ptr);
    if (status != CG_OK) {
        free(r);
        return status;
    }
    r->size      = size;
    r->buffer_id = cg_host_shm_id(r->name);
    cg_host_region_add(host, r);
    *ptr = r->ptr;
    return CG_OK;
}

/* ---- frees wait for the device's work, as on a GPU ------------------------------------------ */
/* Of host->peer_waits, the calling thread's: a count of its own (one small allocation per
 * thread that ever queued such work, never freed), so that a wait another thread stops (a
 * drain at teardown) never writes into a thread that ended. */
static __thread unsigned *cg_host_own_peer_waits;
static unsigned           cg_host_no_count; /* when the thread's count cannot be had */

static unsigned *cg_host_own_count(void)
{
    if (cg_host_own_peer_waits == NULL) {
        cg_host_own_peer_waits = calloc(1, sizeof(unsigned));
    }
    return cg_host_own_peer_waits != NULL ? cg_host_own_peer_waits : &cg_host_no_count;
}

unsigned *cg_host_peer_wait_start(cg_dev_host_t *host)
{
    return cg_host_peer_wait_start_for(host, cg_host_own_count());
}

unsigned *cg_host_peer_wait_start_for(cg_dev_host_t *host, unsigned *owner)
{
    __atomic_add_fetch(&host->peer_waits, 1, __ATOMIC_ACQ_REL);
    __atomic_add_fetch(owner, 1, __ATOMIC_RELAXED);
    return owner;
}

void cg_host_peer_wait_stop(cg_dev_host_t *host, unsigned *owner)
{
    __atomic_sub_fetch(owner, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&host->peer_waits, 1, __ATOMIC_ACQ_REL);
}

void cg_host_wait_below(const unsigned *count, const unsigned *floor, const char *waiter,
                        const char *what, const char *then)
{
    cg_pace_t pace = {.quiet = 1}; /* inside a free, a reset: driver calls */
    double    t0   = 0;

    while (__atomic_load_n(count, __ATOMIC_ACQUIRE) > (floor ? __atomic_load_n(floor, __ATOMIC_RELAXED) : 0)) {
        if (cg_pace(&pace)) {
            t0 = t0 ? t0 : cg_time_now();
            if (cg_time_now() - t0 > CG_HOST_FLAG_TIMEOUT) {
                cg_error(CG_SUB_DEV, "%s waited %d s for %s: %s", waiter, CG_HOST_FLAG_TIMEOUT,
                         what, then);
                return;
            }
        }
    }
}

/* cudaFree and cudaFreeHost wait for all of the device's work: here, in strict mode, for
 * what waits for peers (cg_dev_host_t peer_waits: another thread's, and flag waits queued
 * on any stream, which the progress thread runs; not an LL wait of the calling thread,
 * which only its polls run), an error and a stall; then, in both modes, for the rest of the
 * work queued on streams (behind a wait, or slow: coll_gpu_debug_host_slow), which ends on
 * its own. */
static void cg_host_free_wait(cg_dev_host_t *host)
{
    const unsigned *own = cg_host_own_count();

    if (host->sim != NULL && __atomic_load_n(&host->peer_waits, __ATOMIC_ACQUIRE) >
                                 __atomic_load_n(own, __ATOMIC_RELAXED)) {
        cg_count(CG_CNT_FREE_STALLS, 1);
        cg_error(CG_SUB_DEV, "a free waits for device work that waits for peers (another "
                 "thread's, or a queued flag wait; on a GPU cudaFree would wait for it too, "
                 "maybe for ever)");
        cg_host_wait_below(&host->peer_waits, own, "a free", "device work that waits for peers",
                           "freeing");
    }
    cg_host_wait_below(&host->queued_ops, NULL, "a free", "work queued on streams", "freeing");
    cg_host_wait_below(&host->servers, NULL, "a free", "LL servers to leave", "freeing");
}

void cg_host_mem_free(cg_dev_t *dev, void *ptr)
{
    cg_dev_host_t    *host = cg_host_impl(dev);
    cg_host_region_t *r;

    cg_host_free_wait(host);
    if (host->sim != NULL) {
        if (ptr != NULL && host->sim->free_fn(ptr) != CG_SIM_OK) {
            cg_error(CG_SUB_DEV, "freeing simulated device memory %p failed", ptr);
        }
        return;
    }
    r = cg_host_region_take(host, ptr);
    if (r != NULL) {
        cg_host_region_free(r);
    }
}

/* Strict mode: the simulated GPU's page-locked memory, which a reset takes away as the
 * rest (the CPU faults at its next touch); lenient mode: the heap. */
cg_status_t cg_host_host_alloc(cg_dev_t *dev, size_t size, void **ptr)
{
    const cg_dev_host_t *host = cg_host_impl(dev);

    if (cg_dev_lost(dev)) {
        return CG_ERR_DEVICE;
    }
    if (host->pinned_max > 0 && size > host->pinned_max) {
        cg_debug(CG_SUB_DEV, "page-locked allocation of %zu bytes refused "
                 "(coll_gpu_debug_host_pinned_max %zu)", size, host->pinned_max);
        return CG_ERR_NO_MEMORY;
    }
    if (host->sim != NULL) {
        return host->sim->host_alloc_fn(ptr, size) == CG_SIM_OK ? CG_OK : CG_ERR_NO_MEMORY;
    }
    return posix_memalign(ptr, 64, size ? size : 1) == 0 ? CG_OK : CG_ERR_NO_MEMORY;
}

void cg_host_host_free(cg_dev_t *dev, void *ptr)
{
    const cg_dev_host_t *host = cg_host_impl(dev);

    cg_host_free_wait(cg_host_impl(dev));
    if (host->sim == NULL) {
        free(ptr);
    } else if (ptr != NULL && host->sim->host_free_fn(ptr) != CG_SIM_OK) {
        cg_error(CG_SUB_DEV, "freeing simulated page-locked memory %p failed", ptr);
    }
}

/* ---- IPC ----------------------------------------------------------------------------------- */
/* Simulated VMM memory, as cuMemCreate memory: a descriptor of it, kept open until the
 * peers have taken their copies (cg_dev_ipc_export_done). */
static cg_status_t cg_host_vmm_export(cg_dev_host_t *host, const void *ptr,
                                      const cg_sim_attr_t *attr, cg_ipc_handle_t *handle)
{
    cg_fd_ref_t ref;
    int         fd = -1, rc;

    if (!cg_fd_share_usable()) {
        return CG_ERR_UNSUPPORTED;
    }
    rc = host->sim->vmm_export(&fd, ptr);
    if (rc != CG_SIM_OK || cg_fd_share_ref(fd, &ref) != CG_OK) {
        cg_debug(CG_SUB_IPC, "cannot export %p: %s", ptr, host->sim->status_string(rc));
        if (fd >= 0) {
            close(fd);
        }
        return CG_ERR_UNSUPPORTED;
    }
    handle->buffer_id = attr->buffer_id;
    handle->base      = attr->base;
    handle->size      = attr->size;
    handle->offset    = (uint64_t)((uintptr_t)ptr - attr->base);
    handle->share     = CG_IPC_SHARE_FD;
    memcpy(handle->opaque, &ref, sizeof(ref));
    return CG_OK;
}

static cg_status_t cg_host_vmm_import(cg_dev_host_t *host, const cg_ipc_handle_t *handle,
                                      void **base)
{
    cg_fd_ref_t ref;
    cg_status_t status;
    int         fd, rc;

    memcpy(&ref, handle->opaque, sizeof(ref));
    status = cg_fd_share_fetch(&ref, &fd);
    if (status != CG_OK) {
        return status;
    }
    rc = host->sim->vmm_import(base, fd, (size_t)handle->size, handle->buffer_id);
    close(fd); /* the mapping keeps the memory */
    if (rc != CG_SIM_OK) {
        cg_error(CG_SUB_IPC, "mapping buffer %#lx of process %d: %s",
                 (unsigned long)handle->buffer_id, (int)ref.pid, host->sim->status_string(rc));
        return rc == CG_SIM_ERR_NO_MEMORY ? CG_ERR_NO_MEMORY : CG_ERR_DEVICE;
    }
    return CG_OK;
}

static cg_status_t cg_host_sim_export(cg_dev_host_t *host, const void *ptr, size_t size,
                                      cg_ipc_handle_t *handle)
{
    cg_sim_ipc_handle_t sim_handle;
    cg_sim_attr_t       attr;
    int                 rc;

    if (host->sim->query(ptr, &attr) != CG_SIM_OK || attr.imported ||
        (uintptr_t)ptr + size > attr.base + attr.size) {
        return CG_ERR_UNSUPPORTED; /* host memory, a peer's memory: not exportable */
    }
    if (attr.flags & CG_SIM_ALLOC_VMM) {
        return cg_host_vmm_export(host, ptr, &attr, handle);
    }
    rc = host->sim->ipc_get_handle(&sim_handle, (const void *)attr.base);
    if (rc != CG_SIM_OK) {
        cg_debug(CG_SUB_IPC, "cannot export %p: %s", ptr, host->sim->status_string(rc));
        return CG_ERR_UNSUPPORTED;
    }
    handle->buffer_id = sim_handle.buffer_id;
    handle->base      = sim_handle.base;
    handle->size      = sim_handle.size;
    handle->offset    = (uint64_t)((uintptr_t)ptr - attr.base);
    memcpy(handle->opaque, &sim_handle, sizeof(sim_handle));
    return CG_OK;
}

cg_status_t cg_host_ipc_export(cg_dev_t *dev, const void *ptr, size_t size,
                                      cg_ipc_handle_t *handle)
{
    cg_dev_host_t        *host = cg_host_impl(dev);
    cg_host_ipc_opaque_t *o = (cg_host_ipc_opaque_t *)handle->opaque;
    cg_host_region_t     *r;
    cg_status_t           status = CG_ERR_UNSUPPORTED;

    memset(handle, 0, sizeof(*handle));
    if (cg_dev_lost(dev)) {
        return CG_ERR_DEVICE;
    }
    if (host->sim != NULL) {
        return cg_host_sim_export(host, ptr, size, handle);
    }
    /* lenient: the layer's own allocations only */
    pthread_mutex_lock(&host->lock);
    for (r = host->regions; r != NULL; r = r->next) {
        if (!r->imported && (const char *)ptr >= (char *)r->ptr &&
            (const char *)ptr + size <= (char *)r->ptr + r->size) {
            handle->buffer_id = r->buffer_id;
            handle->base      = (uint64_t)(uintptr_t)r->ptr;
            handle->size      = r->size;
            handle->offset    = (uint64_t)((const char *)ptr - (char *)r->ptr);
            snprintf(o->name, sizeof(o->name), "%s", r->name);
            status = CG_OK;
            break;
        }
    }
    pthread_mutex_unlock(&host->lock);
    return status;
}

static cg_status_t cg_host_sim_import(cg_dev_host_t *host, const cg_ipc_handle_t *handle,
                                      void **base)
{
    cg_sim_ipc_handle_t sim_handle;
    int                 rc;

    memcpy(&sim_handle, handle->opaque, sizeof(sim_handle));
    rc = host->sim->ipc_open(base, &sim_handle);
    switch (rc) {
    case CG_SIM_OK:
        return CG_OK;
    case CG_SIM_ERR_ALREADY_MAPPED:
        cg_debug(CG_SUB_IPC, "opening buffer %#lx of process %d: already mapped",
                 (unsigned long)handle->buffer_id, (int)sim_handle.owner_pid);
        return CG_ERR_ALREADY_MAPPED;
    case CG_SIM_ERR_GONE:
        cg_error(CG_SUB_IPC, "opening buffer %#lx of process %d: %s",
                 (unsigned long)handle->buffer_id, (int)sim_handle.owner_pid,
                 host->sim->status_string(rc));
        return CG_ERR_PEER;
    default:
        cg_error(CG_SUB_IPC, "opening buffer %#lx of process %d: %s",
                 (unsigned long)handle->buffer_id, (int)sim_handle.owner_pid,
                 host->sim->status_string(rc));
        return rc == CG_SIM_ERR_NO_MEMORY ? CG_ERR_NO_MEMORY : CG_ERR_DEVICE;
    }
}

cg_status_t cg_host_ipc_import(cg_dev_t *dev, const cg_ipc_handle_t *handle, void **base)
{
    cg_dev_host_t              *host = cg_host_impl(dev);
    const cg_host_ipc_opaque_t *o = (const cg_host_ipc_opaque_t *)handle->opaque;
    cg_host_region_t           *r;
    cg_status_t                 status;

    if (cg_dev_lost(dev)) {
        return CG_ERR_DEVICE;
    }
    if (host->no_p2p) { /* as the CUDA layer reports a GPU it cannot reach */
        cg_debug(CG_SUB_IPC, "buffer %#llx of a peer: no peer-to-peer access (testing)",
                 (unsigned long long)handle->buffer_id);
        return CG_ERR_UNSUPPORTED;
    }
    if (host->sim != NULL) {
        return handle->share == CG_IPC_SHARE_FD ? cg_host_vmm_import(host, handle, base)
                                                : cg_host_sim_import(host, handle, base);
    }
    if (handle->buffer_id == 0 || o->name[0] != '/') {
        cg_error(CG_SUB_IPC, "not a host-layer IPC handle");
        return CG_ERR_INVALID_PARAM;
    }
    r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    status = cg_shm_attach(o->name, handle->size, &r->ptr);
    if (status != CG_OK) {
        free(r);
        return status;
    }
    r->size      = handle->size;
    r->imported  = 1;
    r->buffer_id = handle->buffer_id;
    snprintf(r->name, sizeof(r->name), "%s", o->name);
    cg_host_region_add(host, r);
    *base = r->ptr;
    return CG_OK;
}

void cg_host_ipc_close(cg_dev_t *dev, void *base)
{
    cg_dev_host_t    *host = cg_host_impl(dev);
    cg_host_region_t *r;

    if (host->sim != NULL) {
        if (cg_dev_lost(dev)) {
            return; /* the mapping went with the reset */
        }
        if (host->sim->ipc_close(base) != CG_SIM_OK) {
            cg_error(CG_SUB_IPC, "closing the mapping at %p failed", base);
        }
        return;
    }
    r = cg_host_region_take(host, base);
    if (r != NULL) {
        cg_host_region_free(r);
    }
}
