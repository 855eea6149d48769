#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
"""Unit check of the Spack packages in contrib/spack without Spack (CI has none): the
package files are imported against a small stand-in of Spack's package API that records the
directives, then their methods run on stand-in specs. It checks what an admin relies on:
versions with sha256 checksums, the license, the variants and dependencies, the configure
arguments for +cuda cuda_arch=..., ~cuda, ~ucx, and a run environment that extends the
component path without overwriting it.

With a real Spack at hand, check the packages with Spack itself (docs/INSTALL.md):
    spack repo add contrib/spack/spack_repo/coll_gpu && spack audit packages coll-gpu
"""
import importlib.util
import os
import re
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "spack_repo", "coll_gpu")
TOP = os.path.dirname(os.path.dirname(HERE))
FAILURES = []


PASSED = []


def check(cond, what):
    print(("PASS " if cond else "FAIL ") + what)
    (PASSED if cond else FAILURES).append(what)


class Recorder:
    """Directives record (name, args, kwargs) into the class being defined."""

    def __init__(self):
        self.calls = []

    def directive(self, name):
        def record(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            return lambda f: f  # also usable as a decorator (run_after)
        return record


def stub_spack(rec, with_v1_build_systems):
    """spack.package (and, for Spack 1.x, spack_repo.builtin.build_systems.*)."""
    class AutotoolsPackage:
        build_directory = "."

    class CudaPackage:
        @staticmethod
        def cuda_flags(arch_list):
            return ["-gencode=arch=compute_{0},code=sm_{0}".format(a) for a in arch_list]

    pkg = types.ModuleType("spack.package")
    for name in ("version", "variant", "depends_on", "conflicts", "license", "run_after",
                 "maintainers", "patch", "resource", "provides", "requires"):
        setattr(pkg, name, rec.directive(name))
    pkg.join_path = os.path.join
    pkg.mkdirp = lambda *p: None
    pkg.which = lambda *a, **k: None
    pkg.make = lambda *a, **k: None
    pkg.working_dir = lambda *a, **k: None
    pkg.Executable = lambda *a, **k: None
    pkg.__all__ = [n for n in dir(pkg) if not n.startswith("_")]
    if not with_v1_build_systems:  # Spack 0.x exports the build systems itself
        pkg.AutotoolsPackage, pkg.CudaPackage = AutotoolsPackage, CudaPackage
        pkg.__all__ += ["AutotoolsPackage", "CudaPackage"]
    spack = types.ModuleType("spack")
    spack.package = pkg
    mods = {"spack": spack, "spack.package": pkg}
    if with_v1_build_systems:
        for sub, cls in (("autotools", AutotoolsPackage), ("cuda", CudaPackage)):
            m = types.ModuleType("spack_repo.builtin.build_systems." + sub)
            setattr(m, cls.__name__, cls)
            mods[m.__name__] = m
        for name in ("spack_repo", "spack_repo.builtin", "spack_repo.builtin.build_systems",
                     "spack_repo.builtin.packages", "spack_repo.builtin.packages.openmpi"):
            mods.setdefault(name, types.ModuleType(name))

    class BuiltinOpenmpi(AutotoolsPackage):
        """Open MPI (stand-in for Spack's builtin package)."""

        def configure_args(self):
            return ["--enable-builtin-arg"]

    m = types.ModuleType("spack_repo.builtin.packages.openmpi.package")
    m.Openmpi = BuiltinOpenmpi
    mods[m.__name__] = m
    m0 = types.ModuleType("spack.pkg.builtin.openmpi")  # Spack 0.x path
    m0.Openmpi = BuiltinOpenmpi
    mods.update({"spack.pkg": types.ModuleType("spack.pkg"),
                 "spack.pkg.builtin": types.ModuleType("spack.pkg.builtin"), m0.__name__: m0})
    for name in [n for n in sys.modules if n == "spack" or n.startswith(("spack.", "spack_repo"))]:
        del sys.modules[name]
    sys.modules.update(mods)


def load(path, rec, v1):
    stub_spack(rec, v1)
    spec = importlib.util.spec_from_file_location("pkg_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Prefix(str):
    def __getattr__(self, name):
        return Prefix(os.path.join(self, name))


class Spec:
    """Enough of a concrete spec: satisfies('+x'), spec['dep'].prefix, variants."""

    def __init__(self, variants, deps, arch=("90",)):
        self.variants_on = set(variants)
        self.deps = deps
        self.variants = {"cuda_arch": types.SimpleNamespace(value=list(arch))}
        self.version = "0.1.0"

    def satisfies(self, constraint):
        return all(v[1:] in self.variants_on if v[0] == "+" else v[1:] not in self.variants_on
                   for v in constraint.split())

    def __contains__(self, name):
        return name in self.deps

    def __getitem__(self, name):
        return types.SimpleNamespace(prefix=Prefix("/spack/" + name))


class Env:
    def __init__(self):
        self.ops = []

    def __getattr__(self, op):
        return lambda *a: self.ops.append((op,) + a)


def check_coll_gpu(v1):
    rec = Recorder()
    mod = load(os.path.join(REPO, "packages", "coll_gpu", "package.py"), rec, v1)
    cls = mod.CollGpu
    tag = "Spack 1.x" if v1 else "Spack 0.x"
    bases = {b.__name__ for b in cls.__mro__}
    check({"AutotoolsPackage", "CudaPackage"} <= bases, f"{tag}: AutotoolsPackage + CudaPackage")
    calls = rec.calls
    versions = [(a[0], k.get("sha256", "")) for n, a, k in calls if n == "version"]
    check(bool(versions), f"{tag}: has versions")
    for v, sha in versions:
        check(re.fullmatch(r"[0-9a-f]{64}", sha) is not None, f"{tag}: version {v} has a sha256")
    check(("license", ("BSD-3-Clause",)) in [(n, a) for n, a, k in calls], f"{tag}: license")
    variants = {a[0] for n, a, k in calls if n == "variant"}
    check({"ucx", "hwloc"} <= variants, f"{tag}: variants ucx, hwloc (cuda from CudaPackage)")
    deps = [a[0] for n, a, k in calls if n == "depends_on"]
    check(any(d.startswith("openmpi@4.1:5.0") and "+internal-headers" in d for d in deps),
          f"{tag}: depends on openmpi@4.1:5.0 +internal-headers")
    check(any(n == "conflicts" and a[0] == "cuda_arch=none" for n, a, k in calls),
          f"{tag}: +cuda needs a cuda_arch")

    pkg = cls.__new__(cls)
    pkg.prefix = Prefix("/opt/coll-gpu")
    pkg.run_tests = False
    pkg.spec = Spec({"cuda", "ucx", "hwloc"}, {"openmpi", "pmix", "libevent"}, ("80", "90"))
    args = pkg.configure_args()
    gencode = [a for a in args if a.startswith("--with-nvcc-gencode=")]
    check(bool(gencode) and "sm_80" in gencode[0] and "sm_90" in gencode[0],
          f"{tag}: +cuda cuda_arch=80,90 gives both architectures to nvcc")
    check("--with-ompi=/spack/openmpi" in args and "--with-pmix=/spack/pmix" in args,
          f"{tag}: Open MPI and PMIx prefixes passed")
    check("--with-cuda=/spack/cuda" in args and "--without-check" in args, f"{tag}: +cuda, no tests")
    pkg.spec = Spec({"hwloc"}, {"openmpi"})
    args = pkg.configure_args()
    check("--without-cuda" in args and "--without-ucx" in args and
          not any(a.startswith("--with-nvcc") for a in args), f"{tag}: ~cuda ~ucx")

    saved = os.environ.pop("PMIX_MCA_mca_base_component_path", None)
    env = Env()
    pkg.setup_run_environment(env)
    var = "OMPI_MCA_mca_base_component_path"
    check(("prepend_path", var, "SYSTEM_DEFAULT") in env.ops and
          ("append_path", var, "/opt/coll-gpu/lib/openmpi") in env.ops and
          not any(op[0] == "set" and op[1] == var for op in env.ops),
          f"{tag}: run environment extends {var}, never sets it")
    check(("set", "PMIX_MCA_mca_base_component_path", "") in env.ops,
          f"{tag}: PMIx gets an empty component path of its own")
    os.environ["PMIX_MCA_mca_base_component_path"] = "/site/pmix"
    env = Env()
    pkg.setup_run_environment(env)
    check(not any(op[1] == "PMIX_MCA_mca_base_component_path" for op in env.ops),
          f"{tag}: a PMIx path the user set is kept")
    del os.environ["PMIX_MCA_mca_base_component_path"]
    if saved is not None:
        os.environ["PMIX_MCA_mca_base_component_path"] = saved
    return versions


def check_openmpi(v1):
    rec = Recorder()
    mod = load(os.path.join(REPO, "packages", "openmpi", "package.py"), rec, v1)
    tag = "Spack 1.x" if v1 else "Spack 0.x"
    check(any(n == "variant" and a[0] == "internal-headers" and k.get("default") is True
              for n, a, k in rec.calls), f"{tag}: openmpi has +internal-headers, on by default")
    pkg = mod.Openmpi.__new__(mod.Openmpi)
    pkg.spec = Spec({"internal-headers"}, set())
    args = pkg.configure_args()
    check("--with-devel-headers" in args and "--enable-builtin-arg" in args,
          f"{tag}: openmpi +internal-headers adds --with-devel-headers to the builtin's arguments")
    pkg.spec = Spec(set(), set())
    check("--with-devel-headers" not in pkg.configure_args(), f"{tag}: ~internal-headers does not")


def main():
    versions = []
    for v1 in (True, False):
        versions = check_coll_gpu(v1)
        check_openmpi(v1)
    with open(os.path.join(REPO, "repo.yaml")) as f:
        text = f.read()
    check(re.search(r"^\s+namespace:\s*coll_gpu\s*$", text, re.M) is not None, "repo.yaml namespace")
    with open(os.path.join(TOP, "configure.ac")) as f:
        ac = f.read()
    parts = [re.search(r"m4_define\(\[cg_version_%s\], \[(\d+)\]\)" % p, ac).group(1)
             for p in ("major", "minor", "release")]
    newest = max((tuple(int(x) for x in v.split(".")) for v, _ in versions), default=(0,))
    check(tuple(int(p) for p in parts) >= newest,
          f"configure.ac's version {'.'.join(parts)} is not older than the package's newest")
    print(f"test_package: {len(PASSED)} passed, {len(FAILURES)} failed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
