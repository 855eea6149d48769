/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Intra-node allgather. */
#ifndef CG_ALLGATHER_H
#define CG_ALLGATHER_H

#include "coll/intra/intra.h"

/* A piece of a buffer: offset and length (bytes for allgather, elements for
 * reduce-scatter). Every rank of the group has nseg of them: rank p's k-th is
 * segs[p * nseg + k]. */
typedef struct {
    size_t off;
    size_t len;
} cg_seg_t;

/* Copy units [first, first + len) of the concatenation of segs (offsets and lengths in
 * units of unit bytes) between buf, where the segments live, and packed (contiguous), on
 * the group's stream. */
cg_status_t cg_segs_pack(cg_intra_t *g, const cg_seg_t *segs, int nseg, size_t unit,
                         size_t first, size_t len, char *buf, char *packed, int to_packed);

/* Every rank's segments of rbuf, already in place in that rank's rbuf, end up in every
 * rank's rbuf at the same offsets. Zero copy (each rank writes its segments into every
 * peer's buffer, one kernel per segment) when every buffer can be shared, otherwise in
 * rounds through the scratch halves. status: this rank's status so far (an error fails the
 * call on every rank of the group, at the first barrier). */
cg_status_t cg_allgather_segments(cg_intra_t *g, void *rbuf, const cg_seg_t *segs, int nseg,
                                  cg_status_t status);
/* MPI_Allgather of bytes per rank (dense). sbuf NULL: in place. */
cg_status_t cg_allgather_direct(cg_intra_t *g, const void *sbuf, void *rbuf, size_t bytes);

#endif
