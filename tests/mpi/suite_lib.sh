# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# What the MPI suites (run_suite.sh, run_multinode.sh) share: the counters of runs and
# failures, and how a run is made, checked and reported. Sourced after the runner has set
# logdir, filter, run_timeout, mpirun and base_mca.
# shellcheck shell=bash disable=SC2034,SC2154 # counters read, and variables set, by the runner

failures=0
failed_report="" # the FAIL lines again at the end, where a log's tail shows them
runs=0
skipped=0
ran=() # the runs made, by name: checks across runs read their logs only (not older ones)

# selected NAME: is the run in CG_SUITE_FILTER (when set)?
selected() {
    [ -z "$filter" ] || [[ $1 =~ $filter ]]
}

# run NAME NP [mpirun and program arguments...]: run once, keep the output (NAME.log) and
# each process's log file (NAME.RANK.vlog), check the exit status.
run() {
    local name=$1 np=$2
    shift 2
    local log="$logdir/$name.log" t0=$SECONDS
    if ! selected "$name"; then
        skipped=$((skipped + 1))
        return 1
    fi
    runs=$((runs + 1))
    ran+=("$name")
    rm -f "$logdir/$name".*.vlog
    timeout -k 10 "$run_timeout" "$mpirun" -np "$np" "${base_mca[@]}" \
        --mca coll_gpu_verbose_file "$logdir/$name.%r.vlog" "$@" >"$log" 2>&1
    local rc=$?
    if [ "$rc" = 0 ]; then
        echo "PASS $name ($((SECONDS - t0)) s)"
        return 0
    fi
    local line detail
    line="FAIL $name (exit status $rc$([ "$rc" = 124 ] && echo ": timed out"), $((SECONDS - t0)) s): $log"
    detail=$(logs "$name" | grep -m 20 -E 'FAIL|TIMEOUT|rror|abort|Signal' | sed 's/^/    /')
    echo "$line"
    [ -z "$detail" ] || echo "$detail"
    failed_report+="$line"$'\n'"${detail:+$detail$'\n'}"
    failures=$((failures + 1))
    return 1
}

# run_dies NAME NP [arguments...]: the run must die of a segmentation fault (a device pointer
# that reached the CPU), as it would on a GPU.
run_dies() {
    local name=$1 np=$2
    shift 2
    local log="$logdir/$name.log" t0=$SECONDS
    selected "$name" || { skipped=$((skipped + 1)); return 1; }
    runs=$((runs + 1))
    if timeout -k 10 "$run_timeout" "$mpirun" -np "$np" "${base_mca[@]}" "$@" >"$log" 2>&1; then
        fail "$name: ran to the end, but device memory reached the CPU and must have crashed"
        return 1
    fi
    if ! grep -q "Segmentation fault" "$log"; then
        fail "$name: failed, but not with a segmentation fault: $log"
        return 1
    fi
    echo "PASS $name (died as it must: segmentation fault, $((SECONDS - t0)) s)"
}

# logs NAME: everything a run printed and logged (output, then every process's log file).
logs() {
    cat "$logdir/$1.log" "$logdir/$1".*.vlog 2>/dev/null
}

fail() {
    echo "FAIL $1"
    failed_report+="FAIL $1"$'\n'
    failures=$((failures + 1))
}

# no_errors NAME: no process of the run logged an error (each has its own log file)
no_errors() {
    local logged
    logged=$(grep -h -m 3 "coll:gpu\[[0-9x]*\] ERROR" "$logdir/$1".*.vlog 2>/dev/null)
    [ -z "$logged" ] || { fail "$1: errors logged"; echo "$logged" | sed 's/^/    /'; }
}

# proof NAME ALLOWED [MAIN [COLL]]: rank 0's verbose lines (its own log file) match the
# device-memory calls the program counted, collective by collective; every line (of COLL,
# when given) names an algorithm of the comma list ALLOWED, and at least half of them MAIN.
proof() {
    local name=$1 allowed=$2 main=${3:-} coll=${4:-}
    python3 "$(dirname "$0")/proof.py" "$logdir/$name.log" "$logdir/$name.0.vlog" "$allowed" \
        "$main" "$coll" || fail "$name: verbose log does not match the calls"
}

# "${below[@]}" N VAR=VALUE PROGRAM...: PROGRAM with VAR=VALUE on the world ranks below N
# (what a node with other settings or another UCX would see; not mpirun's MPMD syntax, on
# which Open MPI 5.0.7's mpirun crashes)
below=(bash -c 'if [ "${OMPI_COMM_WORLD_RANK:-0}" -lt "$1" ]; then export "$2"; fi; shift 2; exec "$@"' below)
