#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Generate configure and Makefile.in (needs autoconf, automake, libtool, pkg-config).
set -e
cd "$(dirname "$0")"
autoreconf -fi
