# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Sourced by run_suite.sh (its run, fail, logs and variables): inputs and settings out of the
# ordinary, which must give exact results or a correct fallback, never a crash.
# shellcheck shell=bash disable=SC2154

# a rank with another scratch size (a parameter every rank must set alike): the setup sees
# it before any rank touches a peer's scratch at the wrong places (a segfault before), staged
run "params-differ-np3" 3 "${dev_mca[@]}" --mca coll_gpu_verbose 1 "${below[@]}" 1 \
    OMPI_MCA_coll_gpu_scratch_size=262144 "$check" --mem device --counts 1,1000 --large 200003 --no-derived &&
    { logs params-differ-np3 | grep -q "must set alike .* differ between ranks" ||
      fail "params-differ-np3: the ranks' different settings were not reported"; }
# buffers that are not aligned (an odd byte, a word into an array): the kernel copies of the
# copy variants (pool memory) and of zero copy, by words where the buffers allow
run "offset-odd-np4" 4 "${dev_mca[@]}" --mca coll_gpu_copy_method kernel \
    "$check" --mem device --offset 1 --counts 0,1,7,1000 --large 200003 --no-derived
run "offset-word-pool-np3" 3 "${dev_mca[@]}" --mca coll_gpu_copy_method kernel \
    "$check" --mem pool --offset 4 --counts 1,7,1000 --large 200003 --no-derived
# one rank's device slow (each of its copies and reductions ends 3 ms after it starts, a
# long kernel): every result must still be exact, so no path reads what a stream writes
# before waiting for it, and no rank runs ahead into memory a slow peer still uses; with
# device-side barriers (queued flag waits behind slow work) and across virtual nodes
if [ "$device" = host ]; then
    run "slow-rank-sync-device-np4" 4 "${dev_mca[@]}" --mca coll_gpu_intra_sync device \
        --mca coll_gpu_debug_host_slow 3:3 "$check" --mem device --counts 1,1000 --large 200003 --no-derived
    run "slow-rank-nodes-np4" 4 "${dev_mca[@]}" --mca coll_gpu_node_size 2 \
        --mca coll_gpu_debug_host_slow 1:3 "$check" --mem device --counts 1000 --large 200003 \
        --no-derived --colls allreduce,bcast,allgather
    # every rank's device work deferred (all:0: no delay, but none runs inside the call that
    # queues it, as on a GPU): a wait missing anywhere reads stale bytes on every rank
    run "deferred-np4" 4 "${dev_mca[@]}" --mca coll_gpu_debug_host_slow all:0 "$check" \
        --mem device --counts 0,1,7,1000 --large 200003
    # the same between three virtual nodes with UCX reading and writing "device" memory
    # itself (the lenient host layer: the path of a UCX built with CUDA, which no GPU run
    # has, its bundle's UCX being host-only): UCX reads outside every stream, so each
    # reduction must be done before the next exchange; 3 ms per op, so that UCX's send
    # of a block whose reduction is still queued shows (caught with that wait removed)
    run "deferred-nodes-direct-np6" 6 "${dev_mca[@]}" --mca coll_gpu_debug_host_lenient 1 \
        --mca coll_gpu_node_size 2 --mca coll_gpu_debug_host_slow all:3 --mca coll_gpu_verbose 3 \
        "$check" --mem host --counts 0,1,7,1000,70001 --large 0 --no-derived \
        --types MPI_INT,MPI_DOUBLE,MPI_DOUBLE_INT --comms world,split &&
        for r in 0 1 2 3 4 5; do # every rank's transport direct, none switched to staging
            if ! grep -q "inter-node transport: .*, direct$" "$logdir/deferred-nodes-direct-np6.$r.vlog" ||
                grep -q "goes through host memory" "$logdir/deferred-nodes-direct-np6.$r.vlog"; then
                fail "deferred-nodes-direct-np6: rank $r's UCX did not get the device memory itself"
                break
            fi
        done
fi
# no page-locked memory to stage through (the host layer refuses it above 64 KiB): the staged
# calls (nonblocking, persistent, the other collectives) run through ordinary memory, exact
if [ "$device" = host ]; then
    run "staging-pageable-np3" 3 "${dev_mca[@]}" --mca coll_gpu_debug_host_pinned_max 65536 \
        --mca coll_gpu_verbose 1 "$check" --mem device --counts 1,1000 --large 200003 --no-derived &&
        { logs staging-pageable-np3 | grep -q "staged collectives of this size use ordinary host memory" ||
          fail "staging-pageable-np3: no staging went through ordinary memory"; }
fi
# LL calls rung on a server that stays on the device (coll_gpu_ll_persist; buffers ready when
# MPI is called: coll_gpu_app_wait none): every collective exact; servers that leave at every
# chance, so that rings race leaves (idle time 0); the counts of a launched call with each LL
# call rung (coll_costs --ll-persist: also a lagging rank and ranks missing from calls, which
# cancel served calls); the node phase of hierarchical calls, ordered by the host (served
# whatever coll_gpu_app_wait says)
persist=(--mca coll_gpu_ll_persist 1 --mca coll_gpu_app_wait none)
run "ll-persist-np4" 4 "${dev_mca[@]}" "${persist[@]}" "$check" --mem device --app-ready \
    --expect-ll-served --counts 0,1,7,1000 --large 0 --no-derived
# the device reset (cudaDeviceReset; the simulated GPU's on the host layer) just after the
# last call, while the servers may still be there, before MPI_Comm_free and MPI_Finalize:
# every process ends without a fault, a hang or an error logged
run "ll-persist-reset-np4" 4 "${dev_mca[@]}" "${persist[@]}" --mca coll_gpu_ll_persist_idle_us 1000000 \
    "$check" --mem device --app-ready --expect-ll-served --comms world,dup --counts 1,7 --large 0 \
    --no-derived --reset &&
    { grep -q "device reset before MPI_Comm_free" "$logdir/ll-persist-reset-np4.log" ||
      fail "ll-persist-reset-np4: the device was not reset"; } && no_errors "ll-persist-reset-np4"
# the same across two simulated nodes (the inter-node transport's stream, events and
# page-locked staging go too), with calls large enough to stage between the nodes
run "nodes-reset-np4" 4 "${dev_mca[@]}" --mca coll_gpu_node_size 2 "$check" --mem device \
    --comms world,dup --counts 1,7,1000 --large 70001 --no-derived --reset &&
    { grep -q "device reset before MPI_Comm_free" "$logdir/nodes-reset-np4.log" ||
      fail "nodes-reset-np4: the device was not reset"; } && no_errors "nodes-reset-np4"
run "ll-persist-idle0-np3" 3 "${dev_mca[@]}" "${persist[@]}" --mca coll_gpu_ll_persist_idle_us 0 \
    "$check" --mem device --app-ready --expect-ll-served --comms world,odd --counts 1,7,1000 --large 0 \
    --no-derived
run "costs-ll-persist-np3" 3 "${dev_mca[@]}" "${persist[@]}" "$builddir/tests/mpi/coll_costs" \
    --mem device --app-ready --ll-persist
# the server with the default coll_gpu_app_wait: a call whose application work is found done
# (an event queried) is rung, one whose inputs are still being written on the default stream
# waits for them and is launched (the root of a bcast launched, the others rung, in one
# call); at one thread (auto) and under the event wait; the counts of each (one query, no
# wait). The host layer's query always finds synchronous writes done and queued ones not:
# there, calls must be rung, and a query that says done too early fails the results. A
# GPU's query may find done work not yet done (a fresh event): rung calls are not asserted
# there (coll_costs --query-may-miss), only exact results and consistent counts.
persist_auto=(--expect-ll-served) costs_auto=()
if [ "$device" != host ]; then
    persist_auto=() costs_auto=(--query-may-miss)
fi
run "ll-persist-auto-np4" 4 "${dev_mca[@]}" --mca coll_gpu_ll_persist 1 "$check" --mem device \
    "${persist_auto[@]}" --counts 0,1,7,1000 --large 0 --no-derived
run "ll-persist-event-np4" 4 "${dev_mca[@]}" --mca coll_gpu_ll_persist 1 --mca coll_gpu_app_wait default_stream \
    "$check" --mem device "${persist_auto[@]}" --colls allreduce,bcast --counts 1,7 --large 0 --no-derived
run "costs-ll-persist-auto-np3" 3 "${dev_mca[@]}" --mca coll_gpu_ll_persist 1 \
    "$builddir/tests/mpi/coll_costs" --mem device --ll-persist "${costs_auto[@]}"
run "costs-ll-persist-event-np3" 3 "${dev_mca[@]}" --mca coll_gpu_ll_persist 1 \
    --mca coll_gpu_app_wait default_stream "$builddir/tests/mpi/coll_costs" --mem device \
    --ll-persist --app-wait-event "${costs_auto[@]}"
# the host layer playing such a GPU (every 2nd query misses, ranks missing different calls:
# one call rung on some ranks and launched on others): the GPU's expectations checked here,
# with some calls of each kind
if [ "$device" = host ]; then
    run "costs-ll-persist-miss-np3" 3 "${dev_mca[@]}" --mca coll_gpu_ll_persist 1 \
        --mca coll_gpu_debug_host_query_miss 2 "$builddir/tests/mpi/coll_costs" --mem device \
        --ll-persist --expect-query-misses
    run "ll-persist-miss-np4" 4 "${dev_mca[@]}" --mca coll_gpu_ll_persist 1 --mca coll_gpu_debug_host_query_miss 3 \
        "$check" --mem device --expect-ll-served --counts 0,1,7,1000 --large 0 --no-derived
fi
# a server that cannot read the calls posted to it (the host layer playing a kernel whose
# reading of them is broken, on world rank 0 only): its first call runs launched after the
# server's life, its later ones launched with no server, the other ranks' served; exact
# results, no hang, and the rank says why (its own log file)
if [ "$device" = host ]; then
    run "ll-persist-deaf-np4" 4 "${dev_mca[@]}" "${persist[@]}" \
        "${below[@]}" 1 OMPI_MCA_coll_gpu_debug_host_server_deaf=1 "$check" --mem device \
        --app-ready --comms world,dup --counts 0,1,7,1000 --large 0 --no-derived &&
        { grep -q "left without running call" "$logdir/ll-persist-deaf-np4.0.vlog" ||
          fail "ll-persist-deaf-np4: rank 0's server read its calls"; }
fi
run "ll-persist-nodes-np4" 4 "${dev_mca[@]}" --mca coll_gpu_ll_persist 1 --mca coll_gpu_node_size 2 \
    --mca coll_gpu_allreduce_algorithm hier_rd --mca coll_gpu_bcast_algorithm hier_tree \
    "$check" --mem device --expect-ll-served --colls allreduce,bcast --counts 1,7,1000 --large 0 --no-derived
# MPI's progress rule: the last rank enters each collective only after rank 0 has matched its
# synchronous send and received its large one, which rank 0 posted before entering: every
# wait of the component for peers (board, LL, host and device barriers, an LL server) must
# progress MPI, or the run hangs until its watchdog (tests/mpi/check_progress.c)
progress=("$builddir/tests/mpi/coll_progress" --mem device --watchdog $((run_timeout - 30)))
run "progress-np4" 4 "${dev_mca[@]}" "${progress[@]}" --expect-fast 1
run "progress-sync-device-np3" 3 "${dev_mca[@]}" --mca coll_gpu_intra_sync device \
    "${progress[@]}" --expect-fast 1
run "progress-ll-persist-np3" 3 "${dev_mca[@]}" --mca coll_gpu_ll_persist 1 "${progress[@]}" \
    --counts 1,100 --expect-fast 1
# across nodes with no agreement before the calls (buffer_check local): the node phases'
# waits and the calling thread's wait for the lanes that carry the chunks between nodes
run "progress-nodes-np4" 4 "${dev_mca[@]}" --mca coll_gpu_node_size 2 --mca coll_gpu_buffer_check local \
    --mca coll_gpu_hier_chunk_size 65536 "${progress[@]}" --counts 100003 --expect-fast 1
