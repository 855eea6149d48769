/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Memory for the example programs and the MPI test suite: CUDA device memory when the
 * program is built with CUDA and a GPU is present, otherwise device memory of the simulated
 * GPU (libcg_sim: the CPU cannot touch it; the component runs it with coll_gpu_device=host),
 * or plain host memory when asked.
 */
#ifndef CG_EXAMPLE_MEM_H
#define CG_EXAMPLE_MEM_H

#include <stddef.h>

typedef enum { EM_HOST = 0, EM_DEVICE = 1 } em_kind_t;

/* mode: "auto" or "device" (a GPU when there is one, else the simulated GPU), "pool"
 * (the same, from allocations that IPC cannot export: cudaMallocAsync pools, or the
 * simulator's pool flag), "vmm" (cuMemCreate memory that peers share as a file
 * descriptor, or the simulator's VMM flag), "vmm-private" (the same, in a process that may
 * not take its peers' descriptors, as under a seccomp profile: the collectives copy),
 * "other" (memory the component's layer cannot run kernels on, which it stages, with its
 * work queued on a default stream of its own: on a GPU, of a second context of the rank's
 * GPU, the layer running in the primary one; on the simulated GPU, of its device 1), or
 * "host" (plain host memory).
 * Selects GPU local_rank % count.
 * Returns the kind of memory em_alloc(EM_DEVICE) will give. */
em_kind_t   em_init(const char *mode, int local_rank);
const char *em_describe(void);
void       *em_alloc(size_t bytes, em_kind_t kind);
void        em_free(void *p, em_kind_t kind);
void        em_to_dev(void *dst, const void *src, size_t bytes, em_kind_t kind);
/* Like em_to_dev, but on a GPU the copy is queued on the default stream behind a few
 * milliseconds of other work and the call returns at once: MPI must wait for it (a
 * CUDA-aware MPI orders its work after the application's default stream). On the
 * simulated GPU the copy waits on its default stream until someone waits for that. */
void        em_to_dev_queued(void *dst, const void *src, size_t bytes, em_kind_t kind);
void        em_to_host(void *dst, const void *src, size_t bytes, em_kind_t kind);
/* A "kernel" writing byte into bytes of dst: on a GPU, queued on the default stream (the
 * call returns at once and the GPU runs it while the host goes on); on the simulated GPU
 * queued on its default stream too (done when someone waits for that stream: what MPI
 * must do before reading dst); on host memory, done before returning. */
void        em_fill_queued(void *dst, int byte, size_t bytes, em_kind_t kind);
/* Device-to-device copy bandwidth in GB/s over bytes (the hardware floor of the benchmark). */
double      em_copy_bandwidth(size_t bytes, em_kind_t kind);
/* Microseconds of one round trip to a GPU: an 8-byte memset queued on the default stream
 * and waited for (what any call that runs device work and waits for it pays); 0 without
 * a GPU. */
double      em_round_trip_us(int reps, em_kind_t kind);
/* A CUDA error left as the thread's last error (cudaGetLastError, which clears it), as a
 * sentence naming it; NULL when there is none, and always without a GPU. */
const char *em_error_left(void);
/* The CUDA device in use, or -1 for host memory. */
int         em_device(void);
/* cudaDeviceReset, as programs derived from CUDA's samples call before MPI_Finalize (every
 * allocation and stream of the process on that device goes; the simulated GPU's reset
 * without one); 1 when done, 0 with host memory. */
int         em_device_reset(void);
/* The local rank Open MPI reports, or the world rank. */
int         em_local_rank(int world_rank);

#endif
