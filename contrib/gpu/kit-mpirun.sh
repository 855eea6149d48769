#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# mpirun for the GPU kit (contrib/gpu/run-kit.sh passes it to the MPI suite as CG_MPIRUN and
# uses it for its own runs): every run under `timeout -k`, ending before the kit's deadline,
# processes it left behind swept by the run id in their environment, MPS restarted after a
# run that had to be killed, one line per run in the kit's run log.
#
# Environment (run-kit.sh sets it):
#   CG_KIT_MPIRUN         the real mpirun (default: mpirun on PATH)
#   CG_RUN_TIMEOUT        seconds one run may take (default 120)
#   CG_KIT_DEADLINE       epoch seconds by which every run must have ended (default: none)
#   CG_KIT_RUNLOG         file that gets "NAME STATUS SECONDS" per run
#   CG_KIT_MPS            1: MPS is in use (restarted after a killed run)
set -u
here=$(cd "$(dirname "$0")" && pwd)
real=${CG_KIT_MPIRUN:-mpirun}
limit=${CG_RUN_TIMEOUT:-120}
log=$(readlink "/proc/$$/fd/1" 2>/dev/null || true)
name=$(basename "${log:-run}" .log)
runlog=${CG_KIT_RUNLOG:-/dev/null}

note() { echo "cg-kit: $*"; }

if [ -n "${CG_KIT_DEADLINE:-}" ]; then
    left=$((CG_KIT_DEADLINE - $(date +%s) - 5))
    if [ "$left" -lt 10 ]; then
        note "no time left before the kit's deadline: skipped"
        echo "$name SKIP 0" >>"$runlog"
        exit 3
    fi
    [ "$left" -lt "$limit" ] && limit=$left
fi

id="$name.$$.$(date +%s%N)"
t0=$(date +%s)
CG_KIT_RUN_ID=$id timeout -k 10 "$limit" "$real" "$@"
rc=$?
secs=$(( $(date +%s) - t0 ))

# Ranks of a killed mpirun live on in process groups of their own: end every process that
# carries this run's id (only processes this run started).
sweep() {
    local sig=$1 pids="" p
    for p in /proc/[0-9]*; do
        if [ "${p#/proc/}" != $$ ] && tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qxF "CG_KIT_RUN_ID=$id"; then
            pids="$pids ${p#/proc/}"
        fi
    done
    if [ -n "$pids" ]; then
        note "sweeping processes of this run left behind (SIG$sig):$pids"
        kill -s "$sig" $pids 2>/dev/null || true
    fi
    [ -n "$pids" ]
}
if [ "$rc" != 0 ] && sweep TERM; then
    sleep 3
    sweep KILL || true
fi
# 124/137 from timeout, not from the program (coll_gpu_bench -T exits 124 itself)
if { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && [ "$secs" -ge "$limit" ]; then
    note "TIMEOUT: killed after $limit s (exit $rc)"
    echo "$name TIMEOUT $secs" >>"$runlog"
    if [ "${CG_KIT_MPS:-0}" = 1 ]; then
        bash "$here/kit-mps.sh" restart
    fi
elif [ "$rc" = 0 ]; then
    echo "$name PASS $secs" >>"$runlog"
else
    echo "$name FAIL $secs" >>"$runlog"
fi
exit "$rc"
