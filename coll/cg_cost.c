/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Cost model of the planner: an alpha-beta model per level. Intra-node: a latency per
 * synchronised step and a bandwidth per GPU that depends on the node's class (NVSwitch,
 * NVLink pairs, PCIe, one shared GPU); network: a latency per message and a bandwidth per
 * NIC (each rank drives its own rail), plus host staging when UCX cannot move device memory:
 * then every network step also waits for a copy out on the sender and a copy in on the
 * receiver, and the staged path (copy out, the collective underneath, copy in) for two in
 * all, so that small messages are staged and the hierarchical algorithms take over where
 * their bandwidth pays for their steps (measured on an H100, test_planner). Where UCX
 * moves device memory, an inter-node reduction still waits for each step's sum before
 * sending it on.
 * It predicts each applicable algorithm and the planner takes the fastest. hier_ring
 * overlaps its phases chunk by chunk: the model predicts it as a pipeline and picks the
 * number of chunks (the plan's chunk size) that minimises the time.
 */
#include "coll/cg_comm_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CG_COST_MIN_CHUNK   (256.0 * 1024) /* bytes of the message per pipeline chunk */
#define CG_COST_PIPE_STEP_US 4.0           /* hand-over of a chunk to the helper thread */

/* Measured on one GPU shared by 4 ranks under MPS, host-synchronised barriers
 * (coll_gpu_bench on an H100 and an H200, 2026-11-26, docs/gpu-run-2026-11-26-second.md):
 * LL 15-16 us at 8 B (allreduce, bcast); allreduce two_shot (zero copy) 21-24 us from 4 KiB
 * to 1 MiB and one_shot (copy variant) 28-33 us, slower at every size though it waits on
 * the host fewer times (the same order at 2 and 8 ranks); direct (zero copy) 20.5-25 us
 * for reduce_scatter, 26.5-28.5 us for allgather (its own block copied first), 13-18 us for
 * bcast, from 64 KiB to 4 MiB. */
static void cg_cost_shared_gpu_fixed(cg_cost_params_t *p)
{
    for (int c = 0; c < CG_COLL_COUNT; c++) {
        p->fixed_us[c][CG_ALG_LL] = 15.5;
    }
    p->fixed_us[CG_COLL_ALLREDUCE][CG_ALG_ONE_SHOT]        = 29.0;
    p->fixed_us[CG_COLL_ALLREDUCE][CG_ALG_TWO_SHOT]        = 22.0;
    p->fixed_us[CG_COLL_BCAST][CG_ALG_DIRECT]              = 14.0;
    p->fixed_us[CG_COLL_ALLGATHER][CG_ALG_DIRECT]          = 26.5;
    p->fixed_us[CG_COLL_REDUCE_SCATTER][CG_ALG_DIRECT]     = 20.5;
    p->fixed_us[CG_COLL_REDUCE_SCATTER_BLOCK][CG_ALG_DIRECT] = 20.5;
}

void cg_cost_defaults(cg_cost_params_t *p, cg_topo_class_t cls, int local_size)
{
    memset(p, 0, sizeof(*p));
    p->net_alpha_us   = 5.0;   /* one message on InfiniBand / RoCE, software included */
    p->net_bw_gbs     = 48.0;  /* 400 Gb/s NIC, per direction */
    p->stage_bw_gbs   = 0.0;   /* UCX moves device memory (GPUDirect RDMA) */
    p->intra_alpha_us = 8.0;   /* one barrier of the local group, host synchronised */
    p->lanes          = 4;     /* coll_gpu_hier_lanes' default */
    p->copy_alpha_us  = 8.0;   /* cudaMemcpy of a few bytes and its synchronisation */
    p->copy_bw_gbs    = 20.0;  /* PCIe */
    p->under_bw_gbs   = 10.0;  /* an MPI collective on host memory, at most */
    switch (cls) {
    case CG_TOPO_CLASS_NVSWITCH:       p->intra_bw_gbs = 370.0; break; /* H100 NV18, achieved */
    case CG_TOPO_CLASS_NVLINK_PARTIAL: p->intra_bw_gbs = 40.0; break;
    case CG_TOPO_CLASS_PCIE_P2P:       p->intra_bw_gbs = 20.0; break;
    case CG_TOPO_CLASS_SHARED_GPU: /* one memory: every byte any rank moves shares it */
        p->intra_bw_gbs = 2000.0 / CG_MAX(local_size, 1);
        p->shared_gpu   = 1;
        cg_cost_shared_gpu_fixed(p);
        break;
    case CG_TOPO_CLASS_HOST: /* the host device layer (the staged path's copies are
                                memcpy of the simulated GPU's memory), fitted to forced runs
                                of every algorithm at np 2 on the 2-core CI machine: a
                                barrier of two spinning ranks about 0.1 us, the CPU's
                                reductions about 13 GB/s (one_shot and two_shot cross at
                                about 1.3 KiB) */
        p->intra_bw_gbs = 13.0, p->intra_alpha_us = 0.1;
        p->copy_alpha_us = 0.5, p->copy_bw_gbs = 4.0, p->under_bw_gbs = 3.0;
        break;
    default:                           p->intra_bw_gbs = 10.0; break; /* through host memory */
    }
    /* The host device layer emulates LL lines two per 16-byte store, and since its wait
     * takes each line on its own the moment it carries the flag (as a GPU thread does,
     * 2026-11-27), about 2.4 GB/s of lines on the 2-core CI machine (coll_gpu_bench np 2,
     * every algorithm forced, medians of 5 rounds: LL allgather 0.52 us at 64 B, 3.82 us at
     * 4 KiB, direct 0.43-0.47 us; reduce_scatter 0.75-4.48 us against 0.82-1.35; allreduce
     * 0.62-7.71 us against one_shot 0.56-1.90; bcast 0.39-1.76 us against 0.45-0.52, whose
     * receivers read at about 6 GB/s). At 11 GB/s, the fit before, LL ran allgather and
     * reduce_scatter at 512 B slower than staging and than direct at 2 KiB. On a GPU the LL
     * kernel is one block of 512 threads (small messages): its lines go at about 10-20 GB/s,
     * whatever the links. Measured on an H200 shared by 4 ranks under MPS (2026-11-26,
     * docs/GPU.md): LL 17-21 us up to 4 KiB, 39 us for a 64 KiB allgather and 438 us for
     * 1 MiB, where direct takes about 20 us. */
    p->ll_bw_gbs = cls == CG_TOPO_CLASS_HOST ? 2.4 : CG_MIN(p->intra_bw_gbs, 15.0);
}

/* Seconds to move bytes at gbs GB/s. */
static double cg_cost_bw(double bytes, double gbs)
{
    return gbs > 0 ? bytes / (gbs * 1e9) : 0.0;
}

static double cg_cost_log2(int n)
{
    return n > 1 ? ceil(log2((double)n)) : 0.0;
}

/* Steps of recursive doubling over n members: log2 of the largest power of two in n, and
 * off a power of two a step in and a step out for the members beyond it. */
static double cg_cost_rd_steps(int n)
{
    int p = 1, log = 0;

    while (p * 2 <= n) {
        p *= 2, log++;
    }
    return log + (n > p ? 2 : 0);
}

/* The network's bandwidth for device data: staging is pipelined, the slower of the two. */
static double cg_cost_net_bw(const cg_cost_params_t *p)
{
    const double st = p->stage_bw_gbs;
    return (st > 0 && st < p->net_bw_gbs) ? st : p->net_bw_gbs;
}

/* Seconds one network step of a hierarchical algorithm costs besides its bytes: its
 * message, and where UCX cannot move device memory, the sender's copy out and the
 * receiver's copy in, each waited for (ucx_glue's staged exchange). */
static double cg_cost_step_alpha(const cg_cost_params_t *p)
{
    return (p->net_alpha_us + (p->stage_bw_gbs > 0 ? 2.0 * p->copy_alpha_us : 0.0)) * 1e-6;
}

/* The host's waits for an inter-node reduction of steps steps: one at the end when staged
 * (each step's copies were waited for already), else one per step (a step's sum is waited
 * for before it is sent on). */
static double cg_cost_reduce_waits(const cg_cost_params_t *p, double steps)
{
    return steps > 0 ? (p->stage_bw_gbs > 0 ? 1.0 : steps) * p->copy_alpha_us * 1e-6 : 0.0;
}

/* A collective's algorithm, its fixed cost: measured (fixed_us), or steps synchronised
 * steps. */
static double cg_cost_fixed(const cg_cost_params_t *p, cg_coll_t coll, cg_alg_t alg, double steps)
{
    const double measured = p->fixed_us[coll][alg];

    return measured > 0 ? measured * 1e-6 : steps * p->intra_alpha_us * 1e-6;
}

/* Intra-node phases on S bytes per rank over L ranks. */
static double cg_cost_local(const cg_cost_params_t *p, cg_alg_t alg, cg_coll_t coll, double S, int L)
{
    const double a = p->intra_alpha_us * 1e-6, b = p->intra_bw_gbs;

    if (L <= 1) {
        return 0.0;
    }
    switch (alg) {
    case CG_ALG_ONE_SHOT: /* one barrier; read every input */
        return cg_cost_fixed(p, coll, alg, 1) + cg_cost_bw(S * L, b);
    /* zero copy, buffers already shared (register once): the barrier that publishes them,
     * the one at the end */
    case CG_ALG_TWO_SHOT:
        return cg_cost_fixed(p, coll, alg, 2) + cg_cost_bw(2.0 * S * (L - 1) / L, b);
    case CG_ALG_RING:     return 2.0 * (L - 1) * a + cg_cost_bw(2.0 * S * (L - 1) / L, b);
    case CG_ALG_DIRECT:
        if (coll == CG_COLL_BCAST) { /* the root writes the message into every peer */
            return cg_cost_fixed(p, coll, alg, 2) + cg_cost_bw(p->shared_gpu ? S : S * (L - 1), b);
        }
        /* reduce-scatter, allgather */
        return cg_cost_fixed(p, coll, alg, 2) + cg_cost_bw(S * (L - 1) / L, b);
    case CG_ALG_SCATTER_ALLGATHER: /* every GPU sends about the message once */
        if (p->shared_gpu) { /* one memory: as much traffic as direct, twice the steps */
            return 2 * a + cg_cost_local(p, CG_ALG_DIRECT, coll, S, L);
        }
        return 4 * a + cg_cost_bw(2.0 * S * (L - 1) / L, b);
    default:              return 0.0;
    }
}

/* A phase of a hierarchical algorithm: fixed seconds per chunk, and seconds of its
 * bandwidth term for the whole message. */
typedef struct {
    double alpha, beta;
} cg_cost_phase_t;

static cg_cost_phase_t cg_cost_intra_phase(const cg_cost_params_t *p, cg_coll_t coll, double S,
                                           int L)
{
    double a = cg_cost_fixed(p, coll, CG_ALG_DIRECT, 2), t = cg_cost_local(p, CG_ALG_DIRECT, coll, S, L);
    return L > 1 ? (cg_cost_phase_t){a, t - a} : (cg_cost_phase_t){0, 0};
}

/* The three phases of hier_ring (pre, network, post). */
static void cg_cost_hier_ring_phases(const cg_cost_params_t *p, cg_coll_t coll, double S, int N,
                                     int L, double net_bw, cg_cost_phase_t ph[3])
{
    const double an = cg_cost_step_alpha(p);
    const double part = S / L; /* what each rail carries */

    memset(ph, 0, 3 * sizeof(*ph));
    switch (coll) {
    case CG_COLL_ALLREDUCE: /* RS inside, ring allreduce on 1/L per rail, AG inside */
        ph[0] = cg_cost_intra_phase(p, CG_COLL_REDUCE_SCATTER, S, L);
        ph[1] = (cg_cost_phase_t){2.0 * (N - 1) * an + cg_cost_reduce_waits(p, N - 1),
                                  cg_cost_bw(2.0 * part * (N - 1) / N, net_bw)};
        ph[2] = cg_cost_intra_phase(p, CG_COLL_ALLGATHER, S, L);
        break;
    case CG_COLL_ALLGATHER: /* rail ring, then AG inside */
        ph[1] = (cg_cost_phase_t){(N - 1) * an, cg_cost_bw(part * (N - 1) / N, net_bw)};
        ph[2] = cg_cost_intra_phase(p, CG_COLL_ALLGATHER, S, L);
        break;
    case CG_COLL_BCAST: /* the root's node: scatter to the rails; chain per rail (its N - 2
                           extra steps below); AG inside */
        ph[0] = cg_cost_intra_phase(p, CG_COLL_REDUCE_SCATTER, S, L);
        ph[1] = (cg_cost_phase_t){an, cg_cost_bw(part, net_bw)};
        ph[2] = cg_cost_intra_phase(p, CG_COLL_ALLGATHER, S, L);
        break;
    default: /* reduce-scatter: RS inside, rail ring */
        ph[0] = cg_cost_intra_phase(p, CG_COLL_REDUCE_SCATTER, S, L);
        ph[1] = (cg_cost_phase_t){(N - 1) * an + cg_cost_reduce_waits(p, N - 1),
                                  cg_cost_bw(part * (N - 1) / N, net_bw)};
        break;
    }
}

/* hier_ring with the message in k chunks, a pipeline: the first chunk goes through every
 * phase; then a chunk leaves every steady-state step, the slower of the calling thread (pre
 * and post of a chunk, one after the other) and the network (M lanes carry M chunks at once:
 * their latencies overlap, their bytes share the NIC). bcast: one lane, and the chain adds
 * N - 2 steps to fill. */
static double cg_cost_hier_ring_k(const cg_cost_params_t *p, cg_coll_t coll, double S, int N,
                                  int L, double net_bw, int k)
{
    const int       M = coll == CG_COLL_BCAST ? 1 : CG_MAX(p->lanes, 1);
    cg_cost_phase_t ph[3];
    double          c[3], host, net, t;

    cg_cost_hier_ring_phases(p, coll, S, N, L, net_bw, ph);
    for (int i = 0; i < 3; i++) {
        c[i] = ph[i].alpha + ph[i].beta / k;
    }
    host = c[0] + c[2];
    net  = CG_MAX(c[1] / M, ph[1].beta / k);
    t    = c[0] + c[1] + c[2] + (k - 1) * CG_MAX(host, net);
    if (coll == CG_COLL_BCAST) { /* the chain fills */
        t += (N - 2) * c[1];
    }
    return t + (k > 1 ? k * CG_COST_PIPE_STEP_US * 1e-6 : 0.0);
}

static double cg_cost_no_chunk(size_t *chunk_bytes)
{
    if (chunk_bytes != NULL) {
        *chunk_bytes = 0;
    }
    return 0.0;
}

/* ---- the rows' cost functions ------------------------------------------------------------ */
CG_COST_FN(one_shot)
{
    (void)nodes;
    return cg_cost_no_chunk(chunk_bytes) + cg_cost_local(p, CG_ALG_ONE_SHOT, coll, bytes, local);
}

CG_COST_FN(two_shot)
{
    (void)nodes;
    return cg_cost_no_chunk(chunk_bytes) + cg_cost_local(p, CG_ALG_TWO_SHOT, coll, bytes, local);
}

CG_COST_FN(ring)
{
    (void)nodes;
    return cg_cost_no_chunk(chunk_bytes) + cg_cost_local(p, CG_ALG_RING, coll, bytes, local);
}

CG_COST_FN(direct)
{
    (void)nodes;
    return cg_cost_no_chunk(chunk_bytes) + cg_cost_local(p, CG_ALG_DIRECT, coll, bytes, local);
}

CG_COST_FN(scatter_allgather)
{
    (void)nodes;
    return cg_cost_no_chunk(chunk_bytes) +
           cg_cost_local(p, CG_ALG_SCATTER_ALLGATHER, coll, bytes, local);
}

/* LL: one launch, no barrier (the flags travel with the data), every line twice the data;
 * each rank writes its payload to every peer and reads every peer's */
/* A GPU that its ranks share without MPS runs one process's kernels at a time: an LL kernel
 * spins on its peers' lines until the scheduler moves on (a time slice), once per peer.
 * Measured: 7.32 ms per LL call at 4 ranks, 8 B-4 KiB, on an H200 without MPS (2026-11-27,
 * docs/gpu-run-2026-11-27.md): 2.4 ms per peer. The host-synchronised algorithms wait on
 * the host instead, with no kernel holding the GPU. */
#define CG_COST_TIME_SLICE_S 2.4e-3

CG_COST_FN(ll)
{
    const double a = cg_cost_fixed(p, coll, CG_ALG_LL, 0.3) +
                     (p->time_sliced ? (local - 1) * CG_COST_TIME_SLICE_S : 0.0);
    const int    L = local;

    (void)nodes;
    cg_cost_no_chunk(chunk_bytes);
    if (coll == CG_COLL_ALLGATHER) { /* bytes: the gathered message */
        return a + cg_cost_bw(2.0 * bytes * (p->shared_gpu ? 2.0 : 1.0), p->ll_bw_gbs);
    }
    if (coll == CG_COLL_REDUCE_SCATTER || coll == CG_COLL_REDUCE_SCATTER_BLOCK) {
        /* the lines of every peer's block, then their reduction (as the copy algorithms'
         * bandwidth term counts it) */
        return a + cg_cost_bw(2.0 * bytes * (p->shared_gpu ? 2.0 : 1.0), p->ll_bw_gbs) +
               cg_cost_bw(bytes, p->intra_bw_gbs);
    }
    if (coll == CG_COLL_BCAST) { /* the root's message to every other rank */
        return a + cg_cost_bw(2.0 * bytes * (p->shared_gpu ? 2.0 * (L - 1) : (double)(L - 1)),
                              p->ll_bw_gbs);
    }
    /* allreduce: every input to every rank, this one's own slot included */
    return a + cg_cost_bw(2.0 * bytes * (p->shared_gpu ? 2.0 * L : (double)L), p->ll_bw_gbs);
}

/* the best number of chunks, none smaller than CG_COST_MIN_CHUNK */
CG_COST_FN(hier_ring)
{
    const double net_bw = cg_cost_net_bw(p);
    double       best   = cg_cost_hier_ring_k(p, coll, bytes, nodes, local, net_bw, 1);

    cg_cost_no_chunk(chunk_bytes);
    for (int k = 2; k <= 1024 && bytes / k >= CG_COST_MIN_CHUNK; k *= 2) {
        double t = cg_cost_hier_ring_k(p, coll, bytes, nodes, local, net_bw, k);
        if (t < best) {
            best = t;
            if (chunk_bytes != NULL) {
                *chunk_bytes = (size_t)ceil(bytes / k);
            }
        }
    }
    return best;
}

/* The small messages of hier_rd and hier_leader (the component's default one_shot_max):
 * their node's allreduce is one_shot, two_shot above; hier_leader's leaders also switch
 * from recursive doubling to a ring there */
#define CG_COST_LEADER_SMALL 65536

/* The copy algorithm of the node's phase of a hierarchical algorithm that may run it as one
 * LL call instead (CG_ALG_AUTO: none may): the node's allreduce of hier_rd and hier_leader
 * (one_shot for small messages, two_shot above, as both run it), hier_tree's bcast. */
static cg_alg_t cg_cost_node_copy(cg_alg_t alg, cg_coll_t coll, double S)
{
    if (coll == CG_COLL_ALLREDUCE && (alg == CG_ALG_HIER_RD || alg == CG_ALG_HIER_LEADER)) {
        return S > CG_COST_LEADER_SMALL ? CG_ALG_TWO_SHOT : CG_ALG_ONE_SHOT;
    }
    return coll == CG_COLL_BCAST && alg == CG_ALG_HIER_TREE ? CG_ALG_DIRECT : CG_ALG_AUTO;
}

int cg_cost_node_ll(const cg_cost_params_t *p, cg_alg_t alg, cg_coll_t coll, double S, int L)
{
    const cg_alg_t copy = cg_cost_node_copy(alg, coll, S);

    return copy != CG_ALG_AUTO && L > 1 && S > 0 && S <= p->ll_capacity &&
           cg_cost_ll(p, coll, S, 1, L, NULL) < cg_cost_local(p, copy, coll, S, L);
}

/* What the node's phase of hierarchical alg costs: one LL call where cg_cost_node_ll says
 * so (the planner's node_ll), else its copy algorithm. */
static double cg_cost_node_phase(const cg_cost_params_t *p, cg_alg_t alg, cg_coll_t coll,
                                 double S, int L)
{
    return cg_cost_node_ll(p, alg, coll, S, L) ? cg_cost_ll(p, coll, S, 1, L, NULL)
                                               : cg_cost_local(p, cg_cost_node_copy(alg, coll, S),
                                                               coll, S, L);
}

/* The node's allreduce, then recursive doubling on every rail (two more steps off a power
 * of two). */
CG_COST_FN(hier_rd)
{
    const int    N     = nodes;
    const double steps = cg_cost_rd_steps(N);
    const double node  = cg_cost_node_phase(p, CG_ALG_HIER_RD, coll, bytes, local);

    return cg_cost_no_chunk(chunk_bytes) + node +
           steps * (cg_cost_step_alpha(p) + cg_cost_bw(bytes, cg_cost_net_bw(p))) +
           cg_cost_reduce_waits(p, steps);
}

CG_COST_FN(hier_leader)
{
    const double an = cg_cost_step_alpha(p), net_bw = cg_cost_net_bw(p), S = bytes;
    const double rd_steps = cg_cost_rd_steps(nodes);
    const int    N = nodes, L = local;
    double       inter;

    cg_cost_no_chunk(chunk_bytes);
    if (coll == CG_COLL_ALLGATHER) { /* S: the gathered message; the node's part in */
        return cg_cost_local(p, CG_ALG_DIRECT, coll, S / N, L) + (N - 1) * an +
               cg_cost_bw(S * (N - 1) / N, net_bw) +
               cg_cost_local(p, CG_ALG_DIRECT, CG_COLL_BCAST, S, L);
    }
    if (coll != CG_COLL_ALLREDUCE) { /* reduce-scatter: the leader reads every input */
        return cg_cost_local(p, CG_ALG_ONE_SHOT, coll, S, L) + (N - 1) * an +
               cg_cost_reduce_waits(p, N - 1) + cg_cost_bw(S * (N - 1) / N, net_bw) +
               cg_cost_local(p, CG_ALG_DIRECT, CG_COLL_ALLGATHER, S / N, L);
    }
    inter = S <= CG_COST_LEADER_SMALL ? rd_steps * (an + cg_cost_bw(S, net_bw)) + cg_cost_reduce_waits(p, rd_steps)
                       : 2.0 * (N - 1) * an + cg_cost_reduce_waits(p, N - 1) +
                             cg_cost_bw(2.0 * S * (N - 1) / N, net_bw);
    return cg_cost_node_phase(p, CG_ALG_HIER_LEADER, coll, S, L) + inter +
           cg_cost_local(p, CG_ALG_DIRECT, CG_COLL_BCAST, S, L);
}

CG_COST_FN(hier_tree)
{
    return cg_cost_no_chunk(chunk_bytes) +
           cg_cost_log2(nodes) * (cg_cost_step_alpha(p) + cg_cost_bw(bytes, cg_cost_net_bw(p))) +
           cg_cost_node_phase(p, CG_ALG_HIER_TREE, CG_COLL_BCAST, bytes, local);
}

/* copy out, the host collective over N*L ranks, copy back */
CG_COST_FN(staged)
{
    const int    P  = nodes * local;
    const double an = p->net_alpha_us * 1e-6;

    (void)coll;
    return cg_cost_no_chunk(chunk_bytes) + 2 * p->copy_alpha_us * 1e-6 +
           cg_cost_bw(2.0 * bytes, p->copy_bw_gbs) + cg_cost_log2(P) * an +
           cg_cost_bw(2.0 * bytes * (P - 1) / P, CG_MIN(p->net_bw_gbs, p->under_bw_gbs));
}

/* nccl-tests' bus bandwidth factor of a collective over n ranks. */
double cg_cost_busbw_factor(cg_coll_t coll, int n)
{
    if (n <= 1) {
        return 1.0;
    }
    switch (coll) {
    case CG_COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
    case CG_COLL_BCAST:     return 1.0;
    default:                return (double)(n - 1) / n;
    }
}
