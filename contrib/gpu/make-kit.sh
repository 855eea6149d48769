#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Prepare a GPU session (run here, on the build machine): a relocatable Open MPI/UCX/hwloc
# runtime in .mpi-bundle/ and a build for Hopper GPUs (sm_90) in .gpu-kit/, both ignored by
# git, to be carried to the device machine and run there with contrib/gpu/run-kit.sh.
#
#   contrib/gpu/make-kit.sh PATH/TO/mpi-bundle.sh [nvcc gencode flags]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bundle_tool=${1:?usage: make-kit.sh PATH/TO/mpi-bundle.sh [gencode]}
gencode=${2:--gencode=arch=compute_90,code=sm_90}
cd "$top"
bash "$bundle_tool" "$top/.mpi-bundle" >/dev/null
[ -x configure ] || ./autogen.sh >/dev/null
mkdir -p .gpu-build
(cd .gpu-build && ../configure --with-nvcc-gencode="$gencode" >/dev/null &&
    make -j"$(nproc)" >/dev/null && make -j"$(nproc)" check TESTS= >/dev/null)
rm -rf .gpu-kit
mkdir -p .gpu-kit/.libs .gpu-kit/tests/mpi .gpu-kit/tests/unit
cp .gpu-build/.libs/mca_coll_gpu.so .gpu-kit/.libs/
cp ompi_coll_gpu/help-coll-gpu.txt .gpu-kit/
cp .gpu-build/coll_gpu_hello .gpu-build/coll_gpu_bench .gpu-kit/
cp .gpu-build/tests/mpi/coll_check .gpu-build/tests/mpi/coll_fail tests/mpi/run_suite.sh tests/mpi/proof.py .gpu-kit/tests/mpi/
cp .gpu-build/tests/unit/test_* .gpu-kit/tests/unit/ 2>/dev/null || true
cp .gpu-build/coll_gpu_info .gpu-kit/
strip --strip-unneeded .gpu-kit/.libs/mca_coll_gpu.so
du -sh .mpi-bundle .gpu-kit
