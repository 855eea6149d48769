#!/bin/bash
# The MPI integration suite of coll/gpu, run by `make check` (or by hand from the build
# directory). Every run goes through mpirun with the component built here.
#
#   CG_SUITE=quick|full   quick: a smaller matrix (default full)
#   CG_TEST_DEVICE=host|cuda
#                         host (default without a GPU): coll_gpu_device=host, host memory
#                         cuda: device memory and coll_gpu_device=cuda (on a GPU machine)
#   CG_SUITE_LOG=DIR      keep every run's output there (default: a temporary directory)
set -u

builddir=${CG_BUILDDIR:-$(pwd)}
mpirun=${CG_MPIRUN:-mpirun}
sysdir=${CG_OMPI_COMPONENT_DIR:-$(ompi_info --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p')}
suite=${CG_SUITE:-full}
check=$builddir/tests/mpi/coll_check
logdir=${CG_SUITE_LOG:-$(mktemp -d "${TMPDIR:-/tmp}/cg-suite.XXXXXX")}
mkdir -p "$logdir"

if ! command -v "$mpirun" >/dev/null 2>&1; then
    echo "run_suite: mpirun not found: skipping the MPI suite"
    exit 77
fi
if [ ! -f "$builddir/.libs/mca_coll_gpu.so" ]; then
    echo "run_suite: $builddir/.libs/mca_coll_gpu.so not built"
    exit 99
fi
device=${CG_TEST_DEVICE:-host}
if [ "$device" = cuda ]; then
    dev_mca=(--mca coll_gpu_device cuda)
    mem=device
else
    dev_mca=(--mca coll_gpu_device host)
    mem=host
fi

export OMPI_MCA_mca_base_component_path="$sysdir:$builddir/.libs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# Open MPI 4.1's op/avx saturates MPI_SUM on 8-bit unsigned integers: the reference is C
# arithmetic, so the suite runs with the plain C ops underneath.
base_mca=(--mca op ^avx --mca mpi_yield_when_idle 1 --bind-to none)

failures=0
runs=0

# run NAME NP [mpirun and program arguments...]: run once, keep the output, check status.
run() {
    local name=$1 np=$2
    shift 2
    local log="$logdir/$name.log" t0=$SECONDS
    runs=$((runs + 1))
    if timeout 900 "$mpirun" -np "$np" "${base_mca[@]}" "$@" >"$log" 2>&1; then
        echo "PASS $name ($((SECONDS - t0)) s)"
        return 0
    fi
    echo "FAIL $name (exit status $?, $((SECONDS - t0)) s): $log"
    grep -m 20 -E 'FAIL|rror|abort' "$log" | sed 's/^/    /'
    failures=$((failures + 1))
    return 1
}

fail() {
    echo "FAIL $1"
    failures=$((failures + 1))
}

# proof NAME ALG: rank 0's verbose lines between the window markers match the calls the
# program counted, collective by collective, and name algorithm ALG.
proof() {
    local name=$1 alg=$2 log="$logdir/$1.log"
    python3 - "$log" "$alg" "$device" <<'EOF' || fail "$name: verbose log does not match the calls"
import re, sys
log, alg, device = sys.argv[1], sys.argv[2], sys.argv[3]
colls = ["allreduce", "bcast", "allgather", "reduce_scatter", "reduce_scatter_block"]
inside, seen, wrong_alg, expect = False, {}, 0, None
for line in open(log, errors="replace"):
    if "coll_check: window begin" in line:
        inside = True
    elif "coll_check: window end" in line:
        m = re.search(r"device=([\d,]+) host=([\d,]+)", line)
        dev = [int(x) for x in m.group(1).split(",")]
        host = [int(x) for x in m.group(2).split(",")]
        expect = {c: (d + h if device == "host" else d) for c, d, h in zip(colls, dev, host)}
        inside = False
    elif inside:
        m = re.search(r"coll:gpu\[0\] INFO coll (\w+) count=\d+ .*mem=device alg=(\S+)", line)
        if m:
            seen[m.group(1)] = seen.get(m.group(1), 0) + 1
            if alg != "any" and m.group(2) != alg:
                wrong_alg += 1
if expect is None:
    sys.exit("no window markers in " + log)
bad = {c: (seen.get(c, 0), expect[c]) for c in colls if seen.get(c, 0) != expect[c]}
for c, (got, want) in bad.items():
    print(f"    {c}: {got} verbose lines for {want} calls")
if wrong_alg:
    print(f"    {wrong_alg} calls ran another algorithm than {alg}")
print("    verbose log: " + ", ".join(f"{c}={seen.get(c, 0)}" for c in colls))
sys.exit(1 if bad or wrong_alg or sum(expect.values()) == 0 else 0)
EOF
}

quiet_args=(--counts 1,7 --large 0 --types MPI_INT,MPI_DOUBLE,MPI_UINT8_T,MPI_FLOAT_INT --no-derived)
if [ "$suite" = quick ]; then
    full_args=(--counts 0,1,7,1000 --large 65537)
    nps="1 2 3 4 8"
else
    full_args=(--counts 0,1,7,1000 --large 1048579)
    nps="1 2 3 4 5 6 7 8"
fi

echo "run_suite: device layer $device, memory $mem, logs in $logdir"

# 1. The whole matrix through the component, np 1 to 8; at np 4 with the verbose proof.
for np in $nps; do
    if [ "$np" = 4 ]; then
        run "matrix-np$np" "$np" "${dev_mca[@]}" --mca coll_gpu_verbose 2 \
            "$check" --mem "$mem" "${full_args[@]}" && proof "matrix-np$np" staged
    elif [ "$np" = 8 ] || [ "$np" = 3 ]; then
        run "matrix-np$np" "$np" "${dev_mca[@]}" "$check" --mem "$mem" "${full_args[@]}"
    else
        run "matrix-np$np" "$np" "${dev_mca[@]}" "$check" --mem "$mem" --counts 0,1,7,1000 --large 0
    fi
done

# 2. Every communicator shape with the full matrix.
run "comms-full-np6" 6 "${dev_mca[@]}" "$check" --mem "$mem" --full-comms --counts 1,7,1000 --large 0 --no-derived

# 3. Algorithms forced through their MCA parameters.
for coll in allreduce bcast allgather reduce_scatter reduce_scatter_block; do
    run "forced-staged-$coll" 3 "${dev_mca[@]}" --mca "coll_gpu_${coll}_algorithm" staged \
        --mca coll_gpu_verbose 2 "$check" --mem "$mem" --colls "$coll" "${quiet_args[@]}" &&
        proof "forced-staged-$coll" staged
done

# 4. Ranks that mix memory kinds: odd ranks pass host buffers.
if [ "$device" = cuda ]; then
    run "mixed-kinds-np4" 4 "${dev_mca[@]}" "$check" --mem mixed "${quiet_args[@]}"
else
    run "mixed-kinds-np4" 4 "${dev_mca[@]}" --mca coll_gpu_debug_host_buffer_ranks 1,3 \
        "$check" --mem host "${quiet_args[@]}"
    run "mixed-kinds-local-np4" 4 "${dev_mca[@]}" --mca coll_gpu_debug_host_buffer_ranks 0 \
        --mca coll_gpu_buffer_check local "$check" --mem host "${quiet_args[@]}"
fi

# 5. The component switched off, or stepping aside: results still correct, no coll:gpu line.
off_check() {
    local name=$1
    if grep -q "coll:gpu" "$logdir/$name.log"; then
        fail "$name: the component spoke although it should be off"
    fi
}
run "off-exclude" 4 --mca coll ^gpu --mca coll_gpu_verbose 2 "$check" --mem "$mem" "${quiet_args[@]}" && off_check off-exclude
run "off-priority0" 4 "${dev_mca[@]}" --mca coll_gpu_priority 0 --mca coll_gpu_verbose 2 \
    "$check" --mem "$mem" "${quiet_args[@]}" && off_check off-priority0
if [ "$device" = host ]; then
    # auto on a machine without GPU: quietly off (verbose 0), correct results
    run "auto-no-gpu" 4 --mca coll_gpu_device auto "$check" --mem host "${quiet_args[@]}" && off_check auto-no-gpu
    run "auto-no-gpu-verbose" 2 --mca coll_gpu_device auto --mca coll_gpu_verbose 1 "$check" --mem host "${quiet_args[@]}" &&
        { grep -q "disqualified:" "$logdir/auto-no-gpu-verbose.log" || fail "auto-no-gpu-verbose: no reason given at verbose 1"; }
fi

# 6. ompi_info lists every parameter.
runs=$((runs + 1))
if OMPI_MCA_mca_base_component_path="$sysdir:$builddir/.libs" ompi_info --param coll gpu --level 9 >"$logdir/ompi_info.log" 2>&1 &&
    for p in priority verbose verbose_subsys device node_size buffer_check staging_cache_max \
             allreduce_algorithm bcast_algorithm allgather_algorithm reduce_scatter_algorithm \
             reduce_scatter_block_algorithm; do
        grep -q "coll_gpu_$p\b" "$logdir/ompi_info.log" || { echo "    missing coll_gpu_$p"; false; } || exit 1
    done; then
    echo "PASS ompi_info"
else
    fail "ompi_info --param coll gpu --level 9: $logdir/ompi_info.log"
fi

# 7. The examples, as a user runs them.
run "hello-np4" 4 "${dev_mca[@]}" "$builddir/coll_gpu_hello" 100000 &&
    { grep -q "correct" "$logdir/hello-np4.log" || fail "hello-np4: no result line"; }
run "bench-np3" 3 "${dev_mca[@]}" "$builddir/coll_gpu_bench" -C allreduce -b 8 -e 1M -f 64 -n 2 -w 1 -c 1 &&
    { grep -q "all results correct" "$logdir/bench-np3.log" || fail "bench-np3: results not correct"; }

echo "run_suite: $runs runs, $failures failed (logs in $logdir)"
[ "$failures" -eq 0 ]
