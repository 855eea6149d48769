/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The ranks of one node (the local group): what they share and how they synchronise.
 *
 *   control page  one page of host shared memory per rank: its barrier epoch, its error
 *                 report, and the IPC handles of the buffers of the current call (zero copy)
 *   scratch       device memory per rank, mapped by every peer through IPC: 64-bit flags
 *                 (device-side barriers) followed by two halves that steps alternate
 *                 between, so a step can fill one half while peers still read the other
 *   IPC cache     peers' user buffers, mapped once per allocation (buffer id + base)
 *
 * Barriers come in two kinds, chosen per group (coll_gpu_intra_sync):
 *   host    the host waits for its stream, then for every peer's epoch in the control
 *           pages. Safe whatever the GPU sharing (time-sliced contexts never deadlock).
 *   device  each rank writes its epoch into every peer's flags and makes its stream wait
 *           for the peers' epochs (stream memory operations): no host round trip inside a
 *           collective. Needs ranks that run concurrently: one GPU each, or MPS.
 * Every barrier carries the rank's status: when one rank fails, every rank returns an
 * error at that barrier (CG_ERR_PEER), and nobody waits forever.
 */
#ifndef CG_INTRA_H
#define CG_INTRA_H

#include "base/cg_base.h"
#include "coll/cg_coll.h"
#include "kernels/cg_dev.h"

#include <stddef.h>
#include <stdint.h>

#define CG_INTRA_MAX        CG_DEV_MAX_FANIN
#define CG_INTRA_FLAG_BYTES 4096 /* device flags at the start of each scratch area */
#define CG_INTRA_LL_CANCEL  (CG_INTRA_FLAG_BYTES - 8) /* the rank's LL cancel word there */
#define CG_INTRA_LL_PERIOD  (CG_LL_ABORT - 1) /* LL calls after which the flags repeat */


/* Host shared memory page of one rank. Written only by its owner. */
typedef struct {
    volatile uint64_t epoch;        /* host barriers entered */
    volatile uint64_t failed_epoch; /* barrier at which this rank reported an error; 0: none */
    volatile uint64_t closing;      /* teardown started */
    volatile uint64_t meta_epoch;   /* host epoch at which in/out below were published */
    volatile uint64_t dev_done;     /* device barriers (dev_epoch) that this rank's stream
                                       has run to the end of a call: its flag writes up to
                                       there all done */
    volatile uint64_t ll_done;      /* ll_calls of the last LL call this rank completed: its
                                       lines of the calls up to there all sent */
    uint8_t           pad[16];
    cg_ipc_handle_t   in;  /* buffer_id 0: not provided or not exportable */
    cg_ipc_handle_t   out;
    volatile uint32_t meta_ok; /* every buffer asked of this rank is exportable */
    volatile uint32_t map_ok;  /* this rank mapped every peer buffer it needs */
} cg_intra_ctl_t;
_Static_assert(offsetof(cg_intra_ctl_t, in) == 64, "the control page's header is 64 bytes");

typedef struct cg_ipc_mapping cg_ipc_mapping_t;

/* The group's table of known buffers (intra_publish.c): user buffers that every rank of the
 * group has exported or mapped in an earlier call that succeeded everywhere. Every rank
 * keeps the same table (it changes only where every rank has seen the same handles and the
 * same outcome), so a call whose published buffers are all known needs no second barrier
 * and no export or import. */
#define CG_INTRA_KNOWN_MAX (2 * CG_INTRA_MAX) /* a call's two buffers of every rank */

typedef struct {
    int               owner;    /* group rank that exported it */
    uint64_t          last_use; /* the group's publish count when last used */
    cg_ipc_mapping_t *mapping;  /* a peer's buffer, mapped and held here; NULL: this rank's */
    cg_ipc_handle_t   handle;   /* buffer id (0: a free entry), base, size; this rank's: the
                                   whole export, published again as it is */
} cg_intra_known_t;

/* What each rank tells the others when the group is set up. */
typedef struct {
    uint64_t        proc_id; /* the process (cg_process_id), the IPC registry's peer key */
    int             pid;
    unsigned long   pid_namespace; /* where pid is a pid (cg_process_watchable) */
    int             status; /* cg_status_t of its local setup */
    char            pci_bus_id[32];
    char            ctl_name[64];
    cg_ipc_handle_t scratch;
    int             sync_asked; /* its coll_gpu_intra_sync, CG_SYNC_HOST where its device has
                                   no device-side flags: the group's mode is resolved from
                                   every rank's (cg_intra_connect) */
} cg_intra_peer_info_t;


typedef struct {
    size_t           scratch_bytes;
    cg_sync_mode_t   sync;
    double           timeout_s; /* 0: wait for ever (peers that died are still detected) */
    cg_copy_method_t copy;
    uint32_t         ll_flag_period; /* LL calls after which the flags repeat (testing the
                                        wrap); 0: CG_INTRA_LL_PERIOD */
} cg_intra_config_t;

typedef struct cg_intra {
    cg_dev_t        *dev;
    cg_dev_stream_t *stream;
    int              size;       /* ranks in the group */
    int              rank;       /* this rank's index in the group */
    int              comm_ranks[CG_INTRA_MAX];
    int              pids[CG_INTRA_MAX];
    uint64_t         proc_ids[CG_INTRA_MAX];
    cg_sync_mode_t   sync;       /* resolved: host or device */
    double           timeout_s;
    cg_copy_method_t copy;       /* several destinations (auto: timed at setup) */
    cg_copy_method_t copy_asked; /* coll_gpu_copy_method as set: one destination takes the
                                    kernel only when it was asked for */

    cg_intra_ctl_t  *ctl[CG_INTRA_MAX];
    char             ctl_name[64];
    cg_dev_event_t  *event;
    char            *scratch[CG_INTRA_MAX]; /* each rank's scratch, as mapped here */
    cg_ipc_mapping_t *scratch_map[CG_INTRA_MAX]; /* peers' scratch in the IPC registry */
    size_t           scratch_bytes;
    size_t           half_bytes;            /* bytes of one data half */
    size_t           ll_bytes;              /* the LL inbox after the flags (intra_ll.c) */
    size_t           ll_slot_bytes;         /* one slot of the inbox */
    uint64_t         ll_epoch;              /* LL calls completed (the same on every rank):
                                               the inbox half the next one uses */
    uint64_t         ll_calls;              /* LL calls started, and calls announced on a
                                               board (the same on every rank): the flags */
    uint32_t         ll_period;             /* calls after which the flags repeat */
    uint64_t         ll_cleared[2];         /* ll_calls when this rank last cleared each
                                               half of its inbox (cg_intra_ll_clear) */
    uint64_t         host_epoch;            /* host barriers done (same on every rank) */
    uint64_t         dev_epoch;             /* device barriers done */
    unsigned         parity;                /* steps done: selects the scratch half */
    int              ring[CG_INTRA_MAX];    /* ring order (group ranks), from the topology */
    int              ring_pos;              /* this rank's place in it */
    cg_ipc_mapping_t *pins[2 * CG_INTRA_MAX]; /* peers' user buffers this call uses */
    int              pin_owner[2 * CG_INTRA_MAX]; /* whose buffer each pin maps (group rank) */
    uint64_t         pin_ids[2 * CG_INTRA_MAX];   /* and its buffer id */
    int              num_pins;
    const void      *asked_ptr[2];          /* this call's user buffers and what the device */
    const cg_mem_attr_t *asked_attr[2];     /* layer said of them (cg_intra_asked) */
    cg_intra_known_t known[CG_INTRA_KNOWN_MAX]; /* buffers every rank already shares */
    uint64_t         publishes;             /* zero-copy exchanges (the table's clock) */
    const cg_ll_watch_t *inband;            /* the running call agrees in its first host
                                               barrier (cg_intra_inband_begin) */
    unsigned         inband_parity;         /* parity and publishes when it began: back to */
    uint64_t         inband_publishes;      /* them when a rank was not on the call */
    int              failed;                /* a barrier failed: the group is unusable */
    int              holds_peer_wait;       /* holds a bracket of device work that waits
                                               for peers (cg_dev_peer_wait_begin): flag
                                               waits until the call's end; an LL kernel
                                               that could not be ended until the release */
    int              ll_kernel_left;        /* the last LL call's kernel could not be ended */
    int              told_later_failure;    /* the log said once that a peer failed a
                                               later call (cg_intra_peer_failed_ll) */
    int              watch_released;        /* cg_intra_flag_watch released the flag waits
                                               (a peer failed): the call is an error */
    struct cg_intra *next_pending;          /* torn down, waiting for its peers to close */
} cg_intra_t;

/* ---- setup (intra_group.c) ------------------------------------------------------------ */
/* This process's GPU served another rank in some communicator: it takes turns on it with
 * that rank in every later one too (time slicing is the GPU's processes', not one
 * communicator's). Noted by cg_comm as it summarises its node; read per LL call (no
 * server: cg_ll_args_t launch_only) and when a communicator is made. */
void cg_intra_gpu_shared_note(void);
int  cg_intra_gpu_shared_seen(void);
/* So this rank's LL calls are launched, never run by a server that stays: its GPU is
 * shared (cg_intra_gpu_shared_seen) and no MPS was seen. */
int  cg_intra_ll_launch_only(const cg_dev_t *dev);

/* This rank's part before the exchange: scratch and control page; fills *info. */
cg_status_t cg_intra_prepare(cg_dev_t *dev, const cg_intra_config_t *config, cg_intra_t **g_out,
                             cg_intra_peer_info_t *info);
/* After the exchange: the group is ranks[0..size) (comm ranks), infos indexed the same
 * way; this rank is ranks[me]. Maps the peers' scratch and control pages. */
cg_status_t cg_intra_connect(cg_intra_t *group, const int *ranks, const cg_intra_peer_info_t *infos,
                             int size, int me, cg_sync_mode_t requested);
/* Once every rank is connected: remove the name of this rank's control page (no leftovers
 * in /dev/shm if the process dies later). */
void        cg_intra_seal(cg_intra_t *group);
/* Tear down without waiting: the memory goes at once when every peer has started its own
 * teardown, otherwise as soon as they have (checked at the next setup or teardown of any
 * group of the process). */
void        cg_intra_destroy(cg_intra_t *group);
/* Local groups torn down whose peers have not closed yet (leak checks). */
unsigned long cg_intra_pending_groups(void);
/* At the end of the process: release every pending group (after a bounded wait). */
void        cg_intra_cleanup(void);

/* Pointer to half h of rank r's scratch data area. */
static inline char *cg_intra_half(const cg_intra_t *group, int r, unsigned h)
{
    return group->scratch[r] + CG_INTRA_FLAG_BYTES + group->ll_bytes +
           (size_t)(h & 1) * group->half_bytes;
}

/* ---- synchronisation (intra_sync.c) ---------------------------------------------------- */
/* Full barrier of the group in the group's mode. mine: this rank's status so far.
 * Returns mine, or CG_ERR_PEER when another rank reported an error. */
cg_status_t cg_intra_barrier(cg_intra_t *group, cg_status_t mine);
/* Device barriers: set this rank's flags from the host so that its stream never stays
 * blocked on a peer that failed (at a failure, and at teardown). */
void        cg_intra_release_waits(cg_intra_t *group);
/* After a failure (its flag waits released): wait for the stream to end what it queued,
 * releasing the flag waits again while it has not (a failed peer's flag write queued before
 * its failure may land after a release, lowering the flag under a later wait: on a GPU the
 * peer's stream runs it when it gets there). 1 when drained (or the device failed), 0 when
 * it did not drain in a minute: what the call mapped stays pinned until the group's
 * release, which tries again (and abandons the device when that fails too). */
int         cg_intra_drain(cg_intra_t *group);
/* For a device layer whose flag waits block the calling thread (flag_watch, the host
 * layer), called between polls of the wait for flag: when the peer that writes it failed
 * or died, this rank's waits are released and the group retired, as the host does on a GPU
 * while its stream waits (cg_intra_finish_wait). arg: the group. */
void        cg_intra_flag_watch(void *arg, const uint64_t *flag);
/* Record this rank's failure (at host barrier epoch, 0: the next) where its peers look. */
void        cg_intra_report(cg_intra_t *group, uint64_t epoch);
/* Has a peer reported a failure that this LL call may still depend on? Not one that
 * completed the call first (its ctl ll_done) and failed a later one: this rank's call
 * completes without it (the device barriers' rule, with dev_done, is intra_sync.c's). */
int         cg_intra_peer_failed_ll(cg_intra_t *group);
/* Is peer p's process gone? */
int         cg_intra_peer_dead(const cg_intra_t *group, int p);
/* Between polls of a wait: a peer that died, or the timeout since *t0 (set at the first
 * call), is an error. */
cg_status_t cg_intra_watch(cg_intra_t *group, double *t0);
/* Wait for this rank's stream, watching for peers that failed or died; the end of a call:
 * releases the peers' buffers that cg_intra_publish mapped for it. */
cg_status_t cg_intra_finish(cg_intra_t *group, cg_status_t mine);
/* The call's flag waits on the device are over (cg_dev_peer_wait_end), if it queued any. */
void        cg_intra_peer_wait_done(cg_intra_t *group);
/* A call run before the agreement on its memory kinds (watch: the board, the call's seq,
 * the kinds of the ranks on the call), on a host-synchronised group: its first host
 * barrier also watches the board, and returns CG_ERR_PEER_NOT_FAST, with no failure, when a
 * rank announced other kinds or went past the call without it. Everything before that
 * barrier touches only this rank's own memory (scratch halves it alone fills, its control
 * page): cg_intra_inband_end then puts the group's step state back where the call began,
 * as it is on the ranks that were not on it, and the call takes the staged path. Host
 * barriers count from the announced calls (cg_intra_ll_tick), so a barrier that some rank
 * skipped leaves every later barrier in step. */
void        cg_intra_inband_begin(cg_intra_t *group, const cg_ll_watch_t *watch);
/* Returns status, or the agreement's verdict when the plan never reached a host barrier. */
cg_status_t cg_intra_inband_end(cg_intra_t *group, cg_status_t status);
/* The closing barrier of a call, then its end (cg_intra_finish): nobody returns before
 * every rank is done with the others' buffers. A host barrier waited for the stream
 * already, so the end waits for nothing more. */
cg_status_t cg_intra_close(cg_intra_t *group, cg_status_t mine);
/* Host barrier whatever the group's mode (for data the host reads: published handles). */
cg_status_t cg_intra_host_barrier(cg_intra_t *group, cg_status_t mine);
/* The call's pins on peers' buffers go back (the mappings stay cached). */
void        cg_intra_unpin(cg_intra_t *group);

/* ---- zero copy (intra_publish.c) ------------------------------------------------------- */
/* Export in/out (NULL: not needed from this rank), exchange, map the peers'.
 * status: this rank's status so far, carried by the first barrier.
 * *all_ok tells whether every rank could export what it was asked for and map what it
 * needs of its peers; when it is 0 the caller runs its copy variant (an import that fails
 * degrades the call, it does not fail it). Status and *all_ok are the same on every rank.
 * One host barrier when every buffer published is in the group's table of known buffers
 * (no export, no import: register once); otherwise a second one for the mappings, after
 * which the new buffers join the table. */
cg_status_t cg_intra_publish(cg_intra_t *group, cg_status_t status, const void *in, size_t in_bytes,
                             void *out, size_t out_bytes, char *peer_in[], char *peer_out[],
                             int *all_ok);
/* Copy src to every dsts[i] (i < n) on the group's stream: one kernel that reads the
 * source once and writes every destination (auto, kernel), or one copy-engine transfer
 * per destination (engine). */
cg_status_t cg_intra_copy_multi(cg_intra_t *group, char *const dsts[], int n, const void *src,
                                size_t bytes);
/* A copy on stream (the group's); bytes written into a scratch area are counted
 * (coll_gpu_scratch_bytes). */
cg_status_t cg_intra_copy(cg_intra_t *group, void *dst, const void *src, size_t bytes,
                          cg_dev_stream_t *stream);
/* Copy count elements of dtype into user memory: byte copy, or a typed copy that leaves
 * the padding bytes of pair types untouched. */
cg_status_t cg_intra_copy_typed(cg_intra_t *group, void *dst, const void *src, size_t count,
                                cg_dtype_t dtype);

/* The device layer's answers for the running call's user buffers, asked at the entry point
 * (NULL attr: not asked): the publish uses them instead of asking again. Set before a run,
 * cleared after it (cg_intra_asked(group, NULL, NULL, NULL, NULL)). */
void        cg_intra_asked(cg_intra_t *group, const void *buf0, const cg_mem_attr_t *attr0,
                           const void *buf1, const cg_mem_attr_t *attr1);

/* At the group's release: the table's holds on peers' mappings go back. */
void        cg_intra_known_clear(cg_intra_t *group);

/* ---- the LL collective (intra_ll.c) ---------------------------------------------------- */
/* Bytes of payload one rank may send one peer in an LL call (0: no LL on this group). */
size_t      cg_intra_ll_capacity(const cg_intra_t *group);
/* Run args (coll, root, src, dst, count, counts, displs, dtype, op: the rest is filled
 * here) as one LL operation on the group's stream, stream-ordered after the application's
 * work, and wait for it, watching for peers that failed or died. watch NULL: every rank
 * of the group calls it for the same call. watch set (a call run before the agreement,
 * counted by cg_intra_ll_tick on every rank): the ranks that announced watch->fast_kinds
 * call it; when a rank is not on the call, each one that is returns CG_ERR_PEER_NOT_FAST
 * with nothing written but, for allgather, blocks of ranks on the call (their own data):
 * the call then takes the staged path everywhere, and the group stays usable. */
cg_status_t cg_intra_ll(cg_intra_t *group, cg_ll_args_t *args, const cg_ll_watch_t *watch);
/* This rank will not run an LL call (watch NULL) that the rest of its group runs, since a
 * phase before it failed (mine): it reports the failure, which ends the peers' waits for
 * its lines (they return CG_ERR_PEER), and returns mine. */
cg_status_t cg_intra_ll_skip(cg_intra_t *group, cg_status_t mine);
/* A call announced on the board (every rank of the group, once per announced call, before
 * any cg_intra_ll with a watch for it). */
void        cg_intra_ll_tick(cg_intra_t *group);

/* ---- phases on segments (intra_segments.c) -------------------------------------------- */
/* A piece of a buffer: offset and length (in the unit the phase says). */
typedef struct {
    size_t off;
    size_t len;
} cg_seg_t;

/* Every rank's nseg segments (bytes of rbuf; segs[rank * nseg + k]) into every rank's rbuf.
 * status: this rank's status so far, carried by the first barrier. */
cg_status_t cg_allgather_segments(cg_intra_t *group, void *rbuf, const cg_seg_t *segs, int nseg,
                                  cg_status_t status);
/* Each rank reduces its own segments (elements of in) over every rank into out, packed one
 * after the other. in_place: out is in, and the segments tile it in rank order. */
cg_status_t cg_reduce_scatter_segments(cg_intra_t *group, const void *in, void *out,
                                       const cg_seg_t *segs, int nseg, int in_place,
                                       cg_dtype_t dtype, cg_op_t op, cg_status_t status);
/* The root hands rank r segs[r] (bytes of buf). */
cg_status_t cg_scatter_segments(cg_intra_t *group, void *buf, const cg_seg_t *segs, int root,
                                cg_status_t status);

/* ---- IPC registry (ipc_cache.c): the process's mappings of peers' allocations ---------- */
typedef struct {
    unsigned long hits, misses, evictions, retries, mapped;
} cg_ipc_cache_stats_t;

/* Local address of the memory a peer's handle describes (its pointer, offset included),
 * mapped at the first use and shared by every communicator; peer: the peer process's
 * cg_process_id. *pin keeps the mapping open until cg_ipc_release. */
cg_status_t cg_ipc_acquire(cg_dev_t *dev, uint64_t peer, const cg_ipc_handle_t *handle,
                           char **ptr, cg_ipc_mapping_t **pin);
/* Give a pin back; close_now: unmap at once when nobody else uses it (a peer's scratch,
 * freed with its communicator), otherwise it stays cached for later calls. */
void        cg_ipc_release(cg_ipc_mapping_t *pin, int close_now);
/* A table of known buffers keeps a mapping open between calls (no purge closes it; only a
 * stale one, of memory the peer freed, is closed, and its record stays until unheld). */
void        cg_ipc_hold(cg_ipc_mapping_t *mapping);
void        cg_ipc_unhold(cg_ipc_mapping_t *mapping);
/* Where a held mapping is, here; NULL once closed as stale. */
char       *cg_ipc_local(cg_ipc_mapping_t *mapping);
/* At the end of the process: close every mapping. */
void        cg_ipc_registry_cleanup(void);
void        cg_ipc_stats(cg_ipc_cache_stats_t *stats);

#endif /* CG_INTRA_H */
