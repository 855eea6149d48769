dnl SPDX-License-Identifier: BSD-3-Clause
dnl Copyright (c) 2026 The coll/gpu authors. See LICENSE.
dnl CG_CHECK_CUDA: the CUDA toolkit (nvcc, headers, static runtime).
dnl Sets CUDA_CPPFLAGS, CUDA_LIBS, NVCC, NVCC_GENCODE; AM_CONDITIONAL HAVE_CUDA.
AC_DEFUN([CG_CHECK_CUDA], [
    AC_ARG_WITH([cuda],
        [AS_HELP_STRING([--with-cuda=DIR],
            [CUDA toolkit (default: /usr/local/cuda when present); --without-cuda builds a
             host-only component])],
        [], [with_cuda=check])
    AC_ARG_WITH([nvcc-gencode],
        [AS_HELP_STRING([--with-nvcc-gencode=FLAGS],
            [nvcc architecture flags (default: sm_80, sm_90, sm_100 and PTX of compute_100;
             with an nvcc older than 12.8, sm_80, sm_90 and PTX of compute_90)])],
        [NVCC_GENCODE="$withval"; cg_gencode_given=yes],
        [NVCC_GENCODE="-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_100,code=sm_100 -gencode=arch=compute_100,code=compute_100"
         cg_gencode_given=no])
    dnl before CUDA 12.8 nvcc knows no sm_100: the default then stops at Hopper, with PTX of
    dnl compute_90 that newer GPUs compile when the kernels load
    cg_gencode_older="-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90"

    cg_have_cuda=no
    cg_cuda_reason=""
    AS_CASE([$with_cuda],
        [no], [cg_cuda_reason="--without-cuda"],
        [check|yes], [cg_cuda_dir=/usr/local/cuda],
        [cg_cuda_dir="$with_cuda"])
    AS_IF([test "$with_cuda" != "no"], [
        AS_IF([test ! -x "$cg_cuda_dir/bin/nvcc"],
              [cg_cuda_reason="no nvcc in $cg_cuda_dir/bin"],
              [test ! -f "$cg_cuda_dir/include/cuda.h"],
              [cg_cuda_reason="no cuda.h in $cg_cuda_dir/include"],
              [test ! -f "$cg_cuda_dir/lib64/libcudart_static.a"],
              [cg_cuda_reason="no libcudart_static.a in $cg_cuda_dir/lib64"],
              [cg_have_cuda=yes])
    ])
    AS_IF([test "$cg_have_cuda" = "yes"], [
        NVCC="$cg_cuda_dir/bin/nvcc"
        AC_MSG_CHECKING([whether nvcc accepts $NVCC_GENCODE])
        cat > conftest.cu <<_CGEOF
__global__ void cg_conftest_kernel(int *p) { *p = 1; }
_CGEOF
        AS_IF([$NVCC $NVCC_GENCODE -c conftest.cu -o conftest.o >&AS_MESSAGE_LOG_FD 2>&1],
              [AC_MSG_RESULT([yes])],
              [AC_MSG_RESULT([no])
               cg_have_cuda=no
               cg_cuda_reason="nvcc rejects the architecture flags (see config.log)"
               AS_IF([test "$cg_gencode_given" = "no"], [
                   AC_MSG_CHECKING([whether nvcc accepts $cg_gencode_older])
                   AS_IF([$NVCC $cg_gencode_older -c conftest.cu -o conftest.o >&AS_MESSAGE_LOG_FD 2>&1],
                         [AC_MSG_RESULT([yes])
                          NVCC_GENCODE="$cg_gencode_older"
                          cg_have_cuda=yes],
                         [AC_MSG_RESULT([no])])
               ])])
        rm -f conftest.cu conftest.o
    ])
    dnl a toolkit that is there but cannot be used is said loudly, asked for or not: a
    dnl host-only component steps aside on GPU nodes
    AS_IF([test "$cg_have_cuda" = "no" && test -x "$cg_cuda_dir/bin/nvcc" && test "$with_cuda" = "check"],
          [AC_MSG_WARN([the CUDA toolkit in $cg_cuda_dir cannot be used ($cg_cuda_reason): building a host-only component, which steps aside on GPU nodes; pass --with-cuda=DIR to make this an error])])
    AS_IF([test "$cg_have_cuda" = "no" && test "$with_cuda" != "check" && test "$with_cuda" != "no"],
          [AC_MSG_ERROR([CUDA was requested but cannot be used: $cg_cuda_reason])])
    AS_IF([test "$cg_have_cuda" = "yes"], [
        CUDA_CPPFLAGS="-I$cg_cuda_dir/include"
        CUDA_LIBS="$cg_cuda_dir/lib64/libcudart_static.a -ldl -lrt -lpthread -lstdc++"
        AC_DEFINE([CG_HAVE_CUDA], [1], [Build the CUDA device layer])
    ])
    AC_SUBST([NVCC])
    AC_SUBST([NVCC_GENCODE])
    AC_SUBST([CUDA_CPPFLAGS])
    AC_SUBST([CUDA_LIBS])
    AM_CONDITIONAL([HAVE_CUDA], [test "$cg_have_cuda" = "yes"])
])
