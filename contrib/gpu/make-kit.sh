#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Prepare a GPU session, here on the build machine: the MPI runtime in .mpi-bundle/ and a
# build of coll/gpu in .gpu-kit/ (both ignored by git), to be carried to the device machine
# and run there with contrib/gpu/run-kit.sh (docs/GPU.md).
#
#   contrib/gpu/make-kit.sh [--bundler PATH] [--build-dir DIR] [--gencode FLAGS] [--host-only]
#                           [--save-base] [--no-ucx-cuda]
#
#   --bundler PATH   the tool that makes the runtime (called as PATH OUT; it must leave
#                    OUT/env.sh and OUT/selftest.sh); default contrib/gpu/make-bundle.sh
#   --build-dir DIR  pack this existing build instead of configuring .gpu-build/
#   --gencode FLAGS  nvcc architectures of .gpu-build (default sm_90: H100, H200)
#   --host-only      accept a build without CUDA (the dry run on the host device layer)
#   --save-base      first move the kit there is to .gpu-kit-base (the build to compare
#                    with: run-kit.sh's phase ab with CG_KIT_AB_BASE; carry it too)
#   --no-ucx-cuda    no UCX built with CUDA in .gpu-kit/ucx-cuda (contrib/gpu/make-ucx-cuda.sh,
#                    pip; phase ucxcuda): skipped with --host-only too
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bundler=$top/contrib/gpu/make-bundle.sh
build=""
gencode="-gencode=arch=compute_90,code=sm_90"
host_only=0
save_base=0
ucx_cuda=1
while [ $# -gt 0 ]; do
    case $1 in
    --bundler) bundler=$2; shift 2 ;;
    --build-dir) build=$(cd "$2" && pwd); shift 2 ;;
    --gencode) gencode=$2; shift 2 ;;
    --host-only) host_only=1; shift ;;
    --save-base) save_base=1; shift ;;
    --no-ucx-cuda) ucx_cuda=0; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "make-kit: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
cd "$top"
jobs=$(nproc)

# 1. The runtime.
echo "make-kit: MPI runtime into .mpi-bundle ($(basename "$bundler"))"
bash "$bundler" "$top/.mpi-bundle"
for f in env.sh selftest.sh; do
    [ -f .mpi-bundle/$f ] || { echo "make-kit: $bundler left no .mpi-bundle/$f" >&2; exit 1; }
done

# 2. The build.
if [ -z "$build" ]; then
    build=$top/.gpu-build
    [ -x configure ] || ./autogen.sh >/dev/null
    mkdir -p "$build"
    if [ ! -f "$build/Makefile" ] || ! grep -qF -- "$gencode" "$build/config.log"; then
        echo "make-kit: configure .gpu-build ($gencode)"
        (cd "$build" && "$top/configure" --with-nvcc-gencode="$gencode" >configure.out)
    fi
fi
echo "make-kit: build in ${build#"$top"/}"
nice make -C "$build" -j"$jobs" >/dev/null
nice make -C "$build" -j"$jobs" check TESTS= >/dev/null # the test programs
config=$("$build/coll_gpu_info" --ranks 1 2>/dev/null | sed -n 's/^ *build: //p')
case $config in
*"CUDA: yes"*) ;;
*)
    if [ "$host_only" = 0 ]; then
        echo "make-kit: the build has no CUDA ($config): use a CUDA toolkit, or --host-only for a dry run" >&2
        exit 1
    fi
    ;;
esac

# 3. The kit: what run-kit.sh and the suite need from a build folder.
if [ "$save_base" = 1 ]; then
    [ -f .gpu-kit/KIT-INFO ] || { echo "make-kit: --save-base: no .gpu-kit to keep" >&2; exit 1; }
    rm -rf .gpu-kit-base
    mv .gpu-kit .gpu-kit-base
    echo "make-kit: the previous kit is .gpu-kit-base ($(sed -n 's/^revision //p' .gpu-kit-base/KIT-INFO))"
fi
rm -rf .gpu-kit
mkdir -p .gpu-kit/.libs .gpu-kit/lib .gpu-kit/tests/mpi .gpu-kit/tests/unit
cp "$build/.libs/mca_coll_gpu.so" .gpu-kit/.libs/
cp ompi_coll_gpu/help-coll-gpu.txt .gpu-kit/
# programs linked against the project's shared library (libcg_sim: the simulated GPU) are
# libtool wrapper scripts in the build tree: take the programs themselves from .libs/; the
# library goes to lib/ (run-kit.sh puts it on LD_LIBRARY_PATH)
kit_prog() { # PROGRAM DESTINATION-FOLDER
    local dir base
    dir=$(dirname "$1") base=$(basename "$1")
    if [ -x "$dir/.libs/$base" ] && [ "$(head -c 4 "$1" | tail -c 3)" != ELF ]; then
        cp "$dir/.libs/$base" "$2/"
    else
        cp "$1" "$2/"
    fi
}
cp -P "$build"/.libs/libcg_sim.so* .gpu-kit/lib/
for p in coll_gpu_hello coll_gpu_bench coll_gpu_info coll_gpu_overlap; do kit_prog "$build/$p" .gpu-kit; done
for p in coll_check coll_costs coll_fail coll_coverage coll_threads coll_progress; do kit_prog "$build/tests/mpi/$p" .gpu-kit/tests/mpi; done
# the probe of the driver operations a small call is made of (phase probe): the build's MPI
# and CUDA flags; none without a CUDA toolkit
mk_var() { sed -n "s/^$1 = //p" "$build/Makefile" | head -1; }
cuda_cppflags=$(mk_var CUDA_CPPFLAGS) cuda_libs=$(mk_var CUDA_LIBS)
if [ -n "$cuda_libs" ]; then
    # shellcheck disable=SC2086 # flag lists
    "$(mk_var NVCC)" -O2 $(mk_var NVCC_GENCODE) -c contrib/gpu/kit-persist.cu \
        -o "$build/kit-persist.o"
    # shellcheck disable=SC2086 # flag lists
    ${CC:-gcc} -O2 -Wall $cuda_cppflags $(mk_var OMPI_CPPFLAGS) contrib/gpu/kit-probe.c \
        "$build/kit-persist.o" -o .gpu-kit/coll_gpu_probe $(mk_var OMPI_LDFLAGS) \
        $(mk_var OMPI_LIBS) $cuda_libs
else
    echo "make-kit: no CUDA in the build: no coll_gpu_probe"
fi
# the unit tests, but test_cuda_driver: it checks the CUDA layer against a fake driver (the
# same on any machine, run by make check) and carries every kernel (20 MiB with CI's
# architectures)
for t in "$build"/tests/unit/test_*; do
    case $t in *.o | *.log | *.trs | */test_cuda_driver) continue ;; esac
    [ -x "$t" ] && kit_prog "$t" .gpu-kit/tests/unit
done
# every program the MPI suite runs from the build folder is in the kit (the first GPU run
# found coll_coverage missing, which the dry run's selection of the suite does not run)
for p in $(cat tests/mpi/run_suite.sh tests/mpi/suite_*.sh | grep -o '\$builddir/[A-Za-z0-9_/]*' |
    sed 's|^\$builddir/||' | sort -u); do
    [ -e ".gpu-kit/$p" ] || { echo "make-kit: the suite runs $p, which the kit lacks" >&2; exit 1; }
done
while IFS= read -r -d '' f; do # no debug information: the carry limit is 64 MiB
    if [ "$(head -c 4 "$f" | tail -c 3)" = ELF ]; then strip --strip-unneeded "$f"; fi
done < <(find .gpu-kit -type f -print0)
# libraries the kit's programs need that neither the runtime nor a host with a C compiler
# has (libsubunit of the unit tests): into lib/ as well
kit_lib=$top/.gpu-kit/lib
mb_lib=$(ls -d "$top"/.mpi-bundle/root/usr/lib/*-linux-gnu 2>/dev/null | head -1)
search=$kit_lib:$mb_lib:$mb_lib/ucx:$mb_lib/openmpi/lib:$mb_lib/pmix2/lib
host_libs=" linux-vdso.so.1 ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libresolv.so.2 libutil.so.1 libgcc_s.so.1 libstdc++.so.6 libcuda.so.1 "
while IFS= read -r -d '' f; do
    [ "$(head -c 4 "$f" | tail -c 3)" = ELF ] || continue
    while read -r so arrow path _; do
        [ "$arrow" = "=>" ] || continue
        case $host_libs in *" $so "*) continue ;; esac
        case $path in
        "$top"/.gpu-kit/* | "$top"/.mpi-bundle/*) ;;
        /*) [ -e "$kit_lib/$so" ] || cp -L "$path" "$kit_lib/$so" ;;
        *) echo "make-kit: WARNING: ${f#"$top"/} needs $so, not found here" >&2 ;;
        esac
    done < <(LD_LIBRARY_PATH=$search ldd "$f" 2>/dev/null || true)
done < <(find "$top/.gpu-kit" -type f -print0)
# UCX with CUDA for phase ucxcuda (its libraries need only the driver's): without it, or
# without pip's packages, the phase is skipped and says so
if [ "$ucx_cuda" = 1 ] && [ "$host_only" = 0 ] &&
    ! bash contrib/gpu/make-ucx-cuda.sh "$top/.gpu-kit/ucx-cuda"; then
    rm -rf .gpu-kit/ucx-cuda
    echo "make-kit: WARNING: no UCX with CUDA in the kit: phase ucxcuda will be skipped" >&2
fi
{
    if [ -n "${CG_KIT_REVISION:-}" ]; then
        echo "revision $CG_KIT_REVISION"
    else
        echo "revision $(git describe --always --dirty 2>/dev/null || echo unknown) ($(git log -1 --format='%H %cd' 2>/dev/null || echo 'no git'))"
    fi
    echo "made $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(uname -n)"
    echo "build: $config"
    echo "runtime: $(basename "$bundler"); $(head -3 .mpi-bundle/MANIFEST 2>/dev/null | tail -2 | tr '\n' ' ')"
    echo "ucx with cuda: $(cat .gpu-kit/ucx-cuda/VERSION 2>/dev/null || echo none)"
} >.gpu-kit/KIT-INFO

carried=(.mpi-bundle .gpu-kit)
[ "$save_base" = 1 ] && carried+=(.gpu-kit-base)
bytes=$(du -sb "${carried[@]}" | awk '{ s += $1 } END { print s }')
du -sh "${carried[@]}"
if [ "$bytes" -gt $((64 << 20)) ]; then
    echo "make-kit: ${carried[*]} hold $bytes bytes: more than the 64 MiB that can be carried" >&2
    exit 1
fi
echo "make-kit: ready ($((bytes >> 20)) MiB to carry: ${carried[*]}); on the device machine:"
if [ "$save_base" = 1 ]; then
    echo "  CG_KIT_AB_BASE=\$PWD/.gpu-kit-base bash contrib/gpu/run-lease.sh 200 320"
else
    echo "  bash contrib/gpu/run-kit.sh 1      then      bash contrib/gpu/run-kit.sh 2"
fi
