#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# The GPU kit's dry run, on every commit (contrib/run-tests.sh runs it after make check):
# the whole kit on the host device layer, as the device machine would run it. The
# repository is copied as the device tool copies it (tracked and untracked files that git
# does not ignore), the kit is made there with the project's own bundler and then moved
# (the bundle must not depend on its place), and the kit's two commands run with this
# machine's Open MPI, PMIx, UCX and hwloc hidden (contrib/gpu/hide-system-mpi.sh), then a
# third time with a deadline so short that the guard must skip the suite. Checked: every
# phase passed or was skipped by the guard, $OUT never held more than 8 files, the archive
# lists every phase, the benchmark's results parse. No timing is asserted.
#
#   contrib/gpu/dry-run.sh [BUILD_DIR]     (default: _build, after `make check`)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/_build}" && pwd)
t0=$SECONDS
work=$(mktemp -d "${TMPDIR:-/tmp}/cg-dry-run.XXXXXX")
# kept when something failed (or CG_DRY_RUN_KEEP=1), for the logs
trap '[ "${failures:-1}" = 0 ] && [ "${CG_DRY_RUN_KEEP:-0}" != 1 ] && rm -rf "$work" || echo "dry-run: files kept in $work"' EXIT
failures=0
fail() { echo "dry-run: FAIL $*"; failures=$((failures + 1)); }
ok() { echo "dry-run: PASS $*"; }

# 1. The tree as the device tool copies it, the kit made in it, the tree moved elsewhere.
mkdir -p "$work/made"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$top" && git ls-files -co --exclude-standard -z | xargs -0 -I{} cp --parents -P {} "$work/made/" 2>/dev/null || true)
    revision="$(git -C "$top" describe --always --dirty) ($(git -C "$top" log -1 --format='%H %cd'))"
else
    tar -C "$top" --exclude=./_build --exclude=./_install --exclude=./.mpi-bundle --exclude=./.gpu-kit \
        --exclude=./.gpu-build --exclude=./.git -cf - . | tar -C "$work/made" -xf -
    revision="unknown (not a git checkout)"
fi
[ -f "$work/made/contrib/gpu/run-kit.sh" ] || { echo "dry-run: copying the tree failed"; exit 1; }
echo "dry-run: making the kit from $build (host device layer)"
CG_KIT_REVISION=$revision bash "$work/made/contrib/gpu/make-kit.sh" --build-dir "$build" --host-only \
    >"$work/make-kit.log" 2>&1 || { tail -20 "$work/make-kit.log"; echo "dry-run: make-kit failed"; exit 1; }
mv "$work/made" "$work/device"
dev=$work/device

# 2. The kit's commands, with the system's MPI hidden.
cat >"$work/inner.sh" <<'EOF'
set -u
dev=$1 work=$2
if mpirun --version >/dev/null 2>&1 || ompi_info >/dev/null 2>&1; then
    echo "system-mpi: VISIBLE"
else
    echo "system-mpi: hidden"
fi
cd "$dev"
# (budgets far above what the runs need: CI's machine may be loaded, and a deadline guard
# that left runs out would fail the counts checked below; the guards are proven by the
# 60 s command)
OUT=$work/out1 CG_KIT_BUDGET=1800 bash contrib/gpu/run-kit.sh --profile dry 1 >"$work/run1.txt" 2>&1; echo "command 1: exit $?"
OUT=$work/out2 CG_KIT_BUDGET=1800 bash contrib/gpu/run-kit.sh --profile dry 2 >"$work/run2.txt" 2>&1; echo "command 2: exit $?"
OUT=$work/out3 CG_KIT_BUDGET=60 CG_KIT_SUITE_EST=100 bash contrib/gpu/run-kit.sh --profile dry 1 \
    >"$work/run3.txt" 2>&1; echo "command 1 with a 60 s budget: exit $?"
# both commands in one (a 15-minute lease), gates and the latency benchmark only
OUT=$work/out4 CG_KIT_SKIP='guard|nomps|unit|suite|devsync|sanitizer' CG_KIT_BENCH_SELECT='allreduce-latency-np4' \
    bash contrib/gpu/run-lease.sh 300 120 --profile dry >"$work/run4.txt" 2>&1; echo "run-lease: exit $?"
EOF
rc=0
bash "$top/contrib/gpu/hide-system-mpi.sh" bash "$work/inner.sh" "$dev" "$work" >"$work/inner.txt" 2>&1 || rc=$?
if [ "$rc" = 125 ]; then
    echo "dry-run: WARNING: no mount namespace here: the system's MPI stays visible"
    bash "$work/inner.sh" "$dev" "$work" >"$work/inner.txt" 2>&1 || true
    [ "${CG_DRY_RUN_REQUIRE_HIDDEN:-0}" = 1 ] && fail "the system's MPI could not be hidden"
fi
cat "$work/inner.txt"
grep -q "^system-mpi: hidden" "$work/inner.txt" && ok "the system's Open MPI, PMIx, UCX and hwloc were hidden" ||
    echo "dry-run: NOTE: the system's MPI was visible to the kit"
# where the system has a PMIx (the hide script names its packages), a foreign plugin sat in
# its folder (the GPU machine has one of its own)
if [ "$rc" != 125 ] && grep -q "^hide-system-mpi: hid .* of:.* libpmix2[ ;]" "$work/inner.txt"; then
    grep -q "foreign plugins: /.*pmix_mca_pcompress_zlib" "$work/inner.txt" &&
        ok "a foreign PMIx plugin sat in the system's PMIx folder" ||
        fail "no foreign plugin was planted in the system's PMIx folder"
fi

# 3. What came back.
check_out() { # N COMMAND PHASES...: $OUT of one run of the kit
    local n=$1 cmd=$2 out=$work/out$1 files phases
    shift 2
    files=$(find "$out" -mindepth 1 | wc -l)
    if [ "$files" -gt 8 ] || [ -n "$(find "$out" -mindepth 1 -type d)" ]; then
        fail "out$n: $files entries, or folders: $(ls -A "$out" | tr '\n' ' ')"
    else
        ok "out$n: $files files ($(ls "$out" | tr '\n' ' '))"
    fi
    phases=$(tar -xzOf "$out/kit-$cmd.tar.gz" ./phases.txt 2>/dev/null || true)
    for p in "$@"; do
        if ! grep -qE "^$p +(PASS|SKIP)" <<<"$phases"; then
            fail "out$n: the archive's phases.txt has no PASS or SKIP for $p: $(grep -E "^$p " <<<"$phases" || echo missing)"
        fi
    done
    grep -q '^./logs/' < <(tar -tzf "$out/kit-$cmd.tar.gz") || fail "out$n: no logs in the archive"
    [ -s "$out/console.log" ] && grep -q '^PASS ' "$out/console.log" || fail "out$n: console.log has no PASS lines"
}
check_out 1 1 facts bundle gate guard nomps mps unit suite
check_out 2 2 facts bundle gate sanitizer mps probe ucxcuda devsync bench
check_out 3 1 facts bundle gate suite
grep -q "== kit command 1 (dry profile): PASS" "$work/out1/summary.txt" || fail "command 1: $(tail -1 "$work/out1/summary.txt")"
grep -q "== kit command 2 (dry profile): PASS" "$work/out2/summary.txt" || fail "command 2: $(tail -1 "$work/out2/summary.txt")"
grep -q "^PASS guard: a run over its limit was killed" "$work/out1/summary.txt" || fail "the run-time limit was not proven"
# the suite's selected runs (run-kit.sh's dry selection: 7 names) ran and passed
suite_runs=$(sed -n 's/^PASS suite: \([0-9]*\) runs passed.*/\1/p' "$work/out1/summary.txt")
[ "${suite_runs:-0}" -ge 7 ] || fail "the suite phase: ${suite_runs:-no} runs passed, 7 expected"
grep -q "^# Avg bus bandwidth" "$work/out2/bench.txt" || fail "bench.txt has no summary line"
python3 - "$work/out2/bench.csv" <<'EOF' || fail "bench.csv"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
runs = {r["run"] for r in rows}
assert len(runs) >= 8 and all(int(r["wrong"]) == 0 for r in rows), (len(runs), runs)
# (hostbuf-off: the component switched off, no algorithm of its own to report)
assert all(r["algorithm"] not in ("", "-", "none") for r in rows
           if int(r["bytes"]) > 0 and not r["run"].startswith("hostbuf-off")), "algorithm not reported"
print("dry-run: PASS bench.csv: %d rows from %d runs, all correct, the algorithm at every size" % (len(rows), len(runs)))
EOF
# the deliberately short deadline: the guard skipped the suite, and said why
phases3=$(tar -xzOf "$work/out3/kit-1.tar.gz" ./phases.txt 2>/dev/null || true)
if grep -qE "^suite +SKIP deadline guard" <<<"$phases3" && grep -q "^SKIP phase suite: deadline guard" "$work/out3/summary.txt"; then
    ok "the deadline guard skipped the suite in the 60 s command ($(grep -c -E ' (PASS|SKIP)' <<<"$phases3") phases listed)"
else
    fail "the 60 s command: $(tr '\n' ';' <<<"$phases3")"
fi
n3=$(find "$work/out3" -mindepth 1 | wc -l)
[ "$n3" -le 8 ] || fail "out3: $n3 files"
# run-lease.sh: both commands passed, their 8 files came back, nothing else
lease=$(cd "$work/out4" 2>/dev/null && ls | tr '\n' ' ')
if [ "$lease" = "bench.csv bench.txt coll_gpu_info.txt device.txt kit-1.tar.gz kit-2.tar.gz summary-1.txt summary-2.txt " ] &&
    grep -q "== kit command 2 (dry profile): PASS" "$work/out4/summary-2.txt" &&
    grep -q "== kit command 1 (dry profile): PASS" "$work/out4/summary-1.txt"; then
    ok "run-lease: both commands passed, 8 files: $lease"
else
    fail "run-lease: files '$lease', $(tail -1 "$work/out4/summary-2.txt" 2>/dev/null); $(tail -1 "$work/out4/summary-1.txt" 2>/dev/null)"
fi

for n in 1 2 3 4; do
    if [ "$failures" -gt 0 ]; then echo "--- run$n.txt (last lines)"; tail -25 "$work/run$n.txt"; fi
done
echo "dry-run: $([ "$failures" = 0 ] && echo PASS || echo "FAIL ($failures)") in $((SECONDS - t0)) s"
[ "$failures" = 0 ]
