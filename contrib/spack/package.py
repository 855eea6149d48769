# Spack package for coll/gpu. Copy into a Spack repository as packages/coll-gpu/package.py.
from spack.package import *


class CollGpu(AutotoolsPackage):
    """GPU collectives for Open MPI: an MCA coll component (mca_coll_gpu.so) that runs
    MPI_Allreduce, MPI_Bcast, MPI_Allgather and MPI_Reduce_scatter on CUDA device buffers."""

    # Point git at the repository your site builds from (a mirror or a local clone).
    git = "file:///opt/src/coll-gpu"

    version("main", branch="main")

    variant("cuda", default=True, description="Build the CUDA device layer")
    variant("ucx", default=True, description="Build the UCX inter-node layer")

    depends_on("autoconf", type="build")
    depends_on("automake", type="build")
    depends_on("libtool", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("openmpi@4.1:5.0")
    depends_on("hwloc@2:")
    depends_on("check", type="test")
    depends_on("cuda@12:", when="+cuda")
    depends_on("ucx", when="+ucx")

    def autoreconf(self, spec, prefix):
        Executable("./autogen.sh")()

    def configure_args(self):
        spec = self.spec
        args = [
            "--with-ompi={0}".format(spec["openmpi"].prefix),
            "--with-hwloc={0}".format(spec["hwloc"].prefix),
        ]
        args.append("--with-cuda={0}".format(spec["cuda"].prefix) if "+cuda" in spec else "--without-cuda")
        args.append("--with-ucx={0}".format(spec["ucx"].prefix) if "+ucx" in spec else "--without-ucx")
        return args

    def setup_run_environment(self, env):
        # Open MPI's own component directory must stay first in the path.
        ompi = self.spec["openmpi"].prefix.lib.openmpi
        env.set("OMPI_MCA_mca_base_component_path", "{0}:{1}".format(ompi, self.prefix.lib.openmpi))
