# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Open MPI with the internal headers that out-of-tree MCA components (coll/gpu) compile
# against: Spack's builtin openmpi plus the variant +internal-headers, which configures Open
# MPI with --with-devel-headers and then installs the headers that 5.0's own installation
# leaves out (opal_config.h names opal/mca/threads/<impl>/*.h, which are not installed).
# Everything else is the builtin package's.
import os
import re
import shutil

try:  # Spack >= 1.0
    from spack_repo.builtin.packages.openmpi.package import Openmpi as BuiltinOpenmpi
except ImportError:  # Spack 0.x
    from spack.pkg.builtin.openmpi import Openmpi as BuiltinOpenmpi

from spack.package import *


class Openmpi(BuiltinOpenmpi):
    __doc__ = BuiltinOpenmpi.__doc__

    variant(
        "internal-headers",
        default=True,
        description="Install Open MPI's internal (development) headers, for MCA components "
        "built outside Open MPI's tree such as coll/gpu",
    )

    def configure_args(self):
        args = super().configure_args()
        if self.spec.satisfies("+internal-headers"):
            args.append("--with-devel-headers")
        return args

    @run_after("install")
    def install_missing_internal_headers(self):
        """Copy the implementation headers opal_config.h names (MCA_*_HEADER) but Open MPI's
        installation lacks, from the source tree."""
        if not self.spec.satisfies("+internal-headers"):
            return
        incdir = join_path(self.prefix.include, "openmpi")
        config = join_path(incdir, "opal_config.h")
        if not os.path.exists(config):
            return
        with open(config) as f:
            named = re.findall(r'#define MCA_\w+_HEADER "([^"]+)"', f.read())
        for header in named:
            dest = join_path(incdir, header)
            src = join_path(self.stage.source_path, header)
            if os.path.exists(dest) or not os.path.exists(src):
                continue
            # the whole directory: those headers include each other
            srcdir = os.path.dirname(src)
            mkdirp(os.path.dirname(dest))
            for name in os.listdir(srcdir):
                if name.endswith(".h"):
                    shutil.copy(join_path(srcdir, name), os.path.dirname(dest))
