/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* What the ranks of a node make of the topology: class, ring order, rails. Plain C. */
#include "topo/cg_topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const cg_path_names[] = {"X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS", "?"};
static const char *const cg_class_names[CG_TOPO_CLASS_COUNT] = {
    [CG_TOPO_CLASS_HOST]           = "host",
    [CG_TOPO_CLASS_SHARED_GPU]     = "shared-gpu",
    [CG_TOPO_CLASS_NVSWITCH]       = "nvswitch",
    [CG_TOPO_CLASS_NVLINK_PARTIAL] = "nvlink-partial",
    [CG_TOPO_CLASS_PCIE_P2P]       = "pcie-p2p",
    [CG_TOPO_CLASS_NO_P2P]         = "no-p2p",
};

static const char *cg_topo_path_name(cg_topo_path_t path)
{
    return cg_path_names[path <= CG_PATH_UNKNOWN ? path : CG_PATH_UNKNOWN];
}

const char *cg_topo_class_name(cg_topo_class_t cls)
{
    return (cls >= 0 && cls < CG_TOPO_CLASS_COUNT) ? cg_class_names[cls] : "unknown";
}

void cg_topo_set_nvlink(cg_topo_t *topo, int n, const int *kind, const uint64_t *values)
{
    uint64_t to_switch[CG_TOPO_MAX_GPUS] = {0};

    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            uint64_t v = CG_MAX(values[i * n + j], values[j * n + i]);
            if (i == j || v == 0 || kind[i] < 0 || kind[i] >= CG_TOPO_MAX_GPUS) {
                continue;
            }
            if (kind[j] >= 0 && kind[j] < CG_TOPO_MAX_GPUS && kind[i] != kind[j]) {
                topo->nvlink_mbps[kind[i]][kind[j]] = (uint32_t)CG_MIN(v, (uint64_t)UINT32_MAX);
            } else if (kind[j] == -1) {
                to_switch[kind[i]] += v; /* once per (GPU, switch) pair: i is the GPU */
            }
        }
    }
    /* GPUs on NVSwitches reach each other through them, at the slower GPU's switch rate. */
    for (int a = 0; a < topo->num_gpus; a++) {
        for (int b = 0; b < topo->num_gpus; b++) {
            uint64_t v = CG_MIN(to_switch[a], to_switch[b]);
            if (a != b && v > topo->nvlink_mbps[a][b]) {
                topo->nvlink_mbps[a][b] = (uint32_t)CG_MIN(v, (uint64_t)UINT32_MAX);
                topo->nvswitch[a][b]    = 1;
            }
        }
    }
}

/* "18:00.0", "0000:18:00.0" and "00000000:18:00.0" (CUDA, NVML) name the same device:
 * domain, bus, device, function into id; 1 when bus_id is one of those. */
static int cg_topo_parse_bus_id(const char *bus_id, unsigned id[4])
{
    return sscanf(bus_id, "%x:%x:%x.%x", &id[0], &id[1], &id[2], &id[3]) == 4 ||
           (id[0] = 0, sscanf(bus_id, "%x:%x.%x", &id[1], &id[2], &id[3]) == 3);
}

int cg_topo_find_gpu(const cg_topo_t *topo, const char *bus_id)
{
    unsigned id[4];

    if (topo == NULL || bus_id == NULL || !cg_topo_parse_bus_id(bus_id, id)) {
        return -1;
    }
    for (int g = 0; g < topo->num_gpus; g++) { /* the topology's ids carry their domain */
        unsigned d2, b2, v2, f2;
        if (sscanf(topo->gpu[g].bus_id, "%x:%x:%x.%x", &d2, &b2, &v2, &f2) == 4 &&
            d2 == id[0] && b2 == id[1] && v2 == id[2] && f2 == id[3]) {
            return g;
        }
    }
    return -1;
}

void cg_topo_free(cg_topo_t *topo)
{
    free(topo);
}

static int cg_topo_no_gpu(const char *bus_id)
{
    return bus_id == NULL || bus_id[0] == '\0' || strcmp(bus_id, "host") == 0;
}

/* Are two local ranks on the same GPU? Bus ids compared as numbers (the same GPU has one
 * id whatever the process's device numbering); ranks without a GPU share the host layer's. */
static int cg_topo_same_gpu(const char *a, const char *b)
{
    unsigned pa[4] = {0}, pb[4] = {0};

    if (cg_topo_no_gpu(a) || cg_topo_no_gpu(b)) {
        return cg_topo_no_gpu(a) && cg_topo_no_gpu(b);
    }
    if (cg_topo_parse_bus_id(a, pa) && cg_topo_parse_bus_id(b, pb)) {
        return memcmp(pa, pb, sizeof(pa)) == 0;
    }
    return strcasecmp(a, b) == 0;
}

int cg_topo_gpu_shared_by(const char *const bus_ids[], int n, int me)
{
    for (int r = 0; r < n && me >= 0 && me < n; r++) {
        if (r != me && cg_topo_same_gpu(bus_ids[r], bus_ids[me])) {
            return 1;
        }
    }
    return 0;
}

/* Connection quality between two GPUs: bigger is better. */
static uint64_t cg_topo_affinity(const cg_topo_t *topo, int a, int b)
{
    if (a == b) {
        return UINT64_MAX;
    }
    if (topo->nvlink_mbps[a][b] > 0) {
        return 1000 + topo->nvlink_mbps[a][b];
    }
    return (uint64_t)(CG_PATH_UNKNOWN - topo->gpu_path[a][b]);
}

static cg_topo_class_t cg_topo_classify(const cg_topo_t *topo, const int *gpus, int n, char *why,
                                        size_t len)
{
    int linked = 0, pairs = 0, p2p = 1;

    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) {
            pairs++;
            linked += topo->nvlink_mbps[gpus[i]][gpus[j]] > 0;
            p2p &= topo->gpu_path[gpus[i]][gpus[j]] <= CG_PATH_PHB;
        }
    }
    if (linked == pairs) {
        snprintf(why, len, "NVLink between every pair of %d GPUs (NVLink from %s)", n, topo->nvlink_from);
        return CG_TOPO_CLASS_NVSWITCH;
    }
    if (linked > 0) {
        snprintf(why, len, "NVLink between %d of %d GPU pairs", linked, pairs);
        return CG_TOPO_CLASS_NVLINK_PARTIAL;
    }
    if (p2p) {
        snprintf(why, len, "no NVLink; %d GPUs under common PCIe host bridges", n);
        return CG_TOPO_CLASS_PCIE_P2P;
    }
    snprintf(why, len, "no NVLink; GPUs on different NUMA nodes or sockets (no P2P)");
    return CG_TOPO_CLASS_NO_P2P;
}

/* Greedy ring from local rank 0: next is the unvisited rank best connected to the last. */
static void cg_topo_ring(const cg_topo_t *topo, cg_topo_summary_t *s)
{
    int used[CG_TOPO_MAX_RANKS] = {0};

    s->ring[0] = 0;
    used[0]    = 1;
    for (int k = 1; k < s->local_size; k++) {
        int      last = s->ring[k - 1], best = -1;
        uint64_t best_aff = 0;
        for (int r = 0; r < s->local_size; r++) {
            uint64_t aff = (topo && s->gpu_of[r] >= 0 && s->gpu_of[last] >= 0)
                               ? cg_topo_affinity(topo, s->gpu_of[last], s->gpu_of[r]) : 1;
            if (!used[r] && (best < 0 || aff > best_aff)) {
                best     = r;
                best_aff = aff;
            }
        }
        s->ring[k] = best;
        used[best] = 1;
    }
}

/* Is NIC n better than NIC b for GPU g: RDMA-capable (an Ethernet port on the GPU's socket
 * loses to an InfiniBand or RoCE card on the other, as NCCL picks), then nearer, then less
 * loaded? */
static int cg_topo_nic_better(const cg_topo_t *topo, int g, int n, int b, const int *load)
{
    cg_topo_path_t pn = (g >= 0) ? topo->nic_path[g][n] : CG_PATH_SYS;
    cg_topo_path_t pb = (g >= 0) ? topo->nic_path[g][b] : CG_PATH_SYS;

    if (topo->nic[n].rdma != topo->nic[b].rdma) {
        return topo->nic[n].rdma > topo->nic[b].rdma;
    }
    if (pn != pb) {
        return pn < pb;
    }
    return load[n] < load[b];
}

/* Each GPU gets the best of its NICs; ranks sharing a GPU share its NIC. Every GPU of the
 * node gets its NIC first, in GPU order, whichever ranks the communicator holds: a
 * process's rail is its GPU's, the same in every communicator (the process's UCX devices
 * are fixed by the first communicator that spans nodes: one rank per node there must not
 * leave every GPU on the lowest NIC of its switch). Ranks without a GPU share the rest. */
static void cg_topo_rails(const cg_topo_t *topo, cg_topo_summary_t *s)
{
    int load[CG_TOPO_MAX_NICS] = {0}, nic_of_gpu[CG_TOPO_MAX_GPUS];

    for (int g = 0; g < CG_TOPO_MAX_GPUS; g++) {
        nic_of_gpu[g] = -1;
    }
    for (int g = 0; topo != NULL && topo->num_nics > 0 && g < CG_MIN(topo->num_gpus, CG_TOPO_MAX_GPUS); g++) {
        int best = 0;
        for (int n = 1; n < topo->num_nics; n++) {
            best = cg_topo_nic_better(topo, g, n, best, load) ? n : best;
        }
        load[best]++;
        nic_of_gpu[g] = best;
    }
    for (int r = 0; r < s->local_size; r++) {
        int g = s->gpu_of[r], best = 0;
        s->rail[r][0] = '\0';
        if (topo == NULL || topo->num_nics == 0) {
            continue;
        }
        if (g >= 0 && nic_of_gpu[g] >= 0) {
            best = nic_of_gpu[g];
        } else { /* no GPU: the least loaded of the nearest */
            for (int n = 1; n < topo->num_nics; n++) {
                best = cg_topo_nic_better(topo, g, n, best, load) ? n : best;
            }
            load[best]++;
        }
        snprintf(s->rail[r], sizeof(s->rail[r]), "%s", topo->nic[best].name);
    }
}

void cg_topo_summarize(const cg_topo_t *topo, const char *const bus_ids[], int n,
                       cg_topo_summary_t *s)
{
    int gpus[CG_TOPO_MAX_RANKS], ngpus = 0, hosts = 0;

    memset(s, 0, sizeof(*s));
    s->local_size = CG_MIN(n, CG_TOPO_MAX_RANKS);
    for (int r = 0; r < s->local_size; r++) {
        int g = -1, seen = 0;
        if (cg_topo_no_gpu(bus_ids[r])) {
            hosts++;
        } else if (topo == NULL || (g = cg_topo_find_gpu(topo, bus_ids[r])) < 0) {
            snprintf(s->reason, sizeof(s->reason), "GPU %s of local rank %d is not in the topology",
                     bus_ids[r], r);
        }
        s->gpu_of[r] = g;
        for (int i = 0; i < ngpus && g >= 0; i++) {
            seen |= (gpus[i] == g);
        }
        if (g >= 0 && !seen) {
            gpus[ngpus++] = g;
        }
    }
    s->num_gpus = ngpus;
    for (int r = 0; r < s->local_size && !s->shared; r++) {
        s->shared = cg_topo_gpu_shared_by(bus_ids, s->local_size, r);
    }
    if (hosts == s->local_size) {
        s->cls = CG_TOPO_CLASS_HOST;
        snprintf(s->reason, sizeof(s->reason), "no GPU (host device layer)");
    } else if (s->reason[0] != '\0' || hosts > 0) {
        s->cls = CG_TOPO_CLASS_NO_P2P; /* safe default: through host memory */
        if (s->reason[0] == '\0') {
            snprintf(s->reason, sizeof(s->reason), "some local ranks have no GPU");
        }
        cg_warn(CG_SUB_TOPO, "%s: treating the node as GPUs without P2P", s->reason);
    } else if (ngpus == 1) {
        s->cls = CG_TOPO_CLASS_SHARED_GPU;
        snprintf(s->reason, sizeof(s->reason), "%d ranks share GPU %s", s->local_size, topo->gpu[gpus[0]].bus_id);
    } else {
        s->cls = cg_topo_classify(topo, gpus, ngpus, s->reason, sizeof(s->reason));
        if (ngpus < s->local_size) {
            cg_warn(CG_SUB_TOPO, "%d local ranks share %d GPUs", s->local_size, ngpus);
        }
    }
    cg_topo_ring(topo, s);
    cg_topo_rails(topo, s);
}

void cg_topo_render(const cg_topo_t *topo, char *buf, size_t len)
{
    size_t used = 0;

#define CG_OUT(...)                                                                          \
    do {                                                                                     \
        if (used < len) {                                                                    \
            used += (size_t)snprintf(buf + used, len - used, __VA_ARGS__);                   \
        }                                                                                    \
    } while (0)
    CG_OUT("%-8s", "");
    for (int g = 0; g < topo->num_gpus; g++) {
        CG_OUT(" %-6s", topo->gpu[g].name);
    }
    for (int n = 0; n < topo->num_nics; n++) {
        CG_OUT(" NIC%-3d", n);
    }
    CG_OUT(" NUMA\n");
    for (int a = 0; a < topo->num_gpus; a++) {
        CG_OUT("%-8s", topo->gpu[a].name);
        for (int b = 0; b < topo->num_gpus; b++) {
            if (a != b && topo->nvlink_mbps[a][b] > 0) {
                CG_OUT(" NV%-4u", (unsigned)((topo->nvlink_mbps[a][b] + 12500) / 25000));
            } else {
                CG_OUT(" %-6s", cg_topo_path_name(topo->gpu_path[a][b]));
            }
        }
        for (int n = 0; n < topo->num_nics; n++) {
            CG_OUT(" %-6s", cg_topo_path_name(topo->nic_path[a][n]));
        }
        CG_OUT(" %d\n", topo->gpu[a].numa);
    }
    CG_OUT("\nNV#: NVLink, # x 25 GB/s per direction (NVLink from %s)\n"
           "PIX: one PCIe switch  PXB: several switches  PHB: a PCIe host bridge\n"
           "NODE: host bridges of one NUMA node  SYS: across NUMA nodes or sockets\n\n",
           topo->nvlink_from);
    for (int g = 0; g < topo->num_gpus; g++) {
        int sw = 0;
        for (int b = 0; b < topo->num_gpus; b++) {
            sw |= topo->nvswitch[g][b];
        }
        CG_OUT("%-6s %s  %s%s\n", topo->gpu[g].name, topo->gpu[g].bus_id, topo->gpu[g].model, sw ? "  (NVSwitch)" : "");
    }
    for (int n = 0; n < topo->num_nics; n++) {
        CG_OUT("NIC%-3d %s  %s%s  NUMA %d\n", n, topo->nic[n].bus_id, topo->nic[n].name,
               topo->nic[n].rdma ? " (RDMA)" : "", topo->nic[n].numa);
    }
#undef CG_OUT
}
