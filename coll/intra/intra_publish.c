/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Zero copy: every rank publishes the buffers of the call (IPC handles in its control page)
 * and maps its peers'. Register once: the group keeps a table of the buffers that every
 * rank has already shared in a call that succeeded everywhere, the same table on every
 * rank, since it changes only after a barrier at which every rank saw the same handles and
 * the same outcome. A call whose buffers are all in it exports nothing (this rank's handle
 * is republished from the table), imports nothing (the table holds the mappings open) and
 * needs one host barrier, which the call's inputs need anyway; a call with a new buffer
 * pays the export, the imports and a second barrier, after which its buffers join the
 * table (least recently used entry out when full). A buffer freed and allocated again has
 * another buffer id, so it is new; the entries of the freed one that overlap it leave the
 * table (and the registry closes their mappings as stale).
 */
#include "coll/intra/intra.h"

#include <string.h>

static int cg_known_same(const cg_intra_known_t *entry, int owner, const cg_ipc_handle_t *handle)
{
    return entry->handle.buffer_id == handle->buffer_id && entry->owner == owner &&
           entry->handle.base == handle->base && entry->handle.size == handle->size;
}

static cg_intra_known_t *cg_known_find(cg_intra_t *group, int owner, const cg_ipc_handle_t *handle)
{
    if (handle->buffer_id == 0) {
        return NULL;
    }
    for (int i = 0; i < CG_INTRA_KNOWN_MAX; i++) {
        if (cg_known_same(&group->known[i], owner, handle)) {
            return &group->known[i];
        }
    }
    return NULL;
}

static void cg_known_forget(cg_intra_known_t *entry)
{
    cg_ipc_unhold(entry->mapping);
    memset(entry, 0, sizeof(*entry));
}

/* Every rank does the same with the same handles, so the tables stay equal: a known buffer
 * is marked used (known_only: nothing else); for a new one, entries of the owner that overlap it go (it freed them),
 * then the first free entry or the least recently used one (the first of those on a tie)
 * takes it. */
static void cg_known_add(cg_intra_t *group, int owner, const cg_ipc_handle_t *handle,
                         int known_only)
{
    cg_intra_known_t *slot = NULL;

    if (handle->buffer_id == 0) {
        return;
    }
    if ((slot = cg_known_find(group, owner, handle)) != NULL || known_only) {
        if (slot != NULL) {
            slot->last_use = group->publishes; /* used by this call too: not the next out */
        }
        return;
    }
    for (int i = 0; i < CG_INTRA_KNOWN_MAX; i++) {
        cg_intra_known_t *entry = &group->known[i];
        if (entry->handle.buffer_id != 0 && entry->owner == owner &&
            entry->handle.base < handle->base + handle->size &&
            handle->base < entry->handle.base + entry->handle.size) {
            cg_known_forget(entry);
        }
    }
    for (int i = 0; i < CG_INTRA_KNOWN_MAX && (slot == NULL || slot->handle.buffer_id != 0); i++) {
        cg_intra_known_t *entry = &group->known[i];
        if (slot == NULL || entry->handle.buffer_id == 0 || entry->last_use < slot->last_use) {
            slot = entry;
        }
    }
    if (slot->handle.buffer_id != 0) {
        cg_known_forget(slot);
    }
    slot->owner    = owner;
    slot->last_use = group->publishes;
    slot->handle   = *handle;
    if (owner == group->rank) {
        return;
    }
    for (int i = 0; i < group->num_pins; i++) { /* the mapping this call acquired */
        if (group->pin_owner[i] == owner && group->pin_ids[i] == handle->buffer_id) {
            slot->mapping = group->pins[i];
            cg_ipc_hold(slot->mapping);
            return;
        }
    }
    /* cannot happen: every rank mapped every handle when this runs */
    cg_error(CG_SUB_IPC, "a buffer of local rank %d joined the known buffers unmapped", owner);
    group->failed = 1;
}

void cg_intra_known_clear(cg_intra_t *group)
{
    for (int i = 0; i < CG_INTRA_KNOWN_MAX; i++) {
        if (group->known[i].handle.buffer_id != 0) {
            cg_known_forget(&group->known[i]);
        }
    }
}

/* The caller's answers, kept by address: they live as long as the run. */
void cg_intra_asked(cg_intra_t *group, const void *buf0, const cg_mem_attr_t *attr0,
                    const void *buf1, const cg_mem_attr_t *attr1)
{
    const int dev0 = attr0 != NULL && attr0->kind == CG_MEM_DEVICE;
    const int dev1 = attr1 != NULL && attr1->kind == CG_MEM_DEVICE;

    group->asked_ptr[0]  = dev0 ? buf0 : NULL;
    group->asked_attr[0] = dev0 ? attr0 : NULL;
    group->asked_ptr[1]  = dev1 ? buf1 : NULL;
    group->asked_attr[1] = dev1 ? attr1 : NULL;
}

/* This rank's buffer: republished from the table when known, else exported (*fresh set:
 * cg_intra_exported lets go of what the export holds once the peers are done with it). *ok
 * is cleared when it cannot be shared (every rank then runs the copy variant). */
static cg_status_t cg_intra_export(cg_intra_t *group, const void *buf, size_t bytes,
                                   cg_ipc_handle_t *handle, int *ok, int *fresh)
{
    cg_mem_attr_t     attr;
    cg_status_t       status;

    memset(handle, 0, sizeof(*handle) - sizeof(handle->opaque));
    if (buf == NULL || bytes == 0) {
        return CG_OK;
    }
    if (buf == group->asked_ptr[0] || buf == group->asked_ptr[1]) { /* asked at the entry */
        attr   = *group->asked_attr[buf == group->asked_ptr[0] ? 0 : 1];
        status = CG_OK;
    } else {
        status = group->dev->ops->mem_query(group->dev, buf, &attr);
    }
    if (status == CG_OK && attr.buffer_id != 0 && attr.kind == CG_MEM_DEVICE && !attr.foreign &&
        (uintptr_t)buf >= attr.base && (uintptr_t)buf + bytes <= attr.base + attr.size) {
        const cg_ipc_handle_t id = {.buffer_id = attr.buffer_id, .base = attr.base,
                                    .size = attr.size};
        const cg_intra_known_t *entry = cg_known_find(group, group->rank, &id);
        if (entry != NULL) {
            *handle        = entry->handle;
            handle->offset = (uint64_t)((uintptr_t)buf - attr.base);
            return CG_OK;
        }
    }
    status = group->dev->ops->ipc_export(group->dev, buf, bytes, handle);
    if (status == CG_OK) {
        cg_count(CG_CNT_IPC_EXPORTS, 1);
        *fresh = 1;
    }
    if (status == CG_ERR_UNSUPPORTED) {
        *ok = 0; /* not shareable memory: everyone runs the copy variant */
        memset(handle, 0, sizeof(*handle));
        return CG_OK;
    }
    return status;
}

static int cg_intra_unreachable_told; /* a peer's buffer this GPU cannot reach: said once */

/* Map peer p's published handle; a failure only clears *mapped (the call degrades). */
static void cg_intra_map_peer(cg_intra_t *group, int p, const cg_ipc_handle_t *handle, char **ptr,
                              int *mapped)
{
    cg_status_t status;

    *ptr = NULL;
    if (handle->buffer_id == 0 || !*mapped) {
        return;
    }
    status = cg_ipc_acquire(group->dev, group->proc_ids[p], handle, ptr, &group->pins[group->num_pins]);
    if (status == CG_OK) {
        group->pin_owner[group->num_pins] = p;
        group->pin_ids[group->num_pins]   = handle->buffer_id;
        group->num_pins++;
        return;
    }
    if (status != CG_ERR_UNSUPPORTED || cg_once(&cg_intra_unreachable_told)) {
        cg_warn(CG_SUB_IPC, "cannot map a buffer of local rank %d (%s): this call copies "
                "through scratch memory instead%s", p, cg_status_string(status),
                status == CG_ERR_UNSUPPORTED ? " (said once: this GPU cannot reach that memory)"
                                             : "");
    } else {
        cg_debug(CG_SUB_IPC, "a buffer of local rank %d is out of reach: copied", p);
    }
    *ptr    = NULL;
    *mapped = 0;
}

/* Every handle published is in the table (the same answer on every rank); if so, fill
 * peer_in/peer_out from the held mappings. */
static int cg_intra_all_known(cg_intra_t *group, const void *in, void *out, char *peer_in[],
                              char *peer_out[])
{
    cg_intra_known_t *found[2 * CG_INTRA_MAX];

    for (int p = 0; p < group->size; p++) {
        const cg_ipc_handle_t *handles[2] = {&group->ctl[p]->in, &group->ctl[p]->out};
        for (int k = 0; k < 2; k++) {
            found[2 * p + k] = cg_known_find(group, p, handles[k]);
            if (handles[k]->buffer_id != 0 && found[2 * p + k] == NULL) {
                return 0;
            }
        }
    }
    for (int p = 0; p < group->size; p++) {
        char **slots[2] = {&peer_in[p], &peer_out[p]};
        for (int k = 0; k < 2; k++) {
            cg_intra_known_t *entry = found[2 * p + k];
            *slots[k] = NULL;
            if (entry != NULL) {
                entry->last_use = group->publishes;
                if (p != group->rank) {
                    const cg_ipc_handle_t *handle = k ? &group->ctl[p]->out : &group->ctl[p]->in;
                    *slots[k] = cg_ipc_local(entry->mapping) + handle->offset;
                }
            }
        }
    }
    peer_in[group->rank]  = (char *)in;
    peer_out[group->rank] = out;
    return 1;
}

/* The peers are done with this call's fresh exports (mapped, or given up at a barrier
 * after which nobody imports): what they hold goes. */
static void cg_intra_exported(cg_intra_t *group, const cg_ipc_handle_t *in,
                              const cg_ipc_handle_t *out, const int fresh[2])
{
    if (group->dev->ops->ipc_export_done == NULL) {
        return;
    }
    if (fresh[0]) {
        group->dev->ops->ipc_export_done(group->dev, in);
    }
    if (fresh[1]) {
        group->dev->ops->ipc_export_done(group->dev, out);
    }
}

cg_status_t cg_intra_publish(cg_intra_t *group, cg_status_t status, const void *in, size_t in_bytes,
                             void *out, size_t out_bytes, char *peer_in[], char *peer_out[],
                             int *all_ok)
{
    cg_intra_ctl_t *mine = group->ctl[group->rank];
    cg_ipc_handle_t exported[2];
    int             ok = 1, mapped = 1, fresh[2] = {0, 0};

    *all_ok = 0;
    group->publishes++;
    if (status == CG_OK) {
        status = cg_intra_export(group, in, in_bytes, &mine->in, &ok, &fresh[0]);
    }
    if (status == CG_OK) {
        status = cg_intra_export(group, out, out_bytes, &mine->out, &ok, &fresh[1]);
    }
    exported[0]   = mine->in; /* this page is the peers' to read from the barrier on */
    exported[1]   = mine->out;
    mine->meta_ok = (uint32_t)ok;
    status        = cg_intra_host_barrier(group, status);
    if (status != CG_OK) { /* no peer maps anything after a failed barrier */
        cg_intra_exported(group, &exported[0], &exported[1], fresh);
        return status;
    }
    for (int p = 0; p < group->size; p++) {
        ok &= (int)group->ctl[p]->meta_ok;
    }
    if (!ok) {
        cg_intra_exported(group, &exported[0], &exported[1], fresh);
        return CG_OK;
    }
    if (cg_intra_all_known(group, in, out, peer_in, peer_out)) {
        *all_ok = 1; /* nothing was exported: every handle is in the table */
        return CG_OK;
    }
    for (int p = 0; p < group->size; p++) {
        if (p == group->rank) {
            peer_in[p]  = (char *)in;
            peer_out[p] = out;
            continue;
        }
        cg_intra_map_peer(group, p, &group->ctl[p]->in, &peer_in[p], &mapped);
        cg_intra_map_peer(group, p, &group->ctl[p]->out, &peer_out[p], &mapped);
    }
    /* Every rank must know that every rank mapped its peers before anyone writes. */
    mine->map_ok = (uint32_t)mapped;
    status       = cg_intra_host_barrier(group, status);
    cg_intra_exported(group, &exported[0], &exported[1], fresh);
    for (int p = 0; p < group->size && status == CG_OK; p++) {
        mapped &= (int)group->ctl[p]->map_ok;
    }
    if (status == CG_OK && mapped) {
        /* the same handles, in the same order; the known ones marked first, so that none
         * of this call's is the least recently used when a new one needs a place */
        for (int pass = 0; pass < 2; pass++) {
            for (int p = 0; p < group->size; p++) {
                cg_known_add(group, p, &group->ctl[p]->in, pass == 0);
                cg_known_add(group, p, &group->ctl[p]->out, pass == 0);
            }
        }
    } else {
        cg_intra_unpin(group);
    }
    *all_ok = (status == CG_OK && mapped);
    return status;
}
