#!/usr/bin/env bash
# Fails when a file includes a header from a higher layer (docs/ARCHITECTURE.md), when LLVM,
# Eigen, BLAS, oneDNN or MPI headers leak outside the one folder allowed to use them, or when
# library code reads the environment outside frontend/options/.
set -u
root=${1:-.}
cd "$root" || exit 2
fail=0
check() {  # check <folder> <regex of forbidden includes> <why>
  local hits
  hits=$(grep -rnE "#include *[\"<]($2)" "$1" 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "layering: $1/ must not include $2 ($3):"
    echo "$hits"
    fail=1
  fi
}
check ir 'frontend/|backends/|passes/|codegen/|runtime/|lt/' "ir depends on nothing of ours"
check passes 'frontend/|backends/|codegen/|runtime/|lt/' "passes depend on ir only"
check runtime 'frontend/|backends/|passes/|codegen/|lt/' "runtime depends on ir only"
check codegen 'frontend/|backends/|passes/|lt/' "codegen depends on ir and runtime's ABI"
# A backend composes the layers below it; only frontend, tools, tests, bench and examples use one.
check backends 'frontend/|lt/' "backends depend on passes, codegen, runtime and ir"
for d in ir passes runtime backends frontend tools examples; do check "$d" 'llvm/|llvm-c/' "LLVM only in codegen/"; done
for d in ir passes codegen backends frontend tools examples; do check "$d" 'Eigen/|unsupported/Eigen' "Eigen only in runtime/kernels/"; done
for d in ir passes codegen backends runtime frontend tools examples bench tests; do check "$d" 'pybind11/' "pybind11 only in python/"; done
eigen_outside=$(grep -rlE '#include *[<"](Eigen/|unsupported/Eigen)' runtime 2>/dev/null | grep -v '^runtime/kernels/')
[ -n "$eigen_outside" ] && { echo "layering: Eigen outside runtime/kernels/: $eigen_outside"; fail=1; }
blas_outside=$(grep -rlE '#include *[<"]cblas\.h' ir passes codegen backends runtime frontend tools examples 2>/dev/null | grep -v '^runtime/kernels/')
[ -n "$blas_outside" ] && { echo "layering: cblas.h outside runtime/kernels/: $blas_outside"; fail=1; }
dnnl_outside=$(grep -rlE '#include *[<"](dnnl|oneapi/dnnl)' ir passes codegen backends runtime frontend tools examples bench tests 2>/dev/null | grep -v '^runtime/kernels/')
[ -n "$dnnl_outside" ] && { echo "layering: oneDNN outside runtime/kernels/: $dnnl_outside"; fail=1; }
jpeg_outside=$(grep -rlE '#include *[<"]jpeglib\.h' ir passes codegen backends runtime frontend tools examples python 2>/dev/null | grep -v '^frontend/vision/')
[ -n "$jpeg_outside" ] && { echo "layering: jpeglib.h outside frontend/vision/: $jpeg_outside"; fail=1; }
mpi_outside=$(grep -rlE '#include *[<"]mpi\.h' ir passes codegen backends runtime frontend tools examples 2>/dev/null | grep -v '^runtime/comm')
[ -n "$mpi_outside" ] && { echo "layering: mpi.h outside runtime/comm*: $mpi_outside"; fail=1; }
# Settings: the library reads the environment in one place, frontend/options/ (lt/options.h),
# and passes values down; no other library file calls getenv.
env_readers=$(grep -rlE '\bgetenv\b' ir passes codegen backends runtime frontend 2>/dev/null | grep -v '^frontend/options/')
[ -n "$env_readers" ] && { echo "layering: getenv outside frontend/options/: $env_readers"; fail=1; }
[ $fail -eq 0 ] && echo "layering: ok"
exit $fail
