#!/bin/bash
# Give every source file of the repository its license header (SPDX identifier and
# copyright line), in the file's own comment syntax. Idempotent: a file that already has an
# SPDX-License-Identifier line is left alone, so run it again after adding files.
#
#   contrib/add-spdx.sh            add the missing headers (files tracked by git)
#   contrib/add-spdx.sh --check    list the files without one; exit 1 if there are any
#
# Not given headers: documentation (*.md), data (topology fixtures, rules examples), LICENSE,
# NEWS and other files without a comment syntax.
set -euo pipefail
cd "$(dirname "$0")/.."
spdx="SPDX-License-Identifier: BSD-3-Clause"
copyright="Copyright (c) 2026 The coll/gpu authors. See LICENSE."
check=0
[ "${1:-}" = --check ] && check=1

# comment style of a file: c (/* */), hash (#), dnl (m4), lua (--), or nothing
style() {
    case $1 in
    *.c | *.h | *.cu | *.cuh) echo c ;;
    *.m4 | configure.ac) echo dnl ;;
    *.lua | *.lua.in) echo lua ;;
    *.sh | *.py | *.am | *.yaml | *.yml | *.txt | */run | autogen.sh | .gitignore) echo hash ;;
    *) head -n 1 "$1" 2>/dev/null | grep -qE '^#!.*(sh|bash|python)' && echo hash || true ;;
    esac
}

missing=0
while IFS= read -r -d '' f; do
    [ -f "$f" ] || continue
    s=$(style "$f")
    [ -n "$s" ] || continue
    grep -q "SPDX-License-Identifier:" "$f" && continue
    missing=$((missing + 1))
    if [ "$check" = 1 ]; then
        echo "no SPDX header: $f"
        continue
    fi
    case $s in
    c) header="/* $spdx\n * $copyright */" ;;
    dnl) header="dnl $spdx\ndnl $copyright" ;;
    lua) header="-- $spdx\n-- $copyright" ;;
    hash) header="# $spdx\n# $copyright" ;;
    esac
    tmp=$(mktemp)
    # after a #! line (and a Python coding line), else first
    awk -v h="$header" '
        function emit() { gsub(/\\n/, "\n", h); print h; done = 1 }
        NR == 1 && /^#!/ { print; next }
        !done && /^#.*coding[:=]/ { print; next }
        !done { emit() }
        { print }
        END { if (!done) emit() }' "$f" >"$tmp"
    cat "$tmp" >"$f" # keeps the file's mode
    rm -f "$tmp"
done < <(git ls-files -z)

if [ "$check" = 1 ]; then
    [ "$missing" -eq 0 ] && echo "add-spdx: every source file has an SPDX header" && exit 0
    echo "add-spdx: $missing files without an SPDX header: run contrib/add-spdx.sh"
    exit 1
fi
echo "add-spdx: $missing files given a header"
