#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Print an apt sources file (deb822) for another suite of this machine's own Debian archive:
# the entry of /etc/apt whose suite is this machine's codename, with the suite name swapped.
#
#   contrib/ci/derive-sources.sh SUITE [deb|deb-src|"deb deb-src"] > suite.sources
#
# No archive address is written anywhere in the repository: it comes from /etc/apt.
set -eu
suite=${1:?usage: derive-sources.sh SUITE [TYPES]}
types=${2:-deb}
. /etc/os-release
codename=${VERSION_CODENAME:?/etc/os-release has no VERSION_CODENAME}

# deb822 files first, then one-line sources.list entries; first match wins.
entry=$(
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk -v cn="$codename" '
            function flush() {
                if (uris != "" && index(" " suites " ", " " cn " ") && !done) {
                    print uris "|" signed; done = 1
                }
                uris = ""; suites = ""; signed = ""
            }
            /^[ \t]*$/ { flush(); next }
            /^#/ { next }
            tolower($1) == "uris:" { uris = $2 }
            tolower($1) == "suites:" { $1 = ""; suites = $0 }
            tolower($1) == "signed-by:" { signed = $2 }
            END { flush() }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk -v cn="$codename" '
            $1 == "deb" {
                i = 2; signed = ""
                if ($2 ~ /^\[/) {
                    for (; i <= NF; i++) {
                        if ($i ~ /signed-by=/) { s = $i; sub(/.*signed-by=/, "", s); sub(/\]$/, "", s); signed = s }
                        if ($i ~ /\]$/) { i++; break }
                    }
                }
                if ($(i + 1) == cn) { print $i "|" signed; exit }
            }' "$f"
    done | head -n 1
)
entry=$(printf '%s\n' "$entry" | head -n 1)
uri=${entry%%|*}
signed=${entry#*|}
if [ -z "$uri" ]; then
    echo "derive-sources: no apt entry for suite $codename in /etc/apt" >&2
    exit 1
fi
printf 'Types: %s\nURIs: %s\nSuites: %s %s-updates\nComponents: main\n' "$types" "$uri" "$suite" "$suite"
[ -n "$signed" ] && printf 'Signed-By: %s\n' "$signed"
exit 0
