#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Run every test: install dependencies, build, then `make check` (Check unit tests and the
# MPI integration suite through mpirun). CG_SUITE=quick runs a smaller MPI matrix.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/install-deps.sh"
"$top/contrib/build.sh"
cd "$top/_build"
if ! make -j"$(nproc)" check; then
    cat tests/mpi/run_suite.sh.log 2>/dev/null || true
    exit 1
fi
