#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
"""Prove from coll_check's output that the component handled every call.

usage: proof.py LOG ALLOWED MAIN DEVICE [COLL]

Between "coll_check: window begin" and "coll_check: window end device=... host=...", rank
0's verbose lines (coll_gpu_verbose 2) must be exactly as many, collective by collective,
as the calls that the program counted (on the host device layer, host memory counts as
device memory). Every line must name an algorithm of the comma list ALLOWED ("any": all),
and when MAIN is given at least half of the lines must name it. With COLL, those two
conditions apply to that collective's lines only.
"""
import re
import sys

COLLS = ["allreduce", "bcast", "allgather", "reduce_scatter", "reduce_scatter_block"]
LINE = re.compile(r"coll:gpu\[0\] INFO coll (\w+) count=\d+ .*mem=device alg=(\S+)")


def main():
    log, allowed, main_alg, device = sys.argv[1], sys.argv[2].split(","), sys.argv[3], sys.argv[4]
    only = sys.argv[5] if len(sys.argv) > 5 and sys.argv[5] else None
    inside, seen, algs, expect = False, {}, {}, None
    with open(log, errors="replace") as f:
        for line in f:
            if "coll_check: window begin" in line:
                inside = True
            elif "coll_check: window end" in line:
                m = re.search(r"device=([\d,]+) host=([\d,]+)", line)
                dev = [int(x) for x in m.group(1).split(",")]
                host = [int(x) for x in m.group(2).split(",")]
                expect = {c: (d + h if device == "host" else d) for c, d, h in zip(COLLS, dev, host)}
                inside = False
            elif inside:
                m = LINE.search(line)
                if m:
                    seen[m.group(1)] = seen.get(m.group(1), 0) + 1
                    if only is None or m.group(1) == only:
                        algs[m.group(2)] = algs.get(m.group(2), 0) + 1
    if expect is None:
        print("    no window markers in " + log)
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
