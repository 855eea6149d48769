/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * NVLink links from NVML, loaded at run time (Debian's hwloc has no NVML plugin). For each
 * GPU and each active link: the remote end (a GPU of the topology, an NVSwitch, or something
 * else) and the link version, which gives its unidirectional bandwidth.
 */
#include "topo/cg_topo.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CG_NVML_MAX_LINKS 18

/* The NVML ABI types used here (stable since NVML 2.285). */
typedef int   cg_nvml_return_t;
typedef void *cg_nvml_device_t;
typedef struct {
    char     busIdLegacy[16];
    unsigned domain, bus, device;
    unsigned pciDeviceId; /* device id << 16 | vendor id */
    unsigned pciSubSystemId;
    char     busId[32];
} cg_nvml_pci_t;

typedef struct {
    cg_nvml_return_t (*init)(void);
    cg_nvml_return_t (*shutdown)(void);
    cg_nvml_return_t (*by_bus_id)(const char *bus_id, cg_nvml_device_t *device);
    cg_nvml_return_t (*link_state)(cg_nvml_device_t device, unsigned link, int *active);
    cg_nvml_return_t (*link_remote)(cg_nvml_device_t device, unsigned link, cg_nvml_pci_t *pci);
    cg_nvml_return_t (*link_version)(cg_nvml_device_t device, unsigned link, unsigned *version);
} cg_nvml_t;

/* Per link and direction, by nvmlNvlinkVersion_t: 1 NVLink 1.0 (20 GB/s); 2 to 6 NVLink
 * 2.0, 2.2, 3.0, 3.1, 4.0 (25 GB/s: H100's 18 links carry 450); 7 NVLink 5.0 (50 GB/s).
 * Some drivers report 7 for H100: its links then show twice their bandwidth (shown by
 * coll_gpu_info only: the class and the model test for links, not their speed). */
static uint64_t cg_nvml_link_mbps(unsigned version)
{
    return version == 1 ? 20000 : version <= 6 ? 25000 : 50000;
}

/* Objects of the matrix: the GPUs first, then every other remote end, by PCI bus id. */
static int cg_nvml_peer(char (*ids)[32], int *kind, int *n, const cg_nvml_pci_t *pci,
                        const cg_topo_t *topo)
{
    char id[32];
    int  g;

    snprintf(id, sizeof(id), "%04x:%02x:%02x.0", pci->domain, pci->bus, pci->device);
    if ((g = cg_topo_find_gpu(topo, id)) >= 0) {
        return g;
    }
    for (int i = topo->num_gpus; i < *n; i++) {
        if (strcmp(ids[i], id) == 0) {
            return i;
        }
    }
    snprintf(ids[*n], sizeof(ids[*n]), "%s", id);
    kind[*n] = ((pci->pciDeviceId & 0xffff) == 0x10de) ? -1 : -2; /* NVIDIA non-GPU: NVSwitch */
    return (*n)++;
}

cg_status_t cg_topo_add_nvml(cg_topo_t *topo, char *reason, size_t reason_len)
{
    const int  max = CG_TOPO_MAX_GPUS * (CG_NVML_MAX_LINKS + 1);
    cg_nvml_t  nv;
    void      *lib;
    int        n = topo->num_gpus, links = 0;
    int       *kind;
    uint64_t  *bw;
    char     (*ids)[32];

    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(reason, reason_len, "NVML (libnvidia-ml.so.1) not found");
        return CG_ERR_NOT_FOUND;
    }
    *(void **)&nv.init         = dlsym(lib, "nvmlInit_v2");
    *(void **)&nv.shutdown     = dlsym(lib, "nvmlShutdown");
    *(void **)&nv.by_bus_id    = dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    *(void **)&nv.link_state   = dlsym(lib, "nvmlDeviceGetNvLinkState");
    *(void **)&nv.link_remote  = dlsym(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    *(void **)&nv.link_version = dlsym(lib, "nvmlDeviceGetNvLinkVersion");
    if (!nv.init || !nv.shutdown || !nv.by_bus_id || !nv.link_state || !nv.link_remote ||
        !nv.link_version || nv.init() != 0) {
        snprintf(reason, reason_len, "NVML cannot be initialised");
        dlclose(lib);
        return CG_ERR_NOT_FOUND;
    }
    kind = calloc((size_t)max, sizeof(int));
    bw   = calloc((size_t)max * (size_t)max, sizeof(uint64_t));
    ids  = calloc((size_t)max, sizeof(*ids));
    for (int g = 0; kind && bw && ids && g < topo->num_gpus; g++) {
        cg_nvml_device_t dev;
        kind[g] = g;
        if (nv.by_bus_id(topo->gpu[g].bus_id, &dev) != 0) {
            continue;
        }
        for (unsigned l = 0; l < CG_NVML_MAX_LINKS; l++) {
            int           active = 0;
            unsigned      version = 0;
            cg_nvml_pci_t pci;
            if (nv.link_state(dev, l, &active) != 0) {
                break;
            }
            if (!active || nv.link_remote(dev, l, &pci) != 0 || nv.link_version(dev, l, &version) != 0) {
                continue;
            }
            int p = cg_nvml_peer(ids, kind, &n, &pci, topo);
            bw[g * max + p] += cg_nvml_link_mbps(version);
            if (kind[p] < 0) {
                bw[p * max + g] += cg_nvml_link_mbps(version);
            }
            links++;
        }
    }
    if (links > 0) {
        /* compact the max x max matrix to n x n */
        for (int i = 0; i < n; i++) {
            memmove(&bw[i * n], &bw[i * max], (size_t)n * sizeof(uint64_t));
        }
        cg_topo_set_nvlink(topo, n, kind, bw);
        snprintf(topo->nvlink_from, sizeof(topo->nvlink_from), "NVML");
    } else {
        snprintf(reason, reason_len, "NVML reports no active NVLink");
    }
    free(kind), free(bw), free(ids);
    nv.shutdown();
    dlclose(lib);
    return links > 0 ? CG_OK : CG_ERR_NOT_FOUND;
}
