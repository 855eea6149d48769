#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# The planner's choice for every topology fixture over a grid of collectives, sizes, node
# counts and layouts (tests/topo/plan_grid.c) must match plan_grid.golden line for line, so
# that a change of choice is a visible diff. After a deliberate change of the planner or the
# cost model: `check_golden.sh --update`, and explain the diff in the commit.
set -euo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
grid=${CG_BUILDDIR:-.}/tests/topo/plan_grid
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# every fixture with one rank per GPU, then 4 ranks sharing one GPU (the GPU kit's machine)
(cd "$dir" && "$grid" *.xml && "$grid" --shared 4 dgx-h100.xml) >"$out" 2>/dev/null
if [ "${1:-}" = --update ]; then
    cp "$out" "$dir/plan_grid.golden"
    echo "check_golden: plan_grid.golden updated ($(wc -l <"$out") choices)"
    exit 0
fi
if ! diff -u "$dir/plan_grid.golden" "$out"; then
    echo "FAIL check_golden: the planner's choices changed (diff above; --update if intended)"
    exit 1
fi
echo "check_golden: $(wc -l <"$out") choices as recorded"
