#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# coll_gpu_info on every fixture: the classification and the rail map it prints.
set -u
info=${CG_BUILDDIR:-.}/coll_gpu_info
dir=$(cd "$(dirname "$0")" && pwd)
failures=0

expect() { # fixture ranks pattern...: every pattern must appear in coll_gpu_info's output
    local fixture=$1 ranks=$2 out
    shift 2
    out=$("$info" --xml "$dir/$fixture" --ranks "$ranks" ${info_args:-} 2>&1)
    for pattern in "$@"; do
        if ! grep -qE -- "$pattern" <<<"$out"; then
            echo "FAIL $fixture ($ranks ranks): no line matching '$pattern'"
            failures=$((failures + 1))
        fi
    done
}

expect dgx-h100.xml 8 "node of 8 ranks: nvswitch" "GPU0 +X +NV18" " 3 -> 0000:39:00.0 +-> mlx5_3" \
    " 7 -> 0000:79:00.0 +-> mlx5_7" "allreduce +67108864 B  two_shot"
expect hgx-a100.xml 8 "node of 8 ranks: nvswitch" "GPU0 +X +NV12 .* PXB" " 5 -> 0000:61:00.0 +-> mlx5_5"
expect hgx-a100.xml 16 "node of 16 ranks: nvswitch" "13 -> 0000:61:00.0 +-> mlx5_5"
expect workstation-4gpu-nvlink-pairs.xml 4 "node of 4 ranks: nvlink-partial" "ring order: 0 1 2 3" \
    " 2 -> 0000:23:00.0 +-> eno1" "allreduce +67108864 B  ring"
expect pcie-2gpu-2socket.xml 2 "node of 2 ranks: no-p2p" " 1 -> 0000:af:00.0 +-> mlx5_0" \
    "allreduce +67108864 B  staged"
expect fewer-nics-4gpu.xml 4 "node of 4 ranks: pcie-p2p" " 3 -> 0000:85:00.0 +-> mlx5_0"
expect gpuless.xml 2 "node of 2 ranks: host" " 1 -> host +-> mlx5_0"
# a file that cannot be used is an error that names it (truncated, missing)
for bad in "$dir/bad-truncated.xml" "$dir/no-such-file.xml"; do
    if out=$("$info" --xml "$bad" 2>&1); then
        echo "FAIL coll_gpu_info --xml $bad exited 0"
        failures=$((failures + 1))
    elif ! grep -qF "cannot use the topology file $bad" <<<"$out"; then
        echo "FAIL coll_gpu_info --xml $bad: the message does not name the file: $out"
        failures=$((failures + 1))
    fi
done
# --version: the package version
if ! "$info" --version | grep -qE "^coll_gpu_info \(coll/gpu\) [0-9]+\.[0-9]+\.[0-9]+"; then
    echo "FAIL coll_gpu_info --version"
    failures=$((failures + 1))
fi

# across nodes: the plans the cost model picks (rails, overlapped chunks, bcast chains), and
# the predicted scaling table
info_args="--nodes 16" expect dgx-h100.xml 8 "allreduce +1024 B  hier_rd" \
    "allreduce +67108864 B  hier_ring .*overlapped in chunks of [0-9]+" \
    "bcast +1024 B  hier_tree" "bcast +67108864 B  hier_ring" "allgather +67108864 B  hier_ring"
info_args="--scale --size 8G" expect dgx-h100.xml 8 "4 inter-node lanes" \
    "^ +1 +8  two_shot" "^ +16 +128  hier_ring .* [0-9]+$"
info_args="--scale --lanes 1" expect dgx-h100.xml 8 "1 inter-node lanes"
# the algorithm registry, as coll_gpu_info lists it
if ! "$info" --algorithms | grep -qE "^reduce_scatter_block +hier_leader +across nodes +nodes\+UCX"; then
    echo "FAIL coll_gpu_info --algorithms does not list the registry"
    failures=$((failures + 1))
fi
if "$info" --lanes 9 >/dev/null 2>&1; then
    echo "FAIL coll_gpu_info accepted --lanes 9"
    failures=$((failures + 1))
fi

if [ "$failures" -eq 0 ]; then
    echo "check_info: every fixture classified as expected"
fi
[ "$failures" -eq 0 ]
