#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Run every test: install dependencies, build, then `make check` (Check unit tests, the MPI
# integration suite and the benchmark's test through mpirun), then the GPU kit's dry run on
# the host device layer (contrib/gpu/dry-run.sh; CG_SKIP_DRY_RUN=1 leaves it out).
# CG_SUITE=quick runs a smaller MPI matrix.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/install-deps.sh"
"$top/contrib/build.sh"
cd "$top/_build"
if ! make -j"$(nproc)" check; then
    cat tests/mpi/run_suite.sh.log 2>/dev/null || true
    cat tests/bench/check_bench.sh.log 2>/dev/null || true
    exit 1
fi
if [ "${CG_SKIP_DRY_RUN:-0}" != 1 ]; then
    echo "run-tests: the GPU kit's dry run (contrib/gpu/dry-run.sh)"
    "$top/contrib/gpu/dry-run.sh" "$top/_build"
fi
