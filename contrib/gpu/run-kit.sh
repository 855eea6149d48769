#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Run on the device machine (from the repository root, with .mpi-bundle and .gpu-kit
# carried there): the GPU checks of coll/gpu, every log into ${OUT:-./gpu-out}.
#
#   contrib/gpu/run-kit.sh [suite|sanitizer|bench|all]...
#
#   suite      the MPI suite on device memory (CG_TEST_DEVICE=cuda), 2, 4 and 8 ranks
#   sanitizer  compute-sanitizer memcheck on a 2-rank run
#   bench      coll_gpu_bench for the four collectives, side by side with the staged path
# Several ranks share the one GPU: MPS is started for concurrent kernels.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$top/gpu-out}
mkdir -p "$out"
# shellcheck disable=SC1091
source "$top/.mpi-bundle/env.sh"
kit=$top/.gpu-kit
export CG_BUILDDIR=$kit CG_MPIRUN=mpirun CG_OMPI_COMPONENT_DIR=$MPI_BUNDLE_COMPONENT_DIR
export OMPI_MCA_mca_base_component_path=$MPI_BUNDLE_COMPONENT_DIR:$kit/.libs
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --bind-to none --mca op ^avx)

{ date -u; nvidia-smi; nvidia-smi topo -m; } >"$out/device.txt" 2>&1
[ -x "$kit/coll_gpu_info" ] && "$kit/coll_gpu_info" >"$out/coll_gpu_info.txt" 2>&1
if command -v nvidia-cuda-mps-control >/dev/null && [ "${CG_NO_MPS:-0}" != 1 ]; then
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/cg-mps CUDA_MPS_LOG_DIRECTORY=/tmp/cg-mps-log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    nvidia-cuda-mps-control -d && echo "MPS started" >>"$out/device.txt"
fi

phase_suite() {
    for t in "$kit"/tests/unit/test_*; do "$t"; done >"$out/unit.log" 2>&1
    CG_TEST_DEVICE=cuda CG_SUITE=quick CG_SUITE_LOG="$out/suite" \
        bash "$top/tests/mpi/run_suite.sh" >"$out/suite.log" 2>&1 # binaries: CG_BUILDDIR
    echo "suite: exit $?" >>"$out/summary.txt"
}

phase_sanitizer() {
    local cs=/usr/local/cuda/bin/compute-sanitizer
    "${mpi[@]}" -np 2 --mca coll_gpu_device cuda "$cs" --tool memcheck --error-exitcode 9 \
        "$kit/tests/mpi/coll_check" --mem device --counts 1,7,1000,70001 --large 0 \
        --types MPI_INT,MPI_DOUBLE,MPI_FLOAT_INT,MPI_DOUBLE_INT --no-derived >"$out/sanitizer.log" 2>&1
    echo "sanitizer: exit $?" >>"$out/summary.txt"
}

phase_bench() {
    local np coll
    for coll in allreduce allgather reduce_scatter bcast; do
        "${mpi[@]}" -np 4 --mca coll_gpu_device cuda "$kit/coll_gpu_bench" -C "$coll" \
            -b 8 -e 256M -f 8 -n 10 -w 3 -c 1 >"$out/bench-$coll-np4.txt" 2>&1
    done
    for np in 2 8; do
        "${mpi[@]}" -np "$np" --mca coll_gpu_device cuda "$kit/coll_gpu_bench" -C allreduce \
            -b 8 -e 256M -f 8 -n 10 -w 3 -c 1 >"$out/bench-allreduce-np$np.txt" 2>&1
    done
    "${mpi[@]}" -np 4 --mca coll_gpu_device cuda "$kit/coll_gpu_bench" -C allreduce -b 8 -e 8 \
        -n 1000 -w 100 -c 1 >"$out/bench-latency-np4.txt" 2>&1
    # two virtual nodes of 2 ranks: the hierarchical path (overlapped chunks, lanes, UCX
    # staging through host memory) side by side with the staged path
    for coll in allreduce bcast; do
        "${mpi[@]}" -np 4 --mca coll_gpu_device cuda --mca coll_gpu_node_size 2 "$kit/coll_gpu_bench" \
            -C "$coll" -b 8 -e 256M -f 8 -n 10 -w 3 -c 1 >"$out/bench-$coll-2nodes-np4.txt" 2>&1
    done
    echo "bench: done" >>"$out/summary.txt"
}

for phase in "${@:-all}"; do
    case $phase in
    suite) phase_suite ;;
    sanitizer) phase_sanitizer ;;
    bench) phase_bench ;;
    all) phase_suite; phase_sanitizer; phase_bench ;;
    *) echo "unknown phase $phase" >&2; exit 2 ;;
    esac
done
echo quit | nvidia-cuda-mps-control 2>/dev/null || true
cat "$out/summary.txt"
