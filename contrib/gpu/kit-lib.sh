# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# shellcheck shell=bash
# The GPU kit's machinery, sourced by contrib/gpu/run-kit.sh: the deadline guard around
# every phase, the runs (through kit-mpirun.sh: timeout -k, sweep, MPS restart), the
# summary, and the results in $OUT: an archive of everything, rewritten after every phase,
# plus at most 7 small files -- never more than 8 files (the device machine returns 8).
#
# Variables the caller sets: kit_top (repository), kit_cmd (1 or 2), kit_out ($OUT),
# kit_budget (seconds for the whole command), kit_reserve (seconds kept for the end).

kit_small_files="summary.txt console.log device.txt coll_gpu_info.txt bench.txt bench.csv"
kit_max_files=8

kit_now() { date +%s; }
kit_left() { echo $((kit_deadline - $(kit_now))); }

# kit_init: the work folder (everything the archive holds), the deadline, the summary.
kit_init() {
    kit_t0=$(kit_now)
    kit_deadline=$((kit_t0 + kit_budget - kit_reserve))
    kit_work=$(mktemp -d "${TMPDIR:-/tmp}/cg-kit-$kit_cmd.XXXXXX")
    mkdir -p "$kit_work/logs" "$kit_out"
    kit_archive_name=kit-$kit_cmd.tar.gz
    kit_failures=0 kit_stopped=""
    : >"$kit_out/summary.txt"
    : >"$kit_work/phases.txt"
    : >"$kit_work/runs.txt"
    export CG_KIT_DEADLINE=$kit_deadline CG_KIT_RUNLOG=$kit_work/runs.txt
}

# kit_say LINE: the summary and stdout.
kit_say() {
    echo "$*"
    echo "$*" >>"$kit_out/summary.txt"
}

# kit_plan NAME...: every phase of this command, listed as PENDING until it ends, so that the
# archive lists every phase whatever happens.
kit_plan() {
    for p in "$@"; do printf '%-14s PENDING\n' "$p" >>"$kit_work/phases.txt"; done
}

kit_set_phase() { # NAME STATUS NOTE
    local tmp=$kit_work/phases.txt.new
    awk -v p="$1" -v line="$(printf '%-14s %s' "$1" "$2${3:+ $3}")" \
        '$1 == p { print line; next } { print }' "$kit_work/phases.txt" >"$tmp" && mv "$tmp" "$kit_work/phases.txt"
}

# kit_phase NAME ESTIMATE FUNCTION [ARGS...]: run FUNCTION when ESTIMATE seconds are left
# before the deadline, else skip it and say why. FUNCTION returns 0 (PASS), 1 (FAIL),
# 2 (SKIP: not possible here), 3 (FAIL, and the kit stops: a gate).
kit_phase() {
    local name=$1 est=$2 fn=$3 t0 rc left status
    shift 3
    if [ -n "$kit_stopped" ]; then
        kit_set_phase "$name" "NOT-RUN" "(the kit stopped at $kit_stopped)"
        return 0
    fi
    if [ -n "${CG_KIT_SKIP:-}" ] && grep -Eqx "$CG_KIT_SKIP" <<<"$name"; then
        kit_say "SKIP phase $name: not selected (CG_KIT_SKIP)"
        kit_set_phase "$name" "SKIP" "not selected (CG_KIT_SKIP)"
        return 0
    fi
    left=$(kit_left)
    if [ "$left" -lt "$est" ]; then
        kit_say "SKIP phase $name: deadline guard (needs about $est s, $left s left)"
        kit_set_phase "$name" "SKIP" "deadline guard: needs about $est s, $left s left"
        kit_archive
        return 0
    fi
    echo "== phase $name (about $est s; $left s left)"
    t0=$(kit_now)
    "$fn" "$@"
    rc=$?
    case $rc in
    0) status=PASS ;;
    2) status=SKIP ;;
    3) status=FAIL kit_stopped=$name ;;
    *) status=FAIL ;;
    esac
    [ "$status" = FAIL ] && kit_failures=$((kit_failures + 1))
    kit_say "$status phase $name ($(($(kit_now) - t0)) s)${kit_stopped:+: gate failed, the kit stops}"
    kit_set_phase "$name" "$status" "($(($(kit_now) - t0)) s)"
    kit_archive
    return 0
}

# kit_run NAME NP [mpirun arguments and program...]: one mpirun through kit-mpirun.sh, its
# output in logs/NAME.log; prints PASS/FAIL/TIMEOUT/SKIP NAME. Returns the exit status; 0 for
# a run kit-mpirun.sh refused for lack of time before the deadline (SKIP: the deadline
# guards leave out what does not fit, they do not fail the phase).
kit_refused() { # NAME: was kit_run NAME refused for lack of time?
    grep -q "^cg-kit: no time left" "$kit_work/logs/$1.log" 2>/dev/null
}

kit_run() {
    local name=$1 np=$2 log rc t0
    shift 2
    if [ -n "${CG_KIT_RUN_SKIP:-}" ] && grep -Eqx "$CG_KIT_RUN_SKIP" <<<"$name"; then
        kit_say "SKIP $name: not selected (CG_KIT_RUN_SKIP)"
        return 0
    fi
    log=$kit_work/logs/$name.log
    t0=$(kit_now)
    "$kit_top/contrib/gpu/kit-mpirun.sh" -np "$np" "${kit_mpi_args[@]}" "$@" >"$log" 2>&1
    rc=$?
    if [ "$rc" = 0 ]; then
        kit_say "PASS $name ($(($(kit_now) - t0)) s)"
    elif grep -q "^cg-kit: TIMEOUT" "$log"; then
        kit_say "TIMEOUT $name ($(($(kit_now) - t0)) s): $(grep -m1 '^cg-kit: TIMEOUT' "$log" | cut -c9-)"
    elif [ "$rc" = 3 ] && grep -q "^cg-kit: no time left" "$log"; then
        kit_say "SKIP $name: no time left before the deadline"
        rc=0
    else
        kit_say "FAIL $name (exit $rc, $(($(kit_now) - t0)) s): logs/$name.log"
        grep -m 6 -E 'FAIL|rror|abort|ERROR SUMMARY|[Ss]egmentation' "$log" | cut -c1-200 | sed 's/^/    /'
    fi
    return "$rc"
}

# kit_archive: every log into $OUT/kit-N.tar.gz (rewritten atomically); logs above 2 MiB
# keep their first and last 512 KiB, so that the archive stays far below 16 MiB.
kit_archive() {
    local f
    for f in $kit_small_files; do
        [ -f "$kit_out/$f" ] && cp "$kit_out/$f" "$kit_work/$f"
    done
    if [ -n "${CUDA_MPS_LOG_DIRECTORY:-}" ] && [ -d "$CUDA_MPS_LOG_DIRECTORY" ]; then
        mkdir -p "$kit_work/mps-logs"
        cp -r "$CUDA_MPS_LOG_DIRECTORY/." "$kit_work/mps-logs/" 2>/dev/null
    fi
    while IFS= read -r -d '' f; do
        { head -c 524288 "$f"; printf '\n[... cg-kit: %s bytes cut ...]\n' "$(stat -c %s "$f")"
          tail -c 524288 "$f"; } >"$f.cut" && mv "$f.cut" "$f"
    done < <(find "$kit_work" -type f -size +2M -print0)
    tar -czf "$kit_out/.$kit_archive_name.new" -C "$kit_work" . 2>/dev/null &&
        mv "$kit_out/.$kit_archive_name.new" "$kit_out/$kit_archive_name"
}

# kit_check_out: $OUT holds only the archive and the small files (8 at most, no folders).
kit_check_out() {
    local n extra
    n=$(find "$kit_out" -mindepth 1 | wc -l)
    extra=$(cd "$kit_out" && ls -A | grep -vxF -e "$kit_archive_name" $(printf -- '-e %s ' $kit_small_files) || true)
    if [ "$n" -gt "$kit_max_files" ] || [ -n "$extra" ]; then
        kit_say "FAIL out-files: $n entries in \$OUT (at most $kit_max_files), unexpected: ${extra:-none}"
        return 1
    fi
    kit_say "PASS out-files: $n files in \$OUT ($(cd "$kit_out" && ls | tr '\n' ' '))"
}

# kit_finish: phases never reached, the last archive, the limits, the verdict (exit status).
kit_finish() {
    local verdict
    sed -i 's/ PENDING$/ NOT-RUN/' "$kit_work/phases.txt"
    {
        echo "== phases of command $kit_cmd"
        cat "$kit_work/phases.txt"
    } | tee -a "$kit_out/summary.txt"
    kit_check_out || kit_failures=$((kit_failures + 1))
    if [ -n "$kit_stopped" ]; then
        verdict="STOPPED at gate $kit_stopped"
    elif [ "$kit_failures" = 0 ]; then
        verdict="PASS"
    else
        verdict="FAIL ($kit_failures phases)"
    fi
    kit_say "== kit command $kit_cmd ($kit_profile profile): $verdict in $(($(kit_now) - kit_t0)) s"
    kit_archive
    rm -rf "$kit_work"
    [ "$verdict" = PASS ]
}
