#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Run the MPI suite against an installed component (a `make install` or Spack prefix) instead
# of the build tree's: the suite's test programs come from a build tree of the same Open MPI,
# the component, coll_gpu_hello and coll_gpu_bench from PREFIX.
#
#   contrib/ci/installed-suite.sh PREFIX [BUILDDIR]     (BUILDDIR default: _build)
#
# CG_SUITE (quick by default here) and the suite's other variables apply. Runs mpirun: take
# the machine's MPI lock around it where one is used.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
prefix=$(cd "${1:?usage: installed-suite.sh PREFIX [BUILDDIR]}" && pwd)
build=$(cd "${2:-$top/_build}" && pwd)
[ -f "$prefix/lib/openmpi/mca_coll_gpu.so" ] || { echo "installed-suite: no $prefix/lib/openmpi/mca_coll_gpu.so"; exit 1; }
[ -x "$build/tests/mpi/coll_check" ] || { echo "installed-suite: no test programs in $build (make check builds them)"; exit 1; }
shim=$(mktemp -d "${TMPDIR:-/tmp}/cg-installed.XXXXXX")
trap 'rm -rf "$shim"' EXIT
mkdir -p "$shim/tests/mpi"
ln -s "$prefix/lib/openmpi" "$shim/.libs"
for p in coll_check coll_fail; do
    ln -s "$build/tests/mpi/$p" "$shim/tests/mpi/$p"
done
for p in coll_gpu_hello coll_gpu_bench; do
    ln -s "$prefix/bin/$p" "$shim/$p"
done
echo "installed-suite: component $prefix/lib/openmpi/mca_coll_gpu.so, test programs from $build"
CG_BUILDDIR=$shim CG_SUITE=${CG_SUITE:-quick} bash "$top/tests/mpi/run_suite.sh"
