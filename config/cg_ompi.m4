dnl SPDX-License-Identifier: BSD-3-Clause
dnl Copyright (c) 2026 The coll/gpu authors. See LICENSE.
dnl CG_CHECK_OMPI: find Open MPI's public and internal (MCA component) headers.
dnl Sets OMPI_CPPFLAGS, OMPI_LDFLAGS, OMPI_LIBS, OMPI_MAJOR, OMPI_COMPONENT_DIR, MPIRUN,
dnl OMPI_INFO. The internal headers' gaps (Open MPI 5.0) are handled by
dnl CG_OMPI_INTERNAL_HEADERS (config/cg_ompi_headers.m4).
AC_DEFUN([CG_CHECK_OMPI], [
    AC_ARG_WITH([ompi],
        [AS_HELP_STRING([--with-ompi=DIR],
            [Open MPI installation with its development headers (DIR/include/openmpi);
             default: found through pkg-config (ompi), then mpicc on PATH])])

    cg_ompi_bindir=""
    AS_IF([test -n "$with_ompi" && test "$with_ompi" != "yes"], [
        AS_IF([test "$with_ompi" = "no"],
              [AC_MSG_ERROR([coll/gpu is an Open MPI component: --without-ompi is not possible])])
        cg_ompi_bindir="$with_ompi/bin"
        AS_IF([test ! -f "$with_ompi/include/mpi.h" && test -x "$with_ompi/bin/mpicc"], [
            dnl a distribution's layout (Debian: prefix /usr, headers under lib/.../openmpi):
            dnl ask that installation's wrapper compiler
            for cg_dir in `"$with_ompi/bin/mpicc" --showme:incdirs`; do
                OMPI_CPPFLAGS="$OMPI_CPPFLAGS -I$cg_dir -I$cg_dir/openmpi"
            done
            for cg_dir in `"$with_ompi/bin/mpicc" --showme:libdirs`; do
                OMPI_LDFLAGS="$OMPI_LDFLAGS -L$cg_dir -Wl,-rpath,$cg_dir"
            done
            cg_ompi_how="--with-ompi=$with_ompi (its mpicc)"
        ], [
            OMPI_CPPFLAGS="-I$with_ompi/include -I$with_ompi/include/openmpi"
            cg_ompi_libdir="$with_ompi/lib"
            AS_IF([test -d "$with_ompi/lib64" && test ! -d "$with_ompi/lib"], [cg_ompi_libdir="$with_ompi/lib64"])
            OMPI_LDFLAGS="-L$cg_ompi_libdir -Wl,-rpath,$cg_ompi_libdir"
            cg_ompi_how="--with-ompi=$with_ompi"
        ])
    ], [
        PKG_CHECK_EXISTS([ompi], [
            OMPI_CPPFLAGS=`$PKG_CONFIG --cflags ompi`
            OMPI_LDFLAGS=`$PKG_CONFIG --libs-only-L ompi`
            cg_ompi_prefix=`$PKG_CONFIG --variable=prefix ompi`
            cg_ompi_bindir="$cg_ompi_prefix/bin"
            cg_ompi_how="pkg-config ompi"
        ], [
            AC_PATH_PROG([CG_MPICC], [mpicc])
            AS_IF([test -z "$CG_MPICC"],
                  [AC_MSG_ERROR([Open MPI not found: install its development package (Debian: libopenmpi-dev) or pass --with-ompi=DIR])])
            for cg_dir in `$CG_MPICC --showme:incdirs`; do
                OMPI_CPPFLAGS="$OMPI_CPPFLAGS -I$cg_dir -I$cg_dir/openmpi"
            done
            for cg_dir in `$CG_MPICC --showme:libdirs`; do
                OMPI_LDFLAGS="$OMPI_LDFLAGS -L$cg_dir"
            done
            cg_ompi_bindir=`dirname "$CG_MPICC"`
            cg_ompi_how="mpicc"
        ])
    ])

    CG_OMPI_INTERNAL_HEADERS
    cg_save_CPPFLAGS="$CPPFLAGS"
    CPPFLAGS="$CPPFLAGS $OMPI_CPPFLAGS"
    AC_COMPUTE_INT([OMPI_MAJOR], [OMPI_MAJOR_VERSION], [#include "ompi/version.h"],
                   [AC_MSG_ERROR([cannot read OMPI_MAJOR_VERSION])])
    AC_COMPUTE_INT([cg_ompi_minor], [OMPI_MINOR_VERSION], [#include "ompi/version.h"], [cg_ompi_minor=0])
    AC_COMPUTE_INT([cg_ompi_release], [OMPI_RELEASE_VERSION], [#include "ompi/version.h"], [cg_ompi_release=0])
    CPPFLAGS="$cg_save_CPPFLAGS"
    OMPI_VERSION_STRING="$OMPI_MAJOR.$cg_ompi_minor.$cg_ompi_release"
    OMPI_SERIES="$OMPI_MAJOR.$cg_ompi_minor"
    dnl the releases whose structures the component reads are laid out as this one's (the
    dnl Lmod module's range; ompi_coll_gpu/coll_gpu_version.c checks the same at run time)
    AS_CASE([$OMPI_SERIES],
        [4.1], [OMPI_LIBS="-lmpi -lopen-rte -lopen-pal"
                OMPI_LAYOUT_LOW=4.1 OMPI_LAYOUT_HIGH=4.1.99999],
        [5.0], [OMPI_LIBS="-lmpi -lopen-pal"
                AS_IF([test "$cg_ompi_release" -ge 10], [OMPI_LAYOUT_LOW=5.0.10 OMPI_LAYOUT_HIGH=5.0.99999],
                      [test "$cg_ompi_release" -ge 7], [OMPI_LAYOUT_LOW=5.0.7 OMPI_LAYOUT_HIGH=5.0.9],
                      [OMPI_LAYOUT_LOW=5.0.0 OMPI_LAYOUT_HIGH=5.0.6])],
        [AC_MSG_ERROR([Open MPI $OMPI_VERSION_STRING is not supported (4.1 and 5.0 are; docs/INSTALL.md says what main/6.0 needs)])])
    dnl the source tree that filled header gaps must be the same release
    AS_IF([test -n "$with_ompi_src" && test -f "$with_ompi_src/VERSION"], [
        cg_src_version=`sed -n -e 's/^major=//p' "$with_ompi_src/VERSION"`.`sed -n -e 's/^minor=//p' "$with_ompi_src/VERSION"`.`sed -n -e 's/^release=//p' "$with_ompi_src/VERSION"`
        AS_IF([test "$cg_src_version" != "$OMPI_VERSION_STRING"],
              [AC_MSG_ERROR([--with-ompi-src=$with_ompi_src is Open MPI $cg_src_version, the installation is $OMPI_VERSION_STRING: use the source of the same release])])
    ])

    AC_PATH_PROG([MPIRUN], [mpirun], [], [$cg_ompi_bindir$PATH_SEPARATOR$PATH])
    AC_PATH_PROG([OMPI_INFO], [ompi_info], [], [$cg_ompi_bindir$PATH_SEPARATOR$PATH])
    OMPI_COMPONENT_DIR=""
    AS_IF([test -n "$OMPI_INFO"],
          [OMPI_COMPONENT_DIR=`$OMPI_INFO --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p'`])
    AC_MSG_CHECKING([for Open MPI's component directory])
    AC_MSG_RESULT([${OMPI_COMPONENT_DIR:-unknown}])

    AC_SUBST([OMPI_CPPFLAGS])
    AC_SUBST([OMPI_LDFLAGS])
    AC_SUBST([OMPI_LIBS])
    AC_SUBST([OMPI_MAJOR])
    AC_SUBST([OMPI_VERSION_STRING])
    AC_SUBST([OMPI_SERIES])
    AC_SUBST([OMPI_LAYOUT_LOW])
    AC_SUBST([OMPI_LAYOUT_HIGH])
    AC_SUBST([OMPI_COMPONENT_DIR])
])
