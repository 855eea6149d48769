/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The Open MPI release the component runs in. It reads Open MPI's own structures (the
 * communicator, the coll module it extends, requests) as the headers it was built against
 * lay them out, and Open MPI's loader checks only the coll framework's version, so a build
 * loaded into a release whose layout differs would read the wrong fields (a crash at the
 * first communicator, or at MPI_Comm_free). The layouts it reads are the same in every
 * 4.1 release, and within each range of 5.0 releases below: 5.0.7 added a field to the
 * communicator (c_index_vec), 5.0.10 one to the coll module (coll_revoke_local). A build
 * runs on the releases of its range; elsewhere the component declines, once said.
 */
#include "ompi_coll_gpu/coll_gpu.h"

#include <stdio.h>
#include <string.h>

/* The range of releases whose layouts match release major.minor.release: its first
 * release (major * 10000 + minor * 100 + release), or -1 for a series not known here. */
static int mca_coll_gpu_layout_range(int major, int minor, int release)
{
    if (major == 4 && minor == 1) {
        return 40100;
    }
    if (major == 5 && minor == 0) {
        return release >= 10 ? 50010 : release >= 7 ? 50007 : 50000;
    }
    return -1;
}

/* Does the Open MPI that runs (library_version: MPI_Get_library_version's text) lay out its
 * structures as the one the component was built against? runtime gets its name. */
static int mca_coll_gpu_release_fits(const char *library_version, char *runtime, size_t len)
{
    int major = 0, minor = 0, release = 0, build;
    const char *version = strstr(library_version, "Open MPI v");

    if (version == NULL || sscanf(version, "Open MPI v%d.%d.%d", &major, &minor, &release) < 2) {
        snprintf(runtime, len, "an MPI library that says \"%.60s\"", library_version);
        return 0;
    }
    snprintf(runtime, len, "Open MPI %d.%d.%d", major, minor, release);
    if (major == OMPI_MAJOR_VERSION && minor == OMPI_MINOR_VERSION &&
        release == OMPI_RELEASE_VERSION) {
        return 1;
    }
    build = mca_coll_gpu_layout_range(OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION);
    return build >= 0 && build == mca_coll_gpu_layout_range(major, minor, release);
}

int mca_coll_gpu_runtime_check(void)
{
    char        library[MPI_MAX_LIBRARY_VERSION_STRING] = "", runtime[128];
    int         len = 0;
    const char *pretend = mca_coll_gpu_component.debug_library_version;

    if (pretend != NULL && pretend[0] != '\0') {
        snprintf(library, sizeof(library), "%s", pretend);
    } else if (MPI_Get_library_version(library, &len) != MPI_SUCCESS) {
        return OMPI_SUCCESS; /* nothing to compare with: as built */
    }
    if (mca_coll_gpu_release_fits(library, runtime, sizeof(runtime))) {
        return OMPI_SUCCESS;
    }
    mca_coll_gpu_show_help_once("built for another Open MPI", OMPI_MAJOR_VERSION,
                                OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION, runtime);
    cg_warn(CG_SUB_INIT, "built against Open MPI %d.%d.%d, running in %s: disabled",
            OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION, runtime);
    return OMPI_ERROR;
}
