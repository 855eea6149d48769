#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Run a command with this machine's Open MPI, PMIx, UCX and hwloc hidden, as on the GPU
# machine that has no Open MPI, UCX or hwloc: in a private mount namespace, an empty file
# system over every folder that only their Debian packages fill and /dev/null over each of
# their other files (libraries, programs, headers, configuration); then, as that machine
# has a PMIx of another version in the system's folder, a foreign plugin in the system's
# PMIx and Open MPI plugin folders. Nothing changes outside the command.
#
#   contrib/gpu/hide-system-mpi.sh COMMAND [ARGS...]
#
# Needs root, or unprivileged user namespaces (then the command runs as root of its own
# namespace). Exit status 125: no mount namespace could be made (the command did not run).
set -euo pipefail
pkgs="openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev mpi-default-bin mpi-default-dev
libpmix2 libpmix-dev libucx0 ucx-utils libucx-dev libhwloc15 libhwloc-dev libhwloc-plugins
hwloc hwloc-nox"
[ $# -gt 0 ] || { echo "usage: hide-system-mpi.sh COMMAND [ARGS...]" >&2; exit 2; }

if [ -z "${CG_HIDE_INNER:-}" ]; then
    self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
    if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
        exec env CG_HIDE_INNER=1 unshare -m --propagation private bash "$self" "$@"
    elif unshare -r -m --propagation private true 2>/dev/null; then
        exec env CG_HIDE_INNER=1 unshare -r -m --propagation private bash "$self" "$@"
    fi
    echo "hide-system-mpi: cannot create a mount namespace (needs root or user namespaces)" >&2
    exit 125
fi
unset CG_HIDE_INNER

installed=""
for p in $pkgs; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then installed="$installed $p"; fi
done
declare -A owned
while IFS= read -r p; do owned[$p]=1; done < <(dpkg-query -L $installed 2>/dev/null | grep "^/." | sort -u)

# Folders whose every entry belongs to the packages: hidden as a whole (outermost first).
dirs=() files=0
for p in $(printf '%s\n' "${!owned[@]}" | awk '{ print length($0) " " $0 }' | sort -n | cut -d' ' -f2-); do
    [ -d "$p" ] && [ ! -L "$p" ] || continue
    case $p in /usr | /usr/* | /etc/*) ;; *) continue ;; esac
    [ "$(echo "$p" | tr -cd / | wc -c)" -ge 2 ] || continue # never /usr/lib, /etc itself
    inside=0
    for d in "${dirs[@]}"; do case $p in "$d"/*) inside=1 ;; esac; done
    [ "$inside" = 0 ] || continue
    foreign=$( (find "$p" -mindepth 1 2>/dev/null || true) | while IFS= read -r e; do
        [ -n "${owned[$e]:-}" ] || { echo "$e"; break; }; done || true)
    if [ -z "$foreign" ]; then dirs+=("$p"); fi
done
for d in "${dirs[@]}"; do mount -t tmpfs -o ro,size=4k,mode=755 cg-hidden "$d"; done
# Their other files (symbolic links need nothing: their targets are hidden).
for p in "${!owned[@]}"; do
    [ -f "$p" ] && [ ! -L "$p" ] || continue
    inside=0
    for d in "${dirs[@]}"; do case $p in "$d"/*) inside=1 ;; esac; done
    [ "$inside" = 0 ] || continue
    mount --bind /dev/null "$p"
    files=$((files + 1))
done
# Foreign plugins where a machine may hold its own runtime (the device machine has another
# PMIx in the system's pmix2 folder): a runtime that searches the system's plugin folders
# instead of its own loads one of these, fails ("undefined symbol") and says so on stderr.
foreign=$(mktemp -d "${TMPDIR:-/tmp}/cg-foreign.XXXXXX")
printf 'extern int cg_foreign_missing(void);\nint cg_foreign(void) { return cg_foreign_missing(); }\n' >"$foreign/foreign.c"
planted=""
if cc -shared -fPIC -o "$foreign/foreign.so" "$foreign/foreign.c" 2>/dev/null; then
    multiarch=$(cc -dumpmachine 2>/dev/null | sed 's/-pc-/-/; s/-unknown-/-/')
    for plugin in pmix2/lib/pmix/pmix_mca_pcompress_zlib.so openmpi/lib/openmpi3/mca_pml_foreign.so; do
        top=/usr/lib/$multiarch/${plugin%%/*}
        [ -d "$top" ] || continue
        mount -t tmpfs -o size=64k,mode=755 cg-foreign "$top"
        mkdir -p "$top/$(dirname "${plugin#*/}")"
        cp "$foreign/foreign.so" "$top/${plugin#*/}"
        planted="$planted $top/${plugin#*/}"
    done
fi
rm -rf "$foreign"
echo "hide-system-mpi: hid ${#dirs[@]} folders and $files files of:$installed; foreign plugins:${planted:- none}" >&2
exec "$@"
