# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Environment of the relocatable Open MPI / UCX / hwloc runtime made by
# contrib/gpu/make-bundle.sh. Source it from bash:   . /path/to/bundle/env.sh
# Every path comes from the place of this file, so the folder may be moved anywhere.
# shellcheck shell=bash
MPI_BUNDLE=$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P) || return 1
export MPI_BUNDLE
_mb_lib=$MPI_BUNDLE/root/usr/lib/$(ls "$MPI_BUNDLE/root/usr/lib" | grep -m1 -- '-linux-gnu$')
_mb_first() { # VAR DIR: DIR at the front of the colon list in VAR, once
    local cur=${!1:-}
    case ":$cur:" in *":$2:"*) ;; *) export "$1=$2${cur:+:$cur}" ;; esac
}
# Open MPI (Debian's prefix is /usr): every folder follows OPAL_PREFIX but the
# configuration folder (/etc/openmpi: openmpi-mca-params.conf, the default hostfile).
export OPAL_PREFIX=$MPI_BUNDLE/root/usr
export OPAL_SYSCONFDIR=$MPI_BUNDLE/root/etc/openmpi
export MPI_BUNDLE_COMPONENT_DIR=$_mb_lib/openmpi/lib/openmpi3
# Components: the bundle's; add your own after it, e.g.
#   OMPI_MCA_mca_base_component_path=$OMPI_MCA_mca_base_component_path:/my/components
export OMPI_MCA_mca_base_component_path=$MPI_BUNDLE_COMPONENT_DIR
# PMIx lives in its own prefix (pmix2/) with its plugins and help texts.
export PMIX_PREFIX=$_mb_lib/pmix2
export PMIX_INSTALL_PREFIX=$PMIX_PREFIX
export PMIX_MCA_mca_base_component_path=$PMIX_PREFIX/lib/pmix
# PMIx also scans its configured libdir (absolute in Debian's build) for plugins, whatever the
# path above says: a machine with a PMIx of its own there fails on its plugins
# ("undefined symbol") unless the libdirs point into the bundle too.
export PMIX_LIBDIR=$PMIX_PREFIX/lib
export PMIX_PKGLIBDIR=$PMIX_PREFIX/lib/pmix
export PMIX_MCA_gds=${PMIX_MCA_gds:-hash}
# hwloc's and UCX's plugins (their folders are compiled in as absolute paths).
export HWLOC_PLUGINS_PATH=$_mb_lib/hwloc
export UCX_MODULE_DIR=$_mb_lib/ucx
_mb_first PATH "$MPI_BUNDLE/root/usr/bin"
_mb_first LD_LIBRARY_PATH "$_mb_lib/ucx"
_mb_first LD_LIBRARY_PATH "$_mb_lib/pmix2/lib"
_mb_first LD_LIBRARY_PATH "$_mb_lib/openmpi/lib"
_mb_first LD_LIBRARY_PATH "$_mb_lib"
# As root, more ranks than cores, on a host without ssh (the launch agent is never used for
# local ranks, but must exist), without CMA single copies (refused in many containers).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}
export OMPI_MCA_plm_rsh_agent=${OMPI_MCA_plm_rsh_agent:-false}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
unset -f _mb_first
unset _mb_lib
