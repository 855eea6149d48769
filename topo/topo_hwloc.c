/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Reading the machine (or an hwloc XML file): GPUs, NICs, PCIe paths, NVLink matrix. */
#include "topo/cg_topo.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define CG_PCI_VENDOR_NVIDIA 0x10de

const char *cg_topo_hwloc_version(void)
{
    static char version[16];
    unsigned    v = hwloc_get_api_version();
    snprintf(version, sizeof(version), "%u.%u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
    return version;
}

static int cg_topo_is_gpu(hwloc_obj_t pci)
{
    unsigned cls = pci->attr->pcidev.class_id;
    return pci->attr->pcidev.vendor_id == CG_PCI_VENDOR_NVIDIA && (cls == 0x0300 || cls == 0x0302);
}

static int cg_topo_is_nvswitch(hwloc_obj_t obj)
{
    if (obj == NULL || obj->type != HWLOC_OBJ_PCI_DEVICE) {
        return 0;
    }
    return (obj->subtype && strcmp(obj->subtype, "NVSwitch") == 0) ||
           (obj->attr->pcidev.vendor_id == CG_PCI_VENDOR_NVIDIA && obj->attr->pcidev.class_id == 0x0680);
}

static void cg_topo_bus_id(hwloc_obj_t pci, char *out, size_t len)
{
    snprintf(out, len, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
             pci->attr->pcidev.dev, pci->attr->pcidev.func);
}

static int cg_topo_numa(hwloc_topology_t h, hwloc_obj_t obj)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(h, obj);
    return (anc && anc->nodeset) ? hwloc_bitmap_first(anc->nodeset) : -1;
}

static int cg_topo_is_host_bridge(hwloc_obj_t obj)
{
    return obj->type == HWLOC_OBJ_BRIDGE && obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST;
}

/* Bridges between obj and its ancestor anc. */
static int cg_topo_bridges_below(hwloc_obj_t obj, hwloc_obj_t anc)
{
    int n = 0;
    for (hwloc_obj_t o = obj->parent; o != NULL && o != anc; o = o->parent) {
        n += (o->type == HWLOC_OBJ_BRIDGE);
    }
    return n;
}

/* hwloc_get_common_ancestor_obj() compares depths, which I/O objects do not order. */
static hwloc_obj_t cg_topo_common_ancestor(hwloc_obj_t a, hwloc_obj_t b)
{
    for (hwloc_obj_t x = a; x != NULL; x = x->parent) {
        for (hwloc_obj_t y = b; y != NULL; y = y->parent) {
            if (x == y) {
                return x;
            }
        }
    }
    return NULL;
}

static cg_topo_path_t cg_topo_pci_path(hwloc_topology_t h, hwloc_obj_t a, hwloc_obj_t b)
{
    hwloc_obj_t common;

    if (a == b) {
        return CG_PATH_SELF;
    }
    common = cg_topo_common_ancestor(a, b);
    if (common == NULL) {
        return CG_PATH_UNKNOWN;
    }
    if (common->type == HWLOC_OBJ_BRIDGE || common->type == HWLOC_OBJ_PCI_DEVICE) {
        if (cg_topo_is_host_bridge(common)) {
            return CG_PATH_PHB;
        }
        /* one switch: an upstream port and at most one downstream port on each side */
        return (cg_topo_bridges_below(a, common) <= 1 && cg_topo_bridges_below(b, common) <= 1)
                   ? CG_PATH_PIX : CG_PATH_PXB;
    }
    return hwloc_get_non_io_ancestor_obj(h, a) == hwloc_get_non_io_ancestor_obj(h, b)
               ? CG_PATH_NODE : CG_PATH_SYS;
}

static void cg_topo_add_gpu(cg_topo_t *topo, hwloc_topology_t h, hwloc_obj_t pci)
{
    cg_topo_gpu_t *g;
    const char    *model;

    if (topo->num_gpus == CG_TOPO_MAX_GPUS) {
        cg_warn(CG_SUB_TOPO, "more than %d GPUs: the others are ignored", CG_TOPO_MAX_GPUS);
        return;
    }
    g = &topo->gpu[topo->num_gpus];
    cg_topo_bus_id(pci, g->bus_id, sizeof(g->bus_id));
    snprintf(g->name, sizeof(g->name), "GPU%d", topo->num_gpus);
    model = hwloc_obj_get_info_by_name(pci, "PCIDevice");
    for (hwloc_obj_t os = pci->io_first_child; os != NULL; os = os->next_sibling) {
        if (os->type == HWLOC_OBJ_OS_DEVICE && os->name &&
            (strncmp(os->name, "cuda", 4) == 0 || strncmp(os->name, "nvml", 4) == 0)) {
            const char *m = hwloc_obj_get_info_by_name(os, "GPUModel");
            model = m ? m : model;
        }
    }
    if (model) {
        snprintf(g->model, sizeof(g->model), "%s", model);
    } else {
        snprintf(g->model, sizeof(g->model), "NVIDIA %04x", pci->attr->pcidev.device_id);
    }
    g->numa = cg_topo_numa(h, pci);
    topo->num_gpus++;
}

/* A NIC is a network PCI device with an OS device: OpenFabrics name first. */
static void cg_topo_add_nic(cg_topo_t *topo, hwloc_topology_t h, hwloc_obj_t pci)
{
    const char *rdma = NULL, *net = NULL;
    cg_topo_nic_t *n;

    for (hwloc_obj_t os = pci->io_first_child; os != NULL; os = os->next_sibling) {
        if (os->type != HWLOC_OBJ_OS_DEVICE || os->name == NULL) {
            continue;
        }
        if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && rdma == NULL) {
            rdma = os->name;
        } else if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && net == NULL) {
            net = os->name;
        }
    }
    if (rdma == NULL && net == NULL) {
        return;
    }
    if (topo->num_nics == CG_TOPO_MAX_NICS) {
        cg_warn(CG_SUB_TOPO, "more than %d NICs: the others are ignored", CG_TOPO_MAX_NICS);
        return;
    }
    n = &topo->nic[topo->num_nics++];
    snprintf(n->name, sizeof(n->name), "%s", rdma ? rdma : net);
    cg_topo_bus_id(pci, n->bus_id, sizeof(n->bus_id));
    n->numa = cg_topo_numa(h, pci);
    n->rdma = (rdma != NULL);
}

static int cg_topo_gpu_index_of(const cg_topo_t *topo, hwloc_obj_t obj)
{
    char bus[16];

    while (obj != NULL && obj->type == HWLOC_OBJ_OS_DEVICE) {
        obj = obj->parent;
    }
    if (obj == NULL || obj->type != HWLOC_OBJ_PCI_DEVICE) {
        return -2;
    }
    if (cg_topo_is_nvswitch(obj)) {
        return -1;
    }
    cg_topo_bus_id(obj, bus, sizeof(bus));
    return cg_topo_find_gpu(topo, bus) >= 0 ? cg_topo_find_gpu(topo, bus) : -2;
}

static void cg_topo_read_nvlink_matrix(cg_topo_t *topo, hwloc_topology_t h)
{
    struct hwloc_distances_s *d = NULL;
    unsigned                  nr = 1;
    int                      *kind;

    if (hwloc_distances_get_by_name(h, "NVLinkBandwidth", &nr, &d, 0) != 0 || nr == 0) {
        return;
    }
    kind = calloc(d->nbobjs, sizeof(int));
    if (kind != NULL) {
        for (unsigned i = 0; i < d->nbobjs; i++) {
            kind[i] = cg_topo_gpu_index_of(topo, d->objs[i]);
        }
        cg_topo_set_nvlink(topo, (int)d->nbobjs, kind, d->values);
        snprintf(topo->nvlink_from, sizeof(topo->nvlink_from), "XML NVLinkBandwidth");
        free(kind);
    }
    hwloc_distances_release(h, d);
}

cg_status_t cg_topo_load(const char *xml_file, cg_topo_t **topo_out)
{
    hwloc_topology_t h;
    hwloc_obj_t      gpus[CG_TOPO_MAX_GPUS], nics[CG_TOPO_MAX_NICS];
    cg_topo_t       *topo = calloc(1, sizeof(*topo));
    int              from_xml = (xml_file != NULL && xml_file[0] != '\0');

    if (topo == NULL) {
        return CG_ERR_NO_MEMORY;
    }
    snprintf(topo->nvlink_from, sizeof(topo->nvlink_from), "none");
    snprintf(topo->source, sizeof(topo->source), "%s%s", from_xml ? "xml " : "live", from_xml ? xml_file : "");
    if (hwloc_topology_init(&h) != 0) {
        free(topo);
        return CG_ERR_INTERNAL;
    }
    /* Without this hwloc silently drops the PCI and OS devices (and the NVLink matrix). */
    hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (from_xml && (access(xml_file, R_OK) != 0 || hwloc_topology_set_xml(h, xml_file) != 0)) {
        cg_warn(CG_SUB_TOPO, "cannot read topology file %s: using safe defaults", xml_file);
        hwloc_topology_destroy(h);
        free(topo);
        return CG_ERR_IO;
    }
    if (hwloc_topology_load(h) != 0) {
        cg_warn(CG_SUB_TOPO, "%s is not a valid hwloc topology: using safe defaults",
                from_xml ? xml_file : "the machine's topology");
        hwloc_topology_destroy(h);
        free(topo);
        return CG_ERR_PARSE;
    }
    for (hwloc_obj_t pci = NULL; (pci = hwloc_get_next_pcidev(h, pci)) != NULL;) {
        unsigned cls = pci->attr->pcidev.class_id >> 8;
        if (cg_topo_is_gpu(pci)) {
            if (topo->num_gpus < CG_TOPO_MAX_GPUS) {
                gpus[topo->num_gpus] = pci;
            }
            cg_topo_add_gpu(topo, h, pci);
        } else if (cls == 0x02) { /* network controller */
            int before = topo->num_nics;
            cg_topo_add_nic(topo, h, pci);
            if (topo->num_nics > before) {
                nics[before] = pci;
            }
        }
    }
    for (int a = 0; a < topo->num_gpus; a++) {
        for (int b = 0; b < topo->num_gpus; b++) {
            topo->gpu_path[a][b] = cg_topo_pci_path(h, gpus[a], gpus[b]);
        }
        for (int n = 0; n < topo->num_nics; n++) {
            topo->nic_path[a][n] = cg_topo_pci_path(h, gpus[a], nics[n]);
        }
    }
    cg_topo_read_nvlink_matrix(topo, h);
    hwloc_topology_destroy(h);
    if (!from_xml) {
        char reason[128];
        if (cg_topo_add_nvml(topo, reason, sizeof(reason)) != CG_OK && topo->num_gpus > 1) {
            cg_warn(CG_SUB_TOPO, "no NVLink information (%s): GPUs classified by their PCIe paths",
                    reason);
        }
    }
    cg_detail(CG_SUB_TOPO, "topology (%s): %d GPUs, %d NICs, NVLink from %s", topo->source,
              topo->num_gpus, topo->num_nics, topo->nvlink_from);
    *topo_out = topo;
    return CG_OK;
}
