dnl SPDX-License-Identifier: BSD-3-Clause
dnl Copyright (c) 2026 The coll/gpu authors. See LICENSE.
dnl CG_OMPI_INTERNAL_HEADERS: make sure every Open MPI internal header the component includes
dnl can be found, and explain what is missing when one cannot.
dnl
dnl Open MPI 5.0's installed development headers have two gaps:
dnl   - opal_config.h names the headers of the threads framework it was built with
dnl     (opal/mca/threads/pthreads/threads_pthreads_*.h), which are not installed;
dnl   - opal's headers include pmix.h, which lives in PMIx's own include directory.
dnl The first is filled from the Open MPI source tree of the same release (--with-ompi-src):
dnl the missing headers are copied into ompi-compat/ of the build tree. The second is found
dnl through --with-pmix, then pkg-config pmix.
dnl Appends to OMPI_CPPFLAGS; sets cg_ompi_headers_note (one line for the summary).
AC_DEFUN([CG_OMPI_INTERNAL_HEADERS], [
    AC_ARG_WITH([ompi-src],
        [AS_HELP_STRING([--with-ompi-src=DIR],
            [source tree of the same Open MPI release (the unpacked release tarball), for the
             internal headers its installation lacks (Open MPI 5.0 installs no
             opal/mca/threads/pthreads/*.h)])])
    AC_ARG_WITH([pmix],
        [AS_HELP_STRING([--with-pmix=DIR],
            [PMIx installation that Open MPI 5.0 was built with, whose headers Open MPI's
             headers include (default: Open MPI's include directory, then pkg-config pmix)])])

    AS_IF([test "$with_ompi_src" = "yes" || test "$with_ompi_src" = "no"], [with_ompi_src=""])
    AS_IF([test -n "$with_ompi_src" && test ! -d "$with_ompi_src/opal"],
          [AC_MSG_ERROR([--with-ompi-src=$with_ompi_src is not an Open MPI source tree (no opal/ in it)])])
    AS_IF([test "$with_pmix" = "yes" || test "$with_pmix" = "no"], [with_pmix=""])

    cg_ompi_compat_dir="`pwd`/ompi-compat"
    rm -rf "$cg_ompi_compat_dir"
    cat > conftest_ompi.c <<_CGEOF
#include "ompi_config.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/mca/coll/base/base.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "opal/util/show_help.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/base/mca_base_var_enum.h"
int cg_conftest(void) { mca_coll_base_component_t c; (void)c; return 0; }
_CGEOF
    AC_MSG_CHECKING([for Open MPI's internal headers])
    cg_ompi_headers_ok=no
    cg_ompi_missing=""
    cg_ompi_copied=""
    cg_ompi_pmix_note=""
    cg_ompi_tries=0
    while test $cg_ompi_tries -lt 30; do
        cg_ompi_tries=`expr $cg_ompi_tries + 1`
        AS_IF([$CC $CPPFLAGS $OMPI_CPPFLAGS -c conftest_ompi.c -o conftest_ompi.o >conftest_ompi.err 2>&1],
              [cg_ompi_headers_ok=yes; break])
        cat conftest_ompi.err >&AS_MESSAGE_LOG_FD
        dnl gcc: "fatal error: X: No such file or directory"; clang: "fatal error: 'X' file not found"
        cg_ompi_missing=`sed -n -e 's/.*fatal error: \([[^: ]]*\): No such file or directory.*/\1/p' \
                                -e "s/.*fatal error: '\([[^']]*\)' file not found.*/\1/p" conftest_ompi.err | sed -n 1p`
        AS_IF([test -z "$cg_ompi_missing"], [break])
        AS_CASE([$cg_ompi_missing],
            [pmix*.h|pmix/*], [
                AS_IF([test -n "$cg_ompi_pmix_note"], [break])
                AS_IF([test -n "$with_pmix"],
                      [cg_ompi_pmix_flags="-I$with_pmix/include"
                       cg_ompi_pmix_note="PMIx headers from --with-pmix=$with_pmix"],
                      [test -n "$PKG_CONFIG" && $PKG_CONFIG --exists pmix],
                      [cg_ompi_pmix_flags=`$PKG_CONFIG --cflags pmix`
                       cg_ompi_pmix_note="PMIx headers from pkg-config pmix"],
                      [break])
                OMPI_CPPFLAGS="$OMPI_CPPFLAGS $cg_ompi_pmix_flags"
                cg_ompi_missing=""],
            [
                AS_IF([test -z "$with_ompi_src" || test ! -f "$with_ompi_src/$cg_ompi_missing"], [break])
                dnl copy the whole directory's headers: the sources include more of them than the test
                cg_ompi_subdir=`dirname "$cg_ompi_missing"`
                AS_IF([test ! -d "$cg_ompi_compat_dir"],
                      [OMPI_CPPFLAGS="$OMPI_CPPFLAGS -I$cg_ompi_compat_dir"])
                $MKDIR_P "$cg_ompi_compat_dir/$cg_ompi_subdir"
                cp "$with_ompi_src/$cg_ompi_subdir"/*.h "$cg_ompi_compat_dir/$cg_ompi_subdir/"
                cg_ompi_copied="$cg_ompi_copied $cg_ompi_subdir/*.h"
                cg_ompi_missing=""])
    done
    rm -f conftest_ompi.c conftest_ompi.o conftest_ompi.err

    AS_IF([test "$cg_ompi_headers_ok" = "yes"], [
        cg_ompi_headers_note="complete"
        AS_IF([test -n "$cg_ompi_copied"],
              [cg_ompi_headers_note="installed ones, plus from $with_ompi_src:$cg_ompi_copied"])
        AS_IF([test -n "$cg_ompi_pmix_note"],
              [cg_ompi_headers_note="$cg_ompi_headers_note; $cg_ompi_pmix_note"])
        AC_MSG_RESULT([yes ($cg_ompi_headers_note)])
    ], [
        AC_MSG_RESULT([no])
        cg_ompi_src_note=""
        AS_IF([test -n "$with_ompi_src"], [cg_ompi_src_note=" (It is not in $with_ompi_src either.)"])
        AS_CASE([$cg_ompi_missing],
        [""], [AC_MSG_ERROR([Open MPI's internal headers do not compile ($cg_ompi_how gives "$OMPI_CPPFLAGS"); see config.log])],
        [ompi_config.h|ompi/*], [AC_MSG_ERROR([Open MPI's internal headers are not installed: $cg_ompi_missing was not found ($cg_ompi_how gives "$OMPI_CPPFLAGS").
  An MCA component needs the headers that Open MPI installs only when it is configured with
  --with-devel-headers. Debian/Ubuntu: install libopenmpi-dev. Spack: use the openmpi package of
  contrib/spack (it adds the headers), see docs/INSTALL.md. Or point --with-ompi at an
  installation that has include/openmpi/ompi_config.h.])],
        [event.h|event2/*|hwloc.h|hwloc/*], [AC_MSG_ERROR([Open MPI's headers include $cg_ompi_missing (libevent or hwloc, which Open MPI was built with), not found.
  Add its include directory to CPPFLAGS (CPPFLAGS=-I<prefix>/include) or install its development
  package (Debian: libevent-dev, libhwloc-dev).])],
        [pmix*.h|pmix/*], [AC_MSG_ERROR([Open MPI's headers include $cg_ompi_missing, from PMIx, which was not found.
  Pass --with-pmix=DIR, the PMIx installation Open MPI was built with (DIR/include/pmix.h),
  or make pkg-config find it (PKG_CONFIG_PATH=DIR/lib/pkgconfig; Debian: libpmix-dev).])],
        [AC_MSG_ERROR([Open MPI's installed internal headers are incomplete: $cg_ompi_missing is included but not installed.
  Open MPI 5.0 installs its development headers without opal/mca/threads/pthreads/*.h (and
  opal_config.h names them). Workaround: pass --with-ompi-src=DIR, an unpacked source tree of
  the same Open MPI release (the release tarball; Debian/Ubuntu: apt-get source openmpi);
  configure copies the missing headers from it into ompi-compat/ of the build tree.
  See docs/INSTALL.md.$cg_ompi_src_note])])
    ])
])
