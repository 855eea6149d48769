/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* The simulated GPU (see cg_sim.h): allocations, copies, IPC. */
#include "kernels/sim/cg_sim_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct {
    char     *device;    /* PROT_NONE: what the application holds */
    char     *view;      /* read/write: what copies and kernels use */
    size_t    size;      /* bytes of the allocation: any access beyond is illegal */
    size_t    mapped;    /* bytes mapped (whole pages) */
    uint64_t  buffer_id;
    unsigned  flags;
    int       imported;
    int       owner_pid; /* imported: the exporter */
    uint64_t  owner_base;
    int       vmm_fd;    /* VMM allocations: the memory's descriptor (exports dup it); -1 */
    char      name[52];
} cg_sim_region_t;

static pthread_mutex_t  cg_sim_lock = PTHREAD_MUTEX_INITIALIZER;
static cg_sim_region_t *cg_sim_regions;
static int              cg_sim_count, cg_sim_capacity;
static uint64_t         cg_sim_gen = 1; /* + 1 whenever a region comes or goes (lock held) */

/* The regions this thread found last (a few: a call touches its buffers, scratch and
 * flags in turn), copied, valid while no region came or went since (cg_sim_gen): the next
 * lookup in one takes neither the lock nor the scan. A driver keeps such a cache too, and
 * without it the host layer's timings showed the simulated GPU's table more than the
 * algorithms (a small LL call resolves half a dozen addresses). */
#define CG_SIM_HINTS 4

/* A fresh allocation's first bytes hold garbage, as cudaMalloc's may (memory another
 * allocation used): code that reads device memory it never wrote (flags, counters, an
 * inbox taken for zeros) reads garbage here too. Only the first bytes: the rest of the
 * object stays unwritten and takes no memory until used. */
#define CG_SIM_FRESH_BYTES ((size_t)64 << 10)
#define CG_SIM_FRESH_BYTE  0xa5

typedef struct {
    uint64_t  gen;
    char     *device, *view;
    size_t    size, mapped;
    uint64_t  buffer_id;
    unsigned  flags;
    int       imported;
} cg_sim_hint_t;

/* initial-exec: a thread's hints without a call to find them (the library is loaded with
 * the application; a few hundred bytes of static TLS when it is opened later) */
#define CG_SIM_TLS __thread __attribute__((tls_model("initial-exec")))

static CG_SIM_TLS cg_sim_hint_t cg_sim_hints[CG_SIM_HINTS];
static CG_SIM_TLS unsigned      cg_sim_hint_next, cg_sim_hint_last;

/* The hinted region that holds [ptr, ptr + bytes) whole (the last one that did first);
 * NULL when none does. */
static const cg_sim_hint_t *cg_sim_hinted(const void *ptr, size_t bytes)
{
    const uint64_t gen = __atomic_load_n(&cg_sim_gen, __ATOMIC_ACQUIRE);
    const char    *p   = ptr;

    for (unsigned k = 0; k < CG_SIM_HINTS; k++) {
        const unsigned       at = (cg_sim_hint_last + k) % CG_SIM_HINTS;
        const cg_sim_hint_t *h  = &cg_sim_hints[at];
        if (h->gen == gen && p >= h->device && p < h->device + h->mapped &&
            (size_t)(p - h->device) + bytes <= h->size) {
            cg_sim_hint_last = at;
            return h;
        }
    }
    return NULL;
}

/* Remember region i for this thread (lock held). */
static void cg_sim_hint_set(int i)
{
    const cg_sim_region_t *r = &cg_sim_regions[i];

    cg_sim_hints[cg_sim_hint_next++ % CG_SIM_HINTS] =
        (cg_sim_hint_t){.gen = cg_sim_gen, .device = r->device, .view = r->view,
                        .size = r->size, .mapped = r->mapped, .buffer_id = r->buffer_id,
                        .flags = r->flags, .imported = r->imported};
}
static unsigned         cg_sim_serial;
static int              cg_sim_reclaimed;

static size_t cg_sim_page_round(size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    return (bytes + page - 1) / page * page;
}

/* Names of processes that died without freeing their allocations (killed runs): remove
 * them, once per process, before the first allocation. */
static void cg_sim_reclaim_dead(void)
{
    char           prefix[64];
    DIR           *dir;
    struct dirent *entry;
    size_t         plen;

    snprintf(prefix, sizeof(prefix), "cg-sim-%d-", (int)getuid());
    plen = strlen(prefix);
    dir  = opendir("/dev/shm");
    if (dir == NULL) {
        return;
    }
    while ((entry = readdir(dir)) != NULL) {
        char name[300];
        int  pid;
        if (strncmp(entry->d_name, prefix, plen) != 0 ||
            sscanf(entry->d_name + plen, "%d-", &pid) != 1 || pid <= 0) {
            continue;
        }
        if (kill(pid, 0) != 0 && errno == ESRCH) {
            snprintf(name, sizeof(name), "/%s", entry->d_name);
            shm_unlink(name);
        }
    }
    closedir(dir);
}

/* Index of the region whose device range holds [ptr, ptr + bytes); -1: none. With
 * *partial set when ptr is inside a region that the range overruns. Lock held. */
static int cg_sim_find(const void *ptr, size_t bytes, int *partial)
{
    const char *p = ptr;

    *partial = 0;
    for (int i = 0; i < cg_sim_count; i++) {
        cg_sim_region_t *r = &cg_sim_regions[i];
        if (p >= r->device && p < r->device + r->mapped) {
            if ((size_t)(p - r->device) + bytes > r->size) {
                *partial = 1;
                return -1;
            }
            return i;
        }
    }
    return -1;
}

static int cg_sim_add(const cg_sim_region_t *region)
{
    if (cg_sim_count == cg_sim_capacity) {
        int              capacity = cg_sim_capacity ? 2 * cg_sim_capacity : 64;
        cg_sim_region_t *grown = realloc(cg_sim_regions, (size_t)capacity * sizeof(*grown));
        if (grown == NULL) {
            return CG_SIM_ERR_NO_MEMORY;
        }
        cg_sim_regions  = grown;
        cg_sim_capacity = capacity;
    }
    cg_sim_regions[cg_sim_count++] = *region;
    __atomic_add_fetch(&cg_sim_gen, 1, __ATOMIC_RELEASE);
    return CG_SIM_OK;
}

/* Map the object twice: PROT_NONE (device address) and read/write (the device's view). */
static int cg_sim_map(int fd, size_t size, cg_sim_region_t *region)
{
    region->device = mmap(NULL, size, PROT_NONE, MAP_SHARED, fd, 0);
    if (region->device == MAP_FAILED) {
        return errno == ENOMEM ? CG_SIM_ERR_NO_MEMORY : CG_SIM_ERR_SYSTEM;
    }
    region->view = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (region->view == MAP_FAILED) {
        munmap(region->device, size);
        return errno == ENOMEM ? CG_SIM_ERR_NO_MEMORY : CG_SIM_ERR_SYSTEM;
    }
    region->mapped = size;
    return CG_SIM_OK;
}

/* Enter a mapped region in the table and hand out its device address; on failure the
 * mappings go (what else it holds is the caller's). */
static int cg_sim_enter(cg_sim_region_t *region, void **ptr)
{
    int status;

    pthread_mutex_lock(&cg_sim_lock);
    status = cg_sim_add(region);
    pthread_mutex_unlock(&cg_sim_lock);
    if (status != CG_SIM_OK) {
        munmap(region->device, region->mapped);
        munmap(region->view, region->mapped);
        return status;
    }
    *ptr = region->device;
    return CG_SIM_OK;
}

CG_SIM_EXPORT int cg_sim_malloc(void **ptr, size_t bytes, unsigned flags)
{
    cg_sim_region_t region = {0};
    size_t          size   = cg_sim_page_round(bytes ? bytes : 1);
    int             fd = -1, status;
    unsigned        serial = 0;

    if (ptr == NULL || (flags & ~(unsigned)(CG_SIM_ALLOC_POOL | CG_SIM_ALLOC_VMM |
                                           CG_SIM_ALLOC_OTHER_DEVICE)) != 0) {
        return CG_SIM_ERR_INVALID;
    }
    pthread_mutex_lock(&cg_sim_lock);
    if (!cg_sim_reclaimed) {
        cg_sim_reclaimed = 1;
        cg_sim_reclaim_dead();
    }
    pthread_mutex_unlock(&cg_sim_lock);
    for (int attempt = 0; attempt < 64 && fd < 0; attempt++) {
        serial = __atomic_fetch_add(&cg_sim_serial, 1, __ATOMIC_RELAXED);
        snprintf(region.name, sizeof(region.name), "/cg-sim-%d-%d-%u", (int)getuid(),
                 (int)getpid(), serial);
        fd = shm_open(region.name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 && errno != EEXIST) {
            return CG_SIM_ERR_SYSTEM;
        }
    }
    if (fd < 0) {
        return CG_SIM_ERR_SYSTEM;
    }
    if (ftruncate(fd, (off_t)size) != 0) {
        status = errno == ENOSPC ? CG_SIM_ERR_NO_MEMORY : CG_SIM_ERR_SYSTEM;
        goto err_unlink;
    }
    status = cg_sim_map(fd, size, &region);
    if (status != CG_SIM_OK) {
        goto err_unlink;
    }
    memset(region.view, CG_SIM_FRESH_BYTE, bytes < CG_SIM_FRESH_BYTES ? bytes : CG_SIM_FRESH_BYTES);
    region.vmm_fd = (flags & CG_SIM_ALLOC_VMM) ? fd : -1;
    if (region.vmm_fd < 0) {
        close(fd);
    }
    region.size      = bytes ? bytes : 1;
    region.buffer_id = ((uint64_t)(uint32_t)getpid() << 32) | serial;
    region.flags     = flags;
    status           = cg_sim_enter(&region, ptr);
    if (status != CG_SIM_OK) {
        shm_unlink(region.name);
        if (region.vmm_fd >= 0) {
            close(region.vmm_fd);
        }
    }
    return status;

err_unlink:
    close(fd);
    shm_unlink(region.name);
    return status;
}

/* Remove the region that starts at ptr (imported or not, as asked); unmap it. */
static int cg_sim_release(void *ptr, int imported)
{
    cg_sim_region_t region;
    int             found = -1;

    pthread_mutex_lock(&cg_sim_lock);
    for (int i = 0; i < cg_sim_count; i++) {
        if (cg_sim_regions[i].device == ptr && cg_sim_regions[i].imported == imported) {
            found = i;
            break;
        }
    }
    if (found < 0) {
        pthread_mutex_unlock(&cg_sim_lock);
        return CG_SIM_ERR_INVALID;
    }
    region                 = cg_sim_regions[found];
    cg_sim_regions[found]  = cg_sim_regions[--cg_sim_count];
    __atomic_add_fetch(&cg_sim_gen, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&cg_sim_lock);
    munmap(region.device, region.mapped);
    munmap(region.view, region.mapped);
    if (region.vmm_fd >= 0) {
        close(region.vmm_fd);
    }
    if (!imported) {
        shm_unlink(region.name); /* importers keep their mappings, as with cudaFree */
    }
    return CG_SIM_OK;
}

CG_SIM_EXPORT int cg_sim_free(void *ptr)
{
    (void)cg_sim_streams_sync_all(); /* cudaFree waits for the device */
    return ptr == NULL ? CG_SIM_OK : cg_sim_release(ptr, 0);
}

/* The device's view of [ptr, ptr + bytes) when a region holds it whole (a hinted one, else
 * found under the lock, and hinted); NULL otherwise, with *partial set when a region holds
 * ptr but not the whole range. */
static void *cg_sim_view(const void *ptr, size_t bytes, int *partial)
{
    const cg_sim_hint_t *h = cg_sim_hinted(ptr, bytes);
    void                *view = NULL;
    int                  i;

    *partial = 0;
    if (h != NULL) {
        return h->view + ((const char *)ptr - h->device);
    }
    pthread_mutex_lock(&cg_sim_lock);
    i = cg_sim_find(ptr, bytes, partial);
    if (i >= 0) {
        view = cg_sim_regions[i].view + ((const char *)ptr - cg_sim_regions[i].device);
        cg_sim_hint_set(i);
    }
    pthread_mutex_unlock(&cg_sim_lock);
    return view;
}

CG_SIM_EXPORT void *cg_sim_access(const void *ptr, size_t bytes)
{
    int partial;

    return cg_sim_view(ptr, bytes, &partial);
}

/* The address the CPU may use for [ptr, ptr + bytes): the device's view of simulated
 * device memory, ptr itself for host memory; NULL for a range that overruns an allocation. */
static void *cg_sim_resolve(const void *ptr, size_t bytes)
{
    int   partial;
    void *view = cg_sim_view(ptr, bytes, &partial);

    return view != NULL || partial ? view : (void *)ptr;
}

CG_SIM_EXPORT int cg_sim_memcpy(void *dst, const void *src, size_t bytes)
{
    void       *d;
    const void *s;

    if (bytes == 0) {
        return CG_SIM_OK;
    }
    (void)cg_sim_streams_sync_all(); /* a synchronous copy: after the default streams' work */
    d = cg_sim_resolve(dst, bytes);
    s = cg_sim_resolve(src, bytes);
    if (d == NULL || s == NULL) {
        return CG_SIM_ERR_INVALID;
    }
    memmove(d, s, bytes);
    return CG_SIM_OK;
}

CG_SIM_EXPORT int cg_sim_memset(void *ptr, int value, size_t bytes)
{
    void *d;

    (void)cg_sim_streams_sync_all(); /* as cudaMemset: after the default streams' work */
    d = bytes ? cg_sim_access(ptr, bytes) : ptr;
    if (d == NULL) {
        return CG_SIM_ERR_INVALID;
    }
    memset(d, value, bytes);
    return CG_SIM_OK;
}

static int cg_sim_device_of(unsigned flags)
{
    return (flags & CG_SIM_ALLOC_OTHER_DEVICE) ? 1 : 0;
}

CG_SIM_EXPORT int cg_sim_query(const void *ptr, cg_sim_attr_t *attr)
{
    const cg_sim_hint_t *h = cg_sim_hinted(ptr, 0);
    int                  partial, i, status = CG_SIM_ERR_INVALID;

    if (h != NULL) {
        attr->base      = (uintptr_t)h->device;
        attr->size      = h->size;
        attr->buffer_id = h->buffer_id;
        attr->flags     = h->flags;
        attr->imported  = h->imported;
        attr->device    = cg_sim_device_of(h->flags);
        return CG_SIM_OK;
    }
    pthread_mutex_lock(&cg_sim_lock);
    i = cg_sim_find(ptr, 0, &partial);
    if (i >= 0 || partial) { /* in the page slack after the allocation: still device memory */
        for (i = 0; (const char *)ptr < cg_sim_regions[i].device ||
                    (const char *)ptr >= cg_sim_regions[i].device + cg_sim_regions[i].mapped;
             i++) {
        }
    }
    if (i >= 0) {
        const cg_sim_region_t *r = &cg_sim_regions[i];
        attr->base      = (uintptr_t)r->device;
        attr->size      = r->size;
        attr->buffer_id = r->buffer_id;
        attr->flags     = r->flags;
        attr->imported  = r->imported;
        attr->device    = cg_sim_device_of(r->flags);
        status          = CG_SIM_OK;
        cg_sim_hint_set(i);
    }
    pthread_mutex_unlock(&cg_sim_lock);
    return status;
}

CG_SIM_EXPORT int cg_sim_ipc_get_handle(cg_sim_ipc_handle_t *handle, const void *ptr)
{
    int partial, i, status = CG_SIM_ERR_INVALID;

    memset(handle, 0, sizeof(*handle));
    pthread_mutex_lock(&cg_sim_lock);
    i = cg_sim_find(ptr, 1, &partial);
    if (i >= 0) {
        const cg_sim_region_t *r = &cg_sim_regions[i];
        if (r->imported || (const char *)ptr != r->device) {
            status = CG_SIM_ERR_INVALID; /* legacy IPC exports whole allocations it owns */
        } else if (r->flags & (CG_SIM_ALLOC_POOL | CG_SIM_ALLOC_VMM)) {
            status = CG_SIM_ERR_NOT_SHAREABLE;
        } else {
            handle->buffer_id = r->buffer_id;
            handle->base      = (uint64_t)(uintptr_t)r->device;
            handle->size      = r->size;
            handle->owner_pid = (int32_t)getpid();
            snprintf(handle->name, sizeof(handle->name), "%s", r->name);
            status = CG_SIM_OK;
        }
    }
    pthread_mutex_unlock(&cg_sim_lock);
    return status;
}

CG_SIM_EXPORT int cg_sim_ipc_open(void **ptr, const cg_sim_ipc_handle_t *handle)
{
    cg_sim_region_t region = {0};
    int             fd, status = CG_SIM_OK;

    if (handle->owner_pid == (int32_t)getpid() || handle->size == 0 || handle->name[0] != '/') {
        return CG_SIM_ERR_INVALID;
    }
    pthread_mutex_lock(&cg_sim_lock);
    for (int i = 0; i < cg_sim_count; i++) {
        const cg_sim_region_t *r = &cg_sim_regions[i];
        if (r->imported && r->owner_pid == handle->owner_pid &&
            r->owner_base < handle->base + handle->size && handle->base < r->owner_base + r->size) {
            status = CG_SIM_ERR_ALREADY_MAPPED;
            break;
        }
    }
    pthread_mutex_unlock(&cg_sim_lock);
    if (status != CG_SIM_OK) {
        return status;
    }
    fd = shm_open(handle->name, O_RDWR, 0600);
    if (fd < 0) {
        return errno == ENOENT ? CG_SIM_ERR_GONE : CG_SIM_ERR_SYSTEM;
    }
    status = cg_sim_map(fd, cg_sim_page_round((size_t)handle->size), &region);
    close(fd);
    if (status != CG_SIM_OK) {
        return status;
    }
    region.size       = (size_t)handle->size;
    region.buffer_id  = handle->buffer_id;
    region.imported   = 1;
    region.vmm_fd     = -1;
    region.owner_pid  = handle->owner_pid;
    region.owner_base = handle->base;
    snprintf(region.name, sizeof(region.name), "%s", handle->name);
    return cg_sim_enter(&region, ptr);
}

CG_SIM_EXPORT int cg_sim_ipc_close(void *ptr)
{
    return cg_sim_release(ptr, 1);
}

CG_SIM_EXPORT int cg_sim_vmm_export(int *fd, const void *ptr)
{
    int partial, i, status = CG_SIM_ERR_INVALID;

    *fd = -1;
    pthread_mutex_lock(&cg_sim_lock);
    i = cg_sim_find(ptr, 1, &partial);
    if (i >= 0 && !cg_sim_regions[i].imported) {
        status = CG_SIM_ERR_NOT_SHAREABLE;
        if (cg_sim_regions[i].vmm_fd >= 0) {
            *fd    = dup(cg_sim_regions[i].vmm_fd);
            status = *fd >= 0 ? CG_SIM_OK : CG_SIM_ERR_SYSTEM;
        }
    }
    pthread_mutex_unlock(&cg_sim_lock);
    return status;
}

CG_SIM_EXPORT int cg_sim_vmm_import(void **ptr, int fd, size_t size, uint64_t buffer_id)
{
    cg_sim_region_t region = {0};
    int             status;

    if (fd < 0 || size == 0) {
        return CG_SIM_ERR_INVALID;
    }
    status = cg_sim_map(fd, cg_sim_page_round(size), &region);
    if (status != CG_SIM_OK) {
        return status;
    }
    region.size      = size;
    region.buffer_id = buffer_id;
    region.flags     = CG_SIM_ALLOC_VMM; /* a mapping of cuMemCreate memory, as the exporter's */
    region.imported  = 1; /* a mapping of its own: never "already mapped" */
    region.vmm_fd    = -1;
    return cg_sim_enter(&region, ptr);
}

void cg_sim_revoke_range(void *addr, size_t bytes)
{
    (void)mmap(addr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
               -1, 0);
}

void cg_sim_regions_revoke(void)
{
    pthread_mutex_lock(&cg_sim_lock);
    for (int i = 0; i < cg_sim_count; i++) {
        cg_sim_region_t *r = &cg_sim_regions[i];
        cg_sim_revoke_range(r->device, r->mapped);
        cg_sim_revoke_range(r->view, r->mapped);
        if (r->vmm_fd >= 0) {
            close(r->vmm_fd);
        }
        if (!r->imported) {
            shm_unlink(r->name);
        }
    }
    cg_sim_count = 0;
    __atomic_add_fetch(&cg_sim_gen, 1, __ATOMIC_RELEASE); /* every thread's hints go */
    pthread_mutex_unlock(&cg_sim_lock);
}

CG_SIM_EXPORT const char *cg_sim_status_string(int status)
{
    switch (status) {
    case CG_SIM_OK:                 return "success";
    case CG_SIM_ERR_INVALID:        return "invalid device pointer or range";
    case CG_SIM_ERR_NO_MEMORY:      return "out of device memory";
    case CG_SIM_ERR_ALREADY_MAPPED: return "the peer's allocation is already mapped";
    case CG_SIM_ERR_NOT_SHAREABLE:  return "memory cannot be exported";
    case CG_SIM_ERR_GONE:           return "the exported allocation is gone";
    case CG_SIM_ERR_SYSTEM:         return "system call failed";
    }
    return "unknown status";
}

static const cg_sim_api_t cg_sim_api_table = {
    .version        = CG_SIM_API_VERSION,
    .malloc_fn      = cg_sim_malloc,
    .free_fn        = cg_sim_free,
    .memcpy_fn      = cg_sim_memcpy,
    .memset_fn      = cg_sim_memset,
    .query          = cg_sim_query,
    .access         = cg_sim_access,
    .ipc_get_handle = cg_sim_ipc_get_handle,
    .ipc_open       = cg_sim_ipc_open,
    .ipc_close      = cg_sim_ipc_close,
    .status_string  = cg_sim_status_string,
    .vmm_export     = cg_sim_vmm_export,
    .vmm_import     = cg_sim_vmm_import,
    .stream_sync    = cg_sim_stream_sync,
    .stream_idle    = cg_sim_stream_idle,
    .host_alloc_fn  = cg_sim_host_alloc,
    .host_free_fn   = cg_sim_host_free,
    .reset_hook     = cg_sim_reset_hook,
    .device_sync    = cg_sim_device_sync,
    .host_query     = cg_sim_host_query,
};

CG_SIM_EXPORT const cg_sim_api_t *cg_sim_api(void)
{
    return &cg_sim_api_table;
}
