/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * coll/gpu base services: the one status enum and the one logger of the project.
 *
 * Every layer (kernels/, topo/, ucx_glue/, core/, ompi_coll_gpu/) reports failures as a
 * cg_status_t and logs through cg_log(). An error is logged once, where it is detected;
 * callers propagate the status without logging it again.
 */
#ifndef CG_BASE_H
#define CG_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CG_OK                = 0,
    CG_ERR_UNSUPPORTED   = -1,  /* this path cannot take the call: fall back, not an error */
    CG_ERR_NO_MEMORY     = -2,
    CG_ERR_INVALID_PARAM = -3,
    CG_ERR_NO_DEVICE     = -4,  /* no GPU, no driver, or built without the device layer */
    CG_ERR_DEVICE        = -5,  /* the device runtime or driver returned an error */
    CG_ERR_IO            = -6,  /* system call or file failure */
    CG_ERR_NOT_FOUND     = -7,
    CG_ERR_TIMEOUT       = -8,
    CG_ERR_PEER          = -9,  /* another rank failed this collective (it reported an
                                   error or aborted the call); it may well be alive */
    CG_ERR_MISMATCH      = -10, /* ranks disagree on something that must be identical */
    CG_ERR_TRANSPORT     = -11, /* network transport (UCX) failure */
    CG_ERR_PARSE         = -12, /* malformed input file */
    CG_ERR_INTERNAL      = -13,
    CG_ERR_ALREADY_MAPPED = -14, /* IPC: a peer's allocation over that range is still mapped
                                   here (cudaErrorAlreadyMapped) */
    CG_ERR_PEER_DEAD     = -15, /* a peer process is gone (checked: its pid no longer exists) */
    CG_ERR_PEER_NOT_FAST = -16  /* a call run before the agreement: a local rank is not on it
                                   (the call takes the staged path; not an error) */
} cg_status_t;

const char *cg_status_string(cg_status_t status);

/* Verbosity levels (coll_gpu_verbose). */
enum {
    CG_LOG_ERROR  = 0, /* always printed */
    CG_LOG_WARN   = 1, /* fallbacks, disqualification reasons, bad input files */
    CG_LOG_CALL   = 2, /* one line per intercepted collective */
    CG_LOG_DETAIL = 3, /* setup of groups, plans and the reasons behind them */
    CG_LOG_DEBUG  = 5,
    CG_LOG_TRACE  = 9
};

/* Subsystems (coll_gpu_verbose_subsys), like NCCL_DEBUG_SUBSYS. */
enum {
    CG_SUB_INIT = 1u << 0,
    CG_SUB_COLL = 1u << 1,
    CG_SUB_DEV  = 1u << 2,
    CG_SUB_IPC  = 1u << 3,
    CG_SUB_TOPO = 1u << 4,
    CG_SUB_PLAN = 1u << 5,
    CG_SUB_UCX  = 1u << 6,
    CG_SUB_ALL  = 0x7fu
};

extern int      cg_log_level;
extern unsigned cg_log_subsys;

/* Set the level, and the subsystems from a list such as "all", "coll,plan" or "^ucx".
 * An unknown subsystem name gives CG_ERR_INVALID_PARAM and leaves the mask unchanged. */
cg_status_t cg_log_configure(int level, const char *subsys_list);
/* Text shown in brackets after "coll:gpu" on every line, e.g. the MPI rank. */
void cg_log_set_tag(const char *tag);
/* Log into a file of this process instead of stderr (like NCCL_DEBUG_FILE): pattern with
 * %h host name, %p process id, %r MPI_COMM_WORLD rank. "" or NULL: stderr. */
cg_status_t cg_log_set_file(const char *pattern);
void        cg_log_close_file(void);
unsigned cg_log_subsys_parse(const char *list, int *ok);

void cg_log_emit(int level, unsigned subsys, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define cg_log_enabled(_level, _subsys) \
    ((_level) <= cg_log_level && (((_subsys) & cg_log_subsys) || (_level) <= CG_LOG_ERROR))

#define cg_log(_level, _subsys, ...)                                          \
    do {                                                                      \
        if (cg_log_enabled(_level, _subsys)) {                                \
            cg_log_emit((_level), (_subsys), __FILE__, __LINE__, __VA_ARGS__); \
        }                                                                     \
    } while (0)

#define cg_error(_subsys, ...)  cg_log(CG_LOG_ERROR, _subsys, __VA_ARGS__)
#define cg_warn(_subsys, ...)   cg_log(CG_LOG_WARN, _subsys, __VA_ARGS__)

/* 1 for the first caller with this flag in the process, from any thread (a warning said
 * once); the flag stays set. */
static inline int cg_once(int *flag)
{
    return !__atomic_exchange_n(flag, 1, __ATOMIC_RELAXED);
}
#define cg_detail(_subsys, ...) cg_log(CG_LOG_DETAIL, _subsys, __VA_ARGS__)
#define cg_debug(_subsys, ...)  cg_log(CG_LOG_DEBUG, _subsys, __VA_ARGS__)
#define cg_trace(_subsys, ...)  cg_log(CG_LOG_TRACE, _subsys, __VA_ARGS__)

/* Small helpers shared by every layer. */
#define CG_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CG_MAX(a, b) ((a) > (b) ? (a) : (b))
#define CG_ALIGN_UP(x, a) ((((x) + (a) - 1) / (a)) * (a))
#define CG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- counters: what the component's calls cost ----------------------------------------
 * Process-wide, exposed as MPI_T performance variables coll_gpu_<name> (read them in a
 * session before and after a call to see what it cost) and printed at coll_gpu_verbose 3
 * when the component closes. Counts, not times: the test suite asserts them. */
typedef enum {
    CG_CNT_CALLS_FAST = 0, /* calls that ran a device algorithm of the planner */
    CG_CNT_CALLS_STAGED,   /* calls staged through host memory */
    CG_CNT_CALLS_UNDER,    /* calls passed to the layer underneath untouched (host buffers) */
    CG_CNT_CALLS_LOCAL,    /* single-rank calls served by a device copy */
    CG_CNT_MPI_UNDER,      /* calls into the layer underneath (the component's own included) */
    CG_CNT_AGREEMENTS,     /* memory-kind agreements through the layer underneath */
    CG_CNT_HOST_WAITS,     /* times the host blocked for the device or for peers */
    CG_CNT_DEV_OPS,        /* device operations queued: kernels, copies, stream memory ops */
    CG_CNT_SCRATCH_BYTES,  /* bytes copied into the shared scratch areas */
    CG_CNT_STAGED_BYTES,   /* bytes copied between device memory and host staging */
    CG_CNT_IPC_EXPORTS,    /* buffers exported to the node's peers */
    CG_CNT_IPC_IMPORTS,    /* peers' allocations mapped (the IPC registry's misses) */
    CG_CNT_CONTEXTS_MADE,  /* communicators' fast-path contexts made */
    CG_CNT_CONTEXTS_KEPT,  /* contexts of freed communicators taken by a new one */
    CG_CNT_LL_MISSED,      /* LL calls run before the agreement that a rank was not on */
    CG_CNT_MEM_QUERIES,    /* memory queries of the device layer (a driver call on a GPU) */
    CG_CNT_MEM_CACHE_HITS, /* buffers known as host memory without a query (cg_host_cache) */
    CG_CNT_MEM_RELEASES,   /* releases of address space reported to the host-memory cache */
    CG_CNT_APP_WAITS,      /* orderings after the application's default-stream work by an
                              event (cg_dev_app_wait, or an LL call's app_done that found
                              that work not done) */
    CG_CNT_FREES_HELD,     /* frees held back while device work waited for peers */
    CG_CNT_FREE_STALLS,    /* frees that waited for device work that waits for peers
                              (another thread's, or a flag wait queued on a stream; seen by
                              the host layer's simulated GPU only) */
    CG_CNT_LL_SERVED,      /* LL calls run by a server that stays on the device
                              (coll_gpu_ll_persist), rung instead of launched */
    CG_CNT_LL_SERVERS,     /* LL servers started (at a first call, or after one left: idle,
                              at the end of its life, or stopped) */
    CG_CNT_APP_QUERIES,    /* asked whether the application's work before an LL call was
                              done, so that a server could run it (an event recorded on the
                              legacy default stream and queried, no wait) */
    CG_CNT_STAGED_COMPACT, /* staged buffers placed compactly: a layout mostly of gaps (a
                              type over allocations far apart), an equivalent type passed
                              underneath */
    CG_CNT_EXCHANGE_BYTES, /* bytes this rank gave the component's own allgathers through
                              the layer underneath (a context's setup, offers of kept
                              contexts, the pipeline's and the board's votes; not the
                              memory-kind agreements); it receives size times as much */
    CG_CNT_COUNT
} cg_counter_t;

extern uint64_t cg_counters[CG_CNT_COUNT];

static inline void cg_count(cg_counter_t counter, uint64_t n)
{
    __atomic_fetch_add(&cg_counters[counter], n, __ATOMIC_RELAXED);
}

/* For the counters only the threads calling MPI count (the calls_* paths, the calls into
 * the layer underneath, the host-memory cache's hits): without MPI_THREAD_MULTIPLE one such
 * thread counts at a time (MPI orders them), so a plain add does, without the locked
 * instruction of cg_count (the cost of a host-buffer call is a few of those).
 * cg_counters_callers_concurrent: set at init under MPI_THREAD_MULTIPLE. */
extern int cg_counters_callers_concurrent;

static inline void cg_count_caller(cg_counter_t counter, uint64_t n)
{
    if (cg_counters_callers_concurrent) {
        cg_count(counter, n);
    } else {
        __atomic_store_n(&cg_counters[counter],
                         __atomic_load_n(&cg_counters[counter], __ATOMIC_RELAXED) + n,
                         __ATOMIC_RELAXED);
    }
}

const char *cg_counter_name(cg_counter_t counter);
const char *cg_counter_help(cg_counter_t counter);

/* Monotonic clock in seconds. */
double cg_time_now(void);

/* The one way to wait on the host for peers or the device: spin, then give the core away
 * at every poll (ranks that share cores, more ranks than cores or a GPU's ranks beside busy
 * host threads, must not spin the peers they wait for off the CPU). How long a wait spins
 * is the process's setting (cg_pace_configure): CG_PACE_SPIN polls by default, or a time.
 * Returns 1 every CG_PACE_CHECK polls: time for the caller's slow checks (timeout, dead
 * peers). */
#define CG_PACE_SPIN  64
#define CG_PACE_CHECK 256
typedef struct {
    unsigned polls;
    int      yielding; /* the spin is over */
    double   since;    /* when the time spin started (its first clock reading) */
    int      quiet;    /* set by the caller: a wait that stands for a driver call that does
                          not return to MPI (a stream's synchronisation, a free): no MPI
                          progress, as on a GPU */
} cg_pace_t;
int  cg_pace(cg_pace_t *pace);
/* spin_us > 0: every wait spins that many microseconds before it yields (cores to spare);
 * 0: it yields after CG_PACE_SPIN polls (oversubscribed nodes). */
void cg_pace_configure(double spin_us);
/* MPI's progress rule: a rank blocked in a collective must still let the point-to-point
 * messages that peers wait for complete (a peer may reach the collective only after this
 * rank's receive has matched its synchronous send). Every wait's polls but a quiet wait's
 * call progress (opal_progress; NULL: none) every CG_PACE_PROGRESS polls, and at each poll
 * once it yields; never on a thread that said cg_pace_no_progress (the layer's own helper threads,
 * which stand for a GPU or carry a lane: MPI is not theirs to progress), nor inside
 * progress itself (cg_pace_progressing: the component's own progress callback then leaves
 * at once, as the call it interrupts may hold its state). */
#define CG_PACE_PROGRESS 16
void cg_pace_set_progress(void (*progress)(void));
void cg_pace_no_progress(void);
int  cg_pace_progressing(void);

/* Parse a size such as "4096", "64k", "8M", "1G" (binary units). */
cg_status_t cg_size_parse(const char *text, size_t *size_out);

/* POSIX shared memory between the processes of one node. create makes a fresh object
 * (name written to name_out, at least 64 bytes), attach maps an existing one; both return
 * the mapping in *ptr. unlink removes the name (mappings stay valid). */
cg_status_t cg_shm_create(size_t size, char *name_out, void **ptr);
cg_status_t cg_shm_attach(const char *name, size_t size, void **ptr);
void        cg_shm_detach(void *ptr, size_t size);
void        cg_shm_unlink(const char *name);
/* Remove the segments of this user's processes that died without removing them (names
 * carry the owner's pid namespace and pid); done once by the first cg_shm_create of a
 * process. Returns how many were removed. */
int         cg_shm_reclaim_dead(void);
/* Is process pid still alive? */
int         cg_process_alive(int pid);
/* The pid namespace of this process (the inode of /proc/self/ns/pid; 0 when unknown):
 * pids are only comparable inside one. */
unsigned long cg_process_pid_namespace(void);
/* A peer's pid where this process can watch it (cg_process_alive): pid when the peer is in
 * this process's pid namespace (another's pids may name live processes here, or none); else
 * 0, which the waits take for "not watchable" (coll_gpu_timeout bounds them then). Without
 * namespaces to compare (no /proc): pid if such a process is alive now. */
int         cg_process_watchable(int pid, unsigned long pid_namespace);
/* A random 64-bit id of this process, fixed for its lifetime (unique on the node even
 * across PID namespaces). */
uint64_t    cg_process_id(void);

/* Memory shared through a file descriptor (cg_fd_share.c): ref describes an open
 * descriptor of this process, kept open by the exporter until its peers have fetched it
 * (release closes it); fetch gives this process its own copy of a peer's
 * (CG_ERR_UNSUPPORTED when the kernel refuses: then usable() is 0 for the rest of the
 * process). */
typedef struct {
    int32_t  pid;
    int32_t  fd;
    uint64_t dev, ino; /* the file behind it: a reused descriptor number is refused */
} cg_fd_ref_t;

int         cg_fd_share_usable(void);
cg_status_t cg_fd_share_ref(int fd, cg_fd_ref_t *ref);
cg_status_t cg_fd_share_fetch(const cg_fd_ref_t *ref, int *fd_out);
void        cg_fd_share_release(const cg_fd_ref_t *ref);

/* The host-memory cache (cg_host_cache.c): ranges a memory query found to be host memory.
 * Only sound while every release of address space calls cg_host_cache_release first (it
 * forgets the entries the range overlaps): the owner enables the cache once such a source
 * is installed. forget: every entry. lookup: 1 when [ptr, ptr + bytes) is known host
 * memory. insert: record a host answer, with the ticket read before the query (dropped when
 * any release came since). */
void     cg_host_cache_enable(int on);
uint64_t cg_host_cache_ticket(void);
void     cg_host_cache_release(const void *addr, size_t bytes);
void     cg_host_cache_forget(void);
int      cg_host_cache_lookup(const void *ptr, size_t bytes);
void     cg_host_cache_insert(const void *ptr, size_t bytes, uint64_t ticket);
/* The two slots (of 64) where ptr's entry may live: the first when free, else the second. */
void     cg_host_cache_slots(const void *ptr, unsigned slots[2]);

#ifdef __cplusplus
}
#endif
#endif /* CG_BASE_H */
