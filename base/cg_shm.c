/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* POSIX shared memory and process liveness: the node-local plumbing of every layer. */
#include "base/cg_base.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static unsigned        cg_shm_serial;
static pthread_once_t  cg_shm_reclaim_once = PTHREAD_ONCE_INIT;

unsigned long cg_process_pid_namespace(void)
{
    static unsigned long ns;
    char                 link[64] = "";

    if (ns == 0 && readlink("/proc/self/ns/pid", link, sizeof(link) - 1) > 0) {
        sscanf(link, "pid:[%lu]", &ns);
    }
    return ns;
}

/* Names are /cg-gpu-UID-PIDNS-PID-SERIAL: the owner's pid namespace and pid, so that a later
 * process can tell which names belong to processes that are gone. */
int cg_shm_reclaim_dead(void)
{
    char           prefix[64];
    DIR           *dir;
    struct dirent *entry;
    size_t         plen;
    int            removed = 0;

    snprintf(prefix, sizeof(prefix), "cg-gpu-%d-%lu-", (int)getuid(), cg_process_pid_namespace());
    plen = strlen(prefix);
    dir  = opendir("/dev/shm");
    if (dir == NULL) {
        return 0;
    }
    while ((entry = readdir(dir)) != NULL) {
        char     name[300];
        int      pid;
        unsigned serial;
        if (strncmp(entry->d_name, prefix, plen) != 0 ||
            sscanf(entry->d_name + plen, "%d-%u", &pid, &serial) != 2 || pid <= 0) {
            continue;
        }
        if (kill(pid, 0) != 0 && errno == ESRCH) { /* its owner died without removing it */
            snprintf(name, sizeof(name), "/%s", entry->d_name);
            removed += (shm_unlink(name) == 0);
        }
    }
    closedir(dir);
    return removed;
}

static void cg_shm_reclaim_at_start(void)
{
    int removed = cg_shm_reclaim_dead();

    if (removed > 0) {
        cg_detail(CG_SUB_IPC, "removed %d shared-memory segments of processes that died", removed);
    }
}

cg_status_t cg_shm_create(size_t size, char *name_out, void **ptr)
{
    cg_status_t status = CG_ERR_IO;
    void       *p;
    int         fd;

    /* once per process: segments that killed processes left behind */
    pthread_once(&cg_shm_reclaim_once, cg_shm_reclaim_at_start);
    /* A name may be taken: left behind by a process that died with the same pid. Never
     * touch it: take the next one. */
    for (int attempt = 0; attempt < 64; attempt++) {
        snprintf(name_out, 64, "/cg-gpu-%d-%lu-%d-%u", (int)getuid(), cg_process_pid_namespace(),
                 (int)getpid(), __atomic_fetch_add(&cg_shm_serial, 1, __ATOMIC_RELAXED));
        fd = shm_open(name_out, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd >= 0 || errno != EEXIST) {
            break;
        }
        cg_detail(CG_SUB_IPC, "shared memory name %s is taken: trying the next", name_out);
    }
    if (fd < 0) {
        cg_error(CG_SUB_IPC, "shm_open(%s) failed: %s", name_out, strerror(errno));
        return CG_ERR_IO;
    }
    if (ftruncate(fd, (off_t)(size ? size : 1)) != 0) {
        cg_error(CG_SUB_IPC, "ftruncate(%s, %zu) failed: %s", name_out, size, strerror(errno));
        goto err_unlink;
    }
    p = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        cg_error(CG_SUB_IPC, "mmap of %zu bytes of %s failed: %s", size, name_out, strerror(errno));
        status = CG_ERR_NO_MEMORY;
        goto err_unlink;
    }
    close(fd);
    *ptr = p;
    return CG_OK;

err_unlink:
    shm_unlink(name_out);
    close(fd);
    return status;
}

cg_status_t cg_shm_attach(const char *name, size_t size, void **ptr)
{
    void *p;
    int   fd = shm_open(name, O_RDWR, 0600);

    if (fd < 0) {
        cg_error(CG_SUB_IPC, "shm_open(%s) of a peer's segment failed: %s", name, strerror(errno));
        return CG_ERR_PEER;
    }
    p = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        cg_error(CG_SUB_IPC, "mmap of a peer's %zu bytes (%s) failed: %s", size, name, strerror(errno));
        return CG_ERR_NO_MEMORY;
    }
    *ptr = p;
    return CG_OK;
}

void cg_shm_detach(void *ptr, size_t size)
{
    if (ptr != NULL) {
        munmap(ptr, size ? size : 1);
    }
}

void cg_shm_unlink(const char *name)
{
    shm_unlink(name);
}

int cg_process_alive(int pid)
{
    return kill(pid, 0) == 0 || errno == EPERM;
}

int cg_process_watchable(int pid, unsigned long pid_namespace)
{
    const unsigned long mine = cg_process_pid_namespace();

    if (pid <= 0) {
        return 0;
    }
    if (mine != 0 && pid_namespace != 0) {
        return pid_namespace == mine ? pid : 0;
    }
    return cg_process_alive(pid) ? pid : 0; /* no namespaces to compare: a guess */
}

uint64_t cg_process_id(void)
{
    static uint64_t id;
    uint64_t        value = __atomic_load_n(&id, __ATOMIC_ACQUIRE);

    if (value == 0) {
        int fd = open("/dev/urandom", O_RDONLY);
        if (fd < 0 || read(fd, &value, sizeof(value)) != (ssize_t)sizeof(value)) {
            value = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&value ^
                    (uint64_t)(cg_time_now() * 1e9);
        }
        if (fd >= 0) {
            close(fd);
        }
        value |= 1; /* never 0 */
        uint64_t expected = 0;
        if (!__atomic_compare_exchange_n(&id, &expected, value, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            value = expected;
        }
    }
    return value;
}
