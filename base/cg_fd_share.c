/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/*
 * Memory shared through a file descriptor (cuMemCreate memory made with a POSIX
 * file-descriptor handle type, such as PyTorch's expandable segments; the host stand-in's
 * VMM memory): the exporter keeps the descriptor open and publishes its process id and
 * descriptor number; a peer takes a copy of that descriptor with pidfd_getfd (Linux 5.6),
 * which needs the permission a debugger needs (the one Open MPI's single-copy CMA needs:
 * same user, and Yama's ptrace_scope 0 where Yama is on). The descriptor's device and inode
 * travel too, so that a copy of another file (the number closed and reused) is refused.
 * Where the kernel or the permission says no, the first refusal is kept: this process
 * exports no such memory again, and its collectives copy through scratch memory.
 */
#include "base/cg_base.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

static int cg_fd_share_refused; /* a fetch was refused by the kernel: no fd sharing here */

int cg_fd_share_usable(void)
{
    return !__atomic_load_n(&cg_fd_share_refused, __ATOMIC_RELAXED);
}

cg_status_t cg_fd_share_ref(int fd, cg_fd_ref_t *ref)
{
    struct stat st;

    memset(ref, 0, sizeof(*ref));
    if (fd < 0 || fstat(fd, &st) != 0) {
        return CG_ERR_INVALID_PARAM;
    }
    ref->pid = (int32_t)getpid();
    ref->fd  = fd;
    ref->dev = (uint64_t)st.st_dev;
    ref->ino = (uint64_t)st.st_ino;
    return CG_OK;
}

void cg_fd_share_release(const cg_fd_ref_t *ref)
{
    if (ref->pid == (int32_t)getpid() && ref->fd >= 0) {
        close(ref->fd);
    }
}

cg_status_t cg_fd_share_fetch(const cg_fd_ref_t *ref, int *fd_out)
{
    struct stat st;
    int         pidfd, fd, err;

    *fd_out = -1;
    pidfd   = (int)syscall(SYS_pidfd_open, (pid_t)ref->pid, 0);
    if (pidfd < 0) {
        err = errno;
        goto refused;
    }
    fd  = (int)syscall(SYS_pidfd_getfd, pidfd, ref->fd, 0);
    err = errno;
    close(pidfd);
    if (fd < 0) {
        goto refused;
    }
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_dev != ref->dev || (uint64_t)st.st_ino != ref->ino) {
        close(fd);
        cg_error(CG_SUB_IPC, "descriptor %d of process %d is no longer the memory it exported",
                 (int)ref->fd, (int)ref->pid);
        return CG_ERR_PEER;
    }
    *fd_out = fd;
    return CG_OK;

refused:
    if (err == ENOSYS || err == EPERM || err == EACCES) {
        if (cg_once(&cg_fd_share_refused)) {
            cg_warn(CG_SUB_IPC, "cannot take a peer's memory descriptor (%s%s): memory made "
                    "with cuMemCreate is copied through scratch memory from now on",
                    strerror(err), err == ENOSYS ? ", kernel older than 5.6"
                                   : ": the kernel's ptrace rules (kernel.yama.ptrace_scope) "
                                     "or a seccomp profile");
        }
        return CG_ERR_UNSUPPORTED;
    }
    cg_error(CG_SUB_IPC, "cannot take descriptor %d of process %d: %s", (int)ref->fd,
             (int)ref->pid, strerror(err));
    return err == ESRCH ? CG_ERR_PEER : CG_ERR_IO;
}
