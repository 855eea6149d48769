#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Install the build and test dependencies of coll/gpu on Debian/Ubuntu (apt-get).
# Runs apt-get through sudo when not root. The CUDA toolkit is not installed here: with one
# in /usr/local/cuda (or --with-cuda=DIR) the CUDA device layer is built, without it the
# component is host-only.
set -e
pkgs="libopenmpi-dev openmpi-bin libucx-dev ucx-utils libhwloc-dev hwloc check pkg-config
autoconf automake libtool make gcc g++ python3"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
else
    echo "install-deps: need root or sudo to install:$missing" >&2
    exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y -q $missing >/dev/null || {
    $sudo apt-get update -q >/dev/null
    $sudo apt-get install -y -q $missing >/dev/null
}
