# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Sourced by run_suite.sh (its run, fail, logs and variables): the runs with an injected
# failure.
# shellcheck shell=bash disable=SC2154

# 7b. A fast path that fails on one rank (an injected device error at its N-th fast-path
#     call), under MPI_ERRORS_RETURN: that call is an error on every rank (on other nodes
#     through aborts over UCX), never a hang or a wrong result; later calls are staged and
#     exact. One node; hier_ring in chunks with lanes (also failing before the first
#     pipeline, where the lane threads are agreed); the staging pipeline over tcp; the
#     leaders' algorithm on an uneven layout, failing on a node of one rank.
fail_check=$builddir/tests/mpi/coll_fail
fail_run() { # name np rank call [mpirun arguments...]; fail_count: elements per call,
              # fail_coll: allreduce (default), bcast or allgather; fail_again=1: the calls
              # again on a new communicator (coll_fail --again); fail_sticky=1: every later
              # device operation of the failing rank fails too (a GPU fault); fail_served=1:
              # every rank rang LL calls on a server (coll_gpu_ll_persist)
    local name=$1 np=$2 rank=$3 call=$4
    shift 4
    run "$name" "$np" "${dev_mca[@]}" --mca coll_gpu_debug_fail "$rank:$call${fail_sticky:+:sticky}" "$@" \
        "$fail_check" --mem "$mem" --coll "${fail_coll:-allreduce}" --fail-rank "$rank" --fail-call "$call" \
        --count "${fail_count:-70001}" ${fail_again:+--again "$fail_again"} \
        ${fail_sticky:+--sticky "$fail_sticky"} ${fail_served:+--expect-ll-served "$fail_served"} &&
        { logs "$name" | grep -q "injected device failure" || fail "$name: no failure injected"; } &&
        { ! logs "$name" | grep -q "waited [0-9]* s for a peer: giving up" ||
            fail "$name: a wait for the failed rank ran into the host layer's time limit"; }
}
# fail_run_slow: fail_run with a slow rank (coll_gpu_debug_host_slow), whose log must say that
# the slow rank went on without a failure that came after it had completed its call. The
# case rests on timing (the failing rank reaching its next call within the slow rank's
# delay): a run that did not reproduce it, with every result right, runs once more before
# it fails, as a loaded machine can deschedule the failing rank past the delay.
fail_run_slow() {
    local name=$1 later="failed a later call after it completed this one"
    fail_run "$@" || return 1
    logs "$name" | grep -q "$later" && return 0
    echo "NOTE $name: the slow rank's case was not reproduced (the failing rank was late): once more"
    shift
    fail_run "$name-again" "$@" || return 1 # a name of its own: the first run's logs stay
    logs "$name-again" | grep -q "$later" ||
        fail "$name: the case was not reproduced twice (no later failure seen)"
}
fail_run fail-one-node-np4 4 1 4
# a GPU fault: the failing rank's device stays failed, so its later (staged) calls cannot
# copy its data; each still takes part in the collective underneath with zeros and returns
# an error (it left the collective before, and its peers waited in it for ever)
fail_sticky=1 fail_run fail-sticky-np4 4 1 4
# the same, then on a new communicator: the failing rank cannot create the new module's
# stream (CUDA fails that too after a fault; app_wait default_stream: the staged copies
# need that stream, not the application's), and its staged calls still take part with
# zeros (before the fix they returned without joining, and their peers waited for ever)
fail_sticky=1 fail_again=1 fail_run fail-sticky-again-np4 4 1 4 --mca coll_gpu_app_wait default_stream
# the application resets the device between two calls (every rank, cudaDeviceReset while
# MPI still uses it, which the component does not support): the calls from then on return
# errors on every rank, and so does the start of a persistent allreduce made before; none
# hangs or faults (host layer: a GPU's component does not look for a reset before each
# call, only at a failure and at teardown). Also staged (its cached page-locked arenas
# went with the device: they faulted)
if [ "$device" = host ]; then
    for variant in "" staged; do
        name=fail-reset${variant:+-$variant}-np4
        forced=()
        [ -z "$variant" ] || forced=(--mca coll_gpu_allreduce_algorithm "$variant")
        run "$name" 4 "${dev_mca[@]}" "${forced[@]}" \
            "$fail_check" --mem "$mem" --fail-rank 0 --fail-call 3 --calls 5 --count 7 --reset 1 &&
            { grep -q "PASSED: 4 ranks x 5 calls; call 3: 4 ranks returned an error" \
                  "$logdir/$name.log" || fail "$name: not every rank's call failed"; } &&
            { logs "$name" | grep -q "the application reset the device" ||
                  fail "$name: the reset was not named"; }
    done
fi
# device-side barriers: the failing rank's peers release their flag waits and drain
fail_run fail-device-sync-np4 4 1 4 --mca coll_gpu_intra_sync device
# the same with flag waits that block the calling thread (the host layer's older mode: the
# stream's watch releases them)
if [ "$device" = host ]; then
    fail_run fail-device-sync-blocking-np4 4 1 4 --mca coll_gpu_intra_sync device \
        --mca coll_gpu_debug_host_blocking_waits 1
fi
# a peer whose device is slow (rank 2's copies and reductions end 200 ms after they start):
# the failing rank finishes call 3, and its call 4 fails while rank 2 still waits for its
# own reduction of call 3, which completed everywhere and must not fail there (before the
# fix rank 2 failed call 3 alone, and its later calls met its peers' next ones: wrong
# results). buffer_check local: no agreement at the call's start waits for rank 2.
# The log must say that rank 2 went on without the later failure (else the timing did not
# reproduce the case: fail_run_slow runs it once more). The same for an LL call (rank 2's
# kernel ends 200 ms after its lines went out, and the others finish first).
if [ "$device" = host ]; then
    fail_run_slow fail-device-sync-slow-np4 4 1 4 --mca coll_gpu_intra_sync device \
        --mca coll_gpu_allreduce_algorithm one_shot --mca coll_gpu_debug_host_slow 2:200 \
        --mca coll_gpu_buffer_check local --mca coll_gpu_verbose 3
    # across nodes: rank 2's abort of its call 4 reached rank 0 (slow) still in call 3, which
    # gave call 3 up alone (its node's other rank followed; a hang before the fix: aborts
    # named no call). Aborts now name their call; a later call's waits for that call.
    fail_run fail-nodes-ring-slow-np6 6 2 4 --mca coll_gpu_node_size 2 \
        --mca coll_gpu_allreduce_algorithm hier_ring --mca coll_gpu_hier_chunk_size 65536 \
        --mca coll_gpu_debug_host_slow 0:20 --mca coll_gpu_buffer_check local
    fail_count=1 fail_run_slow fail-ll-slow-np4 4 1 4 --mca coll_gpu_allreduce_algorithm ll \
        --mca coll_gpu_debug_host_slow 2:200 --mca coll_gpu_buffer_check local --mca coll_gpu_verbose 3
fi
# LL calls rung on servers that stay (coll_gpu_ll_persist): the peers' servers wait for lines
# that never come; the abort lines end the call, and the servers serve the staged path's
# next calls; with a slow rank, the later failure as for launched calls
fail_served=1 fail_count=1 fail_run fail-ll-persist-np4 4 1 4 --mca coll_gpu_ll_persist 1 --mca coll_gpu_app_wait none
# with the default coll_gpu_app_wait, rank 2 failing: calls rung after a query of the
# application's work (rung calls asserted on the host layer only: a GPU's query may find it
# not yet done)
fail_served=$([ "$device" = host ] && echo 1) fail_count=1 fail_run fail-ll-persist-auto-np4 4 2 4 \
    --mca coll_gpu_ll_persist 1
if [ "$device" = host ]; then
    fail_served=1 fail_count=1 fail_run_slow fail-ll-persist-slow-np4 4 1 4 --mca coll_gpu_ll_persist 1 \
        --mca coll_gpu_app_wait none --mca coll_gpu_allreduce_algorithm ll \
        --mca coll_gpu_debug_host_slow 2:200 --mca coll_gpu_buffer_check local --mca coll_gpu_verbose 3
fi
# LL calls queued on the default stream (coll_gpu_app_wait launch): the peers' kernels wait
# there for lines that never come; their abort lines must not queue behind them (on a GPU)
fail_count=1 fail_run fail-ll-app-launch-np4 4 1 4 --mca coll_gpu_app_wait launch
fail_run fail-nodes-ring-np6 6 2 4 --mca coll_gpu_node_size 2 --mca coll_gpu_allreduce_algorithm hier_ring \
    --mca coll_gpu_hier_chunk_size 65536
# the failure before the first pipelined call's pipeline (the copy of this rank's block):
# the failing rank still agrees on the lane threads with the others
fail_coll=allgather fail_run fail-nodes-ring-first-np4 4 1 1 --mca coll_gpu_node_size 2 \
    --mca coll_gpu_allgather_algorithm hier_ring --mca coll_gpu_hier_chunk_size 65536
# hier_ring's chain of nodes, a large bcast: the failed call leaves unreceived chunks and
# late aborts in the UCX workers; the calls again on a new communicator of the same id
# must not meet them (before the fix, most runs failed a call of the new communicator)
fail_coll=bcast fail_count=1000000 fail_again=1 fail_run fail-nodes-chain-again-np4 4 2 4 \
    --mca coll_gpu_node_size 2 --mca coll_gpu_bcast_algorithm hier_ring \
    --mca coll_gpu_hier_chunk_size 65536
fail_run fail-nodes-staging-tcp-np6 6 3 5 -x UCX_TLS=tcp,self --mca coll_gpu_node_size 2 \
    --mca coll_gpu_ucx_staging always --mca coll_gpu_ucx_chunk_size 16384 \
    --mca coll_gpu_allreduce_algorithm hier_ring --mca coll_gpu_hier_chunk_size 65536
fail_run fail-nodes-leader-np7 7 6 3 --mca coll_gpu_node_size 3 "${hier_rules[@]}"
# hier_tree's node phase as one LL call: the tree member of the second node fails in the
# network phase, so it never runs the LL call that its node's other rank waits in. The
# first node's ranks finish the call; the aborts of the second node's reach them after it,
# and stay in their UCX workers. The calls go on, exact, on a new communicator that Open
# MPI gives the same id: its setup must remove those aborts (a wait would find them and
# fail a call of the new communicator; whether one waits long enough to look depends on
# timing, so the removal itself is asserted).
fail_coll=bcast fail_count=1 fail_again=1 fail_run fail-nodes-tree-ll-np4 4 2 4 \
    --mca coll_gpu_node_size 2 --mca coll_gpu_bcast_algorithm hier_tree --mca coll_gpu_verbose 3 &&
    { logs fail-nodes-tree-ll-np4 | grep -q "left by a freed communicator of id" ||
        fail "fail-nodes-tree-ll-np4: the failed call's aborts were not removed at the new communicator's setup"; }
