-- Lmod module for coll/gpu. Install with `make install` into a prefix, set `prefix` below
-- (or generate this file from your site template) and place it in your module tree.
help([[coll/gpu: GPU collectives for Open MPI (mca_coll_gpu.so).
Loading this module makes Open MPI find the component; it is then selected automatically
for communicators on nodes with a GPU. Switch it off with --mca coll ^gpu.]])
whatis("Name: coll-gpu")
whatis("Description: Open MPI coll component for CUDA device buffers")

local prefix = "/opt/coll-gpu"
-- Open MPI's own component directory must stay in the search path, first.
local ompi_components = capture("ompi_info --path pkglibdir --parsable 2>/dev/null"):gsub("^path:pkglibdir:", ""):gsub("%s+$", "")
setenv("OMPI_MCA_mca_base_component_path", ompi_components .. ":" .. pathJoin(prefix, "lib/openmpi"))
prepend_path("PATH", pathJoin(prefix, "bin"))
