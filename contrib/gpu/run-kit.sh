#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# The GPU checks of coll/gpu, on the device machine (from the repository root, with
# .mpi-bundle and .gpu-kit made by contrib/gpu/make-kit.sh carried there). Two commands of
# at most 9 minutes each (docs/GPU.md):
#
#   contrib/gpu/run-kit.sh 1     gates and facts, a pass without MPS, MPS, unit tests,
#                                the MPI suite on device memory
#   contrib/gpu/run-kit.sh 2     gates and facts, MPS, the probe, A/B rows, UCX with CUDA
#                                across virtual nodes, the benchmark, the device barrier,
#                                compute-sanitizer
#   contrib/gpu/run-kit.sh --profile dry 1|2
#                                the same on the host device layer (CI: contrib/gpu/dry-run.sh)
#
# Results in $OUT (default ./gpu-out): kit-N.tar.gz (every log, rewritten after every phase),
# summary.txt, console.log, device.txt, coll_gpu_info.txt, bench.txt, bench.csv: 8 files at
# most. PASS/FAIL lines and the benchmark tables also go to stdout. Exit status 0: all passed.
#
# Environment: CG_KIT_BUDGET (seconds for the command, default 540), CG_RUN_TIMEOUT (one
# mpirun, default 120; CG_BENCH_TIMEOUT for a benchmark run, 240; CG_SANITIZER_TIMEOUT for
# one under compute-sanitizer, 240), CG_KIT_COLL_TIMEOUT (coll_gpu_timeout, default 60),
# CG_KIT_GATE=warn (go on when the bundle's self-test fails or coll_gpu_info does not see the GPU
# as expected),
# CG_KIT_BENCH_ARGS (the benchmark's size and iteration arguments) and CG_KIT_BENCH_EST
# (seconds one benchmark run needs) for a shorter lease; CG_KIT_SKIP (phases not to run, a
# regular expression of names), CG_KIT_BENCH_SELECT (the benchmark runs to do, likewise) and
# CG_KIT_SUITE_SELECT (the suite's runs) for a run that repeats what an earlier one left;
# CG_KIT_RUN_SKIP (the kit's own runs not to do, by name, a regular expression);
# CG_KIT_CHECK_LARGE (the large count of the no-MPS and device-barrier runs, elements);
# CG_KIT_AB_BASE (command 2: another build's kit folder, run side by side with this one on
# the small-message rows, phase ab; unset: the phase is skipped).
# The phases stop and start MPS, so nothing else on the machine should be using it.
set -uo pipefail # no -e: a failing phase is recorded and the next one runs

kit_top=$(cd "$(dirname "$0")/../.." && pwd)
kit_profile=${CG_KIT_PROFILE:-gpu}
kit_cmd=""
while [ $# -gt 0 ]; do
    case $1 in
    --profile) kit_profile=${2:?--profile gpu|dry}; shift 2 ;;
    1 | 2) kit_cmd=$1; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-kit: unknown argument '$1' (1, 2, --profile gpu|dry)" >&2; exit 2 ;;
    esac
done
[ -n "$kit_cmd" ] || { echo "usage: run-kit.sh [--profile gpu|dry] 1|2" >&2; exit 2; }
case $kit_profile in gpu | dry) ;; *) echo "run-kit: profile gpu or dry" >&2; exit 2 ;; esac

kit_out=${OUT:-$kit_top/gpu-out}
mkdir -p "$kit_out"
kit_out=$(cd "$kit_out" && pwd)
kit_budget=${CG_KIT_BUDGET:-540}
kit_reserve=${CG_KIT_RESERVE:-15}
kit_kit=$kit_top/.gpu-kit
for f in "$kit_top/.mpi-bundle/env.sh" "$kit_kit/.libs/mca_coll_gpu.so" "$kit_kit/tests/mpi/coll_check"; do
    [ -e "$f" ] || { echo "run-kit: $f missing: run contrib/gpu/make-kit.sh first and carry .mpi-bundle and .gpu-kit" >&2; exit 2; }
done

# shellcheck source=contrib/gpu/kit-lib.sh
. "$kit_top/contrib/gpu/kit-lib.sh"
# shellcheck source=contrib/gpu/kit-phases.sh
. "$kit_top/contrib/gpu/kit-phases.sh"
# shellcheck disable=SC1091
. "$kit_top/.mpi-bundle/env.sh"

# Console: everything printed also goes to console.log.
: >"$kit_out/console.log"
exec > >(tee -a "$kit_out/console.log") 2>&1
kit_tee=$!
kit_init

export OMPI_MCA_mca_base_component_path=$MPI_BUNDLE_COMPONENT_DIR:$kit_kit/.libs
export LD_LIBRARY_PATH=$kit_kit/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} # libcg_sim
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_coll_gpu_timeout=${CG_KIT_COLL_TIMEOUT:-60} # a fast path never waits forever
export CG_RUN_TIMEOUT=${CG_RUN_TIMEOUT:-120} CG_KIT_MPIRUN
CG_KIT_MPIRUN=$(command -v mpirun)
export CUDA_MPS_PIPE_DIRECTORY=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/cg-kit-mps/pipe}
export CUDA_MPS_LOG_DIRECTORY=${CUDA_MPS_LOG_DIRECTORY:-/tmp/cg-kit-mps/log}
export CG_KIT_MPS=0
kit_check=("$kit_kit/tests/mpi/coll_check")
kit_sanitizer=$(command -v compute-sanitizer || { [ -x /usr/local/cuda/bin/compute-sanitizer ] && echo /usr/local/cuda/bin/compute-sanitizer; } || true)
if [ "$kit_profile" = gpu ]; then
    kit_dev=cuda
    kit_check_large=${CG_KIT_CHECK_LARGE:-1048579} kit_check_narrow=()
    kit_bench_args=(-b 8 -e 256M -f 4 -n 20 -w 5 -c 1 -T 100 --staged-max 64M)
    kit_bench_est=75 kit_latency_iters=2000
    kit_suite_select=${CG_KIT_SUITE_SELECT:-} kit_unit_skip=""
else # the host device layer, tiny sizes: every mechanism, a few minutes on 2 cores
    kit_dev=host # the simulated GPU: device memory the CPU cannot touch
    kit_check_large=0 kit_check_narrow=(--types MPI_INT,MPI_DOUBLE,MPI_FLOAT_INT --comms world)
    kit_bench_args=(-b 8 -e 64K -f 64 -n 2 -w 1 -c 1 -T 100 --floor-bytes 1M)
    kit_bench_est=20 kit_latency_iters=20
    kit_sanitizer=""
    kit_suite_select=${CG_KIT_SUITE_SELECT:-matrix-np2|forced-two_shot-allreduce-np5|nodes2x2-np4|mixed-kinds-np4|fail-one-node-np4|costs-np2|hello-np4}
    kit_unit_skip=test_reduce
fi
if [ -n "${CG_KIT_BENCH_ARGS:-}" ]; then # a shorter lease: e.g. "-b 16 -e 64M -f 4 -n 10 -w 3 -c 1 -T 60"
    read -r -a kit_bench_args <<<"$CG_KIT_BENCH_ARGS"
fi
kit_bench_est=${CG_KIT_BENCH_EST:-$kit_bench_est}
kit_mpi_args=(--bind-to none --mca op ^avx --mca mpi_yield_when_idle 1 --mca coll_gpu_device "$kit_dev")

kit_say "== coll/gpu GPU kit, command $kit_cmd, $kit_profile profile: budget $kit_budget s, mpirun limit $CG_RUN_TIMEOUT s, coll_gpu_timeout $OMPI_MCA_coll_gpu_timeout s"
kit_say "   build: $(grep -m1 '^revision' "$kit_kit/KIT-INFO" 2>/dev/null || echo 'no KIT-INFO')"
if [ "$kit_cmd" = 1 ]; then
    if [ "$kit_profile" = dry ]; then
        kit_plan facts bundle gate guard nomps mps unit suite
    else
        kit_plan facts bundle gate nomps mps unit suite
    fi
    kit_phase facts 5 phase_facts
    kit_phase bundle 20 phase_bundle
    kit_phase gate 10 phase_gate
    [ "$kit_profile" = dry ] && kit_phase guard 20 phase_guard
    kit_phase nomps 70 phase_nomps
    kit_phase mps 30 phase_mps
    kit_phase unit 30 phase_unit
    kit_phase suite "${CG_KIT_SUITE_EST:-120}" phase_suite
else
    kit_plan facts bundle gate mps probe ab ucxcuda bench devsync sanitizer
    kit_phase facts 5 phase_facts
    kit_phase bundle 20 phase_bundle
    kit_phase gate 10 phase_gate
    kit_phase mps 30 phase_mps
    kit_phase probe 15 phase_probe
    kit_phase ab "$kit_bench_est" phase_ab
    kit_phase ucxcuda 60 phase_ucxcuda
    kit_phase bench "$kit_bench_est" phase_bench
    kit_phase devsync 60 phase_devsync
    kit_phase sanitizer 60 phase_sanitizer
fi
bash "$kit_top/contrib/gpu/kit-mps.sh" stop >>"$kit_work/logs/mps.log" 2>&1
kit_finish
rc=$?
exec >&- 2>&-
for _ in $(seq 1 50); do kill -0 "$kit_tee" 2>/dev/null || break; sleep 0.1; done # console.log complete
exit $rc
