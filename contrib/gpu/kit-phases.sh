# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# shellcheck shell=bash
# The phases of the GPU kit (sourced by contrib/gpu/run-kit.sh after kit-lib.sh). Each
# returns 0 (PASS), 1 (FAIL), 2 (SKIP: cannot run here) or 3 (a gate failed: the kit stops).
# Profile variables (run-kit.sh): kit_profile gpu|dry, kit_dev cuda|host (coll_gpu_device),
# kit_kit (the carried build), kit_mpi_args, kit_check_large, kit_bench_args, kit_bench_est.

kit_check=() # set by run-kit.sh: the coll_check program

# Device facts, build and revision: device.txt.
phase_facts() {
    local f=$kit_out/device.txt
    {
        echo "# coll/gpu GPU kit, command $kit_cmd, profile $kit_profile, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
        echo "== build carried (.gpu-kit/KIT-INFO)"
        cat "$kit_kit/KIT-INFO" 2>/dev/null || echo "no KIT-INFO"
        echo "== revision of this tree"
        git -C "$kit_top" log -1 --format='%H %cd' 2>/dev/null || echo "no git here: see KIT-INFO"
        echo "== host"
        uname -a; echo "cpus: $(nproc)"; free -m | head -2; sed -n 's/^PRETTY_NAME=//p' /etc/os-release
        echo "== GPU (nvidia-smi)"
        if command -v nvidia-smi >/dev/null; then
            nvidia-smi -L
            nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id,compute_mode,mig.mode.current,clocks.max.sm,clocks.max.mem --format=csv
            nvidia-smi topo -m
            nvidia-smi
        else
            echo "nvidia-smi: absent${kit_profile:+ ($kit_profile profile)}"
        fi
        echo "== CUDA tools"
        nvcc --version 2>/dev/null | tail -2 || echo "nvcc: absent"
        "${kit_sanitizer:-compute-sanitizer}" --version 2>/dev/null | head -2 || echo "compute-sanitizer: absent"
        command -v nvidia-cuda-mps-control || echo "nvidia-cuda-mps-control: absent"
        echo "== MPI runtime (.mpi-bundle)"
        head -12 "$MPI_BUNDLE/MANIFEST" 2>/dev/null || echo "bundle made by another tool (no MANIFEST)"
        echo "mpirun: $(command -v mpirun)"; mpirun --version 2>&1 | head -1
        echo "== PCI devices hwloc sees (topology of the component)"
        lstopo-no-graphics --only pcidev 2>&1 | head -20 || true
    } >"$f" 2>&1
    grep -E "^GPU [0-9]|driver_version|^[A-Z].*, [0-9]+\.[0-9]+" "$f" | head -4 | sed 's/^/    /'
    return 0
}

# The runtime bundle works on this machine (its own self-test, in a clean environment).
phase_bundle() {
    local log=$kit_work/logs/bundle-selftest.log
    if timeout -k 10 180 bash "$MPI_BUNDLE/selftest.sh" >"$log" 2>&1; then
        kit_say "PASS bundle: $(grep -m1 'selftest: ok' "$log" | cut -c1-150)"
        return 0
    fi
    kit_say "FAIL bundle: its self-test failed on this machine: $(grep -m1 -i 'fail' "$log" | cut -c1-200)"
    [ "${CG_KIT_GATE:-stop}" = warn ] && return 1
    return 3
}

# coll_gpu_info: the component sees the GPU, and several ranks share it (class shared-gpu);
# on the host layer (dry profile): class host.
phase_gate() {
    local f=$kit_out/coll_gpu_info.txt want cls
    { "$kit_kit/coll_gpu_info" --ranks 4; echo; "$kit_kit/coll_gpu_info" --ranks 8 | sed -n '/^node of/,/^$/p'; } >"$f" 2>&1
    cls=$(grep -m1 '^node of 4 ranks:' "$f" || echo "no 'node of 4 ranks' line")
    if [ "$kit_dev" = cuda ]; then
        want="shared-gpu"
        if ! grep -q "CUDA here: driver and GPU present" "$f"; then
            kit_say "FAIL gate: coll_gpu_info does not see a GPU: $(grep -m1 'CUDA here' "$f")"
            [ "${CG_KIT_GATE:-stop}" = warn ] && return 1
            return 3
        fi
    else
        want="host"
    fi
    if ! grep -q "^node of 4 ranks: $want " "$f"; then
        kit_say "FAIL gate: coll_gpu_info reports '$cls', expected class $want (4 ranks on one device): see coll_gpu_info.txt"
        [ "${CG_KIT_GATE:-stop}" = warn ] && return 1
        return 3
    fi
    kit_say "PASS gate: $cls"
}

# The kit's own guard: a run longer than its limit is killed, nothing of it is left behind.
phase_guard() {
    local rc left
    CG_RUN_TIMEOUT=3 kit_run guard-timeout-np2 2 sleep 60
    rc=$?
    left=$(grep -l "CG_KIT_RUN_ID=guard-timeout" /proc/[0-9]*/environ 2>/dev/null | wc -l)
    if { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && [ "$left" = 0 ]; then
        kit_say "PASS guard: a run over its limit was killed (exit $rc), no process of it left"
        return 0
    fi
    kit_say "FAIL guard: exit $rc, $left processes left"
    return 1
}

# Without MPS: time-sliced contexts, host-synchronised barriers; must not deadlock.
phase_nomps() {
    local rc=0
    bash "$kit_top/contrib/gpu/kit-mps.sh" stop >>"$kit_work/logs/mps.log" 2>&1
    export CG_KIT_MPS=0
    kit_run nomps-host-sync-np2 2 --mca coll_gpu_intra_sync host \
        "${kit_check[@]}" --mem device --counts 1,7,1000,70001 --large "$kit_check_large" --no-derived \
        "${kit_check_narrow[@]}" || rc=1
    kit_run nomps-host-sync-pipelined-np4 4 --mca coll_gpu_intra_sync host --mca coll_gpu_scratch_size 65536 \
        "${kit_check[@]}" --mem pool --counts 0,1,7,1000,70001 --large 0 --no-derived \
        --types MPI_INT,MPI_DOUBLE,MPI_FLOAT_INT,MPI_UINT8_T "${kit_check_narrow[@]}" || rc=1
    # what small calls cost with time-sliced contexts: auto (the planner sees no MPS and
    # keeps LL out) against LL forced, whose kernel spins until the others' get their turn;
    # up to 1 MiB, where the H200 (2026-11-27) had two_shot at 545 us and staged at 67-100
    # us from 32 KiB; then two_shot forced with the copy engine, and which driver operations
    # wait for the others' time slices (the probe's memset, word and copy rows)
    kit_bench_one allreduce-latency-nomps-np4 4 $((kit_bench_est / 2)) -- -C allreduce -b 8 -e 1M \
        -n 100 -w 5 --floor-bytes 0 || rc=1
    kit_bench_one allreduce-latency-nomps-ll-np4 4 $((kit_bench_est / 2)) -- -C allreduce -A ll \
        -b 8 -e 4K -n 50 -w 2 --floor-bytes 0 || rc=1
    kit_bench_one allreduce-two_shot-engine-nomps-np4 4 $((kit_bench_est / 2)) \
        --mca coll_gpu_copy_method engine -- -C allreduce -A two_shot -b 512 -e 1M -f 8 -n 50 -w 2 \
        --floor-bytes 0 || rc=1
    if [ -x "$kit_kit/coll_gpu_probe" ]; then
        kit_run probe-nomps-np4 4 "$kit_kit/coll_gpu_probe" 100 || rc=1
        kit_bench_txt probe-nomps-np4 "probe-nomps-np4: mpirun -np 4 coll_gpu_probe 100 (no MPS)"
    fi
    return $rc
}

# MPS on, proven by a 2-rank run that went through an MPS server.
phase_mps() {
    local log=$kit_work/logs/mps.log
    if ! command -v nvidia-cuda-mps-control >/dev/null; then
        kit_say "SKIP mps: no nvidia-cuda-mps-control here ($kit_profile profile); the runs go without MPS"
        return 2
    fi
    if ! bash "$kit_top/contrib/gpu/kit-mps.sh" start >>"$log" 2>&1; then
        kit_say "FAIL mps: it does not start: $(tail -1 "$log")"
        return 1
    fi
    export CG_KIT_MPS=1
    kit_run mps-proof-np2 2 "$kit_kit/coll_gpu_hello" 100000 || return 1
    kit_refused mps-proof-np2 && return 2 # no time to prove it: not a failure of MPS
    if bash "$kit_top/contrib/gpu/kit-mps.sh" status >>"$log" 2>&1 && grep -q "servers: [0-9]" "$log"; then
        kit_say "PASS mps: $(grep -m1 'servers:' "$log" | cut -c1-120)"
        return 0
    fi
    kit_say "FAIL mps: no MPS server after a 2-rank run (the clients did not use MPS)"
    return 1
}

# The Check unit tests of the carried build.
phase_unit() {
    local t rc=0 name
    for t in "$kit_kit"/tests/unit/test_*; do
        name=$(basename "$t")
        if [ -n "${kit_unit_skip:-}" ] && grep -Eqx "$kit_unit_skip" <<<"$name"; then
            kit_say "SKIP unit $name ($kit_profile profile)"
            continue
        fi
        if CG_TOPO_DIR=$kit_top/tests/topo timeout -k 5 120 "$t" >"$kit_work/logs/unit-$name.log" 2>&1; then
            kit_say "PASS unit $name: $(grep -m1 'Checks:' "$kit_work/logs/unit-$name.log")"
        else
            kit_say "FAIL unit $name: logs/unit-$name.log"
            rc=1
        fi
    done
    return $rc
}

# The suite's output on the console, less the runs kit-mpirun.sh skipped for lack of time
# (they stay in suite.log).
kit_suite_console() {
    local line name
    while IFS= read -r line; do
        if [[ $line == "FAIL "* ]]; then
            name=${line#FAIL }
            name=${name%% *}
            name=${name%:}
            grep -q "^cg-kit: no time left" "$kit_work/suite/$name.log" 2>/dev/null && continue
        fi
        printf '%s\n' "$line"
    done
}

# The repository's MPI suite with the carried binaries, on device memory (the simulated GPU
# in the dry profile), every run through kit-mpirun.sh, the runs of kit_suite_select only
# (the suite's CG_SUITE_FILTER; empty: all), the whole suite stopped at the deadline.
phase_suite() {
    local left rc=0 log=$kit_work/logs/suite.log name fails="" late=0 passed filtered
    left=$(($(kit_left) - 5))
    CG_BUILDDIR=$kit_kit CG_MPIRUN=$kit_top/contrib/gpu/kit-mpirun.sh CG_KIT_MPIRUN=$(command -v mpirun) \
        CG_OMPI_COMPONENT_DIR=$MPI_BUNDLE_COMPONENT_DIR CG_TEST_DEVICE=$kit_dev CG_SUITE=quick \
        CG_SUITE_LOG=$kit_work/suite CG_SUITE_FILTER=${kit_suite_select:+"^(${kit_suite_select})\$"} \
        timeout -k 15 "$left" bash "$kit_top/tests/mpi/run_suite.sh" 2>&1 | tee "$log" | kit_suite_console
    rc=${PIPESTATUS[0]}
    while read -r _ name _; do
        name=${name%:}
        if grep -q "^cg-kit: no time left" "$kit_work/suite/$name.log" 2>/dev/null; then
            late=$((late + 1))
        else
            fails="$fails $name"
        fi
    done < <(grep '^FAIL ' "$log")
    fails=$(tr ' ' '\n' <<<"$fails" | sort -u | tr '\n' ' ')
    passed=$(grep -c '^PASS ' "$log")
    filtered=$(sed -n 's/.* \([0-9]*\) skipped by CG_SUITE_FILTER.*/\1/p' "$log" | tail -1)
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        kit_say "FAIL suite: stopped at the deadline after $passed passed runs (failed:${fails:- none})"
        return 1
    fi
    if [ -n "${fails// /}" ]; then
        kit_say "FAIL suite: $passed passed, failed: $fails($late out of time, ${filtered:-0} not selected)"
        return 1
    fi
    kit_say "PASS suite: $passed runs passed, $late out of time, ${filtered:-0} not selected ($(tail -1 "$log" | cut -c1-80))"
    return 0
}

# compute-sanitizer memcheck and racecheck on 2-rank runs (without MPS; in the dry profile,
# without the sanitizer, to exercise the rest).
phase_sanitizer() {
    local rc=0 cs=() tag=""
    if [ -n "$kit_sanitizer" ] && command -v "$kit_sanitizer" >/dev/null; then
        cs=("$kit_sanitizer")
    elif [ "$kit_profile" = dry ]; then
        tag=" (dry: no compute-sanitizer, the same runs without it)"
    else
        kit_say "FAIL sanitizer: compute-sanitizer not found"
        return 1
    fi
    bash "$kit_top/contrib/gpu/kit-mps.sh" stop >>"$kit_work/logs/mps.log" 2>&1
    export CG_KIT_MPS=0
    CG_RUN_TIMEOUT=${CG_SANITIZER_TIMEOUT:-240} kit_run sanitizer-memcheck-np2 2 \
        ${cs[@]+"${cs[@]}" --tool memcheck --error-exitcode 9 --print-limit 20} \
        "${kit_check[@]}" --mem device --counts 1,7,1000,70001 --large 0 --no-derived \
        --types MPI_INT,MPI_DOUBLE,MPI_FLOAT_INT,MPI_DOUBLE_INT,MPI_C_DOUBLE_COMPLEX || rc=1
    CG_RUN_TIMEOUT=${CG_SANITIZER_TIMEOUT:-240} kit_run sanitizer-racecheck-np2 2 \
        ${cs[@]+"${cs[@]}" --tool racecheck --error-exitcode 9 --print-limit 20} \
        "${kit_check[@]}" --mem device --counts 1,1000,70001 --large 0 --no-derived \
        --colls allreduce,bcast,allgather,reduce_scatter_block --types MPI_INT,MPI_DOUBLE || rc=1
    [ -n "$tag" ] && kit_say "NOTE sanitizer$tag"
    return $rc
}

# The intra-node device barrier (stream memory operations) under MPS: concurrent ranks.
phase_devsync() {
    local rc=0
    kit_run devsync-pipelined-np4 4 --mca coll_gpu_intra_sync device --mca coll_gpu_scratch_size 65536 \
        "${kit_check[@]}" --mem pool --counts 0,1,7,1000,70001 --large "$kit_check_large" --no-derived \
        "${kit_check_narrow[@]}" || rc=1
    kit_run devsync-zero-copy-np8 8 --mca coll_gpu_intra_sync device \
        "${kit_check[@]}" --mem device --counts 1,1000 --large "$kit_check_large" --no-derived \
        "${kit_check_narrow[@]}" || rc=1
    kit_run devsync-two-shot-np3 3 --mca coll_gpu_intra_sync device --mca coll_gpu_allreduce_algorithm two_shot \
        "${kit_check[@]}" --mem device --colls allreduce --counts 1,7,1000,70001 --large 0 --no-derived \
        "${kit_check_narrow[@]}" || rc=1
    kit_run devsync-vmm-np4 4 --mca coll_gpu_intra_sync device \
        "${kit_check[@]}" --mem vmm --counts 1,1000,70001 --large 0 --no-derived \
        "${kit_check_narrow[@]}" || rc=1
    # every stream on one hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1, as some training
    # jobs set): no copy that releases a flag wait, and no other stream's work, may queue
    # behind a stream that waits for a flag; then a rank failing in such a call
    kit_run devsync-one-queue-np4 4 -x CUDA_DEVICE_MAX_CONNECTIONS=1 --mca coll_gpu_intra_sync device \
        "${kit_check[@]}" --mem device --counts 1,1000,70001 --large 0 --no-derived \
        "${kit_check_narrow[@]}" || rc=1
    kit_run devsync-fail-one-queue-np4 4 -x CUDA_DEVICE_MAX_CONNECTIONS=1 --mca coll_gpu_intra_sync device \
        --mca coll_gpu_debug_fail 1:4 "$kit_kit/tests/mpi/coll_fail" --mem device --coll allreduce \
        --fail-rank 1 --fail-call 4 --count 70001 || rc=1
    return $rc
}

# kit_bench_txt LOG HEADING: a run's log (logs/LOG.log, without the kit's own lines) into
# bench.txt under "### HEADING".
kit_bench_txt() {
    {
        echo "### $2"
        grep -v '^cg-kit' "$kit_work/logs/$1.log"
        echo
    } >>"$kit_out/bench.txt"
}

# The driver operations a small call is made of, each timed alone (coll_gpu_probe), at 1
# rank and at 4 sharing the GPU: where an 8-byte collective's time goes. Into bench.txt.
phase_probe() {
    local rc=0 np
    [ -x "$kit_kit/coll_gpu_probe" ] || { kit_say "SKIP probe: the kit has no coll_gpu_probe (a build without CUDA)"; return 2; }
    for np in 1 4; do
        kit_run "probe-np$np" "$np" "$kit_kit/coll_gpu_probe" "$kit_latency_iters" || rc=1
        kit_bench_txt "probe-np$np" "probe-np$np: mpirun -np $np coll_gpu_probe $kit_latency_iters"
        grep -E '^#|^  [a-z]|no CUDA' "$kit_work/logs/probe-np$np.log"
    done
    if [ "$rc" = 0 ] && grep -q "no CUDA device" "$kit_work/logs/probe-np1.log"; then
        return 2 # the dry run: nothing to measure, the program ran
    fi
    if [ "$rc" = 0 ] && kit_refused probe-np1 && kit_refused probe-np4; then
        return 2 # nothing measured: no time was left
    fi
    return $rc
}

# kit_ab_served NAME: the run's calls went to the LL server (rank 0's counters: ll_served
# 0.9 per call or more); else the server was off (no MPS seen: the help text in the log)
# and the row measured the launched kernel under the server's name.
kit_ab_served() {
    local log=$kit_work/logs/bench-$1.log served
    [ -f "$log" ] || return 0 # not run: not selected, or left out by the deadline guard
    kit_refused "bench-$1" && return 0
    served=$(sed -n 's/.*counters per call (rank 0):.*ll_served \([0-9.]*\).*/\1/p' "$log" 2>/dev/null | tail -1)
    if awk -v v="${served:-0}" 'BEGIN { exit !(v >= 0.9) }'; then
        return 0
    fi
    kit_say "FAIL $1: ll_served ${served:-0} per call: the calls did not go to the LL server$(grep -q 'll_persist' "$log" 2>/dev/null && echo ' (the log says why)')"
    return 1
}

# One benchmark run: NAME NP ESTIMATE [mpirun arguments] -- [benchmark arguments]. Its table
# goes to bench.txt, its rows to bench.csv, its files to the archive.
kit_bench_one() {
    local name=$1 np=$2 est=$3 mpi=() args=() dir=$kit_work/bench left
    shift 3
    while [ $# -gt 0 ] && [ "$1" != -- ]; do mpi+=("$1"); shift; done
    shift
    args=("$@")
    if [ -n "${CG_KIT_BENCH_SELECT:-}" ] && ! grep -Eqx "$CG_KIT_BENCH_SELECT" <<<"$name"; then
        return 0
    fi
    left=$(kit_left)
    if [ "$left" -lt "$est" ]; then
        kit_say "SKIP bench-$name: deadline guard (needs about $est s, $left s left)"
        return 0
    fi
    mkdir -p "$dir"
    CG_RUN_TIMEOUT=${CG_BENCH_TIMEOUT:-240} kit_run "bench-$name" "$np" "${mpi[@]}" "$kit_kit/coll_gpu_bench" \
        "${kit_bench_args[@]}" "${args[@]}" --csv "$dir/$name.csv" -J "$dir/$name.json"
    local rc=$?
    kit_bench_txt "bench-$name" "$name: mpirun -np $np ${mpi[*]} coll_gpu_bench ${kit_bench_args[*]} ${args[*]}"
    grep -E '^#|^ +[0-9]' "$kit_work/logs/bench-$name.log" | grep -v '^# iterations'
    if [ -s "$dir/$name.csv" ]; then
        [ -s "$kit_out/bench.csv" ] || head -1 "$dir/$name.csv" | sed 's/^/run,/' >"$kit_out/bench.csv"
        tail -n +2 "$dir/$name.csv" | sed "s/^/$name,/" >>"$kit_out/bench.csv"
    fi
    [ "$rc" = 0 ]
}

# UCX built with CUDA (the kit's ucx-cuda/, contrib/gpu/make-ucx-cuda.sh) in place of the
# runtime's host-only UCX: across two virtual nodes of 2 ranks the component hands device
# memory to UCX itself (cuda_ipc, cuda_copy), as on a cluster whose UCX has CUDA: the
# inter-node transport's direct path, which no other run of the kit takes. Every collective
# exact with auto and with hier_ring forced (small counts: the runs are short), every rank's
# log saying "(CUDA: direct), direct" and none that device data went through host memory
# after all (a rank whose UCX lacks CUDA makes every rank stage); then the allreduce across
# the two nodes (its own deadline guard), next to phase bench's allreduce-2nodes-np4.
phase_ucxcuda() {
    local u=$kit_kit/ucx-cuda rc=0 ran=0 name vlog r
    [ -f "$u/VERSION" ] || { kit_say "SKIP ucxcuda: the kit has no UCX with CUDA (make-ucx-cuda.sh)"; return 2; }
    [ "$kit_dev" = cuda ] || { kit_say "SKIP ucxcuda: no GPU here (the dry run)"; return 2; }
    local ucx=(-x "LD_LIBRARY_PATH=$u/lib:${LD_LIBRARY_PATH:-}" -x "UCX_MODULE_DIR=$u/lib/ucx"
               -x UCX_WARN_UNUSED_ENV_VARS=n --mca coll_gpu_node_size 2)
    local hier=(--mca coll_gpu_allreduce_algorithm hier_ring --mca coll_gpu_bcast_algorithm hier_ring
                --mca coll_gpu_allgather_algorithm hier_ring --mca coll_gpu_reduce_scatter_algorithm hier_ring)
    for name in auto hier; do
        vlog=$kit_work/logs/ucxcuda-$name-np4
        rm -f "$vlog".*.vlog "$vlog.log"
        local forced=()
        [ "$name" = hier ] && forced=("${hier[@]}")
        kit_run "ucxcuda-$name-np4" 4 "${ucx[@]}" "${forced[@]}" --mca coll_gpu_verbose 3 \
            --mca coll_gpu_verbose_file "$vlog.%r.vlog" "${kit_check[@]}" --mem device \
            --counts 0,1,7,1000,70001 --large 0 --no-derived || rc=1
        # not run: not selected (CG_KIT_RUN_SKIP: no log) or refused for lack of time
        [ -f "$vlog.log" ] && ! kit_refused "ucxcuda-$name-np4" || continue
        ran=1
        for r in 0 1 2 3; do
            if ! grep -q "inter-node transport: .*(CUDA: direct), direct$" "$vlog.$r.vlog" 2>/dev/null ||
                grep -q "device data goes through host memory on every rank" "$vlog.$r.vlog"; then
                kit_say "FAIL ucxcuda-$name-np4: rank $r's UCX did not get the device memory itself: $(grep -m1 -o 'inter-node transport: .*' "$vlog.$r.vlog" 2>/dev/null || echo 'no transport line')"
                rc=1
                break
            fi
        done
    done
    kit_bench_one allreduce-2nodes-ucxcuda-np4 4 "$kit_bench_est" "${ucx[@]}" -- -C allreduce || rc=1
    [ -s "$kit_work/bench/allreduce-2nodes-ucxcuda-np4.csv" ] && ran=1 # not selected, no time: none
    [ "$ran" = 1 ] || [ "$rc" != 0 ] || return 2 # nothing ran: no time, or not selected
    return $rc
}

# The benchmark: the four collectives at 4 ranks, allreduce at 2 and 8, two virtual nodes,
# latency, host buffers; the most important first (the guard skips what would not finish).
phase_bench() {
    local rc=0 e=$kit_bench_est
    kit_bench_one allreduce-np4 4 "$e" -- -C allreduce || rc=1
    kit_bench_one allreduce-latency-np4 4 $((e / 2)) -- -C allreduce -b 8 -e 8 -n "$kit_latency_iters" -w 20 --floor-bytes 0
    # the crossovers, measured: one_shot and two_shot forced over the sizes between LL and
    # two_shot (on the H200, one_shot's copy variant pays two device round trips, two_shot's
    # zero copy one: the model's one-barrier one_shot is to be checked against these)
    kit_bench_one allreduce-one_shot-np4 4 $((e / 2)) -- -C allreduce -A one_shot -b 4K -e 4M || rc=1
    kit_bench_one allreduce-two_shot-np4 4 $((e / 2)) -- -C allreduce -A two_shot -b 4K -e 4M || rc=1
    kit_bench_one allgather-np4 4 "$e" -- -C allgather || rc=1
    kit_bench_one reduce_scatter-np4 4 "$e" -- -C reduce_scatter || rc=1
    kit_bench_one bcast-np4 4 "$e" -- -C bcast || rc=1
    kit_bench_one allreduce-np2 2 "$e" -- -C allreduce || rc=1
    kit_bench_one allreduce-np8 8 $((e * 3 / 2)) -- -C allreduce || rc=1
    # what the cost model measured when the two-node context was made (a copy to the device
    # and back, one collective underneath): the crossover between staging and the
    # hierarchical algorithms in the two rows below follows from these
    kit_run measured-2nodes-np4 4 --mca coll_gpu_node_size 2 --mca coll_gpu_verbose 3 \
        "$kit_kit/coll_gpu_hello" 1000 || rc=1
    {
        echo "### measured-2nodes-np4: mpirun -np 4 --mca coll_gpu_node_size 2 --mca coll_gpu_verbose 3 coll_gpu_hello 1000"
        grep -E "init measured|^coll_gpu_hello" "$kit_work/logs/measured-2nodes-np4.log"
        echo
    } | tee -a "$kit_out/bench.txt"
    kit_bench_one allreduce-2nodes-np4 4 "$e" --mca coll_gpu_node_size 2 -- -C allreduce || rc=1
    kit_bench_one bcast-2nodes-np4 4 "$e" --mca coll_gpu_node_size 2 -- -C bcast || rc=1
    # cuMemCreate memory (PyTorch's expandable segments): zero copy through descriptors
    kit_bench_one allreduce-vmm-np4 4 "$e" -- -C allreduce --mem vmm || rc=1
    # host buffers on a GPU node: the component loaded (host-memory cache), without the
    # cache (a cuPointerGetAttributes per buffer), switched off
    local hostbuf=(-C allreduce -b 8 -e 8 -n "$kit_latency_iters" -w 20 --mem host --floor-bytes 0 -s 0)
    kit_bench_one hostbuf-np2 2 $((e / 4)) -- "${hostbuf[@]}" || rc=1
    kit_bench_one hostbuf-nocache-np2 2 $((e / 4)) --mca coll_gpu_host_cache 0 -- "${hostbuf[@]}" || rc=1
    kit_bench_one hostbuf-off-np2 2 $((e / 4)) --mca coll ^gpu -- "${hostbuf[@]}" || rc=1
    return $rc
}

# A/B in one lease (CG_KIT_AB_BASE: the kit folder of another build, e.g. .gpu-kit-base, a
# copy of .gpu-kit made before a change, which git ignores: name it in carry): the same
# benchmark program runs the small-message rows with that build's component and with this
# kit's, alternately, so that the ratio is measured on one machine in one run; this kit's
# rows print the cost counters per call (--counters). Variants of this kit: one_shot's
# copy by the kernel, no wait for the application's default stream or LL queued on it
# (coll_gpu_app_wait none, launch), device-side barriers under MPS (coll_gpu_intra_sync
# device).
phase_ab() {
    local base=${CG_KIT_AB_BASE:-} rc=0 e=$((kit_bench_est / 2)) round
    local lat=(-b 8 -e 8 -n "$kit_latency_iters" -w 20 --floor-bytes 0)
    local mid=(-b 4K -e 1M -f 4 --floor-bytes 0)
    [ -n "$base" ] || return 2
    [ -e "$base/.libs/mca_coll_gpu.so" ] || { kit_say "FAIL ab: $base/.libs/mca_coll_gpu.so missing"; return 1; }
    ab_base() { OMPI_MCA_mca_base_component_path=$MPI_BUNDLE_COMPONENT_DIR:$base/.libs kit_bench_one "$@"; }
    # first, #12's question: small calls rung on an LL server that stays on the GPU
    # (coll_gpu_ll_persist 1) against the kernel launched per call, both with the
    # application's buffers ready (coll_gpu_app_wait none: the server needs it), alternately;
    # counters per call (ll_served 1, ll_servers near 0: one per 10 ms of steady calls);
    # then the server with the default coll_gpu_app_wait, where each call first queries an
    # event on the legacy default stream (app_queries 1; ll_served 1 when the query found
    # the application's work done, else the call was launched behind it)
    local ready=(--mca coll_gpu_app_wait none) persist=(--mca coll_gpu_app_wait none --mca coll_gpu_ll_persist 1)
    for round in 1 2; do
        kit_bench_one "ab-latency-launched-$round" 4 "$e" "${ready[@]}" -- -C allreduce "${lat[@]}" --counters || rc=1
        kit_bench_one "ab-latency-persist-$round" 4 "$e" "${persist[@]}" -- -C allreduce "${lat[@]}" --counters &&
            kit_ab_served "ab-latency-persist-$round" || rc=1
        kit_bench_one "ab-latency-persist-auto-$round" 4 "$e" --mca coll_gpu_ll_persist 1 -- -C allreduce \
            "${lat[@]}" --counters || rc=1
    done
    kit_bench_one ab-persist-sweep 4 "$e" "${persist[@]}" -- -C allreduce -b 8 -e 16K -f 4 -n 1000 -w 20 \
        --floor-bytes 0 --counters || rc=1
    kit_bench_one ab-persist-bcast 4 "$e" "${persist[@]}" -- -C bcast -A ll "${lat[@]}" --counters || rc=1
    kit_bench_one ab-persist-allgather 4 "$e" "${persist[@]}" -- -C allgather -A ll "${lat[@]}" --counters || rc=1
    for round in 1 2; do
        ab_base "ab-latency-base-$round" 4 "$e" -- -C allreduce "${lat[@]}" || rc=1
        kit_bench_one "ab-latency-new-$round" 4 "$e" -- -C allreduce "${lat[@]}" --counters || rc=1
    done
    ab_base ab-bcast-latency-base 4 "$e" -- -C bcast "${lat[@]}" || rc=1
    kit_bench_one ab-bcast-latency-new 4 "$e" -- -C bcast "${lat[@]}" --counters || rc=1
    # latency-true bcast: a barrier after every call (-z 1, timed, both paths alike), so the
    # staged root, whose Open MPI bcast returns once sent, cannot run ahead of its receivers
    kit_bench_one ab-bcast-blocking-new 4 "$e" -- -C bcast "${lat[@]}" -z 1 --counters || rc=1
    ab_base ab-one_shot-base 4 "$e" -- -C allreduce -A one_shot "${mid[@]}" || rc=1
    kit_bench_one ab-one_shot-new 4 "$e" -- -C allreduce -A one_shot "${mid[@]}" --counters || rc=1
    kit_bench_one ab-one_shot-kernel-new 4 "$e" --mca coll_gpu_copy_method kernel -- \
        -C allreduce -A one_shot "${mid[@]}" --counters || rc=1
    kit_bench_one ab-two_shot-new 4 "$e" -- -C allreduce -A two_shot "${mid[@]}" --counters || rc=1
    kit_bench_one ab-auto-new 4 "$e" -- -C allreduce -b 8 -e 4M -f 8 --floor-bytes 0 --counters || rc=1
    # the application asserting its buffers ready (coll_gpu_app_wait none): what the wait
    # for its default stream costs, LL (a stream wait) and zero copy (a host wait)
    kit_bench_one ab-latency-app-ready-new 4 "$e" --mca coll_gpu_app_wait none -- \
        -C allreduce "${lat[@]}" --counters || rc=1
    kit_bench_one ab-two_shot-app-ready-new 4 "$e" --mca coll_gpu_app_wait none -- \
        -C allreduce -A two_shot "${mid[@]}" --counters || rc=1
    # LL behind the application's work by an event (coll_gpu_app_wait default_stream), next
    # to the default, which queues the LL kernel on the legacy default stream itself (auto:
    # launch under MPI_THREAD_SINGLE; app_waits 0 per call)
    kit_bench_one ab-latency-app-event-new 4 "$e" --mca coll_gpu_app_wait default_stream -- \
        -C allreduce "${lat[@]}" --counters || rc=1
    # small bcast: auto takes direct (the model prices LL above it); LL forced, to check
    kit_bench_one ab-bcast-ll-new 4 "$e" -- -C bcast -A ll -b 8 -e 16K -f 8 -n 500 -w 20 \
        --floor-bytes 0 --counters || rc=1
    # device-side barriers under MPS (auto takes host-synchronised ones when ranks share a
    # GPU): what one_shot and two_shot cost with each
    kit_bench_one ab-one_shot-devsync-new 4 "$e" --mca coll_gpu_intra_sync device -- \
        -C allreduce -A one_shot "${mid[@]}" --counters || rc=1
    kit_bench_one ab-two_shot-devsync-new 4 "$e" --mca coll_gpu_intra_sync device -- \
        -C allreduce -A two_shot "${mid[@]}" --counters || rc=1
    # host buffers: what a call costs with the host-memory cache and without it
    local hostbuf=(-C allreduce -b 8 -e 8 -n "$kit_latency_iters" -w 20 --mem host --floor-bytes 0 -s 0 --counters)
    kit_bench_one ab-hostbuf-new 2 $((e / 2)) -- "${hostbuf[@]}" || rc=1
    kit_bench_one ab-hostbuf-nocache-new 2 $((e / 2)) --mca coll_gpu_host_cache 0 -- "${hostbuf[@]}" || rc=1
    return $rc
}

