#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Plot coll_gpu_bench's JSON/CSV results into a PNG (contrib/gpu/plot-bench.py), after
# installing Debian's python3-matplotlib when it is missing (as root, or through sudo).
#
#   contrib/gpu/plot-bench.sh [-o OUT.png] RESULTS.json|RESULTS.csv...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# the python3 on PATH, or Debian's (where python3-matplotlib installs), whichever has it
pick() {
    for py in python3 /usr/bin/python3; do
        if command -v "$py" >/dev/null && "$py" -c 'import matplotlib' 2>/dev/null; then
            echo "$py"
            return 0
        fi
    done
    return 1
}
if ! py=$(pick); then
    sudo=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null || { echo "plot-bench: need root or sudo to install python3-matplotlib" >&2; exit 1; }
        sudo=sudo
    fi
    echo "plot-bench: installing python3-matplotlib" >&2
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get install -y -q python3-matplotlib >/dev/null ||
        { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q python3-matplotlib >/dev/null; }
fi
py=$(pick) || { echo "plot-bench: matplotlib still missing after installing python3-matplotlib" >&2; exit 1; }
exec "$py" "$here/plot-bench.py" "$@"
