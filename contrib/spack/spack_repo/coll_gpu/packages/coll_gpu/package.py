# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Spack package of coll/gpu. Use the repository this file is in:
#   spack repo add contrib/spack/spack_repo/coll_gpu
#   spack install coll-gpu +cuda cuda_arch=90 ^openmpi@5.0
# docs/INSTALL.md says how sites get the release tarball (a source mirror) and Open MPI's
# internal headers (this repository's openmpi, or an external Open MPI that has them).
import os

try:  # Spack >= 1.0: the build systems live in the builtin repository
    from spack_repo.builtin.build_systems.autotools import AutotoolsPackage
    from spack_repo.builtin.build_systems.cuda import CudaPackage
except ImportError:  # Spack 0.x: part of spack.package
    pass

from spack.package import *


class CollGpu(AutotoolsPackage, CudaPackage):
    """GPU collectives for Open MPI: an MCA coll component (mca_coll_gpu.so) that runs
    MPI_Allreduce, MPI_Bcast, MPI_Allgather and MPI_Reduce_scatter on CUDA device buffers,
    GPU to GPU inside a node and over UCX between nodes, and stages everything else."""

    # Release tarballs come from `make distcheck`. Sites serve them from a Spack source
    # mirror (coll-gpu/coll-gpu-<version>.tar.gz, tried first) or from this location.
    url = "file:///opt/src/coll-gpu/coll-gpu-0.1.0.tar.gz"

    license("BSD-3-Clause", checked_by="coll-gpu")

    # contrib/spack/add-version.sh TARBALL adds a release's line
    version("0.1.0", sha256="9360928de338630bcb14165ee04ed46b1f33c2365fd7e39a94cb864c7554ed90")

    variant("ucx", default=True, description="Inter-node collectives over UCX")
    variant("hwloc", default=True, description="Topology detection (GPUs, NICs) with hwloc")

    depends_on("c", type="build")
    depends_on("cxx", type="build", when="+cuda")  # the CUDA runtime is linked with libstdc++
    depends_on("pkgconfig", type="build")

    # Open MPI with its internal headers (the openmpi of this repository adds them; an
    # external Open MPI must be declared with +internal-headers and have include/openmpi)
    depends_on("openmpi@4.1:5.0 +internal-headers")
    depends_on("hwloc@2:", when="+hwloc")
    depends_on("ucx@1.13:", when="+ucx")
    depends_on("cuda@12:", when="+cuda")
    depends_on("check", type="test")

    conflicts("cuda_arch=none", when="+cuda", msg="coll-gpu +cuda needs cuda_arch=<sm>, e.g. 90")
    for _arch in ("10", "11", "12", "13", "20", "21", "30", "32", "35", "37", "50", "52",
                  "53", "60", "61", "62", "70", "72"):
        conflicts(f"cuda_arch={_arch}", when="+cuda", msg="coll-gpu needs sm_75 or newer")

    def configure_args(self):
        spec = self.spec
        args = [f"--with-ompi={spec['openmpi'].prefix}", "--without-lmod-mpi"]
        # headers that Open MPI's own headers include, from its dependencies
        cppflags = []
        for dep in ("pmix", "libevent"):
            if dep in spec:
                cppflags.append(f"-I{spec[dep].prefix.include}")
        if "pmix" in spec:
            args.append(f"--with-pmix={spec['pmix'].prefix}")
        if cppflags:
            args.append("CPPFLAGS=" + " ".join(cppflags))
        if spec.satisfies("+cuda"):
            gencode = " ".join(CudaPackage.cuda_flags(spec.variants["cuda_arch"].value))
            args += [f"--with-cuda={spec['cuda'].prefix}", f"--with-nvcc-gencode={gencode}"]
        else:
            args.append("--without-cuda")
        for dep in ("ucx", "hwloc"):
            if spec.satisfies(f"+{dep}"):
                args.append(f"--with-{dep}={spec[dep].prefix}")
            else:
                args.append(f"--without-{dep}")
        if not self.run_tests:
            args.append("--without-check")
        return args

    def setup_run_environment(self, env):
        # Open MPI's component path: SYSTEM_DEFAULT (Open MPI's own directory, resolved at
        # run time) first, then ours after any other plugin's; never replaced.
        env.prepend_path("OMPI_MCA_mca_base_component_path", "SYSTEM_DEFAULT")
        env.append_path("OMPI_MCA_mca_base_component_path", self.prefix.lib.openmpi)
        # Open MPI 5's mpirun copies that path to PMIx, whose processes would then warn about
        # our libraries; PMIx keeps its defaults with an empty path of its own (unless one
        # is set already).
        if not os.environ.get("PMIX_MCA_mca_base_component_path"):
            env.set("PMIX_MCA_mca_base_component_path", "")

    def check(self):
        with working_dir(self.build_directory):
            make("check", "CG_SUITE=quick")

    def test_version(self):
        """coll_gpu_info reports the installed version"""
        info = which(self.prefix.bin.coll_gpu_info, required=True)
        out = info("--version", output=str, error=str)
        assert f"(coll/gpu) {self.spec.version}" in out, out

    def test_ompi_info(self):
        """ompi_info lists the component with its version"""
        ompi_info = which(self.spec["openmpi"].prefix.bin.ompi_info, required=True)
        os.environ["OMPI_MCA_mca_base_component_path"] = f"SYSTEM_DEFAULT:{self.prefix.lib.openmpi}"
        out = ompi_info(output=str, error=str)
        assert f"MCA coll: gpu" in out and f"Component v{self.spec.version}" in out, out
