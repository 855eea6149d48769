/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* The simulated GPU's files among themselves (kernels/sim/cg_sim.h is the library's face). */
#ifndef CG_SIM_INT_H
#define CG_SIM_INT_H

#include "kernels/sim/cg_sim.h"

#define CG_SIM_EXPORT __attribute__((visibility("default")))

/* At a reset (cg_sim_reset.c): every allocation and mapping revoked (cg_sim.c); the
 * default stream's queued work dropped, never run (cg_sim_stream.c). */
void cg_sim_regions_revoke(void);
void cg_sim_stream_drop(void);
/* Before a synchronous copy, set or free: every device's default stream's queued work. */
int  cg_sim_streams_sync_all(void);
/* Make [addr, addr + bytes) inaccessible for good: its pages go, the addresses stay
 * reserved (PROT_NONE), so that nothing else is ever mapped there. */
void cg_sim_revoke_range(void *addr, size_t bytes);

#endif /* CG_SIM_INT_H */
