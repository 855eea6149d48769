/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The announcement board of a communicator's node: how each rank of the node passes its
 * buffers in every call, in shared memory, so that the ranks agree on the memory kinds of
 * a call without an MPI call (see cg_board_t in coll/cg_coll.h).
 *
 * Every rank owns one page: a ring of CG_BOARD_SLOTS words, word seq % CG_BOARD_SLOTS =
 * (seq << 8) | kinds for its call seq. A rank with host buffers only writes its word and goes
 * to the layer underneath (one store). A rank with device buffers writes its word and
 * reads its peers' for that seq. A peer that already wrote a later seq into the slot was
 * not on a fast path at seq (a fast path needs every rank: nobody leaves it early), so
 * it counts as host memory; every rank with device buffers then sees a rank that is not
 * on the fast path and takes the staged path, which pairs with the layer underneath.
 */
#include "coll/intra/intra.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CG_BOARD_SLOTS 64
#define CG_BOARD_PAGE  4096

typedef struct {
    volatile uint64_t slot[CG_BOARD_SLOTS];
} cg_board_page_t;

typedef struct {
    char node[64]; /* host name, or the virtual node */
    char page[64]; /* name of the rank's page */
    int  pid;
    int  status;   /* cg_status_t of its setup */
    unsigned long pid_namespace; /* where pid is a pid (cg_process_watchable) */
} cg_board_info_t;

struct cg_board {
    int              local_size;
    int              local_rank;
    int              single_node; /* every rank of the communicator is on this node */
    cg_board_page_t *pages[CG_INTRA_MAX];
    int              pids[CG_INTRA_MAX];
    char             name[64];    /* this rank's page while peers attach */
    cg_board_page_t *own;         /* this rank's page until it has its place in pages */
    uint64_t         peers_past;  /* every peer is known to have announced this call, or
                                     (until then) the board's first: every rank makes it
                                     at the same call, and no slot was read before */
    int              started;
};

/* The node key of rank r: the virtual node (coll_gpu_node_size), or the host name. */
static void cg_board_node_key(int rank, int node_size, char *key, size_t len)
{
    if (node_size > 0) {
        snprintf(key, len, "virtual node %d", rank / node_size);
    } else if (node_size < 0) {
        snprintf(key, len, "virtual node %d", rank % -node_size);
    } else {
        gethostname(key, len - 1);
        key[len - 1] = '\0';
    }
}

/* Attach the pages of this node's ranks; ranks in communicator order. */
static cg_status_t cg_board_attach(cg_board_t *board, const cg_board_info_t *infos, int rank,
                                   int size)
{
    const char *mine = infos[rank].node;
    cg_status_t status = CG_OK;

    board->single_node = 1;
    for (int r = 0; r < size && status == CG_OK; r++) {
        void *page;
        if (infos[r].status != CG_OK) {
            return CG_ERR_PEER;
        }
        if (strncmp(infos[r].node, mine, sizeof(infos[r].node)) != 0) {
            board->single_node = 0;
            continue;
        }
        if (board->local_size == CG_INTRA_MAX) {
            return CG_ERR_UNSUPPORTED;
        }
        if (r == rank) {
            board->local_rank = board->local_size;
            page              = board->own;
            board->own        = NULL;
        } else {
            status = cg_shm_attach(infos[r].page, CG_BOARD_PAGE, &page);
        }
        if (status == CG_OK) {
            /* a peer in another PID namespace cannot be watched: 0 */
            board->pids[board->local_size]    = cg_process_watchable(infos[r].pid,
                                                                     infos[r].pid_namespace);
            board->pages[board->local_size++] = page;
        }
    }
    return status;
}

cg_status_t cg_board_create(const cg_oob_t *oob, int rank, int size, int node_size,
                            cg_board_t **board_out)
{
    cg_board_info_t *infos = calloc((size_t)size, sizeof(*infos));
    cg_board_info_t  mine  = {.pid = (int)getpid(), .status = CG_OK,
                              .pid_namespace = cg_process_pid_namespace()};
    cg_board_t      *board = calloc(1, sizeof(*board));
    void            *page  = NULL;
    cg_status_t      status, exchanged;
    int              ok;

    *board_out = NULL;
    if (infos == NULL || board == NULL) {
        mine.status = CG_ERR_NO_MEMORY;
    } else {
        mine.status = cg_shm_create(CG_BOARD_PAGE, board->name, &page);
        board->own  = page;
        snprintf(mine.page, sizeof(mine.page), "%s", board->name);
    }
    cg_board_node_key(rank, node_size, mine.node, sizeof(mine.node));
    if (infos == NULL || board == NULL) { /* a few hundred bytes: the process is lost anyway */
        free(infos);
        cg_board_destroy(board);
        return CG_ERR_NO_MEMORY;
    }
    /* every rank takes part in both exchanges, whatever happened to it */
    exchanged = oob->allgather(oob->ctx, &mine, infos, sizeof(mine));
    status    = exchanged != CG_OK ? exchanged
              : mine.status != CG_OK ? mine.status
                                     : cg_board_attach(board, infos, rank, size);
    /* the names go once every rank attached (or failed): no leftovers in /dev/shm */
    ok = status == CG_OK;
    if (exchanged == CG_OK) {
        int *votes = calloc((size_t)size, sizeof(int));
        exchanged  = votes != NULL ? oob->allgather(oob->ctx, &ok, votes, sizeof(int)) : CG_ERR_NO_MEMORY;
        for (int r = 0; votes != NULL && r < size; r++) {
            ok &= votes[r];
        }
        free(votes);
    }
    if (board->name[0] != '\0') {
        cg_shm_unlink(board->name);
        board->name[0] = '\0';
    }
    free(infos);
    if (!ok || exchanged != CG_OK) {
        cg_board_destroy(board);
        return status != CG_OK ? status : CG_ERR_PEER;
    }
    cg_detail(CG_SUB_COLL, "announcement board: %d ranks on this node%s", board->local_size,
              board->single_node ? ", the whole communicator" : "");
    *board_out = board;
    return CG_OK;
}

void cg_board_destroy(cg_board_t *board)
{
    if (board == NULL) {
        return;
    }
    for (int i = 0; i < CG_INTRA_MAX; i++) {
        if (board->pages[i] != NULL) {
            cg_shm_detach(board->pages[i], CG_BOARD_PAGE);
        }
    }
    if (board->own != NULL) {
        cg_shm_detach(board->own, CG_BOARD_PAGE);
    }
    if (board->name[0] != '\0') {
        cg_shm_unlink(board->name);
    }
    free(board);
}

int cg_board_single_node(const cg_board_t *board)
{
    return board->single_node;
}

/* The word in rank i's slot for seq: (its seq << 8) | kinds. */
static uint64_t cg_board_word(const cg_board_t *board, int i, uint64_t seq)
{
    return __atomic_load_n(&board->pages[i]->slot[seq % CG_BOARD_SLOTS], __ATOMIC_ACQUIRE);
}

/* Before this rank writes call seq into the slot that call seq - CG_BOARD_SLOTS had: every
 * peer must have announced seq - CG_BOARD_SLOTS + 1, so be done with that call, which read
 * this slot. Without it a rank that runs far ahead (calls that do not need the others, as
 * an eager bcast's root) would overwrite what a slow peer still reads for its call, which
 * would then take it for a rank that was not on it. A rank can only be held here by a peer
 * that has not entered a call it entered 63 calls before: MPI lets collectives synchronise,
 * so a correct program does not depend on its not waiting. Peers known far enough
 * (peers_past) cost nothing; a refresh reads each peer's last slot once every 63 calls.
 * Bounded by a peer's death and by timeout_s (> 0). */
static cg_status_t cg_board_wait_slot(cg_board_t *board, uint64_t seq, double timeout_s)
{
    uint64_t need, least = seq - 1;
    double   t0 = 0;

    if (seq < CG_BOARD_SLOTS || (need = seq - (CG_BOARD_SLOTS - 1)) <= board->peers_past) {
        return CG_OK; /* a slot no call used yet, or peers known past its last reader */
    }
    for (int i = 0; i < board->local_size; i++) {
        cg_pace_t pace = {0};
        if (i == board->local_rank) {
            continue;
        }
        while ((cg_board_word(board, i, need) >> 8) < need) {
            if (!cg_pace(&pace)) {
                continue;
            }
            if (board->pids[i] != 0 && !cg_process_alive(board->pids[i])) {
                break; /* a dead peer reads nothing */
            }
            t0 = t0 ? t0 : cg_time_now();
            if (timeout_s > 0 && cg_time_now() - t0 > timeout_s) {
                cg_error(CG_SUB_COLL, "a call waited more than %g s for local rank %d, %d "
                         "calls behind, to reach its call %llu (coll_gpu_timeout)", timeout_s,
                         i, CG_BOARD_SLOTS, (unsigned long long)need);
                return CG_ERR_TIMEOUT;
            }
        }
        if ((cg_board_word(board, i, seq - 1) >> 8) < seq - 1) {
            least = need; /* not at the previous call yet: as far as known */
        }
    }
    board->peers_past = least;
    return CG_OK;
}

cg_status_t cg_board_announce(cg_board_t *board, uint64_t seq, int kinds, double timeout_s)
{
    cg_status_t status;

    if (!board->started) {
        board->started    = 1;
        board->peers_past = seq;
    }
    if ((status = cg_board_wait_slot(board, seq, timeout_s)) != CG_OK) {
        return status; /* not announced: the slot is still the slow peer's */
    }
    __atomic_store_n(&board->pages[board->local_rank]->slot[seq % CG_BOARD_SLOTS],
                     (seq << 8) | (uint64_t)(kinds & 0xff), __ATOMIC_RELEASE);
    return CG_OK;
}

int cg_board_peer(const cg_board_t *board, int i, uint64_t seq, int *kinds)
{
    uint64_t word = cg_board_word(board, i, seq);

    if ((word >> 8) < seq) {
        return 0;
    }
    *kinds = (word >> 8) == seq ? (int)(word & 0xff) : CG_BOARD_KIND_HOST;
    return 1;
}

/* The OR of every local rank's kinds at seq: 1 once all announced (0: not yet). */
static int cg_board_poll(const cg_board_t *board, uint64_t seq, int *all_kinds)
{
    int all = 0, kinds;

    for (int i = 0; i < board->local_size; i++) {
        if (!cg_board_peer(board, i, seq, &kinds)) {
            return 0;
        }
        all |= kinds;
    }
    *all_kinds = all;
    return 1;
}

cg_status_t cg_board_collect(const cg_board_t *board, uint64_t seq, double timeout_s,
                             int *all_kinds)
{
    cg_pace_t pace = {0};
    double    t0   = 0;

    cg_count(CG_CNT_HOST_WAITS, 1);
    while (!cg_board_poll(board, seq, all_kinds)) {
        if (!cg_pace(&pace)) {
            continue;
        }
        for (int i = 0; i < board->local_size; i++) {
            if (i != board->local_rank && board->pids[i] != 0 && !cg_process_alive(board->pids[i])) {
                cg_error(CG_SUB_COLL, "local rank %d (pid %d) died before announcing its buffers",
                         i, board->pids[i]);
                return CG_ERR_PEER_DEAD;
            }
        }
        t0 = t0 ? t0 : cg_time_now();
        if (timeout_s > 0 && cg_time_now() - t0 > timeout_s) {
            cg_error(CG_SUB_COLL, "a call waited more than %.0f s for its local peers to "
                     "announce their buffers (coll_gpu_timeout)", timeout_s);
            return CG_ERR_TIMEOUT;
        }
    }
    return CG_OK;
}

int cg_board_watch(const cg_board_t *board, const cg_ll_watch_t *watch, uint64_t *later)
{
    *later = 0;
    for (int i = 0; i < board->local_size; i++) {
        uint64_t word = cg_board_word(board, i, watch->seq);
        if (i == board->local_rank || (word >> 8) < watch->seq) {
            continue; /* this rank, or a peer that has not announced seq yet */
        }
        if ((word >> 8) > watch->seq) {
            *later |= 1ull << i;
        } else if ((int)(word & 0xff) != watch->fast_kinds) {
            return 1;
        }
    }
    return 0;
}
