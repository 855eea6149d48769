/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * What every entry point needs: the device layer, the memory kind of a buffer, the
 * agreement of all ranks on the memory kinds of a call, the mapping of MPI types and ops to
 * the device reductions, and the one log line per call.
 */
#include "ompi_coll_gpu/coll_gpu.h"
#include "ucx_glue/cg_ucx.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t mca_coll_gpu_dev_lock = PTHREAD_MUTEX_INITIALIZER;

/* The device layer, opened at the first call that needs it (on the device of that call's
 * buffer for CUDA). NULL when it cannot be opened; that is reported once. */
/* coll_gpu_debug_host_slow for this rank: each op's seconds; MS 0 a microsecond, so that
 * every op still runs only after the call that queued it, as on a GPU (0: not slowed). */
static double mca_coll_gpu_slow_delay_s(void)
{
    const int rank = mca_coll_gpu_component.debug_host_slow_rank;

    if (rank != MCA_COLL_GPU_SLOW_ALL && rank != ompi_comm_rank(MPI_COMM_WORLD)) {
        return 0;
    }
    return CG_MAX(mca_coll_gpu_component.debug_host_slow_ms / 1e3, 1e-6);
}

static cg_dev_t *mca_coll_gpu_device_open(int ordinal)
{
    cg_dev_t   *dev = NULL;
    cg_status_t status;

    pthread_mutex_lock(&mca_coll_gpu_dev_lock);
    if (mca_coll_gpu_dev() == NULL && !mca_coll_gpu_component.dev_failed &&
        !mca_coll_gpu_component.no_device) {
        if (mca_coll_gpu_component.active_kind == CG_DEV_KIND_HOST) {
            cg_dev_host_config_t config = {
                .host_buffer_ranks     = mca_coll_gpu_component.host_buffer_ranks,
                .num_host_buffer_ranks = mca_coll_gpu_component.num_host_buffer_ranks,
                .world_rank            = ompi_comm_rank(MPI_COMM_WORLD),
                .lenient               = mca_coll_gpu_component.debug_host_lenient,
                .time_sliced           = mca_coll_gpu_component.debug_host_time_sliced,
                .pinned_max            = mca_coll_gpu_component.debug_host_pinned_max,
                .blocking_waits        = mca_coll_gpu_component.debug_host_blocking_waits,
                .query_miss            = mca_coll_gpu_component.debug_host_query_miss,
                .server_deaf           = mca_coll_gpu_component.debug_host_server_deaf,
                .no_p2p                = mca_coll_gpu_component.debug_host_no_p2p,
                .op_delay_s            = mca_coll_gpu_slow_delay_s(),
            };
            status = cg_dev_host_open(&config, &dev);
        } else {
            status = cg_dev_cuda_open(ordinal, &dev);
            /* no kernel loaded lazily (CUDA's default): a lazy load may wait for the
             * device's other work, and some of it may wait for peers (a nonblocking call's
             * flags, another thread's call, an LL server until it leaves) that wait for this
             * rank; loaded here once, as NCCL does at its setup */
            if (status == CG_OK && cg_dev_cuda_preload(dev) != CG_OK) {
                cg_warn(CG_SUB_DEV, "cannot load the kernels at open: they load at their first "
                        "launch (which may wait for device work that waits for peers)");
            }
        }
        /* calls may run at once on several threads: no free while device work of
         * another thread waits for peers (cg_dev_frees_enable) */
        if (status == CG_OK && mca_coll_gpu_component.thread_multi &&
            cg_dev_frees_enable(dev) != CG_OK) {
            cg_warn(CG_SUB_DEV, "cannot hold frees back while device work waits for peers: "
                    "under MPI_THREAD_MULTIPLE a free may then wait for another thread's call");
        }
        if (status == CG_OK) {
            dev->app_ready  = mca_coll_gpu_component.app_wait == MCA_COLL_GPU_APP_WAIT_NONE;
            /* another thread's device work queued behind the LL kernel would wait for the
             * other ranks (and they for it): one thread only */
            dev->app_launch = (mca_coll_gpu_component.app_wait == MCA_COLL_GPU_APP_WAIT_LAUNCH ||
                               mca_coll_gpu_component.app_wait == MCA_COLL_GPU_APP_WAIT_AUTO) &&
                              mca_coll_gpu_component.thread_single;
            /* a kernel that stays would hold a time-sliced GPU from the other ranks on it:
             * a rank that shares its GPU without MPS seen launches its LL calls instead
             * (cg_comm_ll_launch_only; mca_coll_gpu_context says so) */
            dev->ll_persist = mca_coll_gpu_component.ll_persist > 0;
            if (dev->ll_persist && !dev->app_ready) {
                cg_detail(CG_SUB_DEV, "coll_gpu_ll_persist: an LL call goes to the LL server when "
                          "the application's work before it is found done (an event queried, "
                          "coll_gpu_app_queries); otherwise it is launched after that work");
            }
            dev->ll_persist_idle_s = CG_MAX(mca_coll_gpu_component.ll_persist_idle_us, 0) / 1e6;
            dev->ll_persist_life_s = CG_DEV_LL_PERSIST_LIFE_S;
            __atomic_store_n(&mca_coll_gpu_component.dev, dev, __ATOMIC_RELEASE);
        } else {
            mca_coll_gpu_component.dev_failed = 1;
            mca_coll_gpu_show_help("device open failed", cg_status_string(status));
        }
    }
    dev = mca_coll_gpu_dev();
    pthread_mutex_unlock(&mca_coll_gpu_dev_lock);
    return dev;
}

cg_dev_t *mca_coll_gpu_device(void)
{
    cg_dev_t *dev = mca_coll_gpu_dev();

    return dev != NULL ? dev : mca_coll_gpu_device_open(-1);
}

/* The host-memory cache (base/cg_host_cache.c) learns the buffers found to be host memory;
 * UCX's memory hooks make it forget those a release overlaps before it happens. Started at
 * the first memory query (a job without collectives installs no hooks), stopped when the
 * component closes. */
static pthread_mutex_t mca_coll_gpu_host_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static void mca_coll_gpu_host_cache_released(void *arg, const void *addr, size_t bytes)
{
    (void)arg;
    cg_count(CG_CNT_MEM_RELEASES, 1); /* any thread */
    cg_host_cache_release(addr, bytes);
}

static void mca_coll_gpu_host_cache_start(void)
{
    pthread_mutex_lock(&mca_coll_gpu_host_cache_lock);
    if (mca_coll_gpu_component.host_cache_state == 0) {
        int state = -1;
        if (mca_coll_gpu_component.host_cache &&
            cg_ucx_watch_releases(mca_coll_gpu_host_cache_released, NULL) == CG_OK) {
            cg_host_cache_enable(1);
            state = 1;
        }
        __atomic_store_n(&mca_coll_gpu_component.host_cache_state, state, __ATOMIC_RELEASE);
        cg_detail(CG_SUB_INIT, "host-memory cache %s",
                  mca_coll_gpu_component.host_cache_state > 0 ? "in use (UCX memory events)"
                  : mca_coll_gpu_component.host_cache       ? "off: UCX reports no memory events"
                                                           : "off (coll_gpu_host_cache=0)");
    }
    pthread_mutex_unlock(&mca_coll_gpu_host_cache_lock);
}

void mca_coll_gpu_host_cache_stop(void)
{
    pthread_mutex_lock(&mca_coll_gpu_host_cache_lock);
    if (mca_coll_gpu_component.host_cache_state > 0) {
        cg_host_cache_enable(0);
        cg_ucx_unwatch_releases();
    }
    __atomic_store_n(&mca_coll_gpu_component.host_cache_state, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mca_coll_gpu_host_cache_lock);
}

/* MCA_COLL_GPU_KIND_* of one buffer (the device layer's answer in *out); 0 when it holds no
 * data on this rank. Device memory is never reported as host memory: memory the layer's
 * kernels cannot address (another GPU's, another context's, a pointer whose query failed)
 * is DEVICE | NOFAST (the staged path copies it), and device memory when the layer cannot
 * be opened is DEVICE | BROKEN (the call takes part in the collective with zeros and
 * returns an error). */
int mca_coll_gpu_buffer_query(const void *buf, size_t bytes, cg_mem_attr_t *out)
{
    cg_dev_t     *dev;
    cg_mem_attr_t attr;
    cg_status_t   status;
    uint64_t      ticket;
    int           kind;

    memset(out, 0, sizeof(*out));
    if (bytes == 0 || buf == MPI_IN_PLACE) {
        return 0;
    }
    if (mca_coll_gpu_component.no_device) { /* no CUDA here: no device memory either */
        out->kind   = CG_MEM_HOST;
        out->device = -1;
        return MCA_COLL_GPU_KIND_HOST;
    }
    if (cg_host_cache_lookup(buf, bytes)) {
        out->kind   = CG_MEM_HOST;
        out->device = -1;
        cg_count_caller(CG_CNT_MEM_CACHE_HITS, 1);
        return MCA_COLL_GPU_KIND_HOST;
    }
    if (__atomic_load_n(&mca_coll_gpu_component.host_cache_state, __ATOMIC_ACQUIRE) == 0) {
        mca_coll_gpu_host_cache_start();
    }
    ticket = cg_host_cache_ticket(); /* before the query: a release during it wins */
    dev = mca_coll_gpu_dev();
    if (dev == NULL && mca_coll_gpu_component.active_kind == CG_DEV_KIND_HOST) {
        dev = mca_coll_gpu_device_open(-1); /* cheap, and it knows the memory kinds */
        if (dev == NULL) {
            return MCA_COLL_GPU_KIND_DEVICE | MCA_COLL_GPU_KIND_BROKEN;
        }
    }
    if (dev != NULL) {
        status = dev->ops->mem_query(dev, buf, &attr);
    } else {
        /* CUDA, layer not open yet: classify without starting the driver, then open the
         * layer on the buffer's device and ask it (contexts) */
        status = cg_dev_cuda_mem_query(buf, &attr);
        if (status == CG_OK && attr.kind == CG_MEM_DEVICE) {
            dev = mca_coll_gpu_device_open(attr.device);
            if (dev == NULL) {
                return MCA_COLL_GPU_KIND_DEVICE | MCA_COLL_GPU_KIND_BROKEN;
            }
            status = dev->ops->mem_query(dev, buf, &attr);
        }
    }
    if (status != CG_OK) {
        return MCA_COLL_GPU_KIND_DEVICE | MCA_COLL_GPU_KIND_NOFAST;
    }
    if (attr.kind == CG_MEM_HOST) {
        cg_host_cache_insert(buf, bytes, ticket);
    }
    if (attr.kind != CG_MEM_DEVICE) {
        kind = MCA_COLL_GPU_KIND_HOST; /* host and managed memory: the host path reads it */
    } else {
        kind = attr.foreign ? MCA_COLL_GPU_KIND_DEVICE | MCA_COLL_GPU_KIND_NOFAST
                            : MCA_COLL_GPU_KIND_DEVICE;
    }
    *out = attr;
    return kind;
}

int mca_coll_gpu_layout_query(const void *data, size_t span, int dense, const cg_mem_attr_t *known,
                              int known_kind, cg_mem_attr_t *out)
{
    const size_t  asked = dense ? span : CG_MIN(span, (size_t)1); /* see coll_gpu.h */
    cg_mem_attr_t last;
    int           kind;

    kind = known != NULL ? mca_coll_gpu_buffer_query_near(data, asked, known, known_kind, out)
                         : mca_coll_gpu_buffer_query(data, asked, out);
    if (dense || span <= 1 || kind != MCA_COLL_GPU_KIND_HOST ||
        !(mca_coll_gpu_buffer_query((const char *)data + span - 1, 1, &last) &
          MCA_COLL_GPU_KIND_DEVICE)) {
        return kind;
    }
    return MCA_COLL_GPU_KIND_DEVICE | MCA_COLL_GPU_KIND_NOFAST; /* staged, piece by piece */
}

int mca_coll_gpu_buffer_query_near(const void *buf, size_t bytes, const cg_mem_attr_t *known,
                                   int known_kind, cg_mem_attr_t *out)
{
    if (bytes > 0 && buf != MPI_IN_PLACE && mca_coll_gpu_attr_holds(known, buf, bytes)) {
        *out = *known;
        return known_kind;
    }
    return mca_coll_gpu_buffer_query(buf, bytes, out);
}

int mca_coll_gpu_kinds_host_only(const char *kinds)
{
    static const char *const host_kinds[] = {"system", "mpi", "cuda:host", "cuda:managed"};
    const char              *at    = kinds;
    int                      listed = 0;

    while (at != NULL && *at != '\0') {
        size_t len = strcspn(at, ","), known = 0;
        while (len > 0 && (*at == ' ' || *at == '\t')) {
            at++, len--;
        }
        while (len > 0 && (at[len - 1] == ' ' || at[len - 1] == '\t')) {
            len--;
        }
        for (size_t i = 0; len > 0 && i < CG_ARRAY_SIZE(host_kinds); i++) {
            known |= strlen(host_kinds[i]) == len && strncmp(at, host_kinds[i], len) == 0;
        }
        if (len > 0 && !known) { /* cuda, cuda:device, or a kind this component does not know */
            return 0;
        }
        listed += len > 0;
        at += strcspn(at, ",");
        at += *at == ',';
    }
    return listed > 0;
}

int mca_coll_gpu_agree_kinds(mca_coll_gpu_module_t *m, struct ompi_communicator_t *comm,
                             int local_kinds, int *all_kinds)
{
    int in = local_kinds;

    if (m->under.allreduce == NULL) { /* nothing to agree through: every rank stages */
        *all_kinds = local_kinds | MCA_COLL_GPU_KIND_RETIRED;
        return OMPI_SUCCESS;
    }
    *all_kinds = 0;
    cg_count(CG_CNT_AGREEMENTS, 1);
    return MCA_COLL_GPU_UNDER(m, allreduce, &in, all_kinds, 1, MPI_INT, MPI_BOR, comm);
}

/* Predefined MPI types that the device reductions handle. Pointers to Open MPI's
 * predefined objects are address constants, so this table is static. */
static const struct {
    MPI_Datatype mpi;
    cg_dtype_t   dt;
} mca_coll_gpu_dtype_table[] = {
    {MPI_INT8_T, CG_DT_INT8},      {MPI_SIGNED_CHAR, CG_DT_INT8},
    {MPI_UINT8_T, CG_DT_UINT8},    {MPI_UNSIGNED_CHAR, CG_DT_UINT8},
    {MPI_BYTE, CG_DT_UINT8},       {MPI_INT16_T, CG_DT_INT16},
    {MPI_SHORT, CG_DT_INT16},      {MPI_UINT16_T, CG_DT_UINT16},
    {MPI_UNSIGNED_SHORT, CG_DT_UINT16},
    {MPI_INT32_T, CG_DT_INT32},    {MPI_INT, CG_DT_INT32},
    {MPI_UINT32_T, CG_DT_UINT32},  {MPI_UNSIGNED, CG_DT_UINT32},
    {MPI_INT64_T, CG_DT_INT64},    {MPI_LONG, CG_DT_INT64},
    {MPI_LONG_LONG, CG_DT_INT64},  {MPI_AINT, CG_DT_INT64},
    {MPI_OFFSET, CG_DT_INT64},     {MPI_COUNT, CG_DT_INT64},
    {MPI_UINT64_T, CG_DT_UINT64},  {MPI_UNSIGNED_LONG, CG_DT_UINT64},
    {MPI_UNSIGNED_LONG_LONG, CG_DT_UINT64},
    {MPI_FLOAT, CG_DT_FLOAT},      {MPI_DOUBLE, CG_DT_DOUBLE},
    {MPI_C_FLOAT_COMPLEX, CG_DT_CFLOAT}, {MPI_C_DOUBLE_COMPLEX, CG_DT_CDOUBLE},
    {MPI_C_BOOL, CG_DT_BOOL},
    {MPI_INTEGER, CG_DT_INT32},    {MPI_REAL, CG_DT_FLOAT},
    {MPI_DOUBLE_PRECISION, CG_DT_DOUBLE}, {MPI_COMPLEX, CG_DT_CFLOAT},
    {MPI_DOUBLE_COMPLEX, CG_DT_CDOUBLE},
    {MPI_FLOAT_INT, CG_DT_FLOAT_INT}, {MPI_DOUBLE_INT, CG_DT_DOUBLE_INT},
    {MPI_LONG_INT, CG_DT_LONG_INT},   {MPI_2INT, CG_DT_2INT},
    {MPI_SHORT_INT, CG_DT_SHORT_INT}, {MPI_2INTEGER, CG_DT_2INT},
};

/* The table row of the last predefined type (or op) mapped, for the next call's one
 * compare (one word: threads may race on it, any row they store is a valid answer). */
static int mca_coll_gpu_last_dtype_row = -1;
static int mca_coll_gpu_last_op_row    = -1;

cg_dtype_t mca_coll_gpu_dtype_map(struct ompi_datatype_t *dtype)
{
    int last = __atomic_load_n(&mca_coll_gpu_last_dtype_row, __ATOMIC_RELAXED);

    if (last >= 0 && mca_coll_gpu_dtype_table[last].mpi == dtype) {
        return mca_coll_gpu_dtype_table[last].dt;
    }
    for (size_t i = 0; i < CG_ARRAY_SIZE(mca_coll_gpu_dtype_table); i++) {
        if (mca_coll_gpu_dtype_table[i].mpi == dtype) {
            size_t size = 0;
            /* Fortran INTEGER/REAL may have other sizes on exotic builds: check (and never
             * remember such a row). */
            ompi_datatype_type_size(dtype, &size);
            if (cg_dtype_size(mca_coll_gpu_dtype_table[i].dt) < size) {
                return CG_DT_NONE;
            }
            __atomic_store_n(&mca_coll_gpu_last_dtype_row, (int)i, __ATOMIC_RELAXED);
            return mca_coll_gpu_dtype_table[i].dt;
        }
    }
    return CG_DT_NONE;
}

cg_op_t mca_coll_gpu_op_map(struct ompi_op_t *op)
{
    static const struct {
        MPI_Op  mpi;
        cg_op_t op;
    } table[] = {
        {MPI_SUM, CG_OP_SUM},   {MPI_PROD, CG_OP_PROD}, {MPI_MIN, CG_OP_MIN},
        {MPI_MAX, CG_OP_MAX},   {MPI_LAND, CG_OP_LAND}, {MPI_LOR, CG_OP_LOR},
        {MPI_LXOR, CG_OP_LXOR}, {MPI_BAND, CG_OP_BAND}, {MPI_BOR, CG_OP_BOR},
        {MPI_BXOR, CG_OP_BXOR}, {MPI_MINLOC, CG_OP_MINLOC}, {MPI_MAXLOC, CG_OP_MAXLOC},
    };
    int last = __atomic_load_n(&mca_coll_gpu_last_op_row, __ATOMIC_RELAXED);

    if (last >= 0 && table[last].mpi == op) {
        return table[last].op;
    }
    for (size_t i = 0; i < CG_ARRAY_SIZE(table); i++) {
        if (table[i].mpi == op) {
            __atomic_store_n(&mca_coll_gpu_last_op_row, (int)i, __ATOMIC_RELAXED);
            return table[i].op;
        }
    }
    return CG_OP_NONE;
}

/* count elements of dtype occupy [buf, buf + count * size) with no gaps. Open MPI's answer
 * takes an int32_t count and differs only between 1 and any other count: a count above
 * INT32_MAX (an allgather's total) asks as 2, never as its low 32 bits (2^32 + 1 would ask
 * as 1, where a type with gaps counts as dense). */
int mca_coll_gpu_dtype_is_dense(struct ompi_datatype_t *dtype, size_t count)
{
    ptrdiff_t true_lb, true_extent;

    ompi_datatype_get_true_extent(dtype, &true_lb, &true_extent);
    return true_lb == 0 &&
           ompi_datatype_is_contiguous_memory_layout(dtype, count > INT32_MAX ? 2 : (int32_t)count);
}

/* Bytes of data in count elements of dtype: what a one-rank call copies when the layout is
 * dense (call->bytes counts a reducible type's extent, and a single MPI_DOUBLE_INT is dense
 * with 4 bytes of trailing padding that the copy must not write). */
size_t mca_coll_gpu_data_bytes(struct ompi_datatype_t *dtype, size_t count)
{
    size_t size = 0;

    ompi_datatype_type_size(dtype, &size);
    return count * size;
}

/* Name of an op for the log (ompi/op/op.h is not usable outside Open MPI's tree). */
static const char *mca_coll_gpu_op_name(struct ompi_op_t *op)
{
    cg_op_t mapped;

    if (op == NULL) {
        return "";
    }
    mapped = mca_coll_gpu_op_map(op);
    return mapped == CG_OP_NONE ? "user" : cg_op_name(mapped);
}

void mca_coll_gpu_call_init(cg_call_t *call, cg_coll_t coll, const void *sbuf, void *rbuf,
                            size_t count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                            struct ompi_communicator_t *comm)
{
    const int reduces = coll == CG_COLL_ALLREDUCE || coll == CG_COLL_REDUCE_SCATTER ||
                        coll == CG_COLL_REDUCE_SCATTER_BLOCK;
    const cg_dtype_t mapped = reduces ? mca_coll_gpu_dtype_map(dtype) : CG_DT_NONE;
    size_t           dsize  = 0;

    /* A reducible type's elements occupy their extent on the device (MPI_DOUBLE_INT: 16
     * bytes of which 12 are data): every copy of the whole buffer must move the extent. */
    if (mapped != CG_DT_NONE) {
        dsize = cg_dtype_size(mapped);
    } else {
        ompi_datatype_type_size(dtype, &dsize);
    }
    *call = (cg_call_t){
        .coll      = coll,
        .sbuf      = sbuf == MPI_IN_PLACE ? NULL : sbuf,
        .rbuf      = rbuf,
        .count     = count,
        .bytes     = count * dsize,
        .dtype     = mapped,
        .op        = reduces ? mca_coll_gpu_op_map(op) : CG_OP_NONE,
        .comm_size = ompi_comm_size(comm),
    };
}

void mca_coll_gpu_log_call(const cg_call_t *call, struct ompi_communicator_t *comm,
                           struct ompi_datatype_t *dtype, struct ompi_op_t *op, int kinds,
                           const mca_coll_gpu_route_t *route)
{
    static const char *const kind_names[4] = {"none", "host", "device", "mixed"};
    const char              *reason = route->plan.reason;

    /* coll_gpu_<coll>_last_algorithm (coll_gpu_pvars.c): a static name */
    mca_coll_gpu_component.last_alg[call->coll] = mca_coll_gpu_route_alg(route);
    if (!cg_log_enabled(CG_LOG_CALL, CG_SUB_COLL)) {
        return;
    }
    cg_log_emit(CG_LOG_CALL, CG_SUB_COLL, __FILE__, __LINE__,
                "%s count=%zu dtype=%s%s%s mem=%s alg=%s comm=%u np=%d%s%s", cg_coll_name(call->coll),
                call->count, dtype ? dtype->name : "-", op ? " op=" : "", mca_coll_gpu_op_name(op),
                kind_names[kinds & 3], mca_coll_gpu_route_alg(route), mca_coll_gpu_comm_id(comm),
                ompi_comm_size(comm), reason[0] ? " why=" : "", reason);
}
