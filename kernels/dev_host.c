/*
 * Host device layer: runs every algorithm on a machine without a GPU. Two modes, chosen
 * when the layer opens:
 *
 *   strict   the application allocates device memory from the simulated GPU (libcg_sim,
 *            kernels/sim/cg_sim.h), which the CPU cannot touch through the application's
 *            pointers. This layer reaches those bytes only through the simulator's view,
 *            in its copies, reductions and flag operations, as CUDA kernels and copy
 *            engines would; memory kinds are classified as on a GPU (host memory is host
 *            memory), and IPC has CUDA's failure modes. Chosen when the process has loaded
 *            libcg_sim: the MPI suite and the examples run this way.
 *   lenient  any host memory plays device memory (the CPU may touch it); the layer's own
 *            allocations live in POSIX shared memory so that peers can map them; user
 *            buffers cannot be shared (the copy variants run). For applications that know
 *            nothing of the simulator.
 *
 * Copies and reductions run on the CPU and complete before returning.
 */
#include "kernels/cg_dev.h"
#include "kernels/sim/cg_sim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CG_HOST_FLAG_TIMEOUT 300

_Static_assert(sizeof(cg_sim_ipc_handle_t) <= CG_IPC_HANDLE_BYTES, "IPC handle too large");

/* lenient mode: one shared-memory allocation of the layer, or a peer's mapped here */
typedef struct cg_host_region {
    void                  *ptr;
    size_t                 size;
    int                    imported;
    uint64_t               buffer_id;
    char                   name[64];
    struct cg_host_region *next;
} cg_host_region_t;

typedef struct {
    char name[64];
} cg_host_ipc_opaque_t;

typedef struct {
    pthread_mutex_t     lock;
    cg_host_region_t   *regions;          /* lenient: allocations and imports */
    int                 classify_as_host; /* lenient: this rank's buffers are host memory */
    const cg_sim_api_t *sim;              /* strict: the simulated GPU; NULL: lenient */
} cg_dev_host_t;

struct cg_dev_stream {
    int unused;
};
struct cg_dev_event {
    int unused;
};

static cg_dev_host_t *cg_host_impl(cg_dev_t *dev)
{
    return (cg_dev_host_t *)dev->impl;
}

/* The CPU address of [ptr, ptr + bytes) as the device sees it: strict mode translates
 * simulated device memory and fails on a range that overruns an allocation (an illegal
 * address on a GPU); host memory and lenient mode use the pointer itself. */
static cg_status_t cg_host_resolve(cg_dev_t *dev, const void *ptr, size_t bytes, void **out)
{
    const cg_sim_api_t *sim = cg_host_impl(dev)->sim;
    cg_sim_attr_t       attr;

    *out = (void *)ptr;
    if (sim == NULL || bytes == 0) {
        return CG_OK;
    }
    *out = sim->access(ptr, bytes);
    if (*out != NULL) {
        return CG_OK;
    }
    if (sim->query(ptr, &attr) != CG_SIM_OK) {
        *out = (void *)ptr; /* host memory */
        return CG_OK;
    }
    cg_error(CG_SUB_DEV, "illegal address: %zu bytes at %p overrun the device allocation "
             "[%#lx, +%zu)", bytes, ptr, (unsigned long)attr.base, attr.size);
    return CG_ERR_DEVICE;
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

/* ---- memory ------------------------------------------------------------------------------ */
static cg_status_t cg_host_mem_query(cg_dev_t *dev, const void *ptr, cg_mem_attr_t *attr)
{
    cg_dev_host_t *host = cg_host_impl(dev);
    cg_sim_attr_t  sim_attr;

    memset(attr, 0, sizeof(*attr));
    attr->kind   = CG_MEM_HOST;
    attr->device = -1;
    if (ptr == NULL) {
        return CG_OK;
    }
    if (host->sim != NULL) {
        if (host->sim->query(ptr, &sim_attr) == CG_SIM_OK) {
            attr->kind      = CG_MEM_DEVICE;
            attr->device    = 0;
            attr->base      = sim_attr.base;
            attr->size      = sim_attr.size;
            attr->buffer_id = sim_attr.buffer_id;
        }
        return CG_OK;
    }
    if (!host->classify_as_host) {
        attr->kind   = CG_MEM_DEVICE;
        attr->device = 0;
    }
    return CG_OK;
}

static cg_status_t cg_host_mem_alloc(cg_dev_t *dev, size_t size, void **ptr)
{
    cg_dev_host_t    *host = cg_host_impl(dev);
    cg_host_region_t *r;
    cg_status_t       status;
    int               rc;

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

static void cg_host_mem_free(cg_dev_t *dev, void *ptr)
{
    cg_dev_host_t    *host = cg_host_impl(dev);
    cg_host_region_t *r;

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

static cg_status_t cg_host_host_alloc(cg_dev_t *dev, size_t size, void **ptr)
{
    (void)dev;
    return posix_memalign(ptr, 64, size ? size : 1) == 0 ? CG_OK : CG_ERR_NO_MEMORY;
}

static void cg_host_host_free(cg_dev_t *dev, void *ptr)
{
    (void)dev;
    free(ptr);
}

/* ---- streams and events: every operation completes before it returns ------------------- */
static cg_status_t cg_host_stream_create(cg_dev_t *dev, cg_dev_stream_t **stream)
{
    (void)dev;
    *stream = calloc(1, sizeof(**stream));
    return *stream ? CG_OK : CG_ERR_NO_MEMORY;
}

static void cg_host_stream_destroy(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    (void)dev;
    free(stream);
}

static cg_status_t cg_host_stream_sync(cg_dev_t *dev, cg_dev_stream_t *stream)
{
    (void)dev;
    (void)stream;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return CG_OK;
}

static cg_status_t cg_host_event_create(cg_dev_t *dev, cg_dev_event_t **event)
{
    (void)dev;
    *event = calloc(1, sizeof(**event));
    return *event ? CG_OK : CG_ERR_NO_MEMORY;
}

static void cg_host_event_destroy(cg_dev_t *dev, cg_dev_event_t *event)
{
    (void)dev;
    free(event);
}

static cg_status_t cg_host_event_record(cg_dev_t *dev, cg_dev_event_t *event,
                                        cg_dev_stream_t *stream)
{
    (void)dev;
    (void)event;
    (void)stream;
    return CG_OK;
}

static cg_status_t cg_host_event_query(cg_dev_t *dev, cg_dev_event_t *event, int *done)
{
    (void)dev;
    (void)event;
    *done = 1;
    return CG_OK;
}

/* ---- copies and reductions ----------------------------------------------------------------- */
static cg_status_t cg_host_copy(cg_dev_t *dev, void *dst, const void *src, size_t bytes,
                                cg_dev_stream_t *stream)
{
    void       *d;
    void       *s;
    cg_status_t status;

    (void)stream;
    if (cg_dev_fail_injected(dev)) {
        return CG_ERR_DEVICE;
    }
    if (bytes == 0 || dst == src) {
        return CG_OK;
    }
    status = cg_host_resolve(dev, dst, bytes, &d);
    if (status == CG_OK) {
        status = cg_host_resolve(dev, src, bytes, &s);
    }
    if (status == CG_OK) {
        memmove(d, s, bytes);
    }
    return status;
}

static cg_status_t cg_host_reduce(cg_dev_t *dev, const cg_reduce_args_t *args,
                                  cg_dev_stream_t *stream)
{
    cg_reduce_args_t resolved;
    size_t           bytes;
    cg_status_t      status = CG_OK;

    (void)stream;
    if (cg_dev_fail_injected(dev)) {
        return CG_ERR_DEVICE;
    }
    if (!cg_reduce_supported(args->dtype, args->op) || args->nsrc < 1 ||
        args->nsrc > CG_DEV_MAX_FANIN || args->ndst > CG_DEV_MAX_FANIN) {
        return CG_ERR_UNSUPPORTED;
    }
    resolved = *args;
    bytes    = args->count * cg_dtype_size(args->dtype);
    for (int i = 0; i < args->nsrc && status == CG_OK; i++) {
        status = cg_host_resolve(dev, args->srcs[i], bytes, (void **)&resolved.srcs[i]);
    }
    for (int i = 0; i < args->ndst && status == CG_OK; i++) {
        status = cg_host_resolve(dev, args->dsts[i], bytes, &resolved.dsts[i]);
    }
    if (status == CG_OK) {
        cg_reduce_host(&resolved);
    }
    return status;
}

/* ---- IPC ----------------------------------------------------------------------------------- */
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

static cg_status_t cg_host_ipc_export(cg_dev_t *dev, const void *ptr, size_t size,
                                      cg_ipc_handle_t *handle)
{
    cg_dev_host_t        *host = cg_host_impl(dev);
    cg_host_ipc_opaque_t *o = (cg_host_ipc_opaque_t *)handle->opaque;
    cg_host_region_t     *r;
    cg_status_t           status = CG_ERR_UNSUPPORTED;

    memset(handle, 0, sizeof(*handle));
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

static cg_status_t cg_host_ipc_import(cg_dev_t *dev, const cg_ipc_handle_t *handle, void **base)
{
    cg_dev_host_t              *host = cg_host_impl(dev);
    const cg_host_ipc_opaque_t *o = (const cg_host_ipc_opaque_t *)handle->opaque;
    cg_host_region_t           *r;
    cg_status_t                 status;

    if (host->sim != NULL) {
        return cg_host_sim_import(host, handle, base);
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

static void cg_host_ipc_close(cg_dev_t *dev, void *base)
{
    cg_dev_host_t    *host = cg_host_impl(dev);
    cg_host_region_t *r;

    if (host->sim != NULL) {
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

/* ---- flags ---------------------------------------------------------------------------------- */
static cg_status_t cg_host_flag_write(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                                      cg_dev_stream_t *stream)
{
    void       *view;
    cg_status_t status = cg_host_resolve(dev, flag, sizeof(*flag), &view);

    (void)stream;
    if (status == CG_OK) {
        __atomic_store_n((uint64_t *)view, value, __ATOMIC_RELEASE);
    }
    return status;
}

static cg_status_t cg_host_flag_wait(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                                     cg_dev_stream_t *stream)
{
    unsigned    spins = 0;
    double      t0    = 0;
    void       *view;
    cg_status_t status = cg_host_resolve(dev, flag, sizeof(*flag), &view);

    (void)stream;
    if (status != CG_OK) {
        return status;
    }
    /* The host layer waits on the calling thread; a peer that never writes (it died) must
     * not hang the process for ever: give up after CG_HOST_FLAG_TIMEOUT seconds. */
    while (__atomic_load_n((uint64_t *)view, __ATOMIC_ACQUIRE) < value) {
        if (++spins > 64) {
            sched_yield();
        }
        if ((spins & 4095) == 0) {
            double now = cg_time_now();
            t0         = t0 ? t0 : now;
            if (now - t0 > CG_HOST_FLAG_TIMEOUT) {
                cg_error(CG_SUB_DEV, "a device-side barrier waited %d s for a peer: giving up",
                         CG_HOST_FLAG_TIMEOUT);
                return CG_ERR_TIMEOUT;
            }
        }
    }
    return CG_OK;
}

static cg_status_t cg_host_flag_release(cg_dev_t *dev, uint64_t *flag, uint64_t value)
{
    return cg_host_flag_write(dev, flag, value, NULL);
}

static cg_status_t cg_host_thread_bind(cg_dev_t *dev)
{
    (void)dev;
    return CG_OK;
}

static cg_status_t cg_host_app_wait(cg_dev_t *dev)
{
    (void)dev; /* every host operation completes before it returns */
    return CG_OK;
}

static void cg_host_close(cg_dev_t *dev)
{
    cg_dev_host_t *host = cg_host_impl(dev);

    while (host->regions != NULL) {
        cg_host_region_t *r = host->regions;
        host->regions          = r->next;
        cg_host_region_free(r);
    }
    pthread_mutex_destroy(&host->lock);
    free(host);
    free(dev);
}

static const cg_dev_ops_t cg_dev_host_ops = {
    .name           = "host",
    .close          = cg_host_close,
    .mem_query      = cg_host_mem_query,
    .mem_alloc      = cg_host_mem_alloc,
    .mem_free       = cg_host_mem_free,
    .host_alloc     = cg_host_host_alloc,
    .host_free      = cg_host_host_free,
    .stream_create  = cg_host_stream_create,
    .stream_destroy = cg_host_stream_destroy,
    .stream_sync    = cg_host_stream_sync,
    .event_create   = cg_host_event_create,
    .event_destroy  = cg_host_event_destroy,
    .event_record   = cg_host_event_record,
    .event_query    = cg_host_event_query,
    .copy           = cg_host_copy,
    .reduce         = cg_host_reduce,
    .ipc_export     = cg_host_ipc_export,
    .ipc_import     = cg_host_ipc_import,
    .ipc_close      = cg_host_ipc_close,
    .flag_write     = cg_host_flag_write,
    .flag_wait      = cg_host_flag_wait,
    .flag_release   = cg_host_flag_release,
    .thread_bind    = cg_host_thread_bind,
    .app_wait       = cg_host_app_wait,
};

/* The simulated GPU, when the application loaded it (never loads it itself). */
static const cg_sim_api_t *cg_host_find_sim(void)
{
    const cg_sim_api_t *(*get_api)(void);
    const cg_sim_api_t *api;
    void               *lib = dlopen(CG_SIM_SONAME, RTLD_NOW | RTLD_NOLOAD);

    if (lib == NULL) {
        return NULL;
    }
    *(void **)&get_api = dlsym(lib, "cg_sim_api");
    api                = get_api != NULL ? get_api() : NULL;
    if (api == NULL || api->version != CG_SIM_API_VERSION) {
        cg_warn(CG_SUB_DEV, "%s has another interface version: lenient host layer", CG_SIM_SONAME);
        api = NULL;
    }
    dlclose(lib); /* the application holds it loaded */
    return api;
}

cg_status_t cg_dev_host_open(const cg_dev_host_config_t *config, cg_dev_t **dev_out)
{
    cg_dev_t      *dev;
    cg_dev_host_t *host;

    dev = calloc(1, sizeof(*dev));
    host   = calloc(1, sizeof(*host));
    if (dev == NULL || host == NULL) {
        free(dev);
        free(host);
        return CG_ERR_NO_MEMORY;
    }
    pthread_mutex_init(&host->lock, NULL);
    host->sim = (config != NULL && config->lenient) ? NULL : cg_host_find_sim();
    if (config != NULL && host->sim == NULL) {
        for (int i = 0; i < config->num_host_buffer_ranks; i++) {
            if (config->host_buffer_ranks[i] == config->world_rank) {
                host->classify_as_host = 1;
            }
        }
    }
    dev->ops                   = &cg_dev_host_ops;
    dev->kind                  = CG_DEV_KIND_HOST;
    dev->ordinal               = 0;
    dev->caps.ipc_user_buffers = host->sim != NULL;
    dev->caps.device_flags     = 1; /* synchronous, but the device-barrier code runs */
    dev->caps.host_access      = host->sim == NULL;
    dev->impl                  = host;
    snprintf(dev->pci_bus_id, sizeof(dev->pci_bus_id), "host");
    cg_detail(CG_SUB_DEV, "host device layer, %s", host->sim != NULL
              ? "strict: simulated device memory that the CPU cannot touch"
              : "lenient: host memory plays device memory");
    *dev_out = dev;
    return CG_OK;
}

int cg_dev_host_strict(const cg_dev_t *dev)
{
    return dev->kind == CG_DEV_KIND_HOST && ((const cg_dev_host_t *)dev->impl)->sim != NULL;
}
