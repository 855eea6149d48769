#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Self-test of the MPI bundle (contrib/gpu/make-bundle.sh) on this host, in a clean
# environment: its mpirun and ompi_info are used, every library of every program and plugin
# resolves, the ones the bundle has to its own copies, Open MPI's folders are inside the
# bundle, and mpirun runs a 4-rank allreduce. Prints "selftest: ok ..." or what failed.
set -euo pipefail
here=$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
if [ -z "${MPI_BUNDLE_SELFTEST_CLEAN:-}" ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/mpi-bundle-test.XXXXXX")
    rc=0
    env -i MPI_BUNDLE_SELFTEST_CLEAN="$work" HOME="$work" TMPDIR="${TMPDIR:-/tmp}" \
        PATH=/usr/local/bin:/usr/bin:/bin bash --noprofile --norc "$here/selftest.sh" || rc=$?
    rm -rf "$work"
    exit "$rc"
fi
fail() { echo "selftest FAILED: $*"; exit 1; }
cd "$MPI_BUNDLE_SELFTEST_CLEAN"
# shellcheck disable=SC1091
. "$here/env.sh"
root=$MPI_BUNDLE/root
for cmd in mpirun ompi_info orted; do
    case $(command -v "$cmd") in "$root"/*) ;; *) fail "$cmd is '$(command -v "$cmd")', not the bundle's" ;; esac
done
ompi_info --path all >paths.txt 2>&1 || fail "ompi_info: $(head -5 paths.txt)"
for k in Prefix Libdir Pkglibdir Pkgdatadir Sysconfdir; do
    v=$(sed -n "s/^ *$k: //p" paths.txt | head -n1)
    case $v in "$root"/*) [ -e "$v" ] || fail "ompi_info: $k $v does not exist" ;; *) fail "ompi_info: $k is '$v'" ;; esac
done
ompi_info --param coll all --level 9 >coll.txt 2>&1 || fail "ompi_info --param coll"
grep -q "MCA coll: tuned" coll.txt || fail "the coll components are not found"
lib=$(dirname "$MPI_BUNDLE_COMPONENT_DIR")/..
libs=0
while IFS= read -r -d '' f; do
    [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    ldd "$f" >ldd.txt 2>&1 || true
    if grep -q "not found" ldd.txt; then fail "ldd ${f#"$root"/}: $(grep 'not found' ldd.txt | head -3 | tr -d '\t')"; fi
    while read -r so arrow path _; do
        [ "$arrow" = "=>" ] || continue
        if [ -e "$lib/$so" ] && case $path in "$root"/*) false ;; *) true ;; esac; then
            fail "ldd ${f#"$root"/}: $so resolves to $path, not the bundle's copy"
        fi
    done <ldd.txt
    libs=$((libs + 1))
done < <(find "$root" -type f \( -name '*.so*' -o -perm -u+x \) -print0)
hello=$root/usr/libexec/mpi-bundle/mpi-hello
mpirun -np 4 "$hello" >hello.txt 2>err.txt || fail "mpirun -np 4: $(tail -5 hello.txt err.txt)"
[ "$(grep -c ': sum 10$' hello.txt)" = 4 ] || fail "mpirun -np 4 printed: $(head -5 hello.txt)"
[ ! -s err.txt ] || fail "mpirun -np 4 wrote to stderr: $(head -5 err.txt)"
# the UCX point-to-point layer (its transports are plugins of the bundle's UCX)
mpirun -np 2 --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any "$hello" >hello.txt 2>err.txt ||
    fail "mpirun -np 2 over UCX: $(tail -5 hello.txt err.txt)"
[ "$(grep -c ': sum 3$' hello.txt)" = 2 ] && [ ! -s err.txt ] || fail "mpirun -np 2 over UCX: $(head -5 hello.txt err.txt)"
ucx_info -v >/dev/null 2>&1 || fail "ucx_info -v"
if command -v lstopo-no-graphics >/dev/null; then
    case $(command -v lstopo-no-graphics) in "$root"/*) lstopo-no-graphics >/dev/null 2>&1 || fail "lstopo-no-graphics" ;; esac
fi
echo "selftest: ok ($libs programs and libraries resolve inside the bundle or to the host's C runtime; mpirun -np 4 allreduce, and over UCX)"
