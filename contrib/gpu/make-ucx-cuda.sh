#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# A UCX built with CUDA for the GPU kit (phase ucxcuda): the kit's runtime has Debian's UCX,
# which moves host memory only, so without this no GPU run ever hands device memory to UCX
# (the inter-node path of clusters whose UCX has CUDA: cuda_copy, cuda_ipc, GPUDirect RDMA).
# Taken from the libucx-cu12 Python wheel: its libraries into OUT/lib, its CUDA and CMA
# transports into OUT/lib/ucx, stripped. The component and Open MPI, built against UCX
# 1.13, run with it unchanged (UCX keeps its ABI across 1.x: the suite's virtual nodes pass
# with UCX 1.22 from the wheel on the build machine).
#
#   contrib/gpu/make-ucx-cuda.sh OUT
#   CG_UCX_CUDA_WHEEL   the pip requirement (default libucx-cu12==1.22.0)
set -euo pipefail
out=${1:?usage: make-ucx-cuda.sh OUT}
spec=${CG_UCX_CUDA_WHEEL:-libucx-cu12==1.22.0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 -m pip download --quiet --no-deps --dest "$tmp" "$spec"
wheel=$(ls "$tmp"/*.whl)
python3 -m zipfile -e "$wheel" "$tmp/x"
src=$tmp/x/libucx/lib
rm -rf "$out"
mkdir -p "$out/lib/ucx"
for so in libucp libuct libucs libucm; do
    cp -L "$src/$so.so.0" "$out/lib/"
done
for so in libuct_cuda libucm_cuda libuct_cma; do
    cp -L "$src/ucx/$so.so.0" "$out/lib/ucx/"
done
cp -L "$tmp"/x/libucx_cu12.libs/libcudart-*.so* "$out/lib/" # libucm_cuda's runtime
strip --strip-unneeded "$out"/lib/*.so* "$out"/lib/ucx/*.so*
echo "$spec: $(basename "$wheel")" >"$out/VERSION"
echo "make-ucx-cuda: $(cat "$out/VERSION") into $out ($(du -sh "$out" | cut -f1))"
