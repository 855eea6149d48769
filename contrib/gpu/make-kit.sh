#!/bin/bash
# Prepare a GPU session, here on the build machine: the MPI runtime in .mpi-bundle/ and a
# build of coll/gpu in .gpu-kit/ (both ignored by git), to be carried to the device machine
# and run there with contrib/gpu/run-kit.sh (docs/GPU.md).
#
#   contrib/gpu/make-kit.sh [--bundler PATH] [--build-dir DIR] [--gencode FLAGS] [--host-only]
#
#   --bundler PATH   the tool that makes the runtime (called as PATH OUT; it must leave
#                    OUT/env.sh and OUT/selftest.sh); default contrib/gpu/make-bundle.sh
#   --build-dir DIR  pack this existing build instead of configuring .gpu-build/
#   --gencode FLAGS  nvcc architectures of .gpu-build (default sm_90: H100, H200)
#   --host-only      accept a build without CUDA (the dry run on the host device layer)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bundler=$top/contrib/gpu/make-bundle.sh
build=""
gencode="-gencode=arch=compute_90,code=sm_90"
host_only=0
while [ $# -gt 0 ]; do
    case $1 in
    --bundler) bundler=$2; shift 2 ;;
    --build-dir) build=$(cd "$2" && pwd); shift 2 ;;
    --gencode) gencode=$2; shift 2 ;;
    --host-only) host_only=1; shift ;;
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
rm -rf .gpu-kit
mkdir -p .gpu-kit/.libs .gpu-kit/tests/mpi .gpu-kit/tests/unit
cp "$build/.libs/mca_coll_gpu.so" .gpu-kit/.libs/
cp ompi_coll_gpu/help-coll-gpu.txt .gpu-kit/
cp "$build/coll_gpu_hello" "$build/coll_gpu_bench" "$build/coll_gpu_info" .gpu-kit/
cp "$build/tests/mpi/coll_check" "$build/tests/mpi/coll_fail" .gpu-kit/tests/mpi/
for t in "$build"/tests/unit/test_*; do
    case $t in *.o | *.log | *.trs) continue ;; esac
    [ -x "$t" ] && cp "$t" .gpu-kit/tests/unit/
done
strip --strip-unneeded .gpu-kit/.libs/mca_coll_gpu.so
{
    if [ -n "${CG_KIT_REVISION:-}" ]; then
        echo "revision $CG_KIT_REVISION"
    else
        echo "revision $(git describe --always --dirty 2>/dev/null || echo unknown) ($(git log -1 --format='%H %cd' 2>/dev/null || echo 'no git'))"
    fi
    echo "made $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(uname -n)"
    echo "build: $config"
    echo "runtime: $(basename "$bundler"); $(head -3 .mpi-bundle/MANIFEST 2>/dev/null | tail -2 | tr '\n' ' ')"
} >.gpu-kit/KIT-INFO

bytes=$(du -sb .mpi-bundle .gpu-kit | awk '{ s += $1 } END { print s }')
du -sh .mpi-bundle .gpu-kit
if [ "$bytes" -gt $((64 << 20)) ]; then
    echo "make-kit: .mpi-bundle and .gpu-kit hold $bytes bytes: more than the 64 MiB that can be carried" >&2
    exit 1
fi
echo "make-kit: ready ($((bytes >> 20)) MiB to carry: .mpi-bundle .gpu-kit); on the device machine:"
echo "  bash contrib/gpu/run-kit.sh 1      then      bash contrib/gpu/run-kit.sh 2"
