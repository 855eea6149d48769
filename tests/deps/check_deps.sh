#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# make check: the dependency rules of tests/deps/check_deps.py on this build's objects.
exec python3 "$(dirname "$0")/check_deps.py" "${CG_SRCDIR:-$(dirname "$0")/../..}" "${CG_BUILDDIR:-.}"
