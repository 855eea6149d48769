/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * How one call runs (mca_coll_gpu_route): the memory kinds agreed by every rank (in band on
 * a node's board, or through the layer underneath), the planner's choice on the
 * communicator's fast-path context (created collectively at the first call that needs it),
 * the one-rank and staged cases; and the LOCAL path's copy.
 */
#include "ompi_coll_gpu/coll_gpu.h"

#include <stdio.h>
#include <string.h>

/* Hierarchical algorithms: the largest small message (one-shot node phase, recursive
 * doubling between nodes) when coll_gpu_allreduce_one_shot_max leaves it to the model. */
#define MCA_COLL_GPU_HIER_SMALL (64u << 10)

/* Exchange through the layer underneath (host memory, MPI_BYTE) on the module's
 * communicator; the context keeps it for exchanges during later calls. */
static cg_status_t mca_coll_gpu_oob_allgather(void *ctx, const void *send, void *recv, size_t bytes)
{
    mca_coll_gpu_module_t *m = ctx;

    cg_count(CG_CNT_EXCHANGE_BYTES, bytes);
    return MCA_COLL_GPU_UNDER(m, allgather, send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, m->comm) == OMPI_SUCCESS ? CG_OK : CG_ERR_TRANSPORT;
}

/* The communicator's id in the inter-node tags; coll_gpu_debug_comm_ids N: one of N ids of
 * the hashed kind (mca_coll_gpu_comm_id), the same on every rank (the context id is). */
static uint32_t mca_coll_gpu_tag_comm_id(struct ompi_communicator_t *comm)
{
    const uint32_t id = mca_coll_gpu_comm_id(comm);
    const int      n  = mca_coll_gpu_component.debug_comm_ids;

    return n > 0 ? UINT32_C(0x80000000) | (id % (uint32_t)n) : id;
}

/* The settings of a new context of comm (the digests too: read only when one is made). */
static void mca_coll_gpu_context_config(struct ompi_communicator_t *comm, cg_comm_config_t *config)
{
    *config = (cg_comm_config_t){
        .rank          = ompi_comm_rank(comm),
        .size          = ompi_comm_size(comm),
        .node_size     = mca_coll_gpu_component.node_size,
        .scratch_bytes = mca_coll_gpu_component.scratch_size,
        .sync          = (cg_sync_mode_t)mca_coll_gpu_component.intra_sync,
        .copy          = (cg_copy_method_t)mca_coll_gpu_component.copy_method,
        .timeout_s     = mca_coll_gpu_component.timeout,
        .topo_file     = mca_coll_gpu_component.topo_file,
        .sim_gpu       = mca_coll_gpu_job_local_rank(),
        .comm_id       = mca_coll_gpu_tag_comm_id(comm),
        .thread_multi  = mca_coll_gpu_component.thread_multi,
        .one_shot_max  = mca_coll_gpu_component.planner.one_shot_max > 0
                             ? mca_coll_gpu_component.planner.one_shot_max : MCA_COLL_GPU_HIER_SMALL,
        .chunk_bytes   = mca_coll_gpu_component.ucx_chunk_size,
        .depth         = mca_coll_gpu_component.ucx_depth,
        .lanes         = mca_coll_gpu_component.hier_lanes,
        .keep_max      = mca_coll_gpu_component.context_keep,
        .staging       = (cg_staging_mode_t)mca_coll_gpu_component.ucx_staging,
        .rules_digest  = cg_rules_digest(mca_coll_gpu_component.rules),
        .params_digest = mca_coll_gpu_params_digest(),
        .ll_flag_period = (uint32_t)CG_MAX(mca_coll_gpu_component.debug_ll_flag_period, 0),
    };
}

/* Do the communicator's ranks have rules that decide differently (so that it follows none)? */
static int mca_coll_gpu_rules_differ(const cg_comm_t *core)
{
    cg_shape_t shape;

    cg_comm_shape(core, &shape);
    return shape.rules_differ;
}

cg_comm_t *mca_coll_gpu_context(mca_coll_gpu_module_t *m, struct ompi_communicator_t *comm)
{
    static int       told_launch_only; /* the warnings below, once per process */
    static int       told_rules_differ;
    cg_oob_t         oob = {mca_coll_gpu_oob_allgather, m};
    cg_comm_config_t config;
    cg_status_t      status;

    if (m->core != NULL || m->core_failed) {
        return m->core;
    }
    mca_coll_gpu_context_config(comm, &config);
    status = cg_comm_acquire(mca_coll_gpu_dev(), &oob, &config, &m->core);
    if (status != CG_OK) {
        m->core        = NULL;
        m->core_failed = 1;
        cg_warn(CG_SUB_INIT, "no fast path on %s: %s (staged path from now on)", comm->c_name,
                cg_status_string(status));
        return NULL;
    }
    if (ompi_comm_rank(comm) == 0 && mca_coll_gpu_rules_differ(m->core) &&
        cg_once(&told_rules_differ)) { /* cg_comm_create warned each rank at verbose 1 */
        const char *file = mca_coll_gpu_component.rules_file;
        mca_coll_gpu_show_help_comm(comm, "rules differ between ranks",
                                    file != NULL && file[0] != '\0' ? file : "(none)");
    }
    if (mca_coll_gpu_dev()->ll_persist && cg_comm_ll_launch_only(m->core) &&
        cg_once(&told_launch_only)) { /* the job's rank 0 in full, each rank at 1 */
        mca_coll_gpu_show_help_once("ll_persist on a shared GPU without MPS");
        cg_warn(CG_SUB_INIT, "coll_gpu_ll_persist: this rank shares its GPU with another "
                "rank, without MPS: its LL calls are launched, not run by a kernel that stays");
    }
    return m->core;
}

void mca_coll_gpu_reset_explain(void)
{
    static int told;

    if (cg_dev_reset_check(mca_coll_gpu_dev()) && cg_once(&told)) {
        cg_error(CG_SUB_COLL, "the application reset the device (cudaDeviceReset) while MPI "
                 "still used it: collectives on device memory return errors from now on "
                 "(reset it after the last one, before MPI_Comm_free and MPI_Finalize)");
    }
}

/* A fast path ended: an error becomes an MPI error, and the communicator's fast paths
 * are retired (every rank saw the same failure at the same barrier). */
int mca_coll_gpu_fast_done(struct ompi_communicator_t *comm, const cg_call_t *call,
                           cg_status_t status)
{
    if (status == CG_OK) {
        return OMPI_SUCCESS;
    }
    cg_error(CG_SUB_COLL, "MPI_%s on %s failed on the fast path: %s", cg_coll_name(call->coll),
             comm->c_name, cg_status_string(status));
    mca_coll_gpu_reset_explain();
    return mca_coll_gpu_status_to_mpi(status);
}

int mca_coll_gpu_fast_run(mca_coll_gpu_module_t *m, struct ompi_communicator_t *comm,
                          const mca_coll_gpu_route_t *route, cg_call_t *call)
{
    cg_status_t status;

    call->watch = route->watch.board != NULL ? &route->watch : NULL;
    status      = cg_comm_run(m->core, &route->plan, call);
    call->watch = NULL;
    if (route->watch.board == NULL) {
        return mca_coll_gpu_fast_done(comm, call, status);
    }
    if (status == CG_ERR_PEER_NOT_FAST) { /* counted as what it became */
        mca_coll_gpu_component.last_alg[call->coll] = "staged";
        cg_count(CG_CNT_CALLS_STAGED, 1);
        return MCA_COLL_GPU_FAST_MISSED;
    }
    cg_count(CG_CNT_CALLS_FAST, 1);
    return mca_coll_gpu_fast_done(comm, call, status);
}

/*
 * Decide how one call runs. The plan comes from what every rank knows identically; when a
 * fast path may run and coll_gpu_buffer_check=agree, the ranks agree on their memory kinds
 * first, so that every rank takes the same path even when some pass host buffers:
 *   nobody has device buffers          -> the layer underneath, untouched
 *   everyone has device buffers only   -> the fast path the planner picks for the shape
 *   anything else                      -> staged (which the layer underneath pairs with)
 */
/* The component's copies and kernels run on streams of its own that do not wait for the
 * application's: before they touch this rank's device buffers, wait for what the
 * application queued on its default stream (the data it just produced). The staged path
 * orders its copies when its staging begins (on the application's stream itself where one
 * thread calls, else a wait on its staging stream, which it synchronises after its copies
 * anyway); a fast path whose peers read the buffers directly waits on the host. A failure there (a fault in the
 * application's kernel) is logged where it is detected and fails the call's own device
 * operations, which report it through the call's usual paths. */
static void mca_coll_gpu_route_app_wait(mca_coll_gpu_module_t *m, const mca_coll_gpu_route_t *route,
                                        const cg_call_t *call)
{
    cg_dev_t            *dev  = mca_coll_gpu_dev();
    const cg_alg_info_t *info = cg_alg_info(call->coll, route->plan.alg);

    if (route->path == MCA_COLL_GPU_PATH_FAST && info != NULL &&
        (info->traits & CG_TRAIT_STREAM_ORDERED)) {
        return; /* the algorithm orders itself after the application's work on the device */
    }
    if (route->path == MCA_COLL_GPU_PATH_UNDER || !(route->kinds & MCA_COLL_GPU_KIND_DEVICE) ||
        dev == NULL) {
        return;
    }
    if (route->path != MCA_COLL_GPU_PATH_STAGED) { /* staged: mca_coll_gpu_staging_begin */
        (void)cg_dev_app_wait(dev, NULL);
    }
}

_Static_assert(MCA_COLL_GPU_AGREED_HOST > MPI_ERR_LASTCODE && MCA_COLL_GPU_FAST_MISSED > MPI_ERR_LASTCODE,
               "routing results must differ from every MPI error class");

/* How the ranks agree on the memory kinds of a call that could take a fast path
 * (coll_gpu_buffer_check):
 *   local  no agreement: the application promises the same kind on every rank
 *   agree  one small allreduce through the layer underneath, every call
 *   auto   on a communicator inside one node, in band: every rank writes its kinds on the
 *          node's board (one store); a rank with host buffers only then goes to the layer
 *          underneath at once (returns MCA_COLL_GPU_AGREED_HOST), a rank with device buffers
 *          reads every rank's kinds for this call. The board is made at the
 *          MCA_COLL_GPU_BOARD_AFTER-th call that needs an agreement; from then on every
 *          call is announced, even one that needs none (datatype, op, count 0): a
 *          host-buffer call then only announces and goes underneath, with no plan
 *          (mca_coll_gpu_host_direct). (The calls before the board
 *          agree through the layer underneath, as communicators spanning nodes do on every
 *          such call: ranks of other nodes are not on the board). Making and freeing a
 *          board costs about what that many agreements cost, so a communicator used a few
 *          times never pays for one (rent, then buy).
 *          Once the communicator also has its context, a call whose plan is LL does not
 *          wait for the announcements at all (MCA_COLL_GPU_AGREED_IN_BAND): a rank with
 *          device buffers only runs it at once, watching the board, and the agreement
 *          rides on the call's lines, which only complete when every rank sent them. A
 *          rank with other kinds goes where its own kinds send it (underneath, or staged)
 *          without waiting; the ranks on the call see its announcement, cancel the call
 *          (nothing written) and take the staged path (cg_intra_ll). The other intra-node
 *          plans run at once too: the agreement rides on their first barrier, on the host
 *          (the handles' exchange of zero copy; any barrier of a host-synchronised node;
 *          on a device-synchronised node the first device barrier meets on the host
 *          first), which cannot complete without every rank and watches the board
 *          meanwhile (cg_intra_inband_begin). Every rank counts every announced call on
 *          the context (cg_comm_ll_tick): the LL flags and the host barriers stay in step
 *          whoever ran the call.
 * In agree and auto, the agreements through the layer underneath also carry whether the
 * rank's communicator info asserts host memory only (mpi_assert_memory_alloc_kinds, MPI
 * 4.1, e.g. "system"): once every rank did, the communicator never agrees again and each
 * rank decides alone (host buffers underneath, device buffers staged: the two meet in the
 * collective underneath), so host-buffer calls cost what Open MPI alone costs, across nodes
 * too.
 * Across nodes, once the communicator has its context: a call for which the staged path is
 * predicted faster than the agreement plus the best fast path (small messages: the
 * agreement alone costs what the staged path's collective costs) skips the agreement
 * (cg_plan_staged_first, decided alike on every rank): device buffers are staged and host
 * buffers go underneath, and both meet in the collective underneath.
 * all_kinds: this rank's kinds in, the OR of every rank's out (not set for AGREED_HOST). */
/* Do this call's kinds go on the board (in band)? The same answer on every rank. */
static int mca_coll_gpu_board_ready(const mca_coll_gpu_module_t *m)
{
    return mca_coll_gpu_component.buffer_check == MCA_COLL_GPU_CHECK_AUTO && m->board != NULL &&
           cg_board_single_node(m->board);
}

/* Is every rank of the communicator on this node (virtual nodes with coll_gpu_node_size)?
 * Only then can the board serve its agreements: spanning nodes, none is made. */
static int mca_coll_gpu_one_node(struct ompi_communicator_t *comm)
{
    const int size = ompi_comm_size(comm), node_size = mca_coll_gpu_component.node_size;

    if (node_size > 0) {
        return size <= node_size;
    }
    if (node_size < 0) {
        return node_size == -1 || size == 1;
    }
    return !ompi_group_have_remote_peers(comm->c_local_group);
}

/* On a node's board every call is announced, whatever path it then takes (the same calls
 * on every rank: the board exists from the same call on): the rank's kinds for the next seq,
 * and the call counted on the context for the LL flags. A host-buffer call needs nothing
 * else (mca_coll_gpu_host_direct). A rank that waited past coll_gpu_timeout for a peer
 * 64 calls behind (cg_board_announce) announced nothing: the call is an error, and as its
 * peers miss it on the board, the communicator's fast paths are retired (its calls are
 * counted on as before, so that the LL flags stay in step). */
static int mca_coll_gpu_route_announce(mca_coll_gpu_module_t *m, int mine)
{
    cg_status_t status;

    m->seq++;
    status = cg_board_announce(m->board, m->seq, mine, mca_coll_gpu_component.timeout);
    if (m->core != NULL) {
        cg_comm_ll_tick(m->core); /* every rank, every call on the board */
    }
    if (status != CG_OK) {
        m->core_failed = 1; /* retired at the next agreement */
        return mca_coll_gpu_status_to_mpi(status);
    }
    return OMPI_SUCCESS;
}

/* on_board: the call was announced (mca_coll_gpu_route_announce). */
static int mca_coll_gpu_route_agree(mca_coll_gpu_module_t *m, struct ompi_communicator_t *comm,
                                    int mine, int on_board, int in_band, int *all_kinds)
{
    const int   host_only = (mine & MCA_COLL_GPU_KIND_HOST) && !(mine & MCA_COLL_GPU_KIND_DEVICE);
    cg_status_t status;
    int         rc;

    *all_kinds = mine;
    if (mca_coll_gpu_component.buffer_check == MCA_COLL_GPU_CHECK_LOCAL) {
        return OMPI_SUCCESS;
    }
    if (on_board) {
        if (host_only) {
            return MCA_COLL_GPU_AGREED_HOST;
        }
        if (in_band) {
            return MCA_COLL_GPU_AGREED_IN_BAND;
        }
        status = cg_board_collect(m->board, m->seq, mca_coll_gpu_component.timeout, all_kinds);
        return mca_coll_gpu_status_to_mpi(status);
    }
    m->seq++; /* every rank counts the calls that need an agreement */
    rc = mca_coll_gpu_agree_kinds(m, comm, mine | (m->host_asserted ? 0 : MCA_COLL_GPU_KIND_UNASSERTED),
                                  all_kinds);
    if (OMPI_SUCCESS == rc && m->under.allreduce != NULL && !(*all_kinds & MCA_COLL_GPU_KIND_UNASSERTED)) {
        m->host_only = 1; /* every rank asserted host memory only: the last agreement */
    }
    *all_kinds &= ~MCA_COLL_GPU_KIND_UNASSERTED;
    if (OMPI_SUCCESS == rc && mca_coll_gpu_component.buffer_check == MCA_COLL_GPU_CHECK_AUTO &&
        m->board == NULL && !m->board_failed && m->seq >= MCA_COLL_GPU_BOARD_AFTER) {
        /* every rank is here: make the board for the next calls (all ranks decide alike:
         * seq counts the same calls everywhere) */
        cg_oob_t oob = {mca_coll_gpu_oob_allgather, m};
        if (!mca_coll_gpu_one_node(comm)) {
            m->board_failed = 1; /* no board: across nodes every such call agrees here */
        } else if (cg_board_create(&oob, ompi_comm_rank(comm), ompi_comm_size(comm),
                            mca_coll_gpu_component.node_size, &m->board) != CG_OK) {
            m->board        = NULL;
            m->board_failed = 1;
        }
    }
    return rc;
}

/* coll_gpu_calls_*: the path each call takes. */
static void mca_coll_gpu_route_count(const mca_coll_gpu_route_t *route)
{
    static const cg_counter_t counter[] = {
        [MCA_COLL_GPU_PATH_UNDER] = CG_CNT_CALLS_UNDER, [MCA_COLL_GPU_PATH_STAGED] = CG_CNT_CALLS_STAGED,
        [MCA_COLL_GPU_PATH_FAST] = CG_CNT_CALLS_FAST,   [MCA_COLL_GPU_PATH_LOCAL] = CG_CNT_CALLS_LOCAL,
    };
    cg_count_caller(counter[route->path], 1);
}

/* coll_gpu_debug_fail: arm the device's failure at the chosen fast-path call. */
static void mca_coll_gpu_route_debug_fail(const mca_coll_gpu_route_t *route)
{
    long n;

    if (route->path != MCA_COLL_GPU_PATH_FAST || mca_coll_gpu_component.debug_fail_rank < 0 ||
        mca_coll_gpu_dev() == NULL) {
        return;
    }
    n = __atomic_add_fetch(&mca_coll_gpu_component.fast_calls, 1, __ATOMIC_RELAXED);
    if (n == mca_coll_gpu_component.debug_fail_call &&
        ompi_comm_rank(MPI_COMM_WORLD) == mca_coll_gpu_component.debug_fail_rank) {
        __atomic_store_n(&mca_coll_gpu_dev()->fail_sticky, mca_coll_gpu_component.debug_fail_sticky,
                         __ATOMIC_RELAXED);
        __atomic_store_n(&mca_coll_gpu_dev()->fail_countdown, 1, __ATOMIC_RELAXED);
    }
}

/* Why the call goes where it goes, kept only when the call is logged (verbose). */
static void mca_coll_gpu_route_why(mca_coll_gpu_route_t *route, const char *why)
{
    if (cg_log_enabled(CG_LOG_CALL, CG_SUB_COLL)) {
        snprintf(route->plan.reason, sizeof(route->plan.reason), "%s", why);
    }
}

/* A communicator of one rank: MPI's result is a copy on this rank. Host buffers go to the
 * layer underneath (coll/self); device buffers of a dense layout get one device copy (the
 * entry point's LOCAL case), others are staged (self copies them on the host). */
static void mca_coll_gpu_route_self(const cg_call_t *call, int local_kinds, int layout,
                                    mca_coll_gpu_route_t *route)
{
    route->plan = (cg_plan_t){.alg = CG_ALG_STAGED};
    if (!(local_kinds & MCA_COLL_GPU_KIND_DEVICE)) {
        route->path = MCA_COLL_GPU_PATH_UNDER;
        mca_coll_gpu_route_why(route, "no device buffers");
    } else if ((layout & MCA_COLL_GPU_LAYOUT_GAPS) ||
               (local_kinds & MCA_COLL_GPU_KIND_BROKEN)) {
        route->path = MCA_COLL_GPU_PATH_STAGED;
        mca_coll_gpu_route_why(route, "one rank, datatype with gaps");
    } else {
        route->path = MCA_COLL_GPU_PATH_LOCAL;
        mca_coll_gpu_route_why(route, "one rank: local copy");
    }
    (void)call;
}

int mca_coll_gpu_route(mca_coll_gpu_module_t *m, struct ompi_communicator_t *comm,
                       const cg_call_t *call, int local_kinds, int layout,
                       mca_coll_gpu_route_t *route)
{
    cg_planner_config_t planner = mca_coll_gpu_component.planner;
    int                 all     = local_kinds, in_band = 0, on_board, rc;
    cg_shape_t          shape;
    cg_comm_t          *core, *shape_of = NULL; /* the context shape describes */

    route->kinds       = local_kinds;
    route->watch.board = NULL;
    if (call->comm_size == 1) {
        mca_coll_gpu_route_self(call, local_kinds, layout, route);
        mca_coll_gpu_route_app_wait(m, route, call);
        mca_coll_gpu_route_count(route);
        return OMPI_SUCCESS;
    }
    /* coll_gpu_<coll>_algorithm may change at run time (MPI_T) */
    for (int c = 0; c < CG_COLL_COUNT; c++) {
        planner.forced[c] = mca_coll_gpu_component.algorithm[c];
    }
    planner.explain = cg_log_enabled(CG_LOG_CALL, CG_SUB_COLL);
    if (layout & MCA_COLL_GPU_LAYOUT_NOFAST) {
        all |= MCA_COLL_GPU_KIND_NOFAST;
    }
    /* a failure is not always seen by every rank (another node's): agree on it too */
    if (m->core_failed || (m->core != NULL && cg_comm_failed(m->core))) {
        all |= MCA_COLL_GPU_KIND_RETIRED;
    }
    on_board = !m->host_only && mca_coll_gpu_board_ready(m);
    if (on_board && OMPI_SUCCESS != (rc = mca_coll_gpu_route_announce(m, all))) {
        return rc;
    }
    if (m->host_only || !cg_plan_prefilter(&planner, call, &route->plan)) {
        /* decided here, alike on every rank: the collective underneath, on host copies for
         * device buffers (those break the communicator's assertion, and still work) */
        route->plan = (cg_plan_t){.alg = CG_ALG_STAGED};
        route->path = (local_kinds & MCA_COLL_GPU_KIND_DEVICE) ? MCA_COLL_GPU_PATH_STAGED
                                                               : MCA_COLL_GPU_PATH_UNDER;
        if (m->host_only) {
            mca_coll_gpu_route_why(route, "the communicator asserts host memory "
                                          "(mpi_assert_memory_alloc_kinds)");
        } else if (route->path == MCA_COLL_GPU_PATH_UNDER) {
            mca_coll_gpu_route_why(route, "no device buffers");
        }
        mca_coll_gpu_route_app_wait(m, route, call);
        mca_coll_gpu_route_count(route);
        return OMPI_SUCCESS;
    }
    if (m->core != NULL) { /* across nodes, small: staged with no agreement (see above) */
        cg_comm_shape(m->core, &shape); /* also the plan's below (the agreement between
                                           changes nothing of the context) */
        shape_of = m->core;
        if (cg_plan_staged_first(&planner, call, &shape)) {
            route->plan = (cg_plan_t){.alg = CG_ALG_STAGED};
            route->path = (local_kinds & MCA_COLL_GPU_KIND_DEVICE) ? MCA_COLL_GPU_PATH_STAGED
                                                                   : MCA_COLL_GPU_PATH_UNDER;
            mca_coll_gpu_route_why(route, "several nodes: the staged path is predicted faster "
                                          "than an agreement and a fast path");
            mca_coll_gpu_route_app_wait(m, route, call);
            mca_coll_gpu_route_count(route);
            return OMPI_SUCCESS;
        }
    }
    /* device buffers only, one node, a board and a context: a one-node plan runs at once
     * and the agreement rides on its LL lines or its first barrier (see above) */
    if (all == MCA_COLL_GPU_KIND_DEVICE && m->core != NULL && on_board) {
        if (shape_of != m->core) {
            cg_comm_shape(m->core, &shape);
            shape_of = m->core;
        }
        cg_plan_select_memo(&m->plans[call->coll], &planner, call, &shape, &route->plan);
        in_band = cg_comm_agrees_in_band(m->core, &route->plan, call->coll);
    }
    rc = mca_coll_gpu_route_agree(m, comm, all, on_board, in_band, &all);
    if (rc == MCA_COLL_GPU_AGREED_HOST) { /* host buffers, announced on the board: done */
        route->path = MCA_COLL_GPU_PATH_UNDER;
        mca_coll_gpu_route_count(route);
        return OMPI_SUCCESS;
    }
    if (rc == MCA_COLL_GPU_AGREED_IN_BAND) { /* counted by mca_coll_gpu_fast_run */
        route->path  = MCA_COLL_GPU_PATH_FAST;
        route->watch = (cg_ll_watch_t){.board = m->board, .seq = m->seq,
                                       .fast_kinds = MCA_COLL_GPU_KIND_DEVICE};
        mca_coll_gpu_route_app_wait(m, route, call);
        mca_coll_gpu_route_debug_fail(route);
        return OMPI_SUCCESS;
    }
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    route->path     = MCA_COLL_GPU_PATH_STAGED;
    route->plan.alg = CG_ALG_STAGED;
    if (!(all & MCA_COLL_GPU_KIND_DEVICE)) {
        route->path = MCA_COLL_GPU_PATH_UNDER;
        mca_coll_gpu_route_why(route, "no device buffers");
    } else if (all & (MCA_COLL_GPU_KIND_HOST | MCA_COLL_GPU_KIND_NOFAST |
                      MCA_COLL_GPU_KIND_RETIRED | MCA_COLL_GPU_KIND_BROKEN)) {
        if (!(local_kinds & MCA_COLL_GPU_KIND_DEVICE)) {
            route->path = MCA_COLL_GPU_PATH_UNDER;
        }
        mca_coll_gpu_route_why(route,
                 (all & MCA_COLL_GPU_KIND_HOST)     ? "ranks mix host and device buffers"
                 : (all & (MCA_COLL_GPU_KIND_NOFAST | MCA_COLL_GPU_KIND_BROKEN))
                     ? "a rank's buffers cannot take a fast path (datatype layout, another "
                       "GPU or context, device layer unavailable)"
                     : "a rank's fast path failed earlier");
    } else if ((core = mca_coll_gpu_context(m, comm)) == NULL || cg_comm_failed(core)) {
        mca_coll_gpu_route_why(route, "no fast-path context");
    } else {
        if (core != shape_of) { /* the context was made by this call */
            cg_comm_shape(core, &shape);
        }
        cg_plan_select_memo(&m->plans[call->coll], &planner, call, &shape, &route->plan);
        if (route->plan.alg != CG_ALG_STAGED) {
            route->path = MCA_COLL_GPU_PATH_FAST;
        }
    }
    mca_coll_gpu_route_app_wait(m, route, call);
    mca_coll_gpu_route_debug_fail(route);
    mca_coll_gpu_route_count(route);
    return OMPI_SUCCESS;
}

int mca_coll_gpu_host_direct(mca_coll_gpu_module_t *m, int kinds, cg_coll_t coll)
{
    int rc;

    if (kinds != MCA_COLL_GPU_KIND_HOST || cg_log_enabled(CG_LOG_CALL, CG_SUB_COLL)) {
        return OMPI_SUCCESS;
    }
    /* what mca_coll_gpu_route decides for host buffers, without a plan: the layer
     * underneath, after the call's announcement on a node's board */
    if (!m->host_only && mca_coll_gpu_component.buffer_check != MCA_COLL_GPU_CHECK_LOCAL &&
        ompi_comm_size(m->comm) > 1) {
        if (!mca_coll_gpu_board_ready(m)) {
            return OMPI_SUCCESS; /* the agreement goes through the layer underneath */
        }
        if (OMPI_SUCCESS != (rc = mca_coll_gpu_route_announce(m, kinds))) {
            return rc;
        }
    }
    mca_coll_gpu_component.last_alg[coll] = "underlying";
    cg_count_caller(CG_CNT_CALLS_UNDER, 1);
    return MCA_COLL_GPU_ROUTED_UNDER;
}

const char *mca_coll_gpu_route_alg(const mca_coll_gpu_route_t *route)
{
    switch (route->path) {
    case MCA_COLL_GPU_PATH_UNDER: return "underlying";
    case MCA_COLL_GPU_PATH_LOCAL: return "local";
    default:                      return cg_alg_name(route->plan.alg);
    }
}

int mca_coll_gpu_local_copy(mca_coll_gpu_module_t *m, const mca_coll_gpu_route_t *route,
                            void *dst, const void *src, size_t bytes)
{
    cg_dev_t   *dev = mca_coll_gpu_dev();
    cg_status_t status;
    int         rc;

    if (bytes == 0 || dst == src || src == MPI_IN_PLACE) {
        return OMPI_SUCCESS;
    }
    /* buffers of another GPU or context: the layer's wait was its own device's */
    rc = mca_coll_gpu_app_wait_foreign(MCA_COLL_GPU_FOREIGN_BASE(&route->sattr));
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_gpu_app_wait_foreign(MCA_COLL_GPU_FOREIGN_BASE(&route->rattr));
    }
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (dev == NULL) { /* a buffer the driver could not classify before the layer opened */
        cg_error(CG_SUB_COLL, "a single-rank collective on memory of unknown kind (the device "
                 "layer is not open): not copied");
        return OMPI_ERR_NOT_AVAILABLE;
    }
    if (m->stream == NULL && dev->ops->stream_create(dev, &m->stream) != CG_OK) {
        m->stream = NULL;
        return OMPI_ERROR;
    }
    status = cg_dev_copy_sync(dev, dst, src, bytes, m->stream);
    return mca_coll_gpu_status_to_mpi(status);
}
