# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Sourced by run_suite.sh at its end (its run, fail, logs and variables).
# shellcheck shell=bash disable=SC2154

threads=$builddir/tests/mpi/coll_threads
# two threads of every rank at once (MPI_THREAD_MULTIPLE): one calls small collectives,
# the other makes and frees communicators (contexts not kept: their memory goes); no free
# may wait for the other thread's device work that waits for peers (on a GPU a deadlock):
# LL calls, and device barriers (flag waits) at np 3; the references checked with Open MPI
# alone on host memory
run "threads-np2" 2 "${dev_mca[@]}" --mca coll_gpu_context_keep 0 "$threads" --cycles 40
run "threads-np4" 4 "${dev_mca[@]}" --mca coll_gpu_context_keep 0 "$threads" --cycles 20
run "threads-device-sync-np3" 3 "${dev_mca[@]}" --mca coll_gpu_context_keep 0 \
    --mca coll_gpu_intra_sync device --mca coll_gpu_allreduce_algorithm one_shot "$threads" --cycles 20
# LL calls rung on servers that stay (coll_gpu_ll_persist): the other thread's frees wait
# for an idle server to leave, never for one that waits for peers
run "threads-ll-persist-np3" 3 "${dev_mca[@]}" --mca coll_gpu_context_keep 0 --mca coll_gpu_ll_persist 1 \
    --mca coll_gpu_app_wait none "$threads" --cycles 20 --expect-ll-served 1
# the same with the default coll_gpu_app_wait (the event wait at this thread level): calls
# rung after a query of the application's work, while the other thread calls and frees (on a
# GPU the queries of both threads share the layer's event; the host layer has none, and
# rung calls are asserted there only: a GPU's query may find the work not yet done)
threads_served=()
[ "$device" = host ] && threads_served=(--expect-ll-served 1)
run "threads-ll-persist-auto-np3" 3 "${dev_mca[@]}" --mca coll_gpu_context_keep 0 --mca coll_gpu_ll_persist 1 \
    "$threads" --cycles 10 "${threads_served[@]}"
run "threads-reference-np3" 3 --mca coll ^gpu "$threads" --mem host --expect-held 0 --cycles 10
# across virtual nodes (inter-node algorithms forced, device buffers assumed everywhere): the
# churner's communicators beside the caller's; then with every communicator's id of the
# hashed kind Open MPI 5 draws from PMIx, all the same (coll_gpu_debug_comm_ids 1), as two
# live communicators whose hashes collide: their messages would meet (the caller hung), so
# each refused one runs staged
threads_nodes=(--mca coll_gpu_node_size 2 --mca coll_gpu_buffer_check local
    --mca coll_gpu_allreduce_algorithm hier_ring --mca coll_gpu_bcast_algorithm hier_tree
    --mca coll_gpu_allgather_algorithm hier_ring --mca coll_gpu_reduce_scatter_algorithm hier_ring)
run "threads-nodes-np4" 4 "${dev_mca[@]}" "${threads_nodes[@]}" "$threads" --cycles 20 --expect-held 0
run "threads-nodes-collide-np4" 4 "${dev_mca[@]}" "${threads_nodes[@]}" --mca coll_gpu_debug_comm_ids 1 \
    --mca coll_gpu_verbose 1 "$threads" --cycles 20 --expect-held 0 &&
    { grep -q "has the inter-node tags of another one alive" "$logdir/threads-nodes-collide-np4.0.vlog" ||
        fail "threads-nodes-collide-np4: no communicator was refused (nothing tested)"; }

# No free waited for device work that waits for peers (another thread's, or a queued flag
# wait) in any run, and no bracket of such work
# was left open at the end (the host layer's simulated GPU and the holding log an error of
# each: in the process's own log file, or in the run's output after the log file closed).
# The logs of this suite's runs only: an older run's in the same folder do not count.
runs=$((runs + 1))
ran_logs=()
for name in ${ran[@]+"${ran[@]}"}; do
    ran_logs+=("$logdir/$name".*.vlog "$logdir/$name.log")
done
stalled=$(grep -l -e "a free waits for device work that waits for peers" \
    -e "brackets of device work that waits for peers still open" "${ran_logs[@]}" /dev/null </dev/null 2>/dev/null | head -5)
if [ -n "$stalled" ]; then
    fail "frees waited for device work that waits for peers (a deadlock on a GPU), or brackets were left open: $(echo $stalled)"
else
    echo "PASS no free waited for device work that waits for peers"
fi
