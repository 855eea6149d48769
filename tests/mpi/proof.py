#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
"""Prove from coll_check's output and rank 0's log file that the component handled every call.

usage: proof.py LOG VLOG ALLOWED MAIN [COLL]

LOG is the run's output: coll_check's rank 0 prints "coll_check: window end device=... host=..."
with the number of calls of each collective that carried device data on that rank. VLOG is
rank 0's own log file (coll_gpu_verbose_file, coll_gpu_verbose 2): its "mem=device" lines
must be exactly as many, collective by collective (host buffers are host memory, on a GPU
and on the simulated one alike, so nothing else counts). Every line must name an algorithm
of the comma list ALLOWED ("any": all), and when MAIN is given at least half of the lines
must name it. With COLL, those two conditions apply to that collective's lines only.
"""
import re
import sys

COLLS = ["allreduce", "bcast", "allgather", "reduce_scatter", "reduce_scatter_block"]
LINE = re.compile(r"coll:gpu\[0\] INFO coll (\w+) count=\d+ .*mem=device alg=(\S+)")


def main():
    log, vlog, allowed, main_alg = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4]
    only = sys.argv[5] if len(sys.argv) > 5 and sys.argv[5] else None
    seen, algs, expect = {}, {}, None
    with open(log, errors="replace") as f:
        for line in f:
            m = re.search(r"coll_check: window end device=([\d,]+) host=([\d,]+)", line)
            if m:
                expect = dict(zip(COLLS, (int(x) for x in m.group(1).split(","))))
    if expect is None:
        print("    no window end line in " + log)
        return 1
    try:
        with open(vlog, errors="replace") as f:
            for line in f:
                m = LINE.search(line)
                if m:
                    seen[m.group(1)] = seen.get(m.group(1), 0) + 1
                    if only is None or m.group(1) == only:
                        algs[m.group(2)] = algs.get(m.group(2), 0) + 1
    except OSError as err:
        print(f"    no log file of rank 0: {err}")
        return 1
    bad = {c: (seen.get(c, 0), expect[c]) for c in COLLS if seen.get(c, 0) != expect[c]}
    for c, (got, want) in bad.items():
        print(f"    {c}: {got} verbose lines for {want} calls")
    other = {a: n for a, n in algs.items() if "any" not in allowed and a not in allowed}
    if other:
        print(f"    algorithms outside {allowed}: {other}")
    total = sum(algs.values())
    weak = bool(main_alg) and algs.get(main_alg, 0) * 2 < total
    if weak:
        print(f"    only {algs.get(main_alg, 0)} of {total} calls ran {main_alg}")
    print("    verbose log: " + ", ".join(f"{c}={seen.get(c, 0)}" for c in COLLS) +
          "; algorithms: " + ", ".join(f"{a}={n}" for a, n in sorted(algs.items())))
    return 1 if bad or other or weak or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
