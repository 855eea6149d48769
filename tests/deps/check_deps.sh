#!/bin/sh
# make check: the dependency rules of tests/deps/check_deps.py on this build's objects.
exec python3 "$(dirname "$0")/check_deps.py" "${CG_SRCDIR:-$(dirname "$0")/../..}" "${CG_BUILDDIR:-.}"
