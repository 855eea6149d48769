/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The probe's kernels (contrib/gpu/kit-persist.cu), called by coll_gpu_probe
 * (contrib/gpu/kit-probe.c).
 */
#ifndef KIT_PROBE_H
#define KIT_PROBE_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROBE_LL_MAX_RANKS 8
#define PROBE_LL_LINES     2 /* an 8-byte allreduce: two floats, a line (data, flag) each */

/* One rank's view of an 8-byte LL allreduce among the ranks sharing the GPU. Inboxes:
 * [parity 2][from PROBE_LL_MAX_RANKS][PROBE_LL_LINES] lines of 8 bytes, all 0 at first;
 * a call's flag (1, 2, ...) picks the parity and marks its lines. */
typedef struct {
    unsigned long long *inbox[PROBE_LL_MAX_RANKS]; /* every rank's, mapped here (IPC) */
    const float        *src;                       /* PROBE_LL_LINES floats (device) */
    float              *dst;
    int                 size, rank;
} probe_ll_args_t;

#define PROBE_LL_INBOX_BYTES (2 * PROBE_LL_MAX_RANKS * PROBE_LL_LINES * 8)

/* persist_rt: one thread answering *bell with *reply (page-locked words, device views). */
cudaError_t probe_persist_start(unsigned *bell_dev, unsigned *reply_dev, cudaStream_t stream);

/* launch_ll: one call (flag) by a kernel launched for it; it stores the flag into *reply
 * (page-locked) when its result is written. */
cudaError_t probe_ll_launch(const probe_ll_args_t *args, unsigned flag, unsigned *reply_dev,
                            cudaStream_t stream);

/* persist_ll: a kernel that runs every call the host rings: the call's arguments posted in
 * page-locked memory as tagged lines, as the component's LL server takes them (each 8-byte
 * word of probe_ll_args_t as two lines, 4 bytes of it under the call's flag in the high
 * half; posted_dev: their device view), then *bell set to its flag (above last); the kernel
 * reads the bell and the lines together and again while a line is older than the bell,
 * answers in *reply; it ends at PROBE_LL_STOP or after about ten seconds without a ring. */
#define PROBE_LL_STOP       0xffffffffu
#define PROBE_LL_POST_WORDS (sizeof(probe_ll_args_t) / 8)
#define PROBE_LL_POST_LINES (2 * PROBE_LL_POST_WORDS)
cudaError_t probe_ll_persist_start(const unsigned long long *posted_dev, unsigned last,
                                   unsigned *bell_dev, unsigned *reply_dev, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* KIT_PROBE_H */
