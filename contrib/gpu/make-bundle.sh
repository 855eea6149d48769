#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# A relocatable Open MPI / UCX / hwloc runtime from the Debian packages installed on this
# machine (contrib/install-deps.sh installs them): their files and every library they need
# that a Linux host with a C/C++ compiler does not have, under OUT/root/ with the paths of
# the packages, plus OUT/env.sh (source it: OPAL_PREFIX, PATH, LD_LIBRARY_PATH, the
# component and plugin paths), OUT/selftest.sh and a small MPI program to test it with.
# The folder works from anywhere: every path is derived from where env.sh is.
#
#   contrib/gpu/make-bundle.sh [OUT]         (default: .mpi-bundle in the repository)
#
# Nothing is downloaded; the packages' files are taken as dpkg installed them.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/contrib/gpu
out=${1:-$top/.mpi-bundle}
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
die() { echo "make-bundle: $*" >&2; exit 1; }

# The runtime: mpirun and its helpers, the MPI libraries and components, PMIx, UCX with its
# transports, hwloc with its plugins and lstopo.
pkgs="openmpi-bin openmpi-common libopenmpi3 libpmix2 libucx0 ucx-utils libhwloc15"
optional_pkgs="libhwloc-plugins hwloc hwloc-nox"
# What every host that runs the kit has (glibc, the compiler's runtime): never shipped, so
# that the host's own (newer) copies serve the host's programs too.
host_libs="ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1
libresolv.so.2 libutil.so.1 libanl.so.1 libgcc_s.so.1 libstdc++.so.6 linux-vdso.so.1"
# Files of the packages the runtime does not need (C programs only: no Fortran, Java, C++
# bindings; no documentation but the licences), and hwloc's graphical lstopo and its GL,
# OpenCL and libxml2 plugins (X11, cairo, 30 MB of ICU; hwloc reads XML without them).
skip_re="^/usr/share/(man|lintian|bug|info)/|^/usr/share/doc/.*/(NEWS|README|changelog|TODO)|^/usr/include/|\.a$|\.la$|/pkgconfig/|libmpi_(mpifh|usempi|java|cxx)|libmpi_usempif08|/mpijavac|\.mod$|^/usr/share/java/|^/usr/bin/(lstopo|hwloc-ls)$|/hwloc/hwloc_(gl|opencl|xml_libxml)\.so$"

for t in dpkg-query ldd gcc readelf; do command -v "$t" >/dev/null || die "'$t' not found"; done
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        die "package $p is not installed (contrib/install-deps.sh installs it)"
done
for p in $optional_pkgs; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then pkgs="$pkgs $p"; fi
done
mpicc=$(command -v mpicc || true)
[ -n "$mpicc" ] || die "mpicc not found (package libopenmpi-dev) to build the self-test program"

# Rebuilt only when the packages or this script changed.
stamp=$( { for p in $pkgs; do dpkg-query -W -f='${Package} ${Version}\n' "$p"; done
           sha256sum "$0" "$here/bundle-env.sh" "$here/bundle-selftest.sh" | cut -d' ' -f1; } | sha256sum | cut -d' ' -f1)
if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ] && [ -x "$out/root/usr/bin/orterun" ]; then
    echo "make-bundle: $out is up to date"
    exit 0
fi
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
root=$out/root.new
rm -rf "$root" "$out/.stamp"
mkdir -p "$root"
trap 'rm -rf "$root"' EXIT

# 1. The packages' files (symbolic links kept as links).
for p in $pkgs; do
    dpkg-query -L "$p" | grep -Ev "$skip_re" | while IFS= read -r f; do
        if [ -L "$f" ] || [ -f "$f" ]; then
            mkdir -p "$root$(dirname "$f")"
            cp -a "$f" "$root$f"
        fi
    done
done
# Links that the packages' install scripts make (update-alternatives): mpirun, mpiexec.
for name in mpirun mpiexec; do
    target=$(readlink -f "/usr/bin/$name" 2>/dev/null || true)
    if [ -n "$target" ] && [ -e "$root$target" ] && [ "$(dirname "$target")" = /usr/bin ]; then
        ln -sf "$(basename "$target")" "$root/usr/bin/$name"
    fi
done
[ -x "$root/usr/bin/mpirun" ] || die "no mpirun in the bundle"

# 2. The self-test program (C, MPI only).
mkdir -p "$root/usr/libexec/mpi-bundle"
"$mpicc" -O2 -o "$root/usr/libexec/mpi-bundle/mpi-hello" "$here/bundle-hello.c" ||
    die "cannot compile the self-test program"

# 3. Every library that the files need, from wherever this machine has it, under the
#    bundle's library folder (the closure: ldd lists indirect dependencies too).
libdir=$root/usr/lib/$ma
search="$libdir:$libdir/ucx:$libdir/openmpi/lib:$libdir/pmix2/lib"
is_host_lib() { case " $(echo $host_libs) " in *" $1 "*) return 0 ;; esac; return 1; }
missing=""
while IFS= read -r -d '' f; do
    [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    while read -r so arrow path _; do
        [ "$arrow" = "=>" ] || continue
        is_host_lib "$so" && continue
        if [ "$path" = "not" ]; then
            missing="$missing $so(${f#"$root"})"
            continue
        fi
        case $path in "$root"/*) continue ;; esac
        [ -e "$libdir/$so" ] || cp -L "$path" "$libdir/$so"
    done < <(LD_LIBRARY_PATH=$search ldd "$f" 2>/dev/null || true)
done < <(find "$root" -type f -print0)
[ -z "$missing" ] || die "libraries not found on this machine:$missing"

# 4. env.sh, selftest.sh, what is inside.
cp "$here/bundle-env.sh" "$out/env.sh"
cp "$here/bundle-selftest.sh" "$out/selftest.sh"
chmod +x "$out/selftest.sh"
{ echo "# packages (dpkg) in root/"; for p in $pkgs; do dpkg-query -W -f='${Package} ${Version}\n' "$p"; done
  echo "# libraries copied from this machine"; comm -13 <(for p in $pkgs; do dpkg-query -L "$p"; done | xargs -n1 basename 2>/dev/null | sort -u) \
      <(ls "$libdir" | sort) | grep '\.so' || true; } >"$out/MANIFEST"
rm -rf "$out/root"
mv "$root" "$out/root"
trap - EXIT
if grep -rqsF -- "$out" "$out/root" "$out/env.sh"; then die "a file in the bundle names $out: not relocatable"; fi
bash "$out/selftest.sh" || die "the self-test failed"
echo "$stamp" >"$out/.stamp"
echo "make-bundle: $out ready ($(du -sh "$out" | cut -f1)); use: source $out/env.sh"
