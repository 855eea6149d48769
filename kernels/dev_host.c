/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Host device layer: host memory plays device memory. "Device" allocations live in POSIX
 * shared memory so that they can be exported to the other processes of the node, exactly
 * like CUDA IPC; user memory that is itself a shared-memory mapping (/dev/shm) can be
 * exported too, so the zero-copy algorithms run here as they do on GPUs. Copies and
 * reductions run on the CPU and complete before returning.
 */
#include "kernels/cg_dev.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CG_HOST_FLAG_TIMEOUT 300

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
    pthread_mutex_t   lock;
    cg_host_region_t *regions; /* allocations and imports */
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
    cg_host_region_t *r = calloc(1, sizeof(*r));
    cg_status_t       status;

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
    cg_host_region_add(cg_host_impl(dev), r);
    *ptr = r->ptr;
    return CG_OK;
}

static void cg_host_mem_free(cg_dev_t *dev, void *ptr)
{
    cg_host_region_t *r = cg_host_region_take(cg_host_impl(dev), ptr);

    if (r == NULL) {
        return;
    }
    cg_shm_detach(r->ptr, r->size);
    if (!r->imported) {
        cg_shm_unlink(r->name);
    }
    free(r);
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
    (void)stream;
    if (cg_dev_fail_injected(dev)) {
        return CG_ERR_DEVICE;
    }
    if (bytes != 0 && dst != src) {
        memmove(dst, src, bytes);
    }
    return CG_OK;
}

static cg_status_t cg_host_reduce(cg_dev_t *dev, const cg_reduce_args_t *args,
                                  cg_dev_stream_t *stream)
{
    (void)stream;
    if (cg_dev_fail_injected(dev)) {
        return CG_ERR_DEVICE;
    }
    if (!cg_reduce_supported(args->dtype, args->op) || args->nsrc < 1 ||
        args->nsrc > CG_DEV_MAX_FANIN || args->ndst > CG_DEV_MAX_FANIN) {
        return CG_ERR_UNSUPPORTED;
    }
    cg_reduce_host(args);
    return CG_OK;
}

/* Find the shared-memory mapping of this process that holds [ptr, ptr + size). */
static cg_status_t cg_host_find_shm_mapping(const void *ptr, size_t size, cg_ipc_handle_t *handle)
{
    cg_host_ipc_opaque_t *o = (cg_host_ipc_opaque_t *)handle->opaque;
    char                  line[512];
    FILE                 *maps = fopen("/proc/self/maps", "r");
    cg_status_t           status = CG_ERR_UNSUPPORTED;
    uintptr_t             p = (uintptr_t)ptr;

    if (maps == NULL) {
        return CG_ERR_UNSUPPORTED;
    }
    while (fgets(line, sizeof(line), maps) != NULL) {
        uintptr_t start, end;
        uint64_t  off;
        char      perms[8], path[256] = "";
        struct stat st;
        char        full[300];

        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %" SCNx64 " %*s %*s %255s", &start, &end,
                   perms, &off, path) < 4 || p < start || p + size > end) {
            continue;
        }
        if (perms[3] != 's' || strncmp(path, "/dev/shm/", 9) != 0 || strstr(line, "(deleted)")) {
            break; /* private or anonymous memory: not shareable */
        }
        if (strlen(path + 9) + 2 > sizeof(o->name)) {
            break;
        }
        snprintf(o->name, sizeof(o->name), "/%.62s", path + 9);
        snprintf(full, sizeof(full), "/dev/shm%s", o->name);
        if (stat(full, &st) != 0) {
            break;
        }
        handle->buffer_id = ((uint64_t)st.st_dev << 40) ^ (uint64_t)st.st_ino;
        handle->base      = (uint64_t)(start - (uintptr_t)off);
        handle->size      = (uint64_t)st.st_size;
        handle->offset    = (uint64_t)(p - (uintptr_t)handle->base);
        status            = CG_OK;
        break;
    }
    fclose(maps);
    return status;
}

static cg_status_t cg_host_ipc_export(cg_dev_t *dev, const void *ptr, size_t size,
                                      cg_ipc_handle_t *handle)
{
    cg_dev_host_t        *h = cg_host_impl(dev);
    cg_host_ipc_opaque_t *o = (cg_host_ipc_opaque_t *)handle->opaque;
    cg_host_region_t     *r;

    memset(handle, 0, sizeof(*handle));
    pthread_mutex_lock(&h->lock);
    for (r = h->regions; r != NULL; r = r->next) {
        if (!r->imported && (const char *)ptr >= (char *)r->ptr &&
            (const char *)ptr + size <= (char *)r->ptr + r->size) {
            handle->buffer_id = r->buffer_id;
            handle->base      = (uint64_t)(uintptr_t)r->ptr;
            handle->size      = r->size;
            handle->offset    = (uint64_t)((const char *)ptr - (char *)r->ptr);
            snprintf(o->name, sizeof(o->name), "%s", r->name);
            pthread_mutex_unlock(&h->lock);
            return CG_OK;
        }
    }
    pthread_mutex_unlock(&h->lock);
    return cg_host_find_shm_mapping(ptr, size, handle);
}

static cg_status_t cg_host_ipc_import(cg_dev_t *dev, const cg_ipc_handle_t *handle, void **base)
{
    const cg_host_ipc_opaque_t *o = (const cg_host_ipc_opaque_t *)handle->opaque;
    cg_host_region_t           *r;
    cg_status_t                 status;

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
    cg_host_region_add(cg_host_impl(dev), r);
    *base = r->ptr;
    return CG_OK;
}

static void cg_host_ipc_close(cg_dev_t *dev, void *base)
{
    cg_host_mem_free(dev, base);
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
    double   t0    = 0;

    (void)dev;
    (void)stream;
    /* The host layer waits on the calling thread; a peer that never writes (it died) must
     * not hang the process for ever: give up after CG_HOST_FLAG_TIMEOUT seconds. */
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < value) {
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
    (void)dev;
    __atomic_store_n(flag, value, __ATOMIC_RELEASE);
    return CG_OK;
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
    .flag_release   = cg_host_flag_release,
    .thread_bind    = cg_host_thread_bind,
    .app_wait       = cg_host_app_wait,
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
    dev->ops                   = &cg_dev_host_ops;
    dev->kind                  = CG_DEV_KIND_HOST;
    dev->ordinal               = 0;
    dev->caps.ipc_user_buffers = 1;
    dev->caps.device_flags     = 1; /* synchronous, but the device-barrier code runs */
    dev->impl                  = h;
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

cg_status_t cg_dev_copy_typed(cg_dev_t *dev, void *dst, const void *src, size_t count,
                              cg_dtype_t dtype, cg_dev_stream_t *stream)
{
    cg_reduce_args_t args = {.dtype = dtype, .op = CG_OP_MINLOC, .count = count, .nsrc = 1,
                             .ndst = 1};

    if (!cg_dtype_has_padding(dtype)) {
        return dev->ops->copy(dev, dst, src, count * cg_dtype_size(dtype), stream);
    }
    /* a one-source reduction writes the fields, never the padding */
    args.srcs[0] = src;
    args.dsts[0] = dst;
    return dev->ops->reduce(dev, &args, stream);
}
