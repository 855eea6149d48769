/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The simulated GPU's page-locked host memory and its reset (kernels/sim/cg_sim.h): what
 * cudaMallocHost hands out is tracked here, so that cudaDeviceReset can take it away with
 * the rest of the process's device state.
 */
#include "kernels/sim/cg_sim_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define CG_SIM_HOOKS 8

typedef struct cg_sim_pinned {
    void                 *ptr;
    size_t                mapped;
    struct cg_sim_pinned *next;
} cg_sim_pinned_t;

typedef struct {
    void (*fn)(void *arg);
    void  *arg;
} cg_sim_hook_t;

static pthread_mutex_t  cg_sim_reset_lock = PTHREAD_MUTEX_INITIALIZER; /* pinned, resets */
/* held while the hooks run: a hook removed meanwhile (its library closing) waits for it */
static pthread_mutex_t  cg_sim_hook_lock  = PTHREAD_MUTEX_INITIALIZER;
static cg_sim_pinned_t *cg_sim_pinned;
static cg_sim_hook_t    cg_sim_hooks[CG_SIM_HOOKS];
static int              cg_sim_resets;

static size_t cg_sim_pinned_round(size_t bytes)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);

    return ((bytes ? bytes : 1) + page - 1) / page * page;
}

CG_SIM_EXPORT int cg_sim_host_alloc(void **ptr, size_t bytes)
{
    cg_sim_pinned_t *pinned = malloc(sizeof(*pinned));
    const size_t     mapped = cg_sim_pinned_round(bytes);

    if (ptr == NULL || pinned == NULL) {
        free(pinned);
        return ptr == NULL ? CG_SIM_ERR_INVALID : CG_SIM_ERR_NO_MEMORY;
    }
    pinned->ptr = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pinned->ptr == MAP_FAILED) {
        const int status = errno == ENOMEM ? CG_SIM_ERR_NO_MEMORY : CG_SIM_ERR_SYSTEM;
        free(pinned);
        return status;
    }
    pinned->mapped = mapped;
    pthread_mutex_lock(&cg_sim_reset_lock);
    pinned->next  = cg_sim_pinned;
    cg_sim_pinned = pinned;
    pthread_mutex_unlock(&cg_sim_reset_lock);
    *ptr = pinned->ptr;
    return CG_SIM_OK;
}

/* Is [ptr, ptr + bytes) inside one page-locked allocation (CG_SIM_OK), which a kernel may
 * reach, or not (CG_SIM_ERR_INVALID: pageable memory, or gone with a reset)? */
CG_SIM_EXPORT int cg_sim_host_query(const void *ptr, size_t bytes)
{
    const uintptr_t start  = (uintptr_t)ptr;
    int             status = CG_SIM_ERR_INVALID;

    pthread_mutex_lock(&cg_sim_reset_lock);
    for (const cg_sim_pinned_t *at = cg_sim_pinned; at != NULL; at = at->next) {
        const uintptr_t base = (uintptr_t)at->ptr;
        if (start >= base && start - base <= at->mapped && bytes <= at->mapped - (start - base)) {
            status = CG_SIM_OK;
            break;
        }
    }
    pthread_mutex_unlock(&cg_sim_reset_lock);
    return status;
}

/* Not ours (or gone with a reset): CG_SIM_ERR_INVALID, as cudaFreeHost's invalid value. */
CG_SIM_EXPORT int cg_sim_host_free(void *ptr)
{
    cg_sim_pinned_t *found = NULL;

    if (ptr == NULL) {
        return CG_SIM_OK;
    }
    (void)cg_sim_streams_sync_all(); /* cudaFreeHost waits for the device */
    pthread_mutex_lock(&cg_sim_reset_lock);
    for (cg_sim_pinned_t **at = &cg_sim_pinned; *at != NULL; at = &(*at)->next) {
        if ((*at)->ptr == ptr) {
            found = *at;
            *at   = found->next;
            break;
        }
    }
    pthread_mutex_unlock(&cg_sim_reset_lock);
    if (found == NULL) {
        return CG_SIM_ERR_INVALID;
    }
    munmap(found->ptr, found->mapped);
    free(found);
    return CG_SIM_OK;
}

CG_SIM_EXPORT int cg_sim_reset_hook(void (*fn)(void *arg), void *arg, int add)
{
    int status = add ? CG_SIM_ERR_NO_MEMORY : CG_SIM_ERR_INVALID;

    if (fn == NULL) {
        return CG_SIM_ERR_INVALID;
    }
    pthread_mutex_lock(&cg_sim_hook_lock);
    for (int i = 0; i < CG_SIM_HOOKS; i++) {
        cg_sim_hook_t *hook = &cg_sim_hooks[i];
        if (add && hook->fn == NULL) {
            *hook  = (cg_sim_hook_t){.fn = fn, .arg = arg};
            status = CG_SIM_OK;
            break;
        }
        if (!add && hook->fn == fn && hook->arg == arg) {
            *hook  = (cg_sim_hook_t){0};
            status = CG_SIM_OK;
            break;
        }
    }
    pthread_mutex_unlock(&cg_sim_hook_lock);
    return status;
}

CG_SIM_EXPORT int cg_sim_device_reset(void)
{
    cg_sim_pinned_t *pinned;
    int              resets;

    /* the device work first, while its memory is still there */
    pthread_mutex_lock(&cg_sim_hook_lock);
    for (int i = 0; i < CG_SIM_HOOKS; i++) {
        if (cg_sim_hooks[i].fn != NULL) {
            cg_sim_hooks[i].fn(cg_sim_hooks[i].arg);
        }
    }
    pthread_mutex_unlock(&cg_sim_hook_lock);
    cg_sim_stream_drop();
    cg_sim_regions_revoke();
    pthread_mutex_lock(&cg_sim_reset_lock);
    pinned        = cg_sim_pinned;
    cg_sim_pinned = NULL;
    resets        = ++cg_sim_resets;
    pthread_mutex_unlock(&cg_sim_reset_lock);
    while (pinned != NULL) {
        cg_sim_pinned_t *next = pinned->next;
        cg_sim_revoke_range(pinned->ptr, pinned->mapped);
        free(pinned);
        pinned = next;
    }
    return resets;
}
