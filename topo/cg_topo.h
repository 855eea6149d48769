/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Node topology for coll/gpu: the GPUs and NICs of the machine (from hwloc, or an hwloc XML
 * file), how every pair of GPUs is connected (NVLink from NVML at run time or from the XML's
 * "NVLinkBandwidth" matrix, else the PCIe path), and for the GPUs the ranks of one node use:
 * a classification that drives the intra-node algorithm and the rail map (local rank -> NIC)
 * that the inter-node phase uses.
 *
 * Debian's hwloc has no CUDA/NVML plugins: GPUs are found as NVIDIA PCI devices and matched
 * to CUDA devices through their PCI bus id.
 */
#ifndef CG_TOPO_H
#define CG_TOPO_H

#include "base/cg_base.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CG_TOPO_MAX_GPUS  32
#define CG_TOPO_MAX_NICS  32
#define CG_TOPO_MAX_RANKS 32

/* How two PCI devices reach each other, best first (nvidia-smi topo -m names). */
typedef enum {
    CG_PATH_SELF = 0,
    CG_PATH_NVLINK,  /* NVLink, direct or through NVSwitch */
    CG_PATH_PIX,     /* at most one PCIe switch */
    CG_PATH_PXB,     /* several PCIe switches, no host bridge */
    CG_PATH_PHB,     /* through a PCIe host bridge */
    CG_PATH_NODE,    /* host bridges of one NUMA node */
    CG_PATH_SYS,     /* across NUMA nodes / sockets */
    CG_PATH_UNKNOWN
} cg_topo_path_t;

typedef struct {
    char     bus_id[16];  /* "0000:18:00.0" */
    char     name[16];    /* cudaN/nvmlN OS device name, else "GPU<i>" */
    char     model[48];
    int      numa;        /* NUMA node (os index), -1 unknown */
} cg_topo_gpu_t;

typedef struct {
    char name[32];        /* mlx5_0 (OpenFabrics) or the network interface */
    char bus_id[16];
    int  numa;
    int  rdma;            /* OpenFabrics device (InfiniBand/RoCE) */
} cg_topo_nic_t;

typedef struct cg_topo {
    int            num_gpus;
    int            num_nics;
    cg_topo_gpu_t  gpu[CG_TOPO_MAX_GPUS];
    cg_topo_nic_t  nic[CG_TOPO_MAX_NICS];
    cg_topo_path_t gpu_path[CG_TOPO_MAX_GPUS][CG_TOPO_MAX_GPUS]; /* PCIe path */
    cg_topo_path_t nic_path[CG_TOPO_MAX_GPUS][CG_TOPO_MAX_NICS];
    uint32_t       nvlink_mbps[CG_TOPO_MAX_GPUS][CG_TOPO_MAX_GPUS]; /* 0: no NVLink */
    uint8_t        nvswitch[CG_TOPO_MAX_GPUS][CG_TOPO_MAX_GPUS];    /* through NVSwitch */
    char           source[160];   /* "live", "xml <file>" */
    char           nvlink_from[32]; /* "NVML", "XML NVLinkBandwidth", "none" */
} cg_topo_t;

/* Load the machine's topology (xml_file NULL or "") or an hwloc XML file. On a malformed
 * file: CG_ERR_PARSE, reported once at verbose level 1 (the caller uses safe defaults). */
cg_status_t cg_topo_load(const char *xml_file, cg_topo_t **topo_out);
void        cg_topo_free(cg_topo_t *topo);
const char *cg_topo_hwloc_version(void);
/* Index of the GPU with this PCI bus id (any case, domain optional), -1 if absent. */
int         cg_topo_find_gpu(const cg_topo_t *topo, const char *bus_id);

/* NVLink counts from NVML (libnvidia-ml loaded at run time); no-op without NVML. */
cg_status_t cg_topo_add_nvml(cg_topo_t *topo, char *reason, size_t reason_len);
/* Record NVLink bandwidth between matrix objects: n objects, values[n*n] in MB/s; kind[i]
 * is the GPU index of object i, -1 for an NVSwitch, -2 for anything else. GPUs linked to
 * NVSwitches are connected to each other through them. */
void        cg_topo_set_nvlink(cg_topo_t *topo, int n, const int *kind, const uint64_t *values);

/* ---- the node summary ------------------------------------------------------------------ */
typedef enum {
    CG_TOPO_CLASS_HOST = 0,       /* no GPU: host device layer */
    CG_TOPO_CLASS_SHARED_GPU,     /* every rank on one GPU */
    CG_TOPO_CLASS_NVSWITCH,       /* every pair of GPUs linked by NVLink (all-to-all) */
    CG_TOPO_CLASS_NVLINK_PARTIAL, /* some pairs linked */
    CG_TOPO_CLASS_PCIE_P2P,       /* no NVLink, peer-to-peer over PCIe */
    CG_TOPO_CLASS_NO_P2P,         /* GPUs that cannot reach each other directly */
    CG_TOPO_CLASS_COUNT
} cg_topo_class_t;

typedef struct {
    cg_topo_class_t cls;
    int             local_size;
    int             num_gpus;                   /* distinct GPUs in use */
    int             shared;                     /* some GPU serves more than one local rank
                                                 * (the host layer's ranks share its one) */
    int             gpu_of[CG_TOPO_MAX_RANKS];  /* local rank -> GPU index, -1 unknown */
    int             ring[CG_TOPO_MAX_RANKS];    /* ring order of local ranks along links */
    char            rail[CG_TOPO_MAX_RANKS][32];/* local rank -> NIC name, "" none */
    char            reason[160];
} cg_topo_summary_t;

/* Summarise the GPUs that local ranks 0..n-1 use (bus_ids[r]: "" or "host" without one).
 * Unknown GPUs or no topology: a warning (verbose 1) and the safe class NO_P2P. */
void        cg_topo_summarize(const cg_topo_t *topo, const char *const bus_ids[], int n,
                              cg_topo_summary_t *summary);
/* Does local rank me's GPU (bus_ids as for cg_topo_summarize) serve another of the n? */
int         cg_topo_gpu_shared_by(const char *const bus_ids[], int n, int me);
const char *cg_topo_class_name(cg_topo_class_t cls);
/* nvidia-smi topo -m style matrix of GPUs and NICs, the NIC legend, into buf. */
void        cg_topo_render(const cg_topo_t *topo, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* CG_TOPO_H */
