/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* The topology layer of a build configured --without-hwloc: no machine topology. */
#include "topo/cg_topo.h"

const char *cg_topo_hwloc_version(void)
{
    return "none";
}

cg_status_t cg_topo_load(const char *xml_file, cg_topo_t **topo_out)
{
    (void)xml_file;
    (void)topo_out;
    cg_warn(CG_SUB_TOPO, "built without hwloc: no topology (safe defaults)");
    return CG_ERR_UNSUPPORTED;
}
