#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# The main job: install dependencies, build and install coll/gpu into ./_install, then run
# the example application and a short benchmark through the component -- on the GPU when
# there is one, otherwise on the host device layer (coll_gpu_device=host).
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/install-deps.sh"
"$top/contrib/build.sh"

prefix=$top/_install
# Open MPI's own components (SYSTEM_DEFAULT) and ours; PMIx keeps its own path (Open MPI 5)
export OMPI_MCA_mca_base_component_path="SYSTEM_DEFAULT:$prefix/lib/openmpi"
export PMIX_MCA_mca_base_component_path=
export OMPI_MCA_rmaps_base_oversubscribe=1
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
    ! grep -q -- '-DCG_HAVE_CUDA=1' "$top/_build/Makefile"; then
    device=host
    echo "quickstart: GPU found, but this build has no CUDA device layer (no usable toolkit at" \
        "configure time: see _build/config.log): running on the host device layer"
elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    device=auto
    echo "quickstart: GPU found: running on device memory"
else
    device=host
    echo "quickstart: no GPU: running on the host device layer (coll_gpu_device=host)"
fi
np=${NP:-4}
echo "quickstart: mpirun -np $np coll_gpu_hello (each rank prints which collectives coll/gpu ran)"
out=$(mktemp)
if ! mpirun -np "$np" --bind-to none --mca coll_gpu_device "$device" --mca coll_gpu_verbose 2 \
    "$prefix/bin/coll_gpu_hello" 1000000 >"$out" 2>&1; then
    cat "$out"
    rm -f "$out"
    exit 1
fi
grep -E "coll:gpu\[0\]|coll_gpu_hello" "$out"
rm -f "$out"
echo "quickstart: mpirun -np $np coll_gpu_bench (allreduce, algorithm under test vs staged)"
mpirun -np "$np" --bind-to none --mca coll_gpu_device "$device" \
    "$prefix/bin/coll_gpu_bench" -C allreduce -b 8 -e 16M -f 16 -n 5 -w 2 -c 1
