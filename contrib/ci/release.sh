#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# The release checks of CI, after contrib/run-tests.sh built the tree in _build and
# installed it into _install:
#   1. make distcheck: the tarball admins and Spack build from (coll-gpu-X.Y.Z.tar.gz in
#      _build), built and checked out of tree from the tarball alone (unit tests and the
#      topology tool; the MPI suite already ran on this tree, so distcheck skips it)
#   2. the Lmod module of the _install prefix (contrib/ci/lmod-test.sh)
#   3. the Spack package's unit check (contrib/spack/test_package.py)
#   4. every source file has its SPDX license header (contrib/add-spdx.sh --check)
#
#   contrib/ci/release.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/_build
say() { echo "release: $*"; }
die() { echo "release: error: $*" >&2; exit 1; }
[ -f "$build/Makefile" ] || die "no configured build in $build (run contrib/run-tests.sh first)"

t0=$SECONDS
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$build/Makefile")
say "make distcheck (coll-gpu $version)"
# one GPU architecture is enough to prove the tarball builds; MPIRUN that does not exist
# makes the suite skip itself inside distcheck
if ! (cd "$build" && make distcheck \
        DISTCHECK_CONFIGURE_FLAGS="--with-nvcc-gencode=-gencode=arch=compute_90,code=sm_90 MPIRUN=/nonexistent/mpirun" \
        >distcheck.log 2>&1); then
    tail -n 60 "$build/distcheck.log"
    die "make distcheck failed (log: _build/distcheck.log)"
fi
grep -E "archives ready for distribution|^coll-gpu-.*tar.gz" "$build/distcheck.log" || true
tarball=$build/coll-gpu-$version.tar.gz
[ -f "$tarball" ] || die "no $tarball"
say "distcheck passed in $((SECONDS - t0)) s: $(sha256sum "$tarball" | cut -d' ' -f1)  coll-gpu-$version.tar.gz"

t0=$SECONDS
say "Lmod module of $top/_install"
"$top/contrib/ci/lmod-test.sh" "$top/_install" || die "the Lmod tests failed"
say "Lmod tests passed in $((SECONDS - t0)) s"

say "Spack package"
python3 "$top/contrib/spack/test_package.py" || die "the Spack package check failed"

"$top/contrib/add-spdx.sh" --check || die "source files without a license header"
