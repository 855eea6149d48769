#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
#
# What a communicator costs: MPI_Comm_dup, two allreduces (the first sets up the fast-path
# context), MPI_Comm_free, in a loop (tests/mpi/coll_soak), on the host device layer (no
# GPU needed), side by side in one run:
#   off        Open MPI alone (--mca coll ^gpu), host buffers: the reference
#   off-tcp    the same with Open MPI's TCP transport only (--mca btl tcp,self), virtual
#              nodes only: what Open MPI pays between real nodes, where shared memory cannot
#              carry the messages that coll/gpu's virtual nodes send over UCX
#   host       coll/gpu loaded, host buffers (every call goes underneath)
#   kept       coll/gpu, device buffers, coll_gpu_context_keep 4 (the default)
#   fresh      coll/gpu, device buffers, coll_gpu_context_keep 0 (a context per communicator)
# at 4 ranks on one node and in two virtual nodes of 2 (UCX between them). Prints one table
# (cycles per second, mean dup / first call / second call / free in us) and the ratios to
# "off" and "off-tcp"; writes the logs into OUT.
#
#   contrib/bench/comm-cycle.sh OUT BUILD [CYCLES]
#
# Timings on a loaded machine are noisy: compare the ratios of one run, not runs.
set -euo pipefail
out=${1:?usage: comm-cycle.sh OUT BUILD [CYCLES]}
build=$(cd "${2:?}" && pwd)
cycles=${3:-500}
ompi_dir=${CG_OMPI_COMPONENT_DIR:-$(dirname "$(find /usr/lib -name mca_coll_tuned.so -path '*openmpi*' | head -n 1)")}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mca_base_component_path="$ompi_dir:$build/.libs"
mpi=(--mca op ^avx --bind-to none --mca coll_gpu_device host)

printf '%-8s %-7s %10s %10s %10s %10s %10s %8s %8s\n' layout case cycles/s dup_us first_us second_us \
    free_us vs_off vs_tcp
for layout in one-node nodes; do
    nodes=()
    [ "$layout" = nodes ] && nodes=(--mca coll_gpu_node_size 2)
    off_rate= tcp_rate=
    cases=(off host kept fresh)
    [ "$layout" = nodes ] && cases=(off off-tcp host kept fresh)
    for case in "${cases[@]}"; do
        case $case in
        off)   args=(--mca coll ^gpu) mem=host ;;
        off-tcp) args=(--mca coll ^gpu --mca btl tcp,self) mem=host ;;
        host)  args=() mem=host ;;
        kept)  args=(--mca coll_gpu_context_keep 4) mem=device ;;
        fresh) args=(--mca coll_gpu_context_keep 0) mem=device ;;
        esac
        n=$cycles
        [ "$case" = fresh ] && n=$((cycles / 5 > 20 ? cycles / 5 : 20))
        log=$out/$layout-$case.log
        if ! timeout -k 10 600 mpirun -np 4 "${mpi[@]}" "${nodes[@]}" "${args[@]}" \
                "$build/tests/mpi/coll_soak" --mem "$mem" --cycles "$n" >"$log" 2>&1; then
            echo "comm-cycle: $layout $case failed: $log" >&2
            continue
        fi
        rate=$(sed -n 's/.* \([0-9.]*\) cycles\/s$/\1/p' "$log")
        mean() { sed -n "s/^coll_soak: $1 *mean *\([0-9.]*\) us.*/\1/p" "$log"; }
        [ "$case" = off ] && off_rate=$rate
        [ "$case" = off-tcp ] && tcp_rate=$rate
        ratio() { awk -v a="$1" -v b="$rate" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else printf "-" }'; }
        printf '%-8s %-7s %10s %10s %10s %10s %10s %8s %8s\n' "$layout" "$case" "$rate" "$(mean dup)" \
            "$(mean 'first call')" "$(mean 'second call')" "$(mean free)" "$(ratio "$off_rate")" \
            "$(ratio "$tcp_rate")"
    done
done
