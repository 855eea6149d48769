#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Both commands of the GPU kit in one device command, for a lease too short for two (one
# machine start, 15 minutes in all): command 2 (MPS, benchmark, device barrier,
# compute-sanitizer) then command 1 (no-MPS pass, MPS, unit tests, the MPI suite), each
# under its own deadline, and the 8 files that come back (docs/GPU.md):
#
#   contrib/gpu/run-lease.sh BUDGET2 BUDGET1
#
# On the H200 (2026-11-26) command 2 took about 180 s and command 1's suite about 320 s:
# `run-lease.sh 200 330` with timeout_s 560 runs everything in one call of a 15-minute lease.
#
# $OUT receives kit-2.tar.gz, kit-1.tar.gz (every log of each), summary-2.txt,
# summary-1.txt, bench.txt, bench.csv, device.txt, coll_gpu_info.txt. Unless set, the
# benchmark runs 16 B - 64 MiB by 4x, 10 timed iterations (CG_KIT_BENCH_ARGS), mpirun
# limits are 60 s (90 s for benchmark and sanitizer runs) and coll_gpu_timeout 30 s.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
budget2=${1:?usage: run-lease.sh BUDGET2 BUDGET1 (seconds)}
budget1=${2:?usage: run-lease.sh BUDGET2 BUDGET1 (seconds)}
out=${OUT:-$top/gpu-out}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/cg-lease.XXXXXX")
mkdir -p "$work/1" "$work/2"
export CG_KIT_GATE=${CG_KIT_GATE:-warn} CG_RUN_TIMEOUT=${CG_RUN_TIMEOUT:-60}
export CG_BENCH_TIMEOUT=${CG_BENCH_TIMEOUT:-90} CG_SANITIZER_TIMEOUT=${CG_SANITIZER_TIMEOUT:-90}
export CG_KIT_COLL_TIMEOUT=${CG_KIT_COLL_TIMEOUT:-30} CG_KIT_BENCH_EST=${CG_KIT_BENCH_EST:-30} CG_KIT_SUITE_EST=${CG_KIT_SUITE_EST:-30}
export CG_KIT_BENCH_ARGS=${CG_KIT_BENCH_ARGS:--b 16 -e 64M -f 4 -n 10 -w 3 -c 1 -T 60 --staged-max 64M}
# the large count of the no-MPS and device-barrier runs: 1048579 elements took 42 s of the
# no-MPS pass and 45 s of the device barrier's on the H200 (2026-11-26), time the suite lacked
export CG_KIT_CHECK_LARGE=${CG_KIT_CHECK_LARGE:-262147}
rc=0
OUT=$work/2 CG_KIT_BUDGET=$budget2 bash "$top/contrib/gpu/run-kit.sh" "${@:3}" 2 || rc=1
OUT=$work/1 CG_KIT_BUDGET=$budget1 bash "$top/contrib/gpu/run-kit.sh" "${@:3}" 1 || rc=1
for n in 1 2; do
    [ -f "$work/$n/kit-$n.tar.gz" ] && cp "$work/$n/kit-$n.tar.gz" "$out/"
    [ -f "$work/$n/summary.txt" ] && cp "$work/$n/summary.txt" "$out/summary-$n.txt"
done
for f in bench.txt bench.csv device.txt coll_gpu_info.txt; do
    [ -f "$work/2/$f" ] && cp "$work/2/$f" "$out/"
done
echo "== summaries"
cat "$out/summary-2.txt" "$out/summary-1.txt" 2>/dev/null | grep -Ev '^(PASS|SKIP) [a-z]' | cut -c1-160
echo "run-lease: $(find "$out" -type f | wc -l) files in \$OUT, exit $rc"
rm -rf "$work"
exit $rc
