#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
#
# The latency/bandwidth sweep of the four collectives on the host device layer (no GPU
# needed): coll_gpu_bench at np 2 and 4 from 8 B to 256 MiB on the simulated GPU, what
# coll/gpu ran next to the staged path measured in the same run, for one or two builds of
# the component ("before" and "after"); then host buffers at 8 B - 64 KiB with the component
# loaded and switched off (--mca coll ^gpu), side by side. Writes one CSV per run and
# summary.md (ratios) into OUT.
#
#   contrib/bench/host-sweep.sh OUT AFTER_BUILD [BEFORE_BUILD]
#
# A build is a build directory (its .libs holds mca_coll_gpu.so); each build runs its own
# benchmark binary (the simulated GPU's library, which the component finds in the process,
# must be the one it was built against). Timings on a shared or
# loaded machine are noisy: compare ratios measured in one run, never absolute times across
# runs. CG_SWEEP_NPS (default "2 4"), CG_SWEEP_COLLS (default the four) narrow it;
# CG_SWEEP_MCA adds mpirun arguments to every run (e.g. "--mca coll_gpu_node_size 2": two
# virtual nodes of 2 at np 4).
set -euo pipefail
out=${1:?usage: host-sweep.sh OUT AFTER_BUILD [BEFORE_BUILD]}
after=$(cd "${2:?}" && pwd)
before=${3:+$(cd "$3" && pwd)}
ompi_dir=${CG_OMPI_COMPONENT_DIR:-$(dirname "$(find /usr/lib -name mca_coll_tuned.so -path '*openmpi*' | head -n 1)")}
nps=${CG_SWEEP_NPS:-2 4}
colls=${CG_SWEEP_COLLS:-allreduce bcast allgather reduce_scatter}
sweep_mca=${CG_SWEEP_MCA:-}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(--mca op ^avx --bind-to none --mca coll_gpu_device host)

run() { # label build np csv bench-args... (extra mpirun arguments in $extra)
    local label=$1 build=$2 np=$3 csv=$4
    shift 4
    # shellcheck disable=SC2086
    OMPI_MCA_mca_base_component_path="$ompi_dir:$build/.libs" \
        timeout -k 10 900 mpirun -np "$np" "${mpi[@]}" $sweep_mca ${extra:-} "$build/coll_gpu_bench" "$@" \
        --csv "$csv" >"$csv.log" 2>&1 ||
        echo "host-sweep: $label failed (exit $?): $csv.log" >&2
}

for np in $nps; do
    for coll in $colls; do
        # small messages twice, the builds in turn (the summary takes the fastest of each)
        for rep in 1 2; do
            for label in after ${before:+before}; do
                build=$after
                [ "$label" = before ] && build=$before
                run "$label-$coll-np$np-small" "$build" "$np" "$out/$label-$coll-np$np-small-r$rep.csv" \
                    -C "$coll" -b 8 -e 64K -f 8 -n 2000 -w 200 --mem device --floor-bytes 0
            done
        done
        for label in after ${before:+before}; do
            build=$after
            [ "$label" = before ] && build=$before
            run "$label-$coll-np$np-large" "$build" "$np" "$out/$label-$coll-np$np-large.csv" \
                -C "$coll" -b 512K -e 256M -f 8 -n 3 -w 1 --mem device --floor-bytes 0
        done
        # host buffers: the difference is tens of nanoseconds, below a loaded machine's
        # drift over one run: loaded and off in turn, 3 times each (the summary takes the
        # fastest of each)
        for rep in 1 2 3; do
            run "hostbuf-$coll-np$np" "$after" "$np" "$out/hostbuf-$coll-np$np-r$rep.csv" \
                -C "$coll" -b 8 -e 64K -f 8 -n 3000 -w 300 --mem host --floor-bytes 0 -s 0
            extra="--mca coll ^gpu" run "off-$coll-np$np" "$after" "$np" "$out/off-$coll-np$np-r$rep.csv" \
                -C "$coll" -b 8 -e 64K -f 8 -n 3000 -w 300 --mem host --floor-bytes 0 -s 0
        done
    done
done
python3 "$(dirname "$0")/host-sweep-summary.py" "$out" >"$out/summary.md"
cat "$out/summary.md"
