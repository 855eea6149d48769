#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The coll/gpu authors. See LICENSE.
# Tests of the Lmod module that `make install` puts in PREFIX/share/modulefiles, with Lmod
# from Debian (installed when missing) and the system's Open MPI standing behind three fake
# Open MPI modules (openmpi/4.1.4, openmpi/4.1.6, openmpi/5.0.7): load order both ways,
# swap, unload, coexistence with another component's module, a user's PMIx path kept, and
# an MPI program that runs through the component after each of them.
#
#   contrib/ci/lmod-test.sh PREFIX
#
# Runs mpirun: take the machine's MPI lock around it where one is used.
set -u
prefix=$(cd "${1:?usage: lmod-test.sh PREFIX}" && pwd)
modfile=$(ls "$prefix"/share/modulefiles/coll-gpu/*.lua 2>/dev/null | head -n 1)
[ -n "$modfile" ] || { echo "lmod-test: no module in $prefix/share/modulefiles/coll-gpu"; exit 1; }
version=$(basename "$modfile" .lua)

lmod_init=/usr/share/lmod/lmod/init/bash
if [ ! -f "$lmod_init" ]; then
    echo "lmod-test: installing lmod"
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo=sudo; fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q lmod >/dev/null ||
        { $sudo apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q lmod >/dev/null; } ||
        { echo "lmod-test: cannot install lmod"; exit 1; }
fi
# shellcheck disable=SC1090
. "$lmod_init"

work=$(mktemp -d "${TMPDIR:-/tmp}/cg-lmod.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/mf/openmpi" "$work/mf/other-plugin" "$work/other"
for v in 4.1.4 4.1.6 5.0.7; do
    printf 'setenv("CG_TEST_OMPI", "%s")\n' "$v" >"$work/mf/openmpi/$v.lua"
done
# another component's module written to the same pattern
cat >"$work/mf/other-plugin/1.0.lua" <<EOF
prepend_path("OMPI_MCA_mca_base_component_path", "SYSTEM_DEFAULT")
append_path("OMPI_MCA_mca_base_component_path", "$work/other")
EOF
export MODULEPATH="$work/mf:$prefix/share/modulefiles"
unset OMPI_MCA_mca_base_component_path PMIX_MCA_mca_base_component_path LOADEDMODULES _LMFILES_
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ours="$prefix/lib/openmpi"
passed=0
failed=0

ok() { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
# expect NAME VAR VALUE: VAR must be VALUE ("<unset>" for unset)
expect() {
    local v
    if [ -z "${!2+x}" ]; then v="<unset>"; else v=${!2}; fi
    [ "$v" = "$3" ] && return 0
    bad "$1" "$2 is '$v', expected '$3'"
    return 1
}
# runs NAME: ompi_info lists the component with our version, and an MPI program runs
# through it (every rank's collectives intercepted, no warning from PMIx or Open MPI)
runs() {
    local out
    if ! ompi_info 2>&1 | grep -q "MCA coll: gpu .*Component v$version"; then
        bad "$1" "ompi_info does not list coll/gpu $version"
        return 1
    fi
    out=$(mpirun -np 2 --bind-to none --mca coll_gpu_device host --mca coll_gpu_verbose 2 \
        coll_gpu_hello 1000 2>&1)
    if [ $? -ne 0 ] || ! grep -q "coll:gpu\[1\] INFO coll allreduce" <<<"$out"; then
        bad "$1" "the program did not run through the component: $(tail -n 5 <<<"$out")"
        return 1
    fi
    if grep -qE "bad prefix|WARNING|shmem_base_select failed" <<<"$out"; then
        bad "$1" "warnings: $(grep -m 3 -E "bad prefix|WARNING|failed" <<<"$out")"
        return 1
    fi
    return 0
}
reset() {
    module purge >/dev/null 2>&1
    [ -n "${CG_LMOD_DEBUG:-}" ] && echo "  after purge: path=${OMPI_MCA_mca_base_component_path-<unset>} refs=${__LMOD_REF_COUNT_OMPI_MCA_mca_base_component_path-<unset>}"
    true
}

# 1. Open MPI's module first, then ours
reset
module load openmpi/4.1.4 coll-gpu
expect load-mpi-first OMPI_MCA_mca_base_component_path "SYSTEM_DEFAULT:$ours" &&
    expect load-mpi-first PMIX_MCA_mca_base_component_path "" &&
    expect load-mpi-first COLL_GPU_ROOT "$prefix" &&
    [ "$(command -v coll_gpu_info)" = "$prefix/bin/coll_gpu_info" ] &&
    runs load-mpi-first && ok load-mpi-first

# 2. ours first: it loads a 4.1 Open MPI module itself; loading another 4.1 one afterwards
#    changes nothing for the component
reset
module load coll-gpu
case ${CG_TEST_OMPI:-} in 4.1.*) ;; *) bad load-ours-first "depends_on loaded '${CG_TEST_OMPI:-nothing}'" ;; esac
module load openmpi/4.1.4
expect load-ours-first OMPI_MCA_mca_base_component_path "SYSTEM_DEFAULT:$ours" &&
    expect load-ours-first CG_TEST_OMPI 4.1.4 &&
    runs load-ours-first && ok load-ours-first

# 3. swap Open MPI within the series: still loaded, still right
reset
module load openmpi/4.1.4 coll-gpu
module swap openmpi/4.1.4 openmpi/4.1.6 >/dev/null 2>&1
module is-loaded coll-gpu || bad swap-same-series "coll-gpu was unloaded"
expect swap-same-series CG_TEST_OMPI 4.1.6 &&
    expect swap-same-series OMPI_MCA_mca_base_component_path "SYSTEM_DEFAULT:$ours" &&
    runs swap-same-series && ok swap-same-series

# 4. another series: loading the component while Open MPI 5.0 is loaded brings back a 4.1
#    Open MPI (depends_on); in an Lmod hierarchy (the component under Open MPI 4.1's branch),
#    swapping Open MPI to 5.0 deactivates the component and takes it off the path
reset
module load openmpi/5.0.7
module load coll-gpu >/dev/null 2>&1
case ${CG_TEST_OMPI:-} in
4.1.*) ok load-other-series ;;
*) bad load-other-series "coll-gpu for 4.1 loaded next to Open MPI ${CG_TEST_OMPI:-?}" ;;
esac
reset
mkdir -p "$work/hier/core/openmpi" "$work/hier/mpi-4.1/coll-gpu" "$work/hier/mpi-5.0"
ln -s "$modfile" "$work/hier/mpi-4.1/coll-gpu/$version.lua"
for v in 4.1.4 5.0.7; do
    printf 'setenv("CG_TEST_OMPI", "%s")\nprepend_path("MODULEPATH", "%s")\n' "$v" \
        "$work/hier/mpi-${v%.*}" >"$work/hier/core/openmpi/$v.lua"
done
saved_modulepath=$MODULEPATH
export MODULEPATH="$work/hier/core"
module load openmpi/4.1.4 coll-gpu
expect swap-hierarchy OMPI_MCA_mca_base_component_path "SYSTEM_DEFAULT:$ours" &&
    module swap openmpi/4.1.4 openmpi/5.0.7 >"$work/swap.log" 2>&1 &&
    expect swap-hierarchy CG_TEST_OMPI 5.0.7 &&
    expect swap-hierarchy OMPI_MCA_mca_base_component_path "<unset>" &&
    module swap openmpi/5.0.7 openmpi/4.1.4 >>"$work/swap.log" 2>&1 &&
    expect swap-hierarchy OMPI_MCA_mca_base_component_path "SYSTEM_DEFAULT:$ours" &&
    runs swap-hierarchy && ok swap-hierarchy
reset
export MODULEPATH=$saved_modulepath

# 5. unload: everything back as it was
reset
path_before=$PATH
module load openmpi/4.1.4 coll-gpu
module unload coll-gpu
expect unload OMPI_MCA_mca_base_component_path "<unset>" &&
    expect unload PMIX_MCA_mca_base_component_path "<unset>" &&
    expect unload COLL_GPU_ROOT "<unset>" &&
    { [ "$PATH" = "$path_before" ] || { bad unload "PATH not restored"; false; }; } && ok unload

# 5b. Open MPI loaded after the component (so unloaded before it by purge): nothing left
reset
module load coll-gpu
module load openmpi/4.1.4 >/dev/null 2>&1
module purge >/dev/null 2>&1
expect purge-reordered OMPI_MCA_mca_base_component_path "<unset>" &&
    expect purge-reordered PMIX_MCA_mca_base_component_path "<unset>" && ok purge-reordered

# 6. next to another component's module, in both orders; unloading one keeps the other
reset
module load openmpi/4.1.4 other-plugin coll-gpu
expect coexist OMPI_MCA_mca_base_component_path "SYSTEM_DEFAULT:$work/other:$ours" && runs coexist &&
    module unload coll-gpu &&
    expect coexist OMPI_MCA_mca_base_component_path "SYSTEM_DEFAULT:$work/other" &&
    module load coll-gpu && module unload other-plugin &&
    expect coexist OMPI_MCA_mca_base_component_path "SYSTEM_DEFAULT:$ours" && runs coexist &&
    module unload coll-gpu && expect coexist OMPI_MCA_mca_base_component_path "<unset>" &&
    ok coexist

# 7. a component path set before any module (a site default) is kept and extended
reset
export OMPI_MCA_mca_base_component_path="SYSTEM_DEFAULT:$work/other"
module load openmpi/4.1.4 coll-gpu
expect site-default OMPI_MCA_mca_base_component_path "SYSTEM_DEFAULT:$work/other:$ours" && runs site-default &&
    module unload coll-gpu &&
    expect site-default OMPI_MCA_mca_base_component_path "SYSTEM_DEFAULT:$work/other" && ok site-default
unset OMPI_MCA_mca_base_component_path

# 8. a PMIx component path the user set is not touched
reset
export PMIX_MCA_mca_base_component_path=/opt/site/pmix-plugins
module load openmpi/4.1.4 coll-gpu
expect user-pmix-path PMIX_MCA_mca_base_component_path /opt/site/pmix-plugins &&
    module unload coll-gpu &&
    expect user-pmix-path PMIX_MCA_mca_base_component_path /opt/site/pmix-plugins && ok user-pmix-path
unset PMIX_MCA_mca_base_component_path

# 9. the module found through a link from another module tree derives the same prefix
reset
mkdir -p "$work/linked/coll-gpu"
ln -s "$modfile" "$work/linked/coll-gpu/$version.lua"
export MODULEPATH="$work/mf:$work/linked"
module load openmpi/4.1.4 coll-gpu
expect linked COLL_GPU_ROOT "$prefix" && ok linked
reset

# 10. an installation with another libdir (configure --libdir=PREFIX/lib64): the module made
#     for it finds the component there (the installed module names its own libdir)
reset
if grep -q 'local libsub = "lib/openmpi"' "$modfile"; then
    mkdir -p "$work/p64/lib64/openmpi" "$work/p64/share/modulefiles/coll-gpu"
    cp "$prefix/lib/openmpi/mca_coll_gpu.so" "$work/p64/lib64/openmpi/"
    sed 's|local libsub = "lib/openmpi"|local libsub = "lib64/openmpi"|' "$modfile" \
        >"$work/p64/share/modulefiles/coll-gpu/$version.lua"
    export MODULEPATH="$work/mf:$work/p64/share/modulefiles"
    module load openmpi/4.1.4 coll-gpu
    expect lib64 OMPI_MCA_mca_base_component_path "SYSTEM_DEFAULT:$work/p64/lib64/openmpi" && ok lib64
else
    bad lib64 "the installed module does not name lib/openmpi as its component directory"
fi
reset

echo "lmod-test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
