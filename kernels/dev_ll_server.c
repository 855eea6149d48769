/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * The host's side of an LL server (dev_ll_server.h): post, ring, test, start again, stop.
 */
#include "kernels/dev_ll_server.h"

void cg_ll_server_post(uint64_t *lines, const uint64_t *block, size_t words, uint64_t call)
{
    const uint32_t tag = cg_ll_post_tag(call);

    for (size_t w = 0; w < words; w++) { /* each line whole, or not at all, for a reader */
        __atomic_store_n(&lines[2 * w], cg_ll_post_line(tag, block[w], 0), __ATOMIC_RELAXED);
        __atomic_store_n(&lines[2 * w + 1], cg_ll_post_line(tag, block[w], 1), __ATOMIC_RELAXED);
    }
}

int cg_ll_server_decode(const uint64_t *seen, uint64_t *block, size_t words, uint64_t call)
{
    const uint32_t tag = cg_ll_post_tag(call);

    for (size_t w = 0; w < words; w++) {
        if (!cg_ll_post_fresh(seen[2 * w], tag) || !cg_ll_post_fresh(seen[2 * w + 1], tag)) {
            return 0;
        }
        block[w] = cg_ll_post_word(seen[2 * w], seen[2 * w + 1]);
    }
    return 1;
}

int cg_ll_server_alive(const cg_ll_server_t *server)
{
    return server->gen != 0 &&
           __atomic_load_n(&server->words->left, __ATOMIC_ACQUIRE) != server->gen;
}

/* The calls the servers ran so far: read after left, it is final for a server that left. */
static uint64_t cg_ll_server_served(const cg_ll_server_t *server)
{
    return __atomic_load_n(server->done, __ATOMIC_ACQUIRE) >> 1;
}

static cg_status_t cg_ll_server_start(cg_ll_server_t *server)
{
    cg_status_t status = server->start(server, server->gen + 1, cg_ll_server_served(server));

    if (status == CG_OK) {
        server->gen++;
        cg_count(CG_CNT_LL_SERVERS, 1);
    }
    return status;
}

cg_status_t cg_ll_server_ring(cg_ll_server_t *server, uint64_t call)
{
    cg_status_t status;

    server->rung     = call;
    server->rung_gen = server->gen;
    /* the posted arguments before the bell (the server reads them after it) */
    __atomic_store_n(&server->words->bell, call, __ATOMIC_SEQ_CST);
    status = cg_ll_server_alive(server) ? CG_OK : cg_ll_server_start(server);
    if (status == CG_OK) {
        cg_count(CG_CNT_LL_SERVED, 1);
    }
    return status;
}

cg_status_t cg_ll_server_test(cg_ll_server_t *server, int *done)
{
    uint64_t word = __atomic_load_n(server->done, __ATOMIC_ACQUIRE);

    *done = (word >> 1) < server->rung ? 0 : (word & 1) ? 2 : 1;
    if (*done || cg_ll_server_alive(server)) {
        return CG_OK;
    }
    /* it left; done read again after left: a call it ran before is there now */
    word  = __atomic_load_n(server->done, __ATOMIC_ACQUIRE);
    *done = (word >> 1) < server->rung ? 0 : (word & 1) ? 2 : 1;
    if (*done) {
        return CG_OK;
    }
    if (server->gen > server->rung_gen) { /* started after the ring, and did not run it */
        cg_error(CG_SUB_DEV, "an LL server left without running call %llu, posted before it "
                 "started (its arguments never read whole): LL calls of this stream run "
                 "without a server from now on", (unsigned long long)server->rung);
        return CG_ERR_UNSUPPORTED;
    }
    return cg_ll_server_start(server);
}

int cg_ll_server_stop(cg_ll_server_t *server)
{
    if (server->words == NULL) {
        return 0;
    }
    __atomic_store_n(&server->words->bell, CG_LL_SERVER_STOP, __ATOMIC_SEQ_CST);
    return cg_ll_server_alive(server);
}
