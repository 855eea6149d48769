#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Configure, build and install coll/gpu into ./_install (build tree ./_build).
# Extra arguments go to configure, e.g. --with-ompi=/opt/openmpi or --without-cuda.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ -x configure ] || ./autogen.sh >/dev/null
mkdir -p _build
cd _build
if [ ! -f Makefile ] || [ $# -gt 0 ]; then
    ../configure --prefix="$top/_install" "$@"
fi
make -j"$(nproc)" >/dev/null
make install >/dev/null
echo "build: installed into $top/_install (component: _install/lib/openmpi/mca_coll_gpu.so)"
