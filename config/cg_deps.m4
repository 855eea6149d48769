dnl SPDX-License-Identifier: BSD-3-Clause
dnl Copyright (c) 2026 The coll/gpu authors. See LICENSE.
dnl CG_CHECK_PKG(NAME, PKG, HEADER, LIBS, OPTION-HELP, USE)
dnl Optional dependency found through --with-NAME=DIR or pkg-config. Sets NAME_CPPFLAGS,
dnl NAME_LIBS (upper case), cg_have_NAME=yes|no and cg_NAME_reason; AM_CONDITIONAL HAVE_NAME.
AC_DEFUN([CG_CHECK_PKG], [
    m4_pushdef([CG_UP], m4_toupper([$1]))
    AC_ARG_WITH([$1], [AS_HELP_STRING([--with-$1=DIR], [$5])], [], [with_$1=check])
    cg_have_$1=no
    cg_$1_reason=""
    CG_UP[]_CPPFLAGS=""
    CG_UP[]_LIBS=""
    AS_CASE([$with_$1],
        [no], [cg_$1_reason="--without-$1"],
        [check|yes], [PKG_CHECK_EXISTS([$2],
                        [CG_UP[]_CPPFLAGS=`$PKG_CONFIG --cflags $2`
                         CG_UP[]_LIBS=`$PKG_CONFIG --libs $2`
                         dnl a library outside the system's paths (a site module's
                         dnl PKG_CONFIG_PATH) is found at run time without that module too
                         cg_libdir=`$PKG_CONFIG --variable=libdir $2`
                         AS_CASE([$cg_libdir],
                             [""|/usr/lib|/usr/lib64|/usr/lib/*-linux-gnu|/lib|/lib64], [],
                             [CG_UP[]_LIBS="$CG_UP[]_LIBS -Wl,-rpath,$cg_libdir"])],
                        [CG_UP[]_LIBS="$4"])],
        [CG_UP[]_CPPFLAGS="-I$with_$1/include"
         cg_libdir="$with_$1/lib"
         AS_IF([test -d "$with_$1/lib64"], [cg_libdir="$with_$1/lib64"])
         CG_UP[]_LIBS="-L$cg_libdir -Wl,-rpath,$cg_libdir $4"])
    AS_IF([test "$with_$1" != "no"], [
        cg_save_CPPFLAGS="$CPPFLAGS"
        cg_save_LIBS="$LIBS"
        CPPFLAGS="$CPPFLAGS $CG_UP[]_CPPFLAGS"
        LIBS="$LIBS $CG_UP[]_LIBS"
        AC_MSG_CHECKING([for $1 ($3)])
        AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <$3>]], [[ return 0; ]])],
            [cg_have_$1=yes], [cg_$1_reason="$3 or its library not found"])
        AC_MSG_RESULT([$cg_have_$1])
        CPPFLAGS="$cg_save_CPPFLAGS"
        LIBS="$cg_save_LIBS"
    ])
    AS_IF([test "$cg_have_$1" = "no" && test "$with_$1" != "check" && test "$with_$1" != "no"],
          [AC_MSG_ERROR([$1 was requested but cannot be used: $cg_$1_reason])])
    AS_IF([test "$cg_have_$1" = "yes"],
          [AC_DEFINE([CG_HAVE_]CG_UP, [1], [$6])],
          [CG_UP[]_CPPFLAGS=""
           CG_UP[]_LIBS=""])
    AC_SUBST(CG_UP[_CPPFLAGS])
    AC_SUBST(CG_UP[_LIBS])
    AM_CONDITIONAL([HAVE_]CG_UP, [test "$cg_have_$1" = "yes"])
    m4_popdef([CG_UP])
])
