#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# The MPI integration suite of coll/gpu, run by `make check` (or by hand from the build
# directory). Every run goes through mpirun with the component built here.
#
#   CG_SUITE=quick|full   quick: a smaller matrix (default full)
#   CG_TEST_DEVICE=host|cuda
#                         host (default without a GPU): coll_gpu_device=host, the memory of
#                         the simulated GPU (strict: the CPU cannot touch it, so whatever
#                         would crash on a GPU crashes here)
#                         cuda: CUDA device memory and coll_gpu_device=cuda (on a GPU machine)
#   CG_SUITE_LOG=DIR      keep every run's output there (default: a temporary directory)
#   CG_SUITE_FILTER=RE    run only the runs whose name matches this extended regex
#   CG_RUN_TIMEOUT=S      seconds one mpirun may take before it counts as failed (900)
#
# Every run writes each process's log to its own file (coll_gpu_verbose_file), so that the
# proofs never read lines of several ranks spliced together.
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
filter=${CG_SUITE_FILTER:-}
run_timeout=${CG_RUN_TIMEOUT:-900}
if [ "$device" = cuda ]; then
    dev_mca=(--mca coll_gpu_device cuda)
else
    dev_mca=(--mca coll_gpu_device host)
fi
# device: exportable device memory (cudaMalloc; zero copy through IPC); pool: device memory
# IPC cannot export (cudaMallocAsync pools; the copy variants through scratch)
mem=device

export OMPI_MCA_mca_base_component_path="$sysdir:$builddir/.libs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# Open MPI 5 (PRRTE/PMIx): no component path for PMIx, oversubscribe by default, and the
# loopback interface only, so a machine with several interfaces does not stall the TCP btl
export PMIX_MCA_mca_base_component_path=
export PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
export OMPI_MCA_btl_tcp_if_include=lo
# Open MPI 4.1's op/avx saturates MPI_SUM on 8-bit unsigned integers: the reference is C
# arithmetic, so the suite runs with the plain C ops underneath.
base_mca=(--mca op ^avx --mca mpi_yield_when_idle 1 --bind-to none)

# the runs, their checks and their counters (tests/mpi/suite_lib.sh)
# shellcheck source=tests/mpi/suite_lib.sh
. "$(dirname "$0")/suite_lib.sh"

quiet_args=(--counts 1,7 --large 0 --types MPI_INT,MPI_DOUBLE,MPI_UINT8_T,MPI_FLOAT_INT --no-derived)
# Types the forced-algorithm runs cover: device-reducible ones (padded pairs, complex, bool
# included) and ones the device cannot reduce or copy directly (long double, char).
forced_types=MPI_INT,MPI_UINT8_T,MPI_INT64_T,MPI_DOUBLE,MPI_FLOAT_INT,MPI_DOUBLE_INT,MPI_SHORT_INT,MPI_C_DOUBLE_COMPLEX,MPI_C_BOOL,MPI_LONG_DOUBLE,MPI_CHAR
forced_args=(--counts 0,1,7,1000,70001 --large 0 --types "$forced_types" --no-derived)
if [ "$suite" = quick ]; then
    full_args=(--counts 0,1,7,1000 --large 65537)
    nps="1 2 3 4 8"
else
    full_args=(--counts 0,1,7,1000 --large 1048579)
    nps="1 2 3 4 5 6 7 8"
fi
fast="ll,one_shot,two_shot,direct,scatter_allgather,staged,local"

echo "run_suite: device layer $device, logs in $logdir"

# 1. The whole matrix through the component (auto: the planner picks), np 1 to 8, every
#    communicator shape (world, dup, split, reversed, odd: size-1 communicators at np 1-3);
#    exportable memory (zero copy) and pool memory (copy variants) in turn; at np 4 with
#    the verbose proof.
for np in $nps; do
    if [ $((np % 2)) = 1 ]; then m=pool; else m=device; fi
    if [ "$np" = 4 ]; then
        run "matrix-np$np" "$np" "${dev_mca[@]}" --mca coll_gpu_verbose 2 \
            "$check" --mem "$m" "${full_args[@]}" && proof "matrix-np$np" "$fast"
    elif [ "$np" = 8 ] || [ "$np" = 3 ]; then
        run "matrix-np$np" "$np" "${dev_mca[@]}" "$check" --mem "$m" "${full_args[@]}"
    else
        run "matrix-np$np" "$np" "${dev_mca[@]}" "$check" --mem "$m" --counts 0,1,7,1000 --large 0
    fi
done
# single-rank communicators with the proof: local copies, staged derived types
run "matrix-np1-proof" 1 "${dev_mca[@]}" --mca coll_gpu_verbose 2 "$check" --mem device \
    --counts 0,1,7,1000 --large 0 && proof matrix-np1-proof "local,staged" local

# 2. Every communicator shape with the full matrix.
run "comms-full-np6" 6 "${dev_mca[@]}" "$check" --mem "$mem" --full-comms --counts 1,7,1000 --large 0 --no-derived

# 3. Every algorithm of every collective, forced through its MCA parameter, on pool memory
#    (the copy variants); a small scratch area makes the larger counts run in pipelined steps.
forced_run() { # coll alg np [extra mpirun arguments...]
    local coll=$1 alg=$2 np=$3
    shift 3
    run "forced-$alg-$coll-np$np" "$np" "${dev_mca[@]}" --mca "coll_gpu_${coll}_algorithm" "$alg" \
        --mca coll_gpu_scratch_size 65536 --mca coll_gpu_verbose 2 "$@" \
        "$check" --mem pool --colls "$coll" "${forced_args[@]}" &&
        proof "forced-$alg-$coll-np$np" "$alg,staged,local" "$alg" "$coll"
}
for coll in allreduce bcast allgather reduce_scatter reduce_scatter_block; do
    forced_run "$coll" staged 3
done
# ll with the default scratch (its inbox holds the smaller counts; the largest go staged)
for coll in allreduce bcast allgather reduce_scatter reduce_scatter_block; do
    run "forced-ll-$coll-np4" 4 "${dev_mca[@]}" --mca "coll_gpu_${coll}_algorithm" ll \
        --mca coll_gpu_verbose 2 "$check" --mem device --colls "$coll" "${forced_args[@]}" &&
        proof "forced-ll-$coll-np4" "ll,staged,local" ll "$coll"
done
forced_run allreduce one_shot 3
forced_run allreduce two_shot 5
forced_run allreduce ring 5
for coll in bcast allgather reduce_scatter reduce_scatter_block; do
    forced_run "$coll" direct 4
done
forced_run bcast scatter_allgather 5

# 4. The intra-node machinery in its other modes: device-side barriers, zero copy through
#    shared user buffers (IPC of device memory), both, copy engines.
run "sync-device-np4" 4 "${dev_mca[@]}" --mca coll_gpu_intra_sync device --mca coll_gpu_scratch_size 65536 \
    "$check" --mem pool --counts 0,1,7,1000 --large 200003
# a GPU its ranks share without MPS (the host layer plays one): they take turns on it, so no
# LL kernel that spins for the others' lines; the host-synchronised algorithms, exact
if [ "$device" = host ]; then
    run "time-sliced-np4" 4 "${dev_mca[@]}" --mca coll_gpu_debug_host_time_sliced 1 \
        --mca coll_gpu_verbose 2 "$check" --mem device --comms world,split --counts 0,1,7,1000 \
        --large 0 --no-derived &&
        proof time-sliced-np4 "one_shot,two_shot,direct,scatter_allgather,staged,local"
fi
# a rank whose GPU has no device-side flags (here: that asks for host barriers) among ranks
# that use them: the node's ranks must resolve one mode (a host waiter misses device flags)
sync_mixed=("$check" --mem pool --comms world,dup --counts 1,1000 --large 200003 --no-derived)
run "sync-mixed-np3" 3 "${dev_mca[@]}" --mca coll_gpu_intra_sync device --mca coll_gpu_verbose 1 \
    "${below[@]}" 1 OMPI_MCA_coll_gpu_intra_sync=host "${sync_mixed[@]}" &&
    { logs sync-mixed-np3 | grep -q "coll_gpu_intra_sync device: host barriers" ||
      fail "sync-mixed-np3: the ranks asking for device barriers were not told"; }
# inputs and settings out of the ordinary (tests/mpi/suite_inputs.sh)
# shellcheck source=tests/mpi/suite_inputs.sh
. "$(dirname "$0")/suite_inputs.sh"
run "zero-copy-np4" 4 "${dev_mca[@]}" --mca coll_gpu_verbose 3 \
    "$check" --mem device --counts 0,1,7,1000 --large 200003 && proof zero-copy-np4 "$fast" &&
    { grep -q "two_shot: zero copy" "$logdir/zero-copy-np4.0.vlog" || fail "zero-copy-np4: no zero-copy call"; }
run "zero-copy-device-sync-np3" 3 "${dev_mca[@]}" --mca coll_gpu_intra_sync device \
    "$check" --mem device --counts 1,1000 --large 200003 --no-derived
run "zero-copy-copy-engine-np5" 5 "${dev_mca[@]}" --mca coll_gpu_copy_method engine \
    "$check" --mem device --colls bcast,allgather --counts 0,1,7,1000 --large 200003
run "zero-copy-scatter-allgather-np6" 6 "${dev_mca[@]}" --mca coll_gpu_bcast_algorithm scatter_allgather \
    "$check" --mem device --colls bcast "${forced_args[@]}"
run "zero-copy-forced-two-shot-np7" 7 "${dev_mca[@]}" --mca coll_gpu_allreduce_algorithm two_shot \
    "$check" --mem device --colls allreduce "${forced_args[@]}"
# cuMemCreate memory (the simulated GPU's VMM allocations): zero copy through file
# descriptors that the peers take with pidfd_getfd, none left open after the buffers go
# (coll_check's reuse rounds count them); where the kernel refuses (vmm-private: a seccomp
# filter), one warning and the copy variant, exact all the same.
run "zero-copy-vmm-np4" 4 "${dev_mca[@]}" --mca coll_gpu_verbose 3 \
    "$check" --mem vmm --counts 0,1,7,1000 --large 200003 --no-derived &&
    { grep -q "two_shot: zero copy" "$logdir/zero-copy-vmm-np4.0.vlog" ||
        fail "zero-copy-vmm-np4: no zero-copy call"; }
run "vmm-refused-np3" 3 "${dev_mca[@]}" "$check" --mem vmm-private --counts 1,1000 --large 200003 \
    --no-derived

# 4b. What one call costs, from the component's counters (MPI_T performance variables):
#     no MPI call on warm fast paths, one device operation and two host waits for a small
#     call (one without the in-band agreement), nothing but the call underneath for host
#     buffers (their memory queries answered by the host-memory cache, which forgets at any
#     munmap; without it, or without UCX's memory events, a query per buffer), zero copy
#     without scratch traffic; across nodes a small call staged with no
#     agreement and a large one with its agreement (the model's latencies pinned, so that
#     the choice does not follow what the setup measured on a loaded machine). At np 3 the
#     layer underneath runs reduce_scatter_block as MPI_Reduce + MPI_Scatter on the same
#     communicator: those come back through the component and must go straight down,
#     uncounted and unqueried.
costs=$builddir/tests/mpi/coll_costs
run "costs-np2" 2 "${dev_mca[@]}" "$costs" --mem device
run "costs-pool-np4" 4 "${dev_mca[@]}" "$costs" --mem pool
run "costs-np3" 3 "${dev_mca[@]}" --mca coll_tuned_use_dynamic_rules 1 \
    --mca coll_tuned_reduce_scatter_block_algorithm 1 "$costs" --mem device
run "costs-vmm-np2" 2 "${dev_mca[@]}" "$costs" --mem vmm
# one GPU per rank (device-side barriers): the same counts, the agreement riding on the
# handles' exchange of zero copy and on the first device barrier, held on the host first
run "costs-device-sync-np3" 3 "${dev_mca[@]}" --mca coll_gpu_intra_sync device "$costs" --mem device
run "costs-nocache-np2" 2 "${dev_mca[@]}" --mca coll_gpu_host_cache 0 "$costs" --mem device \
    --no-host-cache
run "costs-nomemevents-np2" 2 "${dev_mca[@]}" -x UCX_MEM_EVENTS=no "$costs" --mem device \
    --no-host-cache
# the application asserts its buffers ready (coll_gpu_app_wait none): a host wait fewer
run "costs-app-ready-np3" 3 "${dev_mca[@]}" --mca coll_gpu_app_wait none "$costs" --mem device --app-ready
# LL calls queued behind the application's work on the default stream, with no event (the
# same counts, no app wait for LL; with more than one thread, the event again): asked for
# (launch), and by the default (auto) at MPI_THREAD_MULTIPLE (the event, no warning);
# the event asked for (default_stream); coll_check writes its inputs there just before the
# calls, and mixes kinds (LL calls cancelled)
run "costs-app-launch-np3" 3 "${dev_mca[@]}" --mca coll_gpu_app_wait launch "$costs" --mem device
run "costs-app-launch-funneled-np2" 2 "${dev_mca[@]}" --mca coll_gpu_app_wait launch "$costs" \
    --mem device --thread-level funneled
run "costs-app-launch-multiple-np2" 2 "${dev_mca[@]}" --mca coll_gpu_app_wait launch "$costs" \
    --mem device --thread-level multiple
run "costs-app-auto-multiple-np2" 2 "${dev_mca[@]}" "$costs" --mem device --thread-level multiple &&
    { ! logs costs-app-auto-multiple-np2 | grep -q "coll_gpu_app_wait=launch" ||
      fail "costs-app-auto-multiple-np2: the default warned about launch"; }
run "costs-app-event-np3" 3 "${dev_mca[@]}" --mca coll_gpu_app_wait default_stream "$costs" \
    --mem device --app-wait-event
run "mixed-kinds-app-launch-np4" 4 "${dev_mca[@]}" --mca coll_gpu_app_wait launch "$check" --mem mixed \
    "${quiet_args[@]}"
run "app-launch-np4" 4 "${dev_mca[@]}" --mca coll_gpu_app_wait launch "$check" --mem device \
    --comms world --counts 0,1,7,1000 --large 0 --no-derived
# the event (what auto does at other thread levels, mpi4py's): coll_check queues inputs on
# the default stream just before the calls (tc_run_app_order), on the fast paths and staged
run "app-event-np4" 4 "${dev_mca[@]}" --mca coll_gpu_app_wait default_stream "$check" --mem device \
    --comms world --counts 0,1,7,1000 --large 0 --no-derived
run "app-event-staged-np3" 3 "${dev_mca[@]}" --mca coll_gpu_app_wait default_stream \
    --mca coll_gpu_allreduce_algorithm staged --mca coll_gpu_bcast_algorithm staged "$check" \
    --mem device --colls allreduce,bcast --comms world --counts 1,1000 --large 0 --no-derived
run "costs-local-np4" 4 "${dev_mca[@]}" --mca coll_gpu_buffer_check local "$costs" --mem device --local
# The LL flags' wrap, with a short period (coll_gpu_debug_ll_flag_period): the lines a call
# read go back to 0 (ll-wrap-np4: LL forced, kinds never changing; without that, old lines
# are taken as data within a few periods), and a half of the inbox is cleared a quarter
# period after it was last (lines of calls given up, which nobody read: coll_costs --wrap
# with an odd period). The host layer takes each line the moment it sees it, as a GPU does.
run "ll-wrap-np4" 4 "${dev_mca[@]}" --mca coll_gpu_debug_ll_flag_period 16 \
    --mca coll_gpu_allreduce_algorithm ll --mca coll_gpu_bcast_algorithm ll \
    --mca coll_gpu_allgather_algorithm ll --mca coll_gpu_reduce_scatter_algorithm ll \
    "$check" --mem device --comms world,split --counts 0,1,7,1000 --large 0 --no-derived
run "ll-wrap-given-up-np4" 4 "${dev_mca[@]}" --mca coll_gpu_debug_ll_flag_period 257 \
    "$costs" --mem device --wrap 257
run "ll-wrap-completed-np3" 3 "${dev_mca[@]}" --mca coll_gpu_debug_ll_flag_period 256 \
    "$costs" --mem device --wrap 256
run "costs-nodes-np4" 4 "${dev_mca[@]}" --mca coll_gpu_node_size 2 --mca coll_gpu_net_latency 5 \
    --mca coll_gpu_copy_latency 0.5 "$costs" --mem device --nodes

# 5. Topology files: the planner's choice follows the node shape (on the host layer, the
#    node's i-th rank of the job plays GPU i of the file): a ring along NVLink pairs,
#    staged without P2P. (The ring run fixes the one-shot limit at 64 KiB: the model would
#    take the ring only from about 640 KiB on that node, which the golden grid shows at
#    1 MiB.)
topo=$(cd "$(dirname "$0")/../topo" && pwd)
if [ "$device" = host ] && [ -f "$topo/dgx-h100.xml" ]; then
    run "topo-nvlink-pairs-np4" 4 "${dev_mca[@]}" --mca coll_gpu_topo_file "$topo/workstation-4gpu-nvlink-pairs.xml" \
        --mca coll_gpu_scratch_size 65536 --mca coll_gpu_verbose 2 \
        --mca coll_gpu_allreduce_one_shot_max 65536 \
        "$check" --mem pool --comms world --colls allreduce --counts 70001,100003 --large 0 \
        --types "$forced_types" --no-derived && proof "topo-nvlink-pairs-np4" "ring,one_shot,ll,staged" ring allreduce
    run "topo-no-p2p-np2" 2 "${dev_mca[@]}" --mca coll_gpu_topo_file "$topo/pcie-2gpu-2socket.xml" \
        --mca coll_gpu_verbose 2 "$check" --mem "$mem" --comms world "${quiet_args[@]}" &&
        proof "topo-no-p2p-np2" staged
    run "topo-dgx-np8" 8 "${dev_mca[@]}" --mca coll_gpu_topo_file "$topo/dgx-h100.xml" \
        --mca coll_gpu_verbose 2 "$check" --mem "$mem" --comms world "${quiet_args[@]}" &&
        proof "topo-dgx-np8" "$fast"
    # GPUs that cannot map each other's memory (what the topology file did not know, as on
    # PCIe GPUs across sockets): staged, exact, no error, the reason said once per process
    run "no-p2p-np3" 3 "${dev_mca[@]}" --mca coll_gpu_debug_host_no_p2p 1 --mca coll_gpu_verbose 2 \
        "$check" --mem "$mem" --comms world,split "${quiet_args[@]}" &&
        proof "no-p2p-np3" "staged,local" staged && no_errors "no-p2p-np3" &&
        for r in 0 1 2; do
            told=$(grep -c "no peer-to-peer access between them" "$logdir/no-p2p-np3.$r.vlog")
            [ "$told" = 1 ] || fail "no-p2p-np3: rank $r said why $told times, not once"
        done
    # without MPS (the host layer plays it): five ranks on the four GPUs, two take turns on
    # one, so no LL, also in odd after world (ranks 0-3 on their own GPUs, but rank 0's
    # still takes turns with rank 4's calls); four, one rank per GPU, none waits for a
    # turn, so LL for small calls
    run "topo-shared-time-sliced-np5" 5 "${dev_mca[@]}" --mca coll_gpu_debug_host_time_sliced 1 \
        --mca coll_gpu_topo_file "$topo/workstation-4gpu-nvlink-pairs.xml" \
        --mca coll_gpu_verbose 2 "$check" --mem "$mem" --comms world,odd "${quiet_args[@]}" &&
        proof "topo-shared-time-sliced-np5" "one_shot,two_shot,ring,direct,scatter_allgather,staged"
    run "topo-own-time-sliced-np4" 4 "${dev_mca[@]}" --mca coll_gpu_debug_host_time_sliced 1 \
        --mca coll_gpu_topo_file "$topo/workstation-4gpu-nvlink-pairs.xml" \
        --mca coll_gpu_verbose 2 "$check" --mem "$mem" --comms world "${quiet_args[@]}" &&
        proof "topo-own-time-sliced-np4" "$fast,ring" ll
    # a context kept from a freed communicator made before the sharing was seen is not
    # reused: odd-first (ranks 0-3, LL) freed, world (ranks 0 and 4 on one GPU), then odd
    # over the same ranks as odd-first: a new context, no LL (rank 0's log file, in order)
    run "topo-shared-kept-np5" 5 "${dev_mca[@]}" --mca coll_gpu_debug_host_time_sliced 1 \
        --mca coll_gpu_topo_file "$topo/workstation-4gpu-nvlink-pairs.xml" \
        --mca coll_gpu_verbose 2 "$check" --mem "$mem" --odd-first --comms world,odd "${quiet_args[@]}" &&
        proof "topo-shared-kept-np5" "$fast,ring" &&
        { awk '/mem=device/ { if (/ np=5( |$)/) w = 1; else if (/ alg=ll /) { if (w) late++; else early++ } }
               END { exit !(early > 0 && late == 0) }' "$logdir/topo-shared-kept-np5.0.vlog" ||
          fail "topo-shared-kept-np5: LL not before world, or LL in odd after it"; }
    # coll_gpu_ll_persist there: a rank on each GPU keeps its LL server, MPS or not (calls
    # rung); of five, ranks 0 and 4 share a GPU: they launch every LL call (forced), rank 0
    # in odd too, where rank 4 is not (the GPU's processes take turns whatever the
    # communicator), and say why; ranks 1-3 ring theirs
    persist_own=(--mca coll_gpu_debug_host_time_sliced 1 --mca coll_gpu_ll_persist 1
                 --mca coll_gpu_app_wait none --mca coll_gpu_topo_file "$topo/workstation-4gpu-nvlink-pairs.xml")
    run "ll-persist-own-gpus-np4" 4 "${dev_mca[@]}" "${persist_own[@]}" "$check" --mem device \
        --app-ready --expect-ll-served --comms world,dup --counts 0,1,7,1000 --large 0 --no-derived
    run "ll-persist-time-sliced-np5" 5 "${dev_mca[@]}" "${persist_own[@]}" \
        --mca coll_gpu_allreduce_algorithm ll --mca coll_gpu_bcast_algorithm ll --mca coll_gpu_verbose 2 \
        "$check" --mem device --app-ready --expect-ll-launched-on 0,4 --colls allreduce,bcast --comms world,odd \
        --counts 1,7,1000 --large 0 --no-derived &&
        proof "ll-persist-time-sliced-np5" ll,staged ll &&
        { grep -q "Ranks that share a GPU launch a kernel per call" "$logdir/ll-persist-time-sliced-np5.log" ||
          fail "ll-persist-time-sliced-np5: no warning that the calls are launched"; } &&
        for r in 0 1 2 3 4; do
            said=$(grep -c "its LL calls are launched" "$logdir/ll-persist-time-sliced-np5.$r.vlog")
            [ "$said" = "$( [ "$r" = 0 ] || [ "$r" = 4 ] && echo 1 || echo 0)" ] ||
                fail "ll-persist-time-sliced-np5: rank $r said it launches $said times"
        done
    run "topo-bad-file-np2" 2 "${dev_mca[@]}" --mca coll_gpu_topo_file "$topo/bad-truncated.xml" \
        --mca coll_gpu_verbose 1 "$check" --mem "$mem" --comms world "${quiet_args[@]}" &&
        { logs topo-bad-file-np2 | grep -q "using safe defaults" || fail "topo-bad-file-np2: no warning"; }
fi

# 6. Several nodes (virtual: coll_gpu_node_size consecutive ranks per node), over UCX's
#    shared-memory transports and over loopback TCP, even and uneven layouts (3+3+2,
#    2+2+2+1...) and nodes of non-consecutive ranks, the staging pipeline forced with small
#    chunks, every hierarchical algorithm forced.
hier="hier_ring,hier_rd,hier_leader,hier_tree,staged,ll,local"
run "nodes2x2-np4" 4 "${dev_mca[@]}" --mca coll_gpu_node_size 2 --mca coll_gpu_verbose 2 \
    "$check" --mem "$mem" --comms world --counts 0,1,7,1000 --large 100003 &&
    proof nodes2x2-np4 "$hier"
run "nodes3-uneven-np8" 8 "${dev_mca[@]}" --mca coll_gpu_node_size 3 \
    "$check" --mem "$mem" --counts 0,1,7,1000 --large 100003 --no-derived
run "nodes4x2-tcp-np8" 8 -x UCX_TLS=tcp,self "${dev_mca[@]}" --mca coll_gpu_node_size 2 \
    "$check" --mem "$mem" --counts 1,7,1000 --large 100003 --types MPI_INT,MPI_DOUBLE,MPI_UINT8_T,MPI_DOUBLE_INT,MPI_CHAR
run "nodes-staging-tcp-np7" 7 -x UCX_TLS=tcp,self "${dev_mca[@]}" --mca coll_gpu_node_size 2 \
    --mca coll_gpu_ucx_staging always --mca coll_gpu_ucx_chunk_size 16384 --mca coll_gpu_ucx_depth 3 \
    "$check" --mem "$mem" --comms world --counts 1,1000,70001 --large 0 \
    --types MPI_INT,MPI_DOUBLE,MPI_UINT8_T,MPI_DOUBLE_INT,MPI_C_DOUBLE_COMPLEX,MPI_CHAR --no-derived
run "nodes-pool-np6" 6 "${dev_mca[@]}" --mca coll_gpu_node_size 3 \
    "$check" --mem pool --counts 1,1000 --large 100003 --no-derived
nodes_forced() { # coll alg np node_size
    run "nodes-forced-$2-$1-np$3" "$3" "${dev_mca[@]}" --mca coll_gpu_node_size "$4" \
        --mca "coll_gpu_${1}_algorithm" "$2" --mca coll_gpu_scratch_size 65536 --mca coll_gpu_verbose 2 \
        "$check" --mem "$mem" --comms world --colls "$1" "${forced_args[@]}" &&
        proof "nodes-forced-$2-$1-np$3" "$2,staged,local" "$2" "$1"
}
# a rules file decides; a malformed one is reported (file:line) and ignored
rules=$(cd "$(dirname "$0")/../../contrib" && pwd)/coll_gpu_rules.example
run "nodes-rules-np4" 4 "${dev_mca[@]}" --mca coll_gpu_node_size 2 --mca coll_gpu_rules_file "$rules" \
    --mca coll_gpu_verbose 2 "$check" --mem "$mem" --comms world --colls allreduce,bcast "${quiet_args[@]}" &&
    { grep -q "alg=hier_rd .*why=rule at line 11" "$logdir/nodes-rules-np4.0.vlog" ||
      fail "nodes-rules-np4: the rules file did not decide"; }
# the rules file on one node only (a node-local path): the ranks would plan differently (a
# hierarchical rule on one node, the model's staging on the other: a hang); the
# communicator follows no rules, and says so
rules_half=("$check" --mem "$mem" --comms world --colls allreduce,bcast --counts 1,7,70001
            --large 0 --no-derived --types MPI_INT,MPI_DOUBLE,MPI_FLOAT_INT)
run "nodes-rules-half-np4" 4 "${dev_mca[@]}" --mca coll_gpu_node_size 2 --mca coll_gpu_verbose 2 \
    "${below[@]}" 2 OMPI_MCA_coll_gpu_rules_file="$rules" "${rules_half[@]}" &&
    { logs nodes-rules-half-np4 | grep -q "the rules differ between ranks" ||
      fail "nodes-rules-half-np4: no warning that the rules differ"; } &&
    { ! grep -q "why=rule at line" "$logdir"/nodes-rules-half-np4.*.vlog ||
      fail "nodes-rules-half-np4: a rule decided on a communicator whose ranks disagree"; }
printf 'allreduce 0 1k 1\n' >"$logdir/bad-rules.txt"
run "nodes-bad-rules-np2" 2 "${dev_mca[@]}" --mca coll_gpu_rules_file "$logdir/bad-rules.txt" \
    "$check" --mem "$mem" --comms world "${quiet_args[@]}" &&
    { logs nodes-bad-rules-np2 | grep -q "bad-rules.txt:1: 4 fields" ||
      fail "nodes-bad-rules-np2: no message naming the file and line"; }
nodes_forced allreduce hier_ring 6 2
nodes_forced bcast hier_ring 6 3
nodes_forced bcast hier_ring 8 2 # a chain of 4 nodes carrying one chunk: no lane thread
nodes_forced allreduce hier_rd 6 3
nodes_forced allreduce hier_leader 7 3
# the host layer's model takes LL for the node's phase of a small bcast; on a GPU the model's
# measured costs decide (the H200 took the direct copy, 2026-11-27), so only the host asserts it
nodes_forced bcast hier_tree 5 2 &&
    { [ "$device" != host ] ||
      grep -q "alg=hier_tree .*node phase ll" "$logdir/nodes-forced-hier_tree-bcast-np5.0.vlog" ||
      fail "nodes-forced-hier_tree-bcast-np5: no small bcast with its node phase as LL"; }
nodes_forced allgather hier_ring 6 3
nodes_forced reduce_scatter hier_ring 4 2
nodes_forced reduce_scatter_block hier_ring 8 4
nodes_forced allgather hier_leader 7 3
nodes_forced reduce_scatter hier_leader 8 3
nodes_forced reduce_scatter_block hier_leader 5 2
# nodes whose ranks are not consecutive (dealt in turn, as --map-by node places them):
# 3+3+2 ranks, so auto runs the any-layout algorithms, packing the leaders' data by node;
# exportable memory, so that the intra phases run zero copy too. A rules file takes the
# hierarchical algorithms at every size instead of staging the small calls (what this run
# tests), each collective's first that can run: hier_rd and hier_ring need the same number
# of ranks on every node, so the planner passes over them to the any-layout ones.
cat >"$logdir/hier-rules.txt" <<'RULES'
allreduce            * * 2 * hier_rd
allreduce            * * 2 * hier_leader
bcast                * * 2 * hier_tree
allgather            * * 2 * hier_ring
allgather            * * 2 * hier_leader
reduce_scatter       * * 2 * hier_ring
reduce_scatter       * * 2 * hier_leader
reduce_scatter_block * * 2 * hier_ring
reduce_scatter_block * * 2 * hier_leader
RULES
hier_rules=(--mca coll_gpu_rules_file "$logdir/hier-rules.txt")
run "nodes-cyclic-np8" 8 "${dev_mca[@]}" --mca coll_gpu_node_size -3 --mca coll_gpu_verbose 2 "${hier_rules[@]}" \
    "$check" --mem device --comms world,reversed --counts 1,7,1000 --large 100003 --no-derived &&
    proof nodes-cyclic-np8 "hier_leader,hier_tree,staged" hier_leader
# hier_ring cut into many chunks whose phases overlap (lane threads run the network phases
# of several chunks at once while the node works on the next and previous ones): every
# collective, with 3 lanes, with 1, and the default 4 through zero copy; over tcp with the
# staging pipeline.
overlap_mca=(--mca coll_gpu_hier_chunk_size 65536)
for coll in allreduce bcast allgather reduce_scatter reduce_scatter_block; do
    overlap_mca+=(--mca "coll_gpu_${coll}_algorithm" hier_ring)
done
overlap_args=(--comms world --counts 0,1,7,1000,70001 --large 0 --no-derived
              --types MPI_INT,MPI_DOUBLE,MPI_DOUBLE_INT,MPI_UINT8_T,MPI_C_DOUBLE_COMPLEX)
overlap_proof() {
    proof "$1" "hier_ring,staged" hier_ring &&
        { logs "$1" | grep -q "overlapped in chunks of 65536 (set)" || fail "$1: no overlapped run"; }
}
run "nodes-overlap-lanes3-np6" 6 "${dev_mca[@]}" --mca coll_gpu_node_size 3 "${overlap_mca[@]}" \
    --mca coll_gpu_hier_lanes 3 --mca coll_gpu_verbose 3 "$check" --mem "$mem" "${overlap_args[@]}" &&
    overlap_proof nodes-overlap-lanes3-np6 &&
    { logs nodes-overlap-lanes3-np6 | grep -q "3 inter-node lanes" || fail "nodes-overlap-lanes3-np6: not 3 lanes"; } &&
    { logs nodes-overlap-lanes3-np6 |
          grep -qE "copy to 2 peers, [0-9]+ bytes each: copy engines [0-9.]+ GB/s, kernel [0-9.]+ GB/s" ||
          fail "nodes-overlap-lanes3-np6: copy method not timed"; }
run "nodes-overlap-lanes1-staging-tcp-np4" 4 -x UCX_TLS=tcp,self "${dev_mca[@]}" --mca coll_gpu_node_size 2 \
    --mca coll_gpu_ucx_staging always --mca coll_gpu_ucx_chunk_size 16384 --mca coll_gpu_hier_lanes 1 \
    "${overlap_mca[@]}" --mca coll_gpu_verbose 2 "$check" --mem "$mem" "${overlap_args[@]}" &&
    overlap_proof nodes-overlap-lanes1-staging-tcp-np4
run "nodes-overlap-pool-np8" 8 "${dev_mca[@]}" --mca coll_gpu_node_size 4 "${overlap_mca[@]}" \
    --mca coll_gpu_verbose 2 "$check" --mem pool "${overlap_args[@]}" &&
    overlap_proof nodes-overlap-pool-np8

# 7. Ranks that mix memory kinds: odd ranks pass host buffers, the others device buffers.
run "mixed-kinds-np4" 4 "${dev_mca[@]}" "$check" --mem mixed "${quiet_args[@]}"
run "mixed-kinds-np5" 5 "${dev_mca[@]}" "$check" --mem mixed "${forced_args[@]}"
if [ "$device" = host ]; then
    # the lenient host layer (every host buffer plays device memory), for applications that
    # know nothing of the simulated GPU; rank 1 and 3's buffers count as host memory
    run "lenient-mixed-kinds-np4" 4 "${dev_mca[@]}" --mca coll_gpu_debug_host_lenient 1 \
        --mca coll_gpu_debug_host_buffer_ranks 1,3 "$check" --mem host "${quiet_args[@]}"
    run "lenient-np3" 3 "${dev_mca[@]}" --mca coll_gpu_debug_host_lenient 1 --mca coll_gpu_node_size 2 \
        "$check" --mem host --counts 0,1,7,1000 --large 100003 --no-derived
    # nodes whose UCX differs: the first node stages device data through host chunks, the
    # second hands it to UCX (lenient: the CPU may touch it); every rank must stage alike
    # (messages over a chunk were truncated, or a sender waited forever)
    mixed_staging_check=("$check" --mem host --comms world,split --counts 0,1,7,70001 --large 100003
                         --types MPI_INT,MPI_DOUBLE,MPI_DOUBLE_INT --no-derived)
    run "nodes-mixed-staging-np4" 4 "${dev_mca[@]}" --mca coll_gpu_debug_host_lenient 1 \
        --mca coll_gpu_node_size 2 --mca coll_gpu_ucx_chunk_size 16384 --mca coll_gpu_verbose 1 \
        "${below[@]}" 2 OMPI_MCA_coll_gpu_ucx_staging=always "${mixed_staging_check[@]}" &&
        { logs nodes-mixed-staging-np4 | grep -q "UCX moves device memory here but not" ||
          fail "nodes-mixed-staging-np4: no rank was told that the others stage"; }
fi
# coll_gpu_buffer_check=local trusts uniform buffers: no agreement round, same results.
# across two nodes (before any communicator has a context: every call agrees, then stages;
# coll_costs --nodes mixes kinds on a communicator that has one, with no agreement)
run "nodes-mixed-kinds-np4" 4 "${dev_mca[@]}" --mca coll_gpu_node_size 2 \
    "$check" --mem mixed --comms world,reversed --counts 1,7,1000 --large 100003 --no-derived
run "buffer-check-local-np4" 4 "${dev_mca[@]}" --mca coll_gpu_buffer_check local \
    "$check" --mem "$mem" "${forced_args[@]}"

# 7b. A fast path that fails on one rank (tests/mpi/suite_fail.sh).
# shellcheck source=tests/mpi/suite_fail.sh
. "$(dirname "$0")/suite_fail.sh"

# 8. The component switched off, or stepping aside: results still correct on host memory,
#    no coll:gpu line. Device memory without the component reaches Open MPI (built
#    without CUDA support), which reads it on the CPU: the process must die, as it would
#    on a GPU (proof that the stand-in shows what a GPU would show).
off_check() {
    local name=$1
    if logs "$name" | grep -q "coll:gpu"; then
        fail "$name: the component spoke although it should be off"
    fi
}
run "off-exclude" 4 --mca coll ^gpu --mca coll_gpu_verbose 2 "$check" --mem host "${quiet_args[@]}" && off_check off-exclude
run "off-priority0" 4 "${dev_mca[@]}" --mca coll_gpu_priority 0 --mca coll_gpu_verbose 2 \
    "$check" --mem host "${quiet_args[@]}" && off_check off-priority0
leak_args=(--comms world --colls allreduce --counts 1000 --large 0 --types MPI_INT --no-derived)
run_dies "leak-off-np2" 2 --mca coll ^gpu "$check" --mem device "${leak_args[@]}"
run_dies "leak-off-np1" 1 --mca coll ^gpu "$check" --mem device "${leak_args[@]}"
if [ "$device" = host ]; then
    # auto on a machine without GPU: quiet (verbose 0), host memory only, correct results
    run "auto-no-gpu" 4 --mca coll_gpu_device auto "$check" --mem host "${quiet_args[@]}" && off_check auto-no-gpu
    run "auto-no-gpu-verbose" 2 --mca coll_gpu_device auto --mca coll_gpu_verbose 1 "$check" --mem host "${quiet_args[@]}" &&
        { logs auto-no-gpu-verbose | grep -q "no GPU here:" || fail "auto-no-gpu-verbose: no reason given at verbose 1"; }
    # a job over a node without a GPU (ranks 0 and 1: auto finds no driver, host memory)
    # and a node with one (ranks 2 and 3: device memory): the GPU ranks agree on memory
    # kinds with a collective of their own, which the others must join (before the fix
    # they had left the component: every collective mismatched, errors or a hang)
    nogpu_first=(bash -c 'if [ "${OMPI_COMM_WORLD_RANK:-0}" -lt "$1" ]; then export OMPI_MCA_coll_gpu_device=auto;
        mem=host; else mem=device; fi; prog=$2; shift 2; exec "$prog" --mem "$mem" "$@"' nogpu_first)
    run "nogpu-node-np4" 4 "${dev_mca[@]}" --mca coll_gpu_node_size 2 "${nogpu_first[@]}" 2 "$check" \
        "${forced_args[@]}"
fi

# 8b. Every other collective, and the nonblocking and persistent forms of all sixteen
#     (staged): coll_coverage over predefined types and ops, derived types (gaps, a negative
#     lower bound) with user ops (one not commutative), counts 0/1/7/1000, in place, roots
#     other than 0, five communicators (single-rank ones included), requests completed with
#     Wait, Test loops and the array forms, several in flight on three communicators and
#     completed in any order, persistent ones started together; rank 0's log shows every
#     call it made on device memory staged, and a type over allocations terabytes apart
#     staged compactly (coll_gpu_staged_compact). Then ranks mixing host and device memory, one
#     rank, the test's own references against Open MPI alone (host memory), and a device
#     pointer of a nonblocking call without the component (it must crash: the stand-in
#     sees what a GPU would).
coverage=$builddir/tests/mpi/coll_coverage
coverage_proof() { # NAME
    local names n
    names=$(sed -n 's/^coll_coverage: window end staged=//p' "$logdir/$1.log")
    [ -n "$names" ] || { fail "$1: no window end line"; return 1; }
    for n in ${names//,/ }; do
        grep -q "INFO coll $n count=[0-9]* .*mem=device alg=staged" "$logdir/$1.0.vlog" ||
            { fail "$1: no staged verbose line for $n"; return 1; }
    done
    if grep -q "mem=device alg=underlying" "$logdir/$1.0.vlog"; then
        fail "$1: device memory passed to the layer underneath"
        return 1
    fi
    # a gather's non-root passes a null receive type (Open MPI 4.1 names it MPI_EMPTY)
    if logs "$1" | grep -Eq "dtype=MPI_(DATATYPE_NULL|EMPTY) "; then
        fail "$1: a verbose line named a datatype that MPI says is not significant"
        return 1
    fi
}
run "coverage-np4" 4 "${dev_mca[@]}" --mca coll_gpu_verbose 2 "$coverage" --mem device \
    --expect-compact &&
    coverage_proof coverage-np4
run "coverage-np1" 1 "${dev_mca[@]}" "$coverage" --mem device --counts 0,1,1000 --expect-compact
run "coverage-mixed-kinds-np3" 3 "${dev_mca[@]}" "$coverage" --mem mixed --counts 0,1,1000
# inputs written on the default stream just before every call (--queued), in every mode:
# nonblocking and persistent calls wait for them too; and memory the layer's kernels cannot
# use (--mem other: a second context of the GPU; on the host layer the simulated GPU's
# device 1), with a default stream of its own, which the component stages after a host wait
# on that stream, the layer's own waits being its context's
run "coverage-queued-np3" 3 "${dev_mca[@]}" "$coverage" --mem device --queued --counts 1,1000
run "coverage-foreign-queued-np3" 3 "${dev_mca[@]}" "$coverage" --mem other --queued \
    --counts 1,1000 && no_errors coverage-foreign-queued-np3
# one rank's device slow (its copies end 2 ms after they start, never inside the call that
# queues them): the staged nonblocking, persistent and derived-type paths read no arena
# before its copies landed and give none back with a copy still queued
if [ "$device" = host ]; then
    run "slow-rank-coverage-queued-np3" 3 "${dev_mca[@]}" --mca coll_gpu_debug_host_slow 1:2 \
        "$coverage" --mem device --queued --counts 1,1000
    run "deferred-coverage-queued-np3" 3 "${dev_mca[@]}" --mca coll_gpu_debug_host_slow all:0 \
        "$coverage" --mem device --queued --counts 1,1000
fi
run "foreign-np3" 3 "${dev_mca[@]}" --mca coll_gpu_verbose 2 "$check" --mem other \
    --full-comms --counts 0,1,7,1000 --large 0 --no-derived &&
    proof foreign-np3 "staged,local" staged && no_errors foreign-np3
run "coverage-reference-np3" 3 --mca coll ^gpu "$coverage" --mem host --counts 1,7 --no-overlap
run_dies "leak-off-nonblocking-np2" 2 --mca coll ^gpu "$coverage" --mem device --colls allreduce \
    --modes nonblocking --counts 1000 --no-overlap

# 9. ompi_info lists every parameter.
runs=$((runs + 1))
if OMPI_MCA_mca_base_component_path="$sysdir:$builddir/.libs" ompi_info --param coll gpu --level 9 >"$logdir/ompi_info.log" 2>&1 &&
    for p in priority verbose verbose_subsys verbose_file device node_size buffer_check staging_cache_max \
             scratch_size intra_sync copy_method timeout allreduce_one_shot_max topo_file \
             rules_file net_bw net_latency hier_chunk_size hier_lanes context_keep ucx_chunk_size ucx_depth ucx_staging \
             allreduce_algorithm bcast_algorithm allgather_algorithm reduce_scatter_algorithm \
             reduce_scatter_block_algorithm debug_fail debug_host_buffer_ranks debug_host_lenient \
             debug_host_time_sliced debug_host_pinned_max debug_host_blocking_waits \
             debug_host_slow debug_host_query_miss debug_host_server_deaf debug_host_no_p2p \
             ll_persist ll_persist_idle_us; do
        grep -q "coll_gpu_$p\b" "$logdir/ompi_info.log" || { echo "    missing coll_gpu_$p"; false; } || exit 1
    done; then
    echo "PASS ompi_info"
else
    fail "ompi_info --param coll gpu --level 9: $logdir/ompi_info.log"
fi

# 10. The examples, as a user runs them.
run "hello-np4" 4 "${dev_mca[@]}" "$builddir/coll_gpu_hello" 100000 &&
    { grep -q "correct" "$logdir/hello-np4.log" || fail "hello-np4: no result line"; }
# the application resets the device before MPI_Finalize (cudaDeviceReset, a CUDA samples
# habit; the simulated GPU's reset on the host layer): the component's finalize must
# neither crash nor hang on what went with it, nor log an error about it
run "hello-reset-np4" 4 "${dev_mca[@]}" "$builddir/coll_gpu_hello" 100000 --reset &&
    { grep -q "device reset before MPI_Finalize" "$logdir/hello-reset-np4.log" ||
      fail "hello-reset-np4: the device was not reset"; } && no_errors "hello-reset-np4"
run "overlap-np4" 4 "${dev_mca[@]}" "$builddir/coll_gpu_overlap" 65536 8 &&
    { grep -q "gradients correct" "$logdir/overlap-np4.log" || fail "overlap-np4: no result line"; }
run "bench-np3" 3 "${dev_mca[@]}" "$builddir/coll_gpu_bench" -C allreduce -b 8 -e 1M -f 64 -n 2 -w 1 -c 1 &&
    { grep -q "all results correct" "$logdir/bench-np3.log" || fail "bench-np3: results not correct"; }

# 11. Two threads per rank (MPI_THREAD_MULTIPLE), and no free that waited for another
# thread's device work in any run (tests/mpi/suite_threads.sh).
# shellcheck source=tests/mpi/suite_threads.sh
. "$(dirname "$0")/suite_threads.sh"

if [ "$failures" -gt 0 ]; then
    echo "run_suite: the failed runs again:"
    printf '%s' "$failed_report"
fi
echo "run_suite: $runs runs, $failures failed, $skipped skipped by CG_SUITE_FILTER (logs in $logdir)"
[ "$failures" -eq 0 ]
