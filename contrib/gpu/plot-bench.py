#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
"""Plot coll_gpu_bench results (its -J JSON or --csv CSV files, or the GPU kit's bench.csv
that holds several runs): algbw and busbw against the message size, coll/gpu next to the
staged path and the device-memory floor.

usage: plot-bench.py [-o OUT.png] RESULTS.json|RESULTS.csv...
One PNG with one row of two panels (algbw, busbw) per run.
"""
import argparse
import csv
import json
import sys


def load(path):
    """The runs of one result file: a list of (rows, title), rows as dicts."""
    if path.endswith(".json"):
        doc = json.load(open(path))
        rows = []
        for r in doc["results"]:
            row = {"bytes": r["bytes"], "algbw": r["algbw_gbs"], "busbw": r["busbw_gbs"],
                   "alg": r["algorithm"]}
            if "staged" in r:
                row["s_algbw"] = r["staged"]["algbw_gbs"]
                row["s_busbw"] = r["staged"]["busbw_gbs"]
            if "floor" in r:
                row["f_algbw"] = r["floor"]["algbw_gbs"]
            rows.append(row)
        title = "%s, %d ranks (%d per node), %s %s\n%s" % (
            doc["coll"], doc["np"], doc["ranks_per_node"], doc["type"], doc["op"], doc["device"])
        return [(rows, title)]
    runs = {}  # the kit's bench.csv: a "run" column names each benchmark run
    with open(path, newline="") as f:
        for c in csv.DictReader(f):
            rows, _ = runs.setdefault(c.get("run", path), ([], ""))
            row = {"bytes": int(c["bytes"]), "algbw": float(c["algbw_gbs"]),
                   "busbw": float(c["busbw_gbs"]), "alg": c["algorithm"]}
            if c["staged_algbw_gbs"]:
                row["s_algbw"] = float(c["staged_algbw_gbs"])
                row["s_busbw"] = float(c["staged_busbw_gbs"])
            if c["floor_algbw_gbs"]:
                row["f_algbw"] = float(c["floor_algbw_gbs"])
            rows.append(row)
            runs[c.get("run", path)] = (rows, "%s%s, %s ranks (%s per node), %s %s" % (
                c["run"] + ": " if "run" in c else "", c["coll"], c["np"], c["ranks_per_node"],
                c["type"], c["op"]))
    return list(runs.values())


def positive(values):
    """Zero bandwidths (a size of 0 bytes) have no place on a log axis."""
    return [v if v > 0 else float("nan") for v in values]


def size_label(b):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= div:
            return "%g%s" % (b / div, unit)
    return "%d" % b


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="bench.png")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot-bench: python3-matplotlib is missing (contrib/gpu/plot-bench.sh installs it)")

    runs = [run for path in args.files for run in load(path)]
    if not runs or not all(rows for rows, _ in runs):
        sys.exit("plot-bench: no results in %s" % " ".join(args.files))
    fig, axes = plt.subplots(len(runs), 2, figsize=(12, 4.2 * len(runs)), squeeze=False)
    for (ax_alg, ax_bus), (rows, title) in zip(axes, runs):
        x = [r["bytes"] for r in rows]
        # bus factor of the run: busbw / algbw (the same at every size)
        bus = next((r["busbw"] / r["algbw"] for r in rows if r["algbw"] > 0), 1.0)
        for ax, key in ((ax_alg, "algbw"), (ax_bus, "busbw")):
            ax.plot(x, positive([r[key] for r in rows]), "o-", label="coll/gpu")
            for xi, r in zip(x, rows):
                if key == "algbw":
                    if r[key] > 0:
                        ax.annotate(r["alg"], (xi, r[key]), fontsize=6, rotation=45,
                                    textcoords="offset points", xytext=(2, 4))
            if any("s_" + key in r for r in rows):
                ax.plot([xi for xi, r in zip(x, rows) if "s_" + key in r],
                        positive([r["s_" + key] for r in rows if "s_" + key in r]), "s--", label="staged")
            if any("f_algbw" in r for r in rows):
                scale = 1.0 if key == "algbw" else bus
                ax.plot([xi for xi, r in zip(x, rows) if "f_algbw" in r],
                        [r["f_algbw"] * scale for r in rows if "f_algbw" in r], "k:",
                        label="device-memory floor")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xticks(x[:: max(1, len(x) // 10)])
            ax.set_xticklabels([size_label(b) for b in x[:: max(1, len(x) // 10)]], fontsize=7)
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel(key + " (GB/s)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        ax_alg.set_title(title, fontsize=8)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print("plot-bench: wrote %s" % args.output)


if __name__ == "__main__":
    main()
