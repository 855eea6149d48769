#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# coll_gpu_bench as a user runs it, on the host device layer (coll_gpu_device=host): every
# unsupported choice exits non-zero with a message, every collective's results are
# correct (also in place, odd rank counts, forced algorithms, zero copy), the algorithm
# that ran is reported, nccl-tests' summary lines are there, the CSV and JSON parse, -T
# stops a run that takes too long, and the plot script draws them (when matplotlib is
# there). Run by `make check`; by hand: CG_BUILDDIR=_build tests/bench/check_bench.sh
set -uo pipefail

builddir=${CG_BUILDDIR:-$(pwd)}
mpirun=${CG_MPIRUN:-mpirun}
sysdir=${CG_OMPI_COMPONENT_DIR:-$(ompi_info --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p')}
bench=$builddir/coll_gpu_bench
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
if ! command -v "$mpirun" >/dev/null 2>&1; then
    echo "check_bench: mpirun not found: skipped"
    exit 77
fi
[ -x "$bench" ] || { echo "check_bench: $bench not built"; exit 99; }
export OMPI_MCA_mca_base_component_path="$sysdir:$builddir/.libs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d "${TMPDIR:-/tmp}/cg-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
mpi=(timeout -k 10 300 "$mpirun" --bind-to none --mca op ^avx --mca mpi_yield_when_idle 1
     --mca coll_gpu_device host)
failures=0 runs=0

fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# bad NAME PATTERN ARGS...: the bench must exit non-zero and say PATTERN on stderr
bad() {
    local name=$1 pattern=$2 rc=0
    shift 2
    runs=$((runs + 1))
    "${mpi[@]}" -np 1 "$bench" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
    if [ "$rc" = 0 ]; then
        fail "bad-$name: exit status 0 for: $*"
    elif ! grep -q "coll_gpu_bench: error: .*$pattern" "$work/$name.err"; then
        fail "bad-$name: no message matching '$pattern' for: $*"
        head -5 "$work/$name.err" | sed 's/^/    /'
    else
        echo "PASS bad-$name (exit $rc: $(grep -m1 'coll_gpu_bench: error' "$work/$name.err" | cut -c23-90))"
    fi
}
bad coll-alltoall "unknown collective 'alltoall'" -C alltoall
bad coll-cputime "report_cputime" -C 1
bad op-avg "no average operation" -o avg
bad op-all "one op per run" -o all
bad op-unknown "unsupported op 'xor'" -o xor
bad type-half "no predefined datatype" -d half
bad type-bfloat16 "no predefined datatype" -d bfloat16
bad type-all "one datatype per run" -d all
bad type-unknown "unsupported datatype 'int16'" -d int16
bad size "not a size" -b 12Q
bad size-wrap "not a size" -e 17179869184G
bad size-order "larger than" -b 1M -e 1K
bad step-both "exclude each other" -f 2 -i 8
bad factor "above 1" -f 1
bad average "0 (rank 0)" -a 4
bad blocking "0 or 1" -z 2
bad ngpus "one GPU per MPI rank" -g 2
bad option "unknown option -x" -x
bad positional "unexpected argument" allreduce
bad mem "auto, device, pool, vmm, vmm-private or host" --mem bogus
bad root "there are 1 ranks" -C bcast -r 3
bad root-allreduce "bcast only" -r 1
bad algorithm "cannot run algorithm nosuch" -A nosuch
bad rounds "1 to 31" --rounds 0

# good NAME NP PATTERN-OF-ALGORITHMS ARGS...: every result correct, the summary lines, every
# row names an algorithm matching the pattern, the staged column ran staged; the JSON and
# CSV files parse and agree with the table
good() {
    local name=$1 np=$2 algs=$3
    shift 3
    runs=$((runs + 1))
    if ! "${mpi[@]}" -np "$np" "$@" --csv "$work/$name.csv" -J "$work/$name.json" \
        >"$work/$name.out" 2>&1; then
        fail "$name: exit status non-zero"; sed 's/^/    /' "$work/$name.out" | tail -8; return
    fi
    grep -q '^# Out of bounds values : 0 OK$' "$work/$name.out" || { fail "$name: wrong results"; return; }
    grep -qE '^# Avg bus bandwidth    : [0-9.e+-]+$' "$work/$name.out" || { fail "$name: no average line"; return; }
    if ! python3 "$here/check_bench_output.py" "$work/$name.out" "$work/$name.csv" "$work/$name.json" "$algs"; then
        fail "$name: output"; return
    fi
    echo "PASS $name ($(grep -c '^ *[0-9]' "$work/$name.out") sizes)"
}
b() { echo "$bench"; }
good allreduce-float-np4 4 'll|one_shot|two_shot' "$(b)" -C allreduce -b 8 -e 1M -f 16 -n 2 -w 1 -c 2 --counters
good allreduce-int8-min-np3 3 'll|one_shot|two_shot' "$(b)" -C all_reduce -d int8 -o min -b 1 -e 300K -f 9 -n 1 -w 1 -a 3
good allreduce-uint8-max-pool-np3 3 'll|one_shot|two_shot' "$(b)" -C allreduce -d uint8 -o max -b 1K -e 256K -f 16 -n 1 -w 0 --mem pool
good allreduce-int64-prod-inplace-np4 4 'll|one_shot|two_shot' "$(b)" -d int64 -o prod --in-place 1 -b 8 -e 128K -f 8 -n 1 -w 1 -a 0
good allreduce-forced-two-shot-np3 3 'two_shot' "$(b)" -A two_shot -d double -b 8 -e 64K -i 20000 -n 1 -w 1 -a 2
good bcast-root2-np4 4 'll|direct|scatter_allgather' "$(b)" -C broadcast -r 2 -d int32 -b 4 -e 1M -f 32 -n 2 -w 1 -z 1
good allgather-inplace-np3 3 'll|direct' "$(b)" -C allgather -d uint32 --in-place 1 -b 12 -e 600K -f 16 -n 1 -w 1 -m 2
good allgather-rounds-np2 2 'll|direct' "$(b)" -C allgather -b 8 -e 64K -f 64 -n 2 -w 1 --rounds 3
good reduce-scatter-np4 4 'll|direct' "$(b)" -C reduce_scatter -d uint64 -b 32 -e 1M -f 32 -n 1 -w 1 --mem device
good reduce-scatter-block-inplace-np3 3 'll|direct' "$(b)" -C reduce_scatter_block -d double -o max --in-place 1 -b 24 -e 96K -f 8 -n 1 -w 1
# two virtual nodes: small calls staged with no agreement (the model's pinned latencies
# make the choice the same on a loaded machine), larger ones by the hierarchical
# algorithms over UCX
good allreduce-2nodes-np4 4 'staged|hier_[a-z]+' --mca coll_gpu_node_size 2 --mca coll_gpu_net_latency 5 \
    --mca coll_gpu_copy_latency 0.5 "$(b)" -b 8 -e 1M -f 64 -n 1 -w 1 &&
    { awk '$1 == 8 && $7 == "staged" { found = 1 } END { exit !found }' "$work/allreduce-2nodes-np4.out" ||
      fail "allreduce-2nodes-np4: 8 bytes not staged"; }
printf 'allreduce 0 256k 2 * hier_rd\nallreduce 256k * 2 * hier_ring\n' >"$work/hier-rules.txt"
good allreduce-2nodes-hier-np4 4 'hier_[a-z]+' --mca coll_gpu_node_size 2 \
    --mca coll_gpu_rules_file "$work/hier-rules.txt" "$(b)" -b 8 -e 1M -f 64 -n 1 -w 1
# the component switched off: the collective underneath, no staged column, still correct
# (host memory: device memory would reach Open MPI, which cannot read it)
good allreduce-off-np2 2 '-' --mca coll ^gpu "$(b)" -b 8 -e 64K -f 64 -n 1 -w 0 --mem host --counters

# -T: a size that takes longer than the limit ends the run with an error
runs=$((runs + 1))
rc=0
"${mpi[@]}" -np 2 "$bench" -b 32M -e 32M -n 100000 -w 0 -c 0 -s 0 --floor-bytes 0 -T 1 \
    >"$work/timeout.out" 2>&1 || rc=$?
if [ "$rc" != 0 ] && grep -q "coll_gpu_bench: timeout (-T 1) at 33554432 bytes" "$work/timeout.out"; then
    echo "PASS timeout (exit $rc)"
else
    fail "timeout: exit $rc"; tail -5 "$work/timeout.out" | sed 's/^/    /'
fi

# the plot of the JSON and CSV files (python3-matplotlib; skipped without it)
plot_py=""
for py in python3 /usr/bin/python3; do
    if [ -z "$plot_py" ] && command -v "$py" >/dev/null && "$py" -c 'import matplotlib' 2>/dev/null; then
        plot_py=$py
    fi
done
if [ -n "$plot_py" ]; then
    runs=$((runs + 1))
    if "$plot_py" "$top/contrib/gpu/plot-bench.py" -o "$work/plot.png" "$work/allreduce-float-np4.json" \
        "$work/bcast-root2-np4.csv" >"$work/plot.out" 2>&1 && [ -s "$work/plot.png" ]; then
        echo "PASS plot"
    else
        fail "plot"; sed 's/^/    /' "$work/plot.out" | tail -5
    fi
else
    echo "SKIP plot (python3-matplotlib is not installed; contrib/gpu/plot-bench.sh installs it)"
fi

echo "check_bench: $runs runs, $failures failed"
[ "$failures" = 0 ]
