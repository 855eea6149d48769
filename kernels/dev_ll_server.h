/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * An LL server (coll_gpu_ll_persist): device work that stays between LL calls and runs each
 * call the host rings, so that a small call costs a store and a poll on the host instead of
 * a launch. Shared by the device layers (the CUDA kernel, the host layer's thread); this
 * file is the host's side of the protocol, both layers the same.
 *
 * Words in page-locked memory, each on its own cache line:
 *   bell  the host's: the number of the call to run (the stream's LL calls, counted from 1),
 *         written after the call's arguments were posted; CG_LL_SERVER_STOP: leave now.
 *   left  the server's: its generation, stored as it leaves (idle for its time, at the end
 *         of its life, or stopped), after its last look at the bell.
 *   done  the stream's completion word, as for a launched LL call: (call << 1) | given up.
 * A server started with (generation, served) loops: a bell above served runs that call and
 * stores done; no ring for its idle time, the end of its life (dev->ll_persist_life_s) or the
 * stop stores left and ends. The host rings
 * a server it has not seen leave; a ring it left without seeing (its last look was before
 * the ring) shows as left with done below the call, and the host then starts another on
 * the same queue, behind the old one: it runs the call, which the old one never did (the
 * host rings one call at a time and waits for its end: a call never runs twice). A server
 * started after the ring sees the call at its first look; one that leaves without running
 * it cannot read the calls posted to it (its lines never carried the bell's tag, for the
 * rest of its life): the host starts none again and runs the call, and the later ones,
 * without a server (cg_ll_server_test: CG_ERR_UNSUPPORTED), where it would otherwise
 * start servers for ever and the call never end.
 *
 * The call's arguments are posted before the bell as tagged lines, as the LL protocol
 * sends data (a flag in every 8-byte store): each 8-byte word of the argument block goes
 * as two lines, its low and its high half, each under the call's tag (cg_ll_post_tag) in
 * the line's high half. A server reads the bell and the lines at once, in one round trip
 * across the bus on a GPU: a read of host memory takes about a microsecond there, and one
 * of the bell followed by one of the arguments would take two. Reads are not ordered with
 * each other, so a line may be older than the bell it was read with; the tags say so, and
 * the server reads again until every line it needs carries the bell's tag. The host
 * layer's thread reads the lines before the bell, so that CI meets that case too.
 */
#ifndef CG_DEV_LL_SERVER_H
#define CG_DEV_LL_SERVER_H

#include "kernels/cg_dev.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CG_LL_SERVER_STOP UINT64_MAX

typedef struct {
    uint64_t bell;
    uint64_t bell_pad[7];
    uint64_t left;
    uint64_t left_pad[7];
} cg_ll_server_words_t;

typedef struct cg_ll_server {
    cg_ll_server_words_t *words; /* page-locked, as the host sees it */
    const uint64_t       *done;  /* the stream's completion word, as the host sees it */
    uint64_t              rung;  /* the last call rung */
    uint64_t              gen;   /* the generation of the last server started (0: none) */
    uint64_t              rung_gen; /* gen when the last call was rung: a later one was
                                     * started for it, and must run it */
    /* start a server (gen, served) on the server's queue, behind the one before */
    cg_status_t (*start)(struct cg_ll_server *server, uint64_t gen, uint64_t served);
    void                 *ctx;   /* the layer's */
} cg_ll_server_t;

#if defined(__CUDACC__)
#define CG_LL_POST_FN static __host__ __device__ __forceinline__
#else
#define CG_LL_POST_FN static inline
#endif

/* The tag of call `call`'s lines: never 0 (the lines' memory starts zeroed), and two calls
 * less than 2^32 - 1 apart never share one. */
CG_LL_POST_FN uint32_t cg_ll_post_tag(uint64_t call)
{
    return (uint32_t)(call % 0xffffffffu) + 1u;
}

/* Line `half` (0 low, 1 high) of an argument word, under `tag`. */
CG_LL_POST_FN uint64_t cg_ll_post_line(uint32_t tag, uint64_t word, int half)
{
    return ((uint64_t)tag << 32) | (uint32_t)(half ? word >> 32 : word);
}

/* Does the line carry `tag`? */
CG_LL_POST_FN int cg_ll_post_fresh(uint64_t line, uint32_t tag)
{
    return (uint32_t)(line >> 32) == tag;
}

/* The word of two lines (low, high). */
CG_LL_POST_FN uint64_t cg_ll_post_word(uint64_t low, uint64_t high)
{
    return (uint64_t)(uint32_t)low | ((uint64_t)(uint32_t)high << 32);
}

/* Lines that post `words` words. */
#define CG_LL_POST_LINES(words) (2 * (words))

/* Post `words` words of `block` for call `call` into `lines` (CG_LL_POST_LINES(words)), with
 * 8-byte stores: then ring. */
void cg_ll_server_post(uint64_t *lines, const uint64_t *block, size_t words, uint64_t call);
/* The host's reader (the host layer's server): `words` words of call `call` from `seen` (the
 * lines as read) into `block`; 1 when every line carried the call's tag (else read again). */
int  cg_ll_server_decode(const uint64_t *seen, uint64_t *block, size_t words, uint64_t call);

/* Is a server started and not seen to leave? */
int         cg_ll_server_alive(const cg_ll_server_t *server);
/* Ring call (its arguments posted): the bell is stored first; a server not seen alive is
 * then started (it reads the bell). */
cg_status_t cg_ll_server_ring(cg_ll_server_t *server, uint64_t call);
/* The rung call's end: *done 0 not yet, 1 with its result, 2 given up. A server that left
 * without seeing the ring is started again; CG_ERR_UNSUPPORTED when one started after the
 * ring left without running the call (logged): it was not run, and no server runs it. */
cg_status_t cg_ll_server_test(cg_ll_server_t *server, int *done);
/* Tell the server to leave; 1 when one may still run (wait for it on its queue). */
int         cg_ll_server_stop(cg_ll_server_t *server);

#ifdef __cplusplus
}
#endif
#endif /* CG_DEV_LL_SERVER_H */
