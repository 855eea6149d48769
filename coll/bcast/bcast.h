/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Intra-node broadcast of bytes (dense) from group rank root. */
#ifndef CG_BCAST_H
#define CG_BCAST_H

#include "coll/allgather/allgather.h"
#include "coll/intra/intra.h"

/* Zero copy when every buffer can be shared: the root reads its buffer once and writes it
 * into every peer's buffer through IPC (one kernel). Otherwise through the root's scratch
 * halves, from which every rank copies. */
cg_status_t cg_bcast_direct(cg_intra_t *g, void *buf, size_t bytes, int root);

/* The root hands rank p part p of the message (cg_scatter_segments), then the ranks share
 * the parts (cg_allgather_segments): every rank's links carry about the message once,
 * where direct sends it L - 1 times over the root's. */
cg_status_t cg_bcast_scatter_allgather(cg_intra_t *g, void *buf, size_t bytes, int root);

/* Rank p gets segs[p] (bytes) of the root's buf, at the same offset of its own buf: the
 * root sends each rank only its part. Zero copy when the buffers can be shared (the root
 * writes into the peers), otherwise window by window through the root's scratch halves.
 * status: this rank's status so far. */
cg_status_t cg_scatter_segments(cg_intra_t *g, void *buf, const cg_seg_t *segs, int root,
                                cg_status_t status);

#endif
