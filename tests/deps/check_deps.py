#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
"""No import cycle: the files of the component call each other in one direction only.

usage: check_deps.py SRCDIR BUILDDIR

Reads the symbols of every object of libcg_core and of the component (nm): file A depends
on file B when A uses a function or variable that B defines. Fails when two files depend on
each other through any path (a cycle), or when a file depends on one of a layer above it.
The layers, from the top: the Open MPI boundary (ompi_coll_gpu, one unit: the component's
table refers to its entry points and they read its parameters); coll's dispatch (registry,
planner, run, rules, cost); the collectives' folders; the per-communicator context
(cg_comm.c), what it measures at setup (cg_comm_measure.c) and its worker addresses
(cg_comm_addresses.c); hier; the cost model (cg_cost.c: pure functions); intra; ucx_glue and topo;
kernels; the CUDA layer and the simulated GPU; the frees held back (kernels/dev_frees.c,
which both device layers use); base.

Also: the CUDA layer (kernels/cuda) calls no synchronous copy, set or device-wide wait. Those
synchronise the legacy default stream (or the device) first, so one made while a kernel
waits there for peers (an LL call queued behind the application's work, coll_gpu_app_wait
launch), or for the very bytes being written (abort lines, a cancel word), never returns:
on a GPU only, where no CI runs. The host's copies go through the side stream.
"""
import os
import re
import subprocess
import sys

# a file may depend on files of a higher rank only (by folder, or by file where given)
RANK = {
    "ompi_coll_gpu": 0, "coll": 1, "coll/allreduce": 2, "coll/allgather": 2,
    "coll/reduce_scatter": 2, "coll/bcast": 3, "coll/cg_comm.c": 3.5,
    "coll/cg_comm_measure.c": 3.7, "coll/cg_comm_addresses.c": 3.7, "coll/hier": 4,
    "coll/cg_cost.c": 4.5,
    "coll/intra": 5, "ucx_glue": 6, "topo": 6, "kernels": 7, "kernels/cuda": 8,
    "kernels/sim": 8, "kernels/dev_frees.c": 8.5, "kernels/dev_ll_server.c": 8.5, "base": 9,
}


# runtime functions (C symbols in the layer's objects) and driver functions (entries of the
# layer's driver table, kernels/cuda/cg_cuda.h) that wait for the legacy stream or device
SYNC_RUNTIME = {"cudaMemcpy", "cudaMemset", "cudaMemcpy2D", "cudaMemcpy3D", "cudaMemcpyPeer",
                "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaDeviceSynchronize",
                "cudaThreadSynchronize"}
SYNC_DRIVER = re.compile(r"\(\*(cuMemcpy|cuMemcpyHtoD|cuMemcpyDtoH|cuMemcpyDtoD|cuMemcpyPeer|"
                         r"cuMemsetD8|cuMemsetD16|cuMemsetD32|cuCtxSynchronize)\)")


def sync_calls(srcdir, uses):
    """The CUDA layer's calls that wait behind every kernel of the legacy stream."""
    bad = []
    for src, used in sorted(uses.items()):
        if src.startswith("kernels/cuda/"):
            bad += [f"{src} calls {sym}" for sym in sorted(used & SYNC_RUNTIME)]
    with open(os.path.join(srcdir, "kernels/cuda/cg_cuda.h")) as table:
        bad += [f"kernels/cuda/cg_cuda.h loads {m}" for m in SYNC_DRIVER.findall(table.read())]
    return bad


def rank(src):
    return RANK.get(src, RANK.get(os.path.dirname(src)))


def unit(src):
    """The node of the cycle check: the boundary is one unit, every other file its own."""
    return "ompi_coll_gpu" if src.startswith("ompi_coll_gpu/") else src


def users(builddir):
    """Symbols used by the programs built from the library (tools, tests, examples)."""
    used = set()
    for root, _, files in os.walk(builddir):
        for name in files:
            if name.endswith(".o") and not re.match(r"(libcg_core_la|mca_coll_gpu_la)-", name):
                used |= symbols(os.path.join(root, name))[1]
    return used


def objects(srcdir, builddir):
    for root, _, files in os.walk(builddir):
        for name in files:
            m = re.match(r"(libcg_core_la|mca_coll_gpu_la)-(.+)\.o$", name)
            if m and root.endswith("/.libs"):  # libtool's PIC objects
                rel = os.path.relpath(os.path.dirname(root), builddir)
                src = os.path.normpath(os.path.join(rel, m.group(2) + ".c"))
                if os.path.exists(os.path.join(srcdir, src)):  # not a file since removed
                    yield os.path.join(root, name), src


def symbols(path):
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
    return defined, used


def main():
    srcdir, builddir = sys.argv[1], sys.argv[2]
    defs, uses = {}, {}
    for obj, src in objects(srcdir, builddir):
        defs[src], uses[src] = symbols(obj)
    owner = {sym: src for src, syms in defs.items() for sym in syms}
    files = {src: {owner[s] for s in uses[src] if s in owner and owner[s] != src} for src in defs}
    edges = {}
    for src, dsts in files.items():
        edges.setdefault(unit(src), set()).update(unit(d) for d in dsts if unit(d) != unit(src))
    if len(edges) < 20:
        print(f"check_deps: only {len(edges)} objects found under {builddir}")
        return 1
    # cycles: strongly connected components of more than one file (Tarjan)
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    bad = 0
    for comp in comps:
        print("check_deps: files that depend on each other: " + ", ".join(comp))
        bad += 1
    for src, dsts in sorted(files.items()):
        for dst in sorted(dsts):
            a, b = rank(src), rank(dst)
            if a is not None and b is not None and b < a:
                print(f"check_deps: {src} calls up into {dst} (a layer above it)")
                bad += 1
    # dead exports: functions of the library nobody else calls (the component's entry
    # points are reached through its table: the boundary's files are not checked)
    outside = users(builddir)
    for src in sorted(defs):
        if src.startswith("ompi_coll_gpu/"):
            continue
        for sym in sorted(defs[src]):
            called = any(sym in uses[other] for other in uses if other != src) or sym in outside
            if not called and not sym.startswith("mca_coll_gpu_component"):
                print(f"check_deps: {sym} ({src}) is exported but used by no other file")
                bad += 1
    for line in sync_calls(srcdir, uses):
        print(f"check_deps: {line}, which waits behind every kernel of the legacy default "
              "stream (a synchronous copy or set): use the side stream (cg_cuda_side_copy)")
        bad += 1
    if bad == 0:
        print(f"check_deps: {len(files)} files, "
              f"{sum(len(d) for d in files.values())} dependencies, no cycle, layers respected, "
              "no synchronous copy in the CUDA layer")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
