/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* The project's one logger: levels and subsystems, one line per message to stderr. */
#include "cg_base.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

int      cg_log_level  = CG_LOG_ERROR;
unsigned cg_log_subsys = CG_SUB_ALL;

static char cg_log_tag[32] = "";

static const struct {
    const char *name;
    unsigned    bit;
} cg_subsys_names[] = {
    {"init", CG_SUB_INIT}, {"coll", CG_SUB_COLL}, {"dev", CG_SUB_DEV},   {"ipc", CG_SUB_IPC},
    {"topo", CG_SUB_TOPO}, {"plan", CG_SUB_PLAN}, {"ucx", CG_SUB_UCX},   {"all", CG_SUB_ALL},
};

const char *cg_status_string(cg_status_t status)
{
    switch (status) {
    case CG_OK:                return "success";
    case CG_ERR_UNSUPPORTED:   return "not supported by this path";
    case CG_ERR_NO_MEMORY:     return "out of memory";
    case CG_ERR_INVALID_PARAM: return "invalid parameter";
    case CG_ERR_NO_DEVICE:     return "no usable GPU device";
    case CG_ERR_DEVICE:        return "GPU runtime error";
    case CG_ERR_IO:            return "input/output error";
    case CG_ERR_NOT_FOUND:     return "not found";
    case CG_ERR_TIMEOUT:       return "timed out";
    case CG_ERR_PEER:          return "another rank failed this collective";
    case CG_ERR_MISMATCH:      return "ranks disagree";
    case CG_ERR_TRANSPORT:     return "network transport error";
    case CG_ERR_PARSE:         return "parse error";
    case CG_ERR_INTERNAL:      return "internal error";
    case CG_ERR_ALREADY_MAPPED: return "already mapped in this process";
    case CG_ERR_PEER_DEAD:     return "a peer process died";
    case CG_ERR_PEER_NOT_FAST: return "a local rank is not on the fast path for this call";
    }
    return "unknown status";
}

static const char *cg_log_subsys_name(unsigned subsys)
{
    for (size_t i = 0; i < CG_ARRAY_SIZE(cg_subsys_names); i++) {
        if (cg_subsys_names[i].bit == subsys) {
            return cg_subsys_names[i].name;
        }
    }
    return "misc";
}

unsigned cg_log_subsys_parse(const char *list, int *ok)
{
    unsigned mask   = 0;
    int      negate = 0;
    char     word[32];

    *ok = 1;
    if (list == NULL || *list == '\0') {
        return CG_SUB_ALL;
    }
    if (*list == '^') {
        negate = 1;
        list++;
    }
    while (*list != '\0') {
        size_t n = strcspn(list, ",");
        int    found = 0;
        if (n == 0 || n >= sizeof(word)) {
            *ok = 0;
            return 0;
        }
        memcpy(word, list, n);
        word[n] = '\0';
        for (size_t i = 0; i < CG_ARRAY_SIZE(cg_subsys_names); i++) {
            if (strcasecmp(word, cg_subsys_names[i].name) == 0) {
                mask |= cg_subsys_names[i].bit;
                found = 1;
            }
        }
        if (!found) {
            *ok = 0;
            return 0;
        }
        list += n;
        if (*list == ',') {
            list++;
        }
    }
    return negate ? (CG_SUB_ALL & ~mask) : mask;
}

cg_status_t cg_log_configure(int level, const char *subsys_list)
{
    int      ok;
    unsigned mask = cg_log_subsys_parse(subsys_list, &ok);

    cg_log_level = level < 0 ? 0 : level;
    if (!ok) {
        return CG_ERR_INVALID_PARAM;
    }
    cg_log_subsys = mask;
    return CG_OK;
}

void cg_log_set_tag(const char *tag)
{
    snprintf(cg_log_tag, sizeof(cg_log_tag), "%s", tag ? tag : "");
}

static int cg_log_fd = 2; /* stderr, or the file of coll_gpu_verbose_file */

/* Expand %h (host name), %p (process id), %r (MPI_COMM_WORLD rank, from the launcher's
 * environment) and %% in pattern. */
static void cg_log_expand(const char *pattern, char *out, size_t len)
{
    size_t used = 0;

    for (const char *p = pattern; *p != '\0' && used + 1 < len; p++) {
        char        host[64] = "?";
        const char *rank     = getenv("OMPI_COMM_WORLD_RANK");
        int         n        = 0;

        if (*p != '%' || p[1] == '\0') {
            out[used++] = *p;
            continue;
        }
        switch (*++p) {
        case 'h':
            gethostname(host, sizeof(host) - 1);
            host[sizeof(host) - 1] = '\0';
            n = snprintf(out + used, len - used, "%s", host);
            break;
        case 'p': n = snprintf(out + used, len - used, "%d", (int)getpid()); break;
        case 'r':
            rank = rank ? rank : getenv("PMIX_RANK");
            n    = snprintf(out + used, len - used, "%s", rank ? rank : "x");
            break;
        default: n = snprintf(out + used, len - used, "%c", *p); break;
        }
        used += n > 0 ? (size_t)n : 0;
    }
    out[used < len ? used : len - 1] = '\0';
}

cg_status_t cg_log_set_file(const char *pattern)
{
    char path[1024];
    int  fd;

    if (pattern == NULL || *pattern == '\0') {
        return CG_OK;
    }
    cg_log_expand(pattern, path, sizeof(path));
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        cg_error(CG_SUB_INIT, "cannot open the log file %s: %s", path, strerror(errno));
        return CG_ERR_IO;
    }
    if (cg_log_fd > 2) {
        close(cg_log_fd);
    }
    cg_log_fd = fd;
    return CG_OK;
}

void cg_log_close_file(void)
{
    if (cg_log_fd > 2) {
        close(cg_log_fd);
    }
    cg_log_fd = 2;
}

/* Each line leaves in one write(): lines of several ranks or threads never interleave. */
void cg_log_emit(int level, unsigned subsys, const char *file, int line, const char *fmt, ...)
{
    static const char *level_names[] = {"ERROR", "WARN", "INFO", "INFO", "DEBUG", "DEBUG"};
    char    host[64] = "?";
    char    msg[1024];
    char    text[1400];
    int     len;
    va_list ap;

    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (level >= CG_LOG_DEBUG) {
        const char *base = strrchr(file, '/');
        len = snprintf(text, sizeof(text), "[%s:%d] coll:gpu[%s] %s %s %s:%d %s\n", host,
                       (int)getpid(), cg_log_tag, level_names[level > 5 ? 5 : level],
                       cg_log_subsys_name(subsys), base ? base + 1 : file, line, msg);
    } else {
        len = snprintf(text, sizeof(text), "[%s:%d] coll:gpu[%s] %s %s %s\n", host, (int)getpid(),
                       cg_log_tag, level_names[level], cg_log_subsys_name(subsys), msg);
    }
    if (len < 0) {
        return;
    }
    if ((size_t)len >= sizeof(text)) {
        len             = (int)sizeof(text) - 1;
        text[len - 1]   = '\n';
    }
    while (write(cg_log_fd, text, (size_t)len) < 0 && errno == EINTR) {
    }
}

uint64_t cg_counters[CG_CNT_COUNT];
int      cg_counters_callers_concurrent;

static const struct {
    const char *name, *help;
} cg_counter_info[CG_CNT_COUNT] = {
    [CG_CNT_CALLS_FAST]    = {"calls_fast", "Calls that ran a device algorithm of the planner"},
    [CG_CNT_CALLS_STAGED]  = {"calls_staged", "Calls staged through host memory"},
    [CG_CNT_CALLS_UNDER]   = {"calls_underlying",
                              "Calls passed to the layer underneath untouched (host buffers)"},
    [CG_CNT_CALLS_LOCAL]   = {"calls_local", "Single-rank calls served by a device copy"},
    [CG_CNT_MPI_UNDER]     = {"mpi_underlying",
                              "Calls into the layer underneath, the component's own included"},
    [CG_CNT_AGREEMENTS]    = {"agreements",
                              "Memory-kind agreements through the layer underneath"},
    [CG_CNT_HOST_WAITS]    = {"host_waits", "Times the host blocked for the device or for peers"},
    [CG_CNT_DEV_OPS]       = {"device_ops",
                              "Device operations queued: kernels, copies, stream memory operations"},
    [CG_CNT_SCRATCH_BYTES] = {"scratch_bytes", "Bytes copied into the shared scratch areas"},
    [CG_CNT_STAGED_BYTES]  = {"staged_bytes",
                              "Bytes copied between device memory and host staging"},
    [CG_CNT_IPC_EXPORTS]   = {"ipc_exports", "Buffers exported to the node's peers"},
    [CG_CNT_IPC_IMPORTS]   = {"ipc_imports", "Peers' allocations mapped (IPC registry misses)"},
    [CG_CNT_CONTEXTS_MADE] = {"contexts_made", "Fast-path contexts of communicators made"},
    [CG_CNT_CONTEXTS_KEPT] = {"contexts_kept", "Contexts of freed communicators taken by a new communicator "
                                               "over the same processes (coll_gpu_context_keep)"},
    [CG_CNT_LL_MISSED]     = {"ll_missed", "Calls run before the memory-kind agreement (LL, or "
                                           "its first host barrier) that a local rank was not "
                                           "on (they went staged)"},
    [CG_CNT_MEM_QUERIES]   = {"mem_queries", "Memory queries of the device layer (on a GPU, one "
                                             "cuPointerGetAttributes each)"},
    [CG_CNT_MEM_CACHE_HITS] = {"mem_cache_hits", "Buffers known as host memory from an earlier "
                                                 "call, without a memory query (host-memory cache)"},
    [CG_CNT_MEM_RELEASES] = {"mem_releases", "Releases of address space (munmap, brk shrink, madvise...) "
                                             "reported to the host-memory cache, which forgets "
                                             "the buffers they overlap"},
    [CG_CNT_APP_WAITS] = {"app_waits", "Waits for the application's work on the legacy default "
                                       "stream by an event recorded there (two driver calls on a "
                                       "GPU); none for an LL call queued on that stream itself "
                                       "(coll_gpu_app_wait launch)"},
    [CG_CNT_FREES_HELD] = {"frees_held", "Frees of device or page-locked memory held back "
                                         "while device work waited for peers (under "
                                         "MPI_THREAD_MULTIPLE; done once none waits)"},
    [CG_CNT_FREE_STALLS] = {"free_stalls", "Frees that waited for device work that waits for "
                                           "peers (another thread's, or a queued flag wait): "
                                           "on a GPU a possible deadlock "
                                           "(counted by the host layer's simulated GPU)"},
    [CG_CNT_LL_SERVED] = {"ll_served", "LL calls run by a server that stays on the device "
                                       "between calls (coll_gpu_ll_persist): rung, not launched"},
    [CG_CNT_LL_SERVERS] = {"ll_servers", "LL servers started: at a communicator's first served "
                                         "call, and again after one left (idle for "
                                         "coll_gpu_ll_persist_idle_us, at the end of its 10 ms "
                                         "life, or stopped)"},
    [CG_CNT_APP_QUERIES] = {"app_queries", "Queries whether the application's work before an "
                                           "LL call was done, so that an LL server could run "
                                           "the call (coll_gpu_ll_persist without "
                                           "coll_gpu_app_wait none): an event recorded on the "
                                           "legacy default stream and queried, no wait"},
    [CG_CNT_STAGED_COMPACT] = {"staged_compact", "Staged buffers placed compactly: a layout "
                                                 "mostly of gaps (a datatype over allocations "
                                                 "far apart, with MPI_BOTTOM), its pieces close "
                                                 "together and an equivalent datatype passed "
                                                 "underneath"},
    [CG_CNT_EXCHANGE_BYTES] = {"exchange_bytes", "Bytes this process gave the component's own "
                                                 "allgathers through the layer underneath (a "
                                                 "context's setup, such as every rank's worker "
                                                 "addresses across nodes; offers of kept "
                                                 "contexts; the pipeline's and the board's "
                                                 "votes; not the memory-kind agreements, "
                                                 "counted as agreements); it receives the "
                                                 "communicator's size times as much"},
};

const char *cg_counter_name(cg_counter_t counter)
{
    return counter < CG_CNT_COUNT ? cg_counter_info[counter].name : "unknown";
}

const char *cg_counter_help(cg_counter_t counter)
{
    return counter < CG_CNT_COUNT ? cg_counter_info[counter].help : "";
}

double cg_time_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cg_pace_spin_s; /* 0: CG_PACE_SPIN polls */
static void (*cg_pace_progress_fn)(void);
static __thread int cg_pace_progress_off; /* 1: a helper thread; 2: progressing now */

void cg_pace_set_progress(void (*progress)(void))
{
    __atomic_store_n(&cg_pace_progress_fn, progress, __ATOMIC_RELEASE);
}

void cg_pace_no_progress(void)
{
    cg_pace_progress_off = 1;
}

int cg_pace_progressing(void)
{
    return cg_pace_progress_off == 2;
}

static void cg_pace_progress(const cg_pace_t *pace)
{
    void (*progress)(void) = __atomic_load_n(&cg_pace_progress_fn, __ATOMIC_ACQUIRE);

    if (progress != NULL && cg_pace_progress_off == 0 && !pace->quiet &&
        (pace->yielding || pace->polls % CG_PACE_PROGRESS == 0)) {
        cg_pace_progress_off = 2;
        progress();
        cg_pace_progress_off = 0;
    }
}

void cg_pace_configure(double spin_us)
{
    cg_pace_spin_s = spin_us > 0 ? spin_us * 1e-6 : 0;
}

int cg_pace(cg_pace_t *pace)
{
    if (++pace->polls > CG_PACE_SPIN && !pace->yielding) {
        if (cg_pace_spin_s <= 0) {
            pace->yielding = 1;
        } else if (pace->polls % CG_PACE_SPIN == 0) { /* the clock now and then */
            const double now = cg_time_now();
            if (pace->since == 0) {
                pace->since = now;
            } else if (now - pace->since > cg_pace_spin_s) {
                pace->yielding = 1;
            }
        }
    }
    cg_pace_progress(pace);
    if (pace->yielding) {
        sched_yield();
    }
    return pace->polls % CG_PACE_CHECK == 0;
}

cg_status_t cg_size_parse(const char *text, size_t *size_out)
{
    char              *end;
    unsigned long long value;
    unsigned           shift = 0;

    if (text == NULL || !isdigit((unsigned char)*text)) {
        return CG_ERR_INVALID_PARAM;
    }
    errno = 0;
    value = strtoull(text, &end, 10);
    switch (tolower((unsigned char)*end)) {
    case 'k': shift = 10; end++; break;
    case 'm': shift = 20; end++; break;
    case 'g': shift = 30; end++; break;
    case '\0': break;
    default: return CG_ERR_INVALID_PARAM;
    }
    /* a size that does not fit is an error, never a smaller size */
    if (errno == ERANGE || value > (SIZE_MAX >> shift)) {
        return CG_ERR_INVALID_PARAM;
    }
    value <<= shift;
    if (tolower((unsigned char)*end) == 'i') {
        end++;
    }
    if (tolower((unsigned char)*end) == 'b') {
        end++;
    }
    if (*end != '\0') {
        return CG_ERR_INVALID_PARAM;
    }
    *size_out = (size_t)value;
    return CG_OK;
}
