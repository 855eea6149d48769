/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The coll/gpu authors. See LICENSE. */
/* Shared runner of the Check unit tests: one suite, one test case, exit status 1 on failure. */
#ifndef CG_UNIT_H
#define CG_UNIT_H

#include <check.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run fn(arg) in a child (death tests); returns the signal that ended it (0: it exited). */
static inline int cg_unit_die_signal(void (*fn)(void *), void *arg)
{
    int   status = 0;
    pid_t pid    = fork();

    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        fn(arg);
        _exit(0);
    }
    ck_assert_int_gt(pid, 0);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

static inline int cg_unit_run(const char *name, const TTest *const *tests, int n, int timeout)
{
    Suite   *s  = suite_create(name);
    TCase   *tc = tcase_create(name);
    SRunner *sr;
    int      failed;

    if (timeout > 0) {
        tcase_set_timeout(tc, timeout);
    }
    for (int i = 0; i < n; i++) {
        tcase_add_test(tc, tests[i]);
    }
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

#define CG_UNIT_MAIN(name, timeout, ...)                                                   \
    int main(void)                                                                         \
    {                                                                                      \
        const TTest *const tests[] = {__VA_ARGS__};                                        \
        return cg_unit_run(name, tests, (int)(sizeof(tests) / sizeof(tests[0])), timeout); \
    }

#endif
