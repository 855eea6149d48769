/*
 * Host device layer: host memory plays device memory. "Device" allocations live in POSIX
 * shared memory so that they can be exported to the other processes of the node, exactly
 * like CUDA IPC; copies and reductions run on the CPU and complete before returning.
 */
#include "kernels/cg_dev.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CG_HOST_IPC_MAGIC 0x43474853484d3031ull /* "CGHSHM01" */

typedef struct cg_host_region {
    void                  *ptr;
    size_t                 size;
    int                    imported;
    char                   name[64];
    struct cg_host_region *next;
} cg_host_region_t;

typedef struct {
    uint64_t magic;
    uint64_t size;
    uint64_t offset;
    char     name[64];
} cg_host_ipc_handle_t;

typedef struct {
    pthread_mutex_t   lock;
    cg_host_region_t *regions; /* allocations and imports, for export and unmapping */
    unsigned          serial;
    int               classify_as_host; /* this rank's buffers are "host memory" (tests) */
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

static void cg_host_region_add(cg_dev_host_t *h, cg_host_region_t *r)
{
    pthread_mutex_lock(&h->lock);
    r->next    = h->regions;
    h->regions = r;
    pthread_mutex_unlock(&h->lock);
}

/* Remove the region starting at ptr from the list and return it (NULL if unknown). */
static cg_host_region_t *cg_host_region_take(cg_dev_host_t *h, void *ptr)
{
    cg_host_region_t **pp, *r = NULL;

    pthread_mutex_lock(&h->lock);
    for (pp = &h->regions; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->ptr == ptr) {
            r   = *pp;
            *pp = r->next;
            break;
        }
    }
    pthread_mutex_unlock(&h->lock);
    return r;
}

static cg_status_t cg_host_mem_query(cg_dev_t *dev, const void *ptr, cg_mem_attr_t *attr)
{
    memset(attr, 0, sizeof(*attr));
    if (ptr == NULL || cg_host_impl(dev)->classify_as_host) {
        attr->kind   = CG_MEM_HOST;
        attr->device = -1;
        return CG_OK;
    }
    attr->kind   = CG_MEM_DEVICE;
    attr->device = 0;
    return CG_OK;
}

static cg_status_t cg_host_mem_alloc(cg_dev_t *dev, size_t size, void **ptr)
{
    cg_dev_host_t    *h = cg_host_impl(dev);
    cg_host_region_t *r;
    cg_status_t       status = CG_ERR_IO;
    int               fd;

    r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    size = size ? size : 1;
    pthread_mutex_lock(&h->lock);
    snprintf(r->name, sizeof(r->name), "/cg-gpu-%d-%d-%u", (int)getuid(), (int)getpid(),
             h->serial++);
    pthread_mutex_unlock(&h->lock);
    fd = shm_open(r->name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        cg_error(CG_SUB_DEV, "shm_open(%s) failed: %s", r->name, strerror(errno));
        goto err_free;
    }
    if (ftruncate(fd, (off_t)size) != 0) {
        cg_error(CG_SUB_DEV, "ftruncate(%s, %zu) failed: %s", r->name, size, strerror(errno));
        goto err_unlink;
    }
    r->ptr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (r->ptr == MAP_FAILED) {
        cg_error(CG_SUB_DEV, "mmap of %zu bytes failed: %s", size, strerror(errno));
        status = CG_ERR_NO_MEMORY;
        goto err_unlink;
    }
    close(fd);
    r->size = size;
    cg_host_region_add(h, r);
    *ptr = r->ptr;
    return CG_OK;

err_unlink:
    shm_unlink(r->name);
    close(fd);
err_free:
    free(r);
    return status;
}

static void cg_host_mem_free(cg_dev_t *dev, void *ptr)
{
    cg_host_region_t *r = cg_host_region_take(cg_host_impl(dev), ptr);

    if (r == NULL) {
        return;
    }
    munmap(r->ptr, r->size);
    if (!r->imported) {
        shm_unlink(r->name);
    }
    free(r);
}

static cg_status_t cg_host_host_alloc(cg_dev_t *dev, size_t size, void **ptr)
{
    (void)dev;
    if (posix_memalign(ptr, 64, size ? size : 1) != 0) {
        return CG_ERR_NO_MEMORY;
    }
    return CG_OK;
}

static void cg_host_host_free(cg_dev_t *dev, void *ptr)
{
    (void)dev;
    free(ptr);
}

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

static cg_status_t cg_host_copy(cg_dev_t *dev, void *dst, const void *src, size_t bytes,
                                cg_dev_stream_t *stream)
{
    (void)dev;
    (void)stream;
    if (bytes != 0 && dst != src) {
        memmove(dst, src, bytes);
    }
    return CG_OK;
}

static cg_status_t cg_host_reduce(cg_dev_t *dev, const cg_reduce_args_t *args,
                                  cg_dev_stream_t *stream)
{
    (void)dev;
    (void)stream;
    if (!cg_reduce_supported(args->dtype, args->op) || args->nsrc < 1 ||
        args->nsrc > CG_DEV_MAX_FANIN || args->ndst > CG_DEV_MAX_FANIN) {
        return CG_ERR_UNSUPPORTED;
    }
    cg_reduce_host(args);
    return CG_OK;
}

static cg_status_t cg_host_ipc_export(cg_dev_t *dev, void *base, size_t size,
                                      cg_ipc_handle_t *handle)
{
    cg_dev_host_t        *h = cg_host_impl(dev);
    cg_host_ipc_handle_t *hh = (cg_host_ipc_handle_t *)handle->bytes;
    cg_host_region_t     *r;
    cg_status_t           status = CG_ERR_UNSUPPORTED;

    memset(handle, 0, sizeof(*handle));
    pthread_mutex_lock(&h->lock);
    for (r = h->regions; r != NULL; r = r->next) {
        if (!r->imported && (char *)base >= (char *)r->ptr &&
            (char *)base + size <= (char *)r->ptr + r->size) {
            hh->magic  = CG_HOST_IPC_MAGIC;
            hh->size   = r->size;
            hh->offset = (uint64_t)((char *)base - (char *)r->ptr);
            snprintf(hh->name, sizeof(hh->name), "%s", r->name);
            status = CG_OK;
            break;
        }
    }
    pthread_mutex_unlock(&h->lock);
    return status;
}

static cg_status_t cg_host_ipc_import(cg_dev_t *dev, const cg_ipc_handle_t *handle, void **ptr)
{
    const cg_host_ipc_handle_t *hh = (const cg_host_ipc_handle_t *)handle->bytes;
    cg_host_region_t           *r;
    int                         fd;

    if (hh->magic != CG_HOST_IPC_MAGIC) {
        cg_error(CG_SUB_IPC, "not a host-layer IPC handle");
        return CG_ERR_INVALID_PARAM;
    }
    r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    fd = shm_open(hh->name, O_RDWR, 0600);
    if (fd < 0) {
        cg_error(CG_SUB_IPC, "shm_open(%s) of a peer's memory failed: %s", hh->name,
                 strerror(errno));
        free(r);
        return CG_ERR_PEER;
    }
    r->ptr = mmap(NULL, hh->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (r->ptr == MAP_FAILED) {
        cg_error(CG_SUB_IPC, "mmap of a peer's %zu bytes failed: %s", (size_t)hh->size,
                 strerror(errno));
        free(r);
        return CG_ERR_NO_MEMORY;
    }
    r->size     = hh->size;
    r->imported = 1;
    snprintf(r->name, sizeof(r->name), "%s", hh->name);
    cg_host_region_add(cg_host_impl(dev), r);
    *ptr = (char *)r->ptr + hh->offset;
    return CG_OK;
}

static void cg_host_ipc_close(cg_dev_t *dev, void *ptr)
{
    cg_dev_host_t    *h = cg_host_impl(dev);
    cg_host_region_t *r, *found = NULL;

    pthread_mutex_lock(&h->lock);
    for (r = h->regions; r != NULL; r = r->next) {
        if (r->imported && (char *)ptr >= (char *)r->ptr &&
            (char *)ptr < (char *)r->ptr + r->size) {
            found = r;
            break;
        }
    }
    pthread_mutex_unlock(&h->lock);
    if (found != NULL) {
        cg_host_mem_free(dev, found->ptr);
    }
}

static cg_status_t cg_host_flag_write(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                                      cg_dev_stream_t *stream)
{
    (void)dev;
    (void)stream;
    __atomic_store_n(flag, value, __ATOMIC_RELEASE);
    return CG_OK;
}

static cg_status_t cg_host_flag_wait(cg_dev_t *dev, uint64_t *flag, uint64_t value,
                                     cg_dev_stream_t *stream)
{
    unsigned spins = 0;

    (void)dev;
    (void)stream;
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < value) {
        if (++spins > 64) {
            sched_yield();
        }
    }
    return CG_OK;
}

static void cg_host_close(cg_dev_t *dev)
{
    cg_dev_host_t *h = cg_host_impl(dev);

    while (h->regions != NULL) {
        cg_host_mem_free(dev, h->regions->ptr);
    }
    pthread_mutex_destroy(&h->lock);
    free(h);
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
};

cg_status_t cg_dev_host_open(const cg_dev_host_config_t *config, cg_dev_t **dev_out)
{
    cg_dev_t      *dev;
    cg_dev_host_t *h;

    dev = calloc(1, sizeof(*dev));
    h   = calloc(1, sizeof(*h));
    if (dev == NULL || h == NULL) {
        free(dev);
        free(h);
        return CG_ERR_NO_MEMORY;
    }
    pthread_mutex_init(&h->lock, NULL);
    if (config != NULL) {
        for (int i = 0; i < config->num_host_buffer_ranks; i++) {
            if (config->host_buffer_ranks[i] == config->world_rank) {
                h->classify_as_host = 1;
            }
        }
    }
    dev->ops     = &cg_dev_host_ops;
    dev->kind    = CG_DEV_KIND_HOST;
    dev->ordinal = 0;
    dev->impl    = h;
    snprintf(dev->pci_bus_id, sizeof(dev->pci_bus_id), "host");
    *dev_out = dev;
    return CG_OK;
}

void cg_dev_close(cg_dev_t *dev)
{
    if (dev != NULL) {
        dev->ops->close(dev);
    }
}

cg_status_t cg_dev_copy_sync(cg_dev_t *dev, void *dst, const void *src, size_t bytes,
                             cg_dev_stream_t *stream)
{
    cg_status_t status = dev->ops->copy(dev, dst, src, bytes, stream);

    if (status != CG_OK) {
        return status;
    }
    return dev->ops->stream_sync(dev, stream);
}
