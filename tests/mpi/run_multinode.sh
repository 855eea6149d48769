#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# The multi-node part of the MPI suite (issue #15: never hang, never stall, never leak), run
# by `make check` after run_suite.sh, with the same variables (CG_BUILDDIR, CG_SUITE_LOG,
# CG_SUITE_FILTER, CG_RUN_TIMEOUT, CG_TEST_DEVICE, CG_MPIRUN, CG_OMPI_COMPONENT_DIR) and:
#
#   CG_MULTINODE=ci|full  ci (default, about a minute on 2 cores): every rank count 2 to 9
#                         with one or two layouts each (together every node size 1 to 4 and
#                         -2 to -4, the issue's 2+2+1, 2+2+2 and 2+2+2+1 included), on one
#                         transport each (alternating shared memory and TCP), fewer types
#                         (coll_layouts --quick).
#                         full: every layout of every rank count on both transports, every
#                         type.
#                         Both: soaks of CG_SOAK_CYCLES (10,000) cycles with kept contexts,
#                         100 with a new context per communicator.
#
#   sweep-*   layouts of 2 to 9 ranks in virtual nodes (coll_gpu_node_size N and -K, set
#             through MPI_T inside one run per rank count) x the four collectives x auto and
#             every hierarchical algorithm, over UCX shared memory and over loopback TCP
#             (coll_layouts: references computed on the host, gaps of pair types checked)
#   soak-*    communicators duplicated, used and freed in a loop, on one node and across
#             virtual nodes: no growth of file descriptors, threads, /dev/shm segments, UCX
#             endpoints, resident memory; no "did not close" or "did not tear down" warning
#   reclaim-* a run whose rank is killed (SIGKILL) leaves segments behind: the next run
#             removes the ones of dead processes
#
# Every run is bounded by a watchdog inside the program (a hang fails the run and says where)
# and by CG_RUN_TIMEOUT around mpirun.
set -u

builddir=${CG_BUILDDIR:-$(pwd)}
mpirun=${CG_MPIRUN:-mpirun}
sysdir=${CG_OMPI_COMPONENT_DIR:-$(ompi_info --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p')}
logdir=${CG_SUITE_LOG:-$(mktemp -d "${TMPDIR:-/tmp}/cg-multinode.XXXXXX")}
filter=${CG_SUITE_FILTER:-}
run_timeout=${CG_RUN_TIMEOUT:-300}
device=${CG_TEST_DEVICE:-host}
mode=${CG_MULTINODE:-ci}
mkdir -p "$logdir"

if ! command -v "$mpirun" >/dev/null 2>&1; then
    echo "run_multinode: mpirun not found: skipping"
    exit 77
fi
if [ ! -f "$builddir/.libs/mca_coll_gpu.so" ]; then
    echo "run_multinode: $builddir/.libs/mca_coll_gpu.so not built"
    exit 99
fi
export OMPI_MCA_mca_base_component_path="$sysdir:$builddir/.libs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
base_mca=(--mca op ^avx --mca mpi_yield_when_idle 1 --bind-to none --mca coll_gpu_device "$device"
          --mca coll_gpu_verbose 1) # warnings in each process's log
# the runs, their checks and their counters (tests/mpi/suite_lib.sh)
# shellcheck source=tests/mpi/suite_lib.sh
. "$(dirname "$0")/suite_lib.sh"

# no_warning NAME PATTERN: no process logged a line matching PATTERN
no_warning() {
    if logs "$1" | grep -m 3 -E "$2"; then
        fail "$1: a process logged \"$2\""
    fi
}

echo "run_multinode: device layer $device, logs in $logdir"

# 1. The layout sweep: one run per rank count and transport; coll_layouts sets each layout
#    with MPI_T, makes fresh communicators (a dup of MPI_COMM_WORLD, the even/odd split,
#    the reversed order) and loops over auto and every hierarchical algorithm of every
#    collective. hier_ring's chunks of 16 KiB and a count beyond one (--large) overlap the
#    phases; over TCP the staging pipeline runs in chunks of 16 KiB on pool memory (copy
#    variants inside the node), over shared memory on exportable memory (zero copy).
sweep_layouts() { # np: node sizes 1..4 and dealt -2..-4 that give at least two nodes
    local np=$1 list="" k
    for k in 1 2 3 4; do [ "$k" -lt "$np" ] && list+="${list:+,}$k"; done
    for k in 2 3 4; do [ "$k" -le "$np" ] && list+=",-$k"; done
    echo "$list"
}
# ci: two layouts per rank count, one transport each; together every node size
ci_layouts=([2]="1,-2 shm" [3]="2,-3 tcp" [4]="3,-2 shm" [5]="2,-4 tcp" [6]="2 shm"
    [7]="2 tcp" [8]="3 shm" [9]="4 tcp")
sweep_mca=(--mca coll_gpu_hier_chunk_size 16384 --mca coll_gpu_ucx_chunk_size 16384)
sweep_args=()
[ "$mode" = full ] || sweep_args=(--quick --counts 0,7,1000 --large 5000)
for np in 2 3 4 5 6 7 8 9; do
    if [ "$mode" = full ]; then
        layouts=$(sweep_layouts "$np") transports="shm tcp"
    else
        read -r layouts transports <<<"${ci_layouts[$np]}"
    fi
    for tl in $transports; do
        selected "sweep-np$np-$tl" || continue
        if [ "$tl" = shm ]; then
            run "sweep-np$np-shm" "$np" "${sweep_mca[@]}" "$builddir/tests/mpi/coll_layouts" --mem device \
                --node-sizes "$layouts" "${sweep_args[@]}" --watchdog $((run_timeout - 30))
        else
            run "sweep-np$np-tcp" "$np" -x UCX_TLS=tcp,self "${sweep_mca[@]}" --mca coll_gpu_ucx_staging always \
                "$builddir/tests/mpi/coll_layouts" --mem pool --node-sizes "$layouts" "${sweep_args[@]}" \
                --watchdog $((run_timeout - 30))
        fi
    done
done

# 2. The soak: dup, use, free, many times; nothing grows, nothing waits for peers. Every
#    cycle's communicator reuses the context of the one freed before it (MPI_T counters:
#    none made, one reused per cycle); with coll_gpu_context_keep=0 every cycle makes and
#    tears down a context of its own (fewer cycles: that is the slow way). A loaded machine
#    stops a soak early at half the run's time limit (it says after how many cycles).
soak_cycles=${CG_SOAK_CYCLES:-10000}
soak() { # name np cycles contexts [mpirun arguments...]
    local name=$1 np=$2 cycles=$3 contexts=$4
    shift 4
    selected "$name" || return 0
    run "$name" "$np" "$@" "$builddir/tests/mpi/coll_soak" --mem device --cycles "$cycles" \
        --contexts "$contexts" --seconds $((run_timeout / 2)) --watchdog $((run_timeout - 30)) &&
        { grep "coll_soak:" "$logdir/$name.log" | sed 's/^/    /'; } &&
        no_warning "$name" "did not close|did not tear down|in time"
}
soak soak-one-node-np4 4 "$soak_cycles" kept
soak soak-nodes-np4 4 "$soak_cycles" kept --mca coll_gpu_node_size 2
soak soak-nodes-tcp-np4 4 "$soak_cycles" kept -x UCX_TLS=tcp,self --mca coll_gpu_node_size -2
soak soak-nodes-fresh-np4 4 $((soak_cycles < 100 ? soak_cycles : 100)) made \
    --mca coll_gpu_context_keep 0 --mca coll_gpu_node_size 2

# 3. Segments of killed processes: a run in the lenient host layer (its device memory is
#    named shared memory, 16 MiB of scratch per rank) loses a rank to SIGKILL mid-run, and
#    mpirun takes the others down: their segments stay. The next run removes every segment
#    whose owner is dead (names carry uid, pid namespace and pid).
dead_segments() { # [pids] names of cg-gpu-* / cg-sim-* segments of this user whose process
    #                 is gone (of those pids only, when given: other jobs may run beside)
    local ns name pid only=" ${1:-} "
    ns=$(readlink /proc/self/ns/pid | sed 's/[^0-9]//g')
    for name in $(ls /dev/shm 2>/dev/null); do
        case $name in
        cg-gpu-$(id -u)-$ns-*) pid=$(echo "$name" | cut -d- -f5) ;;
        cg-sim-$(id -u)-*) pid=$(echo "$name" | cut -d- -f4) ;;
        *) continue ;;
        esac
        [ -n "${1:-}" ] && [ "${only/ $pid /}" = "$only" ] && continue
        [ -n "$pid" ] && [ ! -d "/proc/$pid" ] && echo "$name"
    done
}
if selected reclaim-killed-np4 || selected reclaim-next-np2; then # a pair
    runs=$((runs + 1))
    log="$logdir/reclaim-killed-np4.log"
    timeout -k 5 60 "$mpirun" -np 4 "${base_mca[@]}" --mca coll_gpu_debug_host_lenient 1 \
        --mca coll_gpu_node_size 2 "$builddir/tests/mpi/coll_soak" --mem host --cycles 1000000 \
        --watchdog 50 >"$log" 2>&1 &
    launcher=$!
    victim="" seen="" now="" victim_segs=""
    poll_end=$((SECONDS + 40))
    while [ "$SECONDS" -lt "$poll_end" ]; do # a rank that has set up its communicators
        # (segments named); 40 s at most: 4 ranks may be slow to start on a loaded machine,
        # and the job's watchdog ends it at 50 s
        sleep 0.2
        for pid in $(pgrep -f "coll_soak --mem host --cycles 1000000"); do # libtool: .libs/lt-coll_soak
            # named in two polls in a row: its scratch, not a board page between its
            # creation and its unlink (killed then, the rank would leave nothing)
            if ls /dev/shm | grep -q -- "-$pid-"; then
                case " $seen " in *" $pid "*) victim=$pid && break ;; esac
                now="$now $pid"
            fi
        done
        seen=${now:-} now=""
        [ -n "$victim" ] && break
    done
    [ -z "$victim" ] || victim_segs=$(ls /dev/shm | grep -- "-$victim-" | tr '\n' ' ')
    if [ -z "$victim" ]; then
        fail "reclaim-killed-np4: no rank set up shared memory: $log"
    else
        job_pids=$(pgrep -f "coll_soak --mem host --cycles 1000000" | tr '\n' ' ')
        kill -KILL "$victim"
    fi
    wait "$launcher" 2>/dev/null
    for i in $(seq 1 50); do # the killed job's other ranks may outlive mpirun briefly
        alive=0
        for pid in ${job_pids:-}; do [ -d "/proc/$pid" ] && alive=1; done
        [ "$alive" = 0 ] && break
        sleep 0.2
    done
    left=$(dead_segments "${job_pids:-}" | wc -l)
    echo "    after the killed run: $left segments of dead processes"
    if [ "$left" = 0 ] && [ -n "$victim" ]; then
        # make -j check runs the other suite beside this one: its first process to create a
        # segment removes those of dead processes, the killed rank's included (the reclaim
        # this test is about). Proof it did: the segments the victim held when it was
        # killed are gone, which nothing but a reclaim does to a SIGKILLed process's.
        still=""
        for name in $victim_segs; do [ -e "/dev/shm/$name" ] && still="$still $name"; done
        if [ -n "$victim_segs" ] && [ -z "$still" ]; then
            echo "    the victim's segments ($victim_segs) were reclaimed by a run beside this one"
        else
            fail "reclaim-killed-np4: the killed run left nothing behind (the test proves nothing)"
        fi
    fi
    # the proof that the reclaim happens: it runs with the killed run, whatever the filter
    filter="" run reclaim-next-np2 2 --mca coll_gpu_debug_host_lenient 1 --mca coll_gpu_node_size 1 \
        "$builddir/tests/mpi/coll_soak" --mem host --cycles 10 --warmup 2 --watchdog 50 &&
        { left=$(dead_segments "${job_pids:-}"); [ -z "$left" ] || fail "reclaim-next-np2: segments of dead processes remain: $left"; }
fi

echo "run_multinode: $runs runs, $failures failed, $SECONDS s (logs in $logdir)"
[ "$failures" -eq 0 ]
