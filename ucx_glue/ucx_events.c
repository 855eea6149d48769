/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * UCX's memory events for the component: UCM reports every release of address space before
 * it happens (its hooks on munmap, mremap, madvise, brk, shmdt; the same hooks UCX's own
 * registration and memory-type caches rely on, installed once per process whoever asks).
 */
#include "ucx_glue/cg_ucx.h"

#include <ucm/api/ucm.h>

static void (*cg_ucx_release_fn)(void *arg, const void *addr, size_t bytes);
static void  *cg_ucx_release_arg;

static void cg_ucx_vm_unmapped(ucm_event_type_t type, ucm_event_t *event, void *arg)
{
    (void)type;
    (void)arg;
    cg_ucx_release_fn(cg_ucx_release_arg, event->vm_unmapped.address, event->vm_unmapped.size);
}

cg_status_t cg_ucx_watch_releases(void (*release)(void *arg, const void *addr, size_t bytes),
                                  void *arg)
{
    ucs_status_t status;

    if (cg_ucx_release_fn != NULL) {
        return CG_ERR_UNSUPPORTED; /* one watcher */
    }
    cg_ucx_release_fn  = release;
    cg_ucx_release_arg = arg;
    status = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, cg_ucx_vm_unmapped, NULL);
    if (status != UCS_OK) {
        cg_ucx_release_fn = NULL;
        cg_detail(CG_SUB_UCX, "no memory events from UCX: %s", ucs_status_string(status));
        return CG_ERR_UNSUPPORTED;
    }
    return CG_OK;
}

void cg_ucx_unwatch_releases(void)
{
    if (cg_ucx_release_fn != NULL) {
        ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, cg_ucx_vm_unmapped, NULL);
        cg_ucx_release_fn = NULL;
    }
}
