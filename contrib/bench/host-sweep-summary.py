#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
"""Markdown summary of contrib/bench/host-sweep.sh's CSVs: per collective and rank count,
what coll/gpu ran and its time next to the staged path of the same run (x-staged > 1:
faster than staged), for the "after" build and, when present, the "before" build; then host
buffers with the component loaded and switched off."""
import csv
import os
import sys


def load(path):
    if not os.path.exists(path):
        return {}
    with open(path, newline="") as handle:
        return {int(row["bytes"]): row for row in csv.DictReader(handle)}


def fastest(out, prefix):
    """The fastest row of each size over the repeats prefix-r1.csv, -r2.csv, ... (or the one
    file prefix.csv)."""
    best = load(os.path.join(out, prefix + ".csv"))
    for rep in range(1, 10):
        for size, row in load(os.path.join(out, f"{prefix}-r{rep}.csv")).items():
            t = fnum(row, "time_us")
            kept = fnum(best[size], "time_us") if size in best else None
            if t is not None and (kept is None or t < kept):
                best[size] = row
    return best


def both(out, label, coll, np):
    rows = fastest(out, f"{label}-{coll}-np{np}-small")
    rows.update(load(os.path.join(out, f"{label}-{coll}-np{np}-large.csv")))
    return rows


def fnum(row, key):
    try:
        return float(row[key])
    except (KeyError, TypeError, ValueError):
        return None


def cell(value, fmt="{:.2f}"):
    return "-" if value is None else fmt.format(value)


def main(out):
    names = os.listdir(out)
    nps = sorted({int(n.split("-np")[1].split("-")[0].split(".")[0]) for n in names if "-np" in n and n.endswith(".csv")})
    colls = ["allreduce", "bcast", "allgather", "reduce_scatter"]
    print("# Host device layer sweep (coll_gpu_bench, simulated GPU memory)\n")
    print("Times in us, mean over ranks. x-staged: staged time / coll/gpu time in the same run "
          "(> 1: coll/gpu faster). after/before: before time / after time. Up to 64 KiB the "
          "fastest of two runs per build, the builds in turn.\n")
    for np in nps:
        for coll in colls:
            after, before = both(out, "after", coll, np), both(out, "before", coll, np)
            if not after:
                continue
            print(f"## {coll}, np {np}\n")
            print("| bytes | after: alg | us | staged us | x-staged | before: alg | us | staged us | x-staged | after/before |")
            print("|---:|---|---:|---:|---:|---|---:|---:|---:|---:|")
            for size in sorted(after):
                a, b = after[size], before.get(size, {})
                at, ast = fnum(a, "time_us"), fnum(a, "staged_time_us")
                bt, bst = fnum(b, "time_us"), fnum(b, "staged_time_us")
                print(f"| {size} | {a.get('algorithm', '-')} | {cell(at)} | {cell(ast)} | "
                      f"{cell(ast / at if at and ast else None)} | {b.get('algorithm', '-')} | "
                      f"{cell(bt)} | {cell(bst)} | {cell(bst / bt if bt and bst else None)} | "
                      f"{cell(bt / at if at and bt else None)} |")
            print()
    print("## Host buffers: component loaded vs switched off (--mca coll ^gpu)\n")
    print("Fastest of the repeated runs (loaded and off in turn).\n")
    print("| coll | np | bytes | loaded us | off us | loaded/off |")
    print("|---|---:|---:|---:|---:|---:|")
    for np in nps:
        for coll in colls:
            loaded = fastest(out, f"hostbuf-{coll}-np{np}")
            off = fastest(out, f"off-{coll}-np{np}")
            for size in sorted(loaded):
                lt, ot = fnum(loaded[size], "time_us"), fnum(off.get(size, {}), "time_us")
                print(f"| {coll} | {np} | {size} | {cell(lt)} | {cell(ot)} | "
                      f"{cell(lt / ot if lt and ot else None)} |")


if __name__ == "__main__":
    main(sys.argv[1])
