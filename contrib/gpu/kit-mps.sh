#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# CUDA MPS for the GPU kit: start | stop | restart | status.
# The pipe and log folders come from CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY
# (run-kit.sh sets them). `nvidia-cuda-mps-control -d` starts the control daemon only; the
# server starts with the first client. A client killed with work in flight can leave the
# server unusable, so after any killed run MPS is quit and started again.
set -u
ctl=nvidia-cuda-mps-control
pipe=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
logs=${CUDA_MPS_LOG_DIRECTORY:-/var/log/nvidia-mps}

note() { echo "kit-mps: $*"; }
# the control daemon and the server: both named nvidia-cuda-mps (15 characters) by the kernel
running() { pgrep -x nvidia-cuda-mps >/dev/null 2>&1; }

stop() {
    command -v "$ctl" >/dev/null || { note "no $ctl: nothing to stop"; return 0; }
    echo quit | "$ctl" >/dev/null 2>&1 || true
    for _ in $(seq 1 40); do
        running || { note "stopped"; return 0; }
        sleep 0.5
    done
    # still there after 20 s: end the daemon this kit started (its pid was recorded)
    if [ -f "$pipe/kit-control.pid" ]; then
        note "MPS did not quit in 20 s: ending the control daemon the kit started"
        kill "$(cat "$pipe/kit-control.pid")" 2>/dev/null || true
        sleep 2
    fi
    running && { note "MPS is still running"; return 1; }
    return 0
}

start() {
    command -v "$ctl" >/dev/null || { note "no $ctl on this machine"; return 1; }
    mkdir -p "$pipe" "$logs"
    "$ctl" -d || { note "$ctl -d failed"; return 1; }
    for _ in $(seq 1 20); do
        if running; then
            pgrep -n -x nvidia-cuda-mps >"$pipe/kit-control.pid" 2>/dev/null || true
            note "started (pipes $pipe, logs $logs)"
            return 0
        fi
        sleep 0.5
    done
    note "the control daemon did not come up"
    return 1
}

case ${1:-status} in
start) start ;;
stop) stop ;;
restart) note "restarting"; stop; start ;;
status)
    if command -v "$ctl" >/dev/null && running; then
        note "running; servers: $(echo get_server_list | "$ctl" 2>/dev/null | tr '\n' ' ')"
    else
        note "not running"
        exit 1
    fi
    ;;
*) echo "usage: kit-mps.sh start|stop|restart|status" >&2; exit 2 ;;
esac
