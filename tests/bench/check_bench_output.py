#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
"""Check one coll_gpu_bench run: its table, CSV and JSON agree, parse, and report what ran.

usage: check_bench_output.py TABLE.txt RESULTS.csv RESULTS.json ALGORITHM-REGEX
"""
import csv
import json
import re
import sys


def fail(msg):
    print("    " + msg)
    sys.exit(1)


def main():
    table, csv_path, json_path, algs = sys.argv[1:5]
    alg_re = re.compile("(%s)$" % algs)
    rows, counters = [], []
    for line in open(table):
        if re.match(r"^ *[0-9]", line):
            cols = [c.split() for c in line.split("|")]
            if len(cols) != 4 or len(cols[0]) != 5 or len(cols[1]) != 5:
                fail("table row has the wrong shape: " + line.strip())
            rows.append({"bytes": int(cols[0][0]), "alg": cols[1][0], "staged": cols[2]})
        elif line.startswith("#   counters per call (rank 0):"):
            counters.append(dict((k, float(v)) for k, v in
                                 re.findall(r"([a-z_]+) ([0-9.e+-]+)", line.split(":", 1)[1])))
    if not rows:
        fail("no rows in the table")
    # --counters: a line under every row, and every timed call counted once, on one path
    if counters:
        if len(counters) != len(rows):
            fail("%d counters lines for %d rows" % (len(counters), len(rows)))
        for r, c in zip(rows, counters):
            calls = sum(v for k, v in c.items() if k.startswith("calls_"))
            if r["bytes"] > 0 and abs(calls - 1.0) > 1e-9:
                fail("counters at %d bytes: %s calls per call (%s)" % (r["bytes"], calls, c))
    for r in rows:
        if r["bytes"] > 0 and not alg_re.match(r["alg"]):
            fail("table: algorithm %r at %d bytes does not match %r" % (r["alg"], r["bytes"], algs))

    doc = json.load(open(json_path))
    res = doc["results"]
    if len(res) != len(rows) or not doc["ok"] or doc["wrong"] != 0:
        fail("json: %d results for %d rows, ok %s" % (len(res), len(rows), doc["ok"]))
    for r, j in zip(rows, res):
        if j["bytes"] != r["bytes"] or j["algorithm"] != r["alg"] or j["wrong"] != 0:
            fail("json row %s does not match the table row %s" % (j, r))
        if j["time_us"] <= 0 or j["busbw_gbs"] < 0:
            fail("json row %s has no time" % j)
        if "staged" in j and j["staged"]["algorithm"] != "staged" and j["bytes"] > 0:
            fail("json: the staged comparison ran %s" % j["staged"]["algorithm"])
        if (r["staged"][0] != "-") != ("staged" in j):
            fail("json and table disagree on the staged column at %d bytes" % r["bytes"])
    for key in ("coll", "np", "ranks_per_node", "type", "op", "copy_bw_gbs", "avg_busbw_gbs"):
        if key not in doc:
            fail("json: no %s" % key)

    with open(csv_path, newline="") as f:
        lines = list(csv.DictReader(f))
    if len(lines) != len(rows):
        fail("csv: %d lines for %d rows" % (len(lines), len(rows)))
    for r, c in zip(rows, lines):
        if None in c or int(c["bytes"]) != r["bytes"] or c["algorithm"] != r["alg"]:
            fail("csv line %s does not match the table row %s" % (c, r))
        float(c["time_us"]), float(c["algbw_gbs"]), float(c["busbw_gbs"])
        if int(c["wrong"]) != 0:
            fail("csv: wrong results")


if __name__ == "__main__":
    main()
