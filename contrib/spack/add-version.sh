#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Record a release in the Spack package: its version and the sha256 of its tarball (the
# file `make distcheck` made and that the release publishes).
#
#   contrib/spack/add-version.sh coll-gpu-X.Y.Z.tar.gz
set -eu
tarball=${1:?usage: add-version.sh coll-gpu-X.Y.Z.tar.gz}
pkg=$(cd "$(dirname "$0")" && pwd)/spack_repo/coll_gpu/packages/coll_gpu/package.py
name=$(basename "$tarball")
version=${name#coll-gpu-}
version=${version%.tar.gz}
case $version in
[0-9]*.[0-9]*.[0-9]*) ;;
*) echo "add-version: $name is not coll-gpu-X.Y.Z.tar.gz" >&2; exit 1 ;;
esac
sha=$(sha256sum "$tarball" | cut -d' ' -f1)
line="    version(\"$version\", sha256=\"$sha\")"
tmp=$(mktemp)
# replace the version's line if present, else add it first (newest first); drop placeholders
awk -v v="$version" -v line="$line" '
    index($0, "version(\"" v "\"") { if (!done) print line; done = 1; next }
    /^    version\("/ && !done { print line; done = 1 }
    { print }
    END { if (!done) exit 1 }' "$pkg" | grep -v '@SHA256_' >"$tmp" ||
    { rm -f "$tmp"; echo "add-version: no version lines in $pkg" >&2; exit 1; }
cat "$tmp" >"$pkg"
rm -f "$tmp"
echo "add-version: $pkg: $line"
