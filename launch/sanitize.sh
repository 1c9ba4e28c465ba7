# Sourced by `launch/test --sanitize`: the host code built with ASan + UBSan in its own directory
# ($TESSERA_SAN_BUILD_DIR, default build-san; CUDA, apps and fuzz targets off to keep it lean; clang),
# then its 1- and 2-rank tests. Extra arguments go to ctest. Exit code: ctest's.
# The C API's C tests (capi_functional, capi_bad_input) run here; its Fortran module, examples and
# Python DLPack check do not (nothing of theirs is C API code that the C tests leave unchecked).
#  - detect_leaks=0: Open MPI, PMIx, hwloc and UCX keep allocations past MPI_Finalize on purpose;
#    LeakSanitizer reports them in every rank (none are Tessera's), so leak checking is off, except
#    for a second run of the C API's tests with those libraries suppressed (tests/capi/lsan_mpi.supp).
#  - allocator_may_return_null=1: the out-of-memory tests ask for 2^50 bytes and expect
#    OutOfMemory; by default ASan aborts on such a request instead of returning null.
build=${TESSERA_SAN_BUILD_DIR:-$root/build-san}
san_start=$(date +%s)
# clang where there is one ($TESSERA_SAN_CXX / $TESSERA_SAN_CC override): it compiles this -O0
# ASan+UBSan build in half GCC's time (a second compiler's diagnostics too; GCC builds the main
# one). -O0 -g1: the cheapest to compile on CI's 2 cores; line tables give file:line.
san_cxx=${TESSERA_SAN_CXX:-$(command -v clang++ || true)}
san_cc=${TESSERA_SAN_CC:-$(command -v clang || true)}
san_compilers=()
[ -n "$san_cxx" ] && san_compilers+=("-DCMAKE_CXX_COMPILER=$san_cxx")
[ -n "$san_cc" ] && san_compilers+=("-DCMAKE_C_COMPILER=$san_cc")
tessera_build "${san_compilers[@]}" -DTESSERA_SANITIZE=ON -DTESSERA_ENABLE_CUDA=OFF -DTESSERA_BUILD_APPS=OFF -DTESSERA_FUZZ=OFF \
  -DTESSERA_SURFACE_TESTS=OFF -DTESSERA_FORTRAN=OFF -DTESSERA_BUILD_EXAMPLES=OFF \
  -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=${TESSERA_SAN_FLAGS:--O0 -g1 -DNDEBUG}"
san_built=$(date +%s)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build"
set +e
ctest --output-on-failure -j "$jobs" --timeout 900 -L 'np1|np2' -LE 'fuzz|package' "$@"
rc=$?
# The C API's tests once more with LeakSanitizer on: nothing they allocate through the C API may
# outlive tessera_runtime_free (MPI's own allocations suppressed by library).
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:abort_on_error=1:fast_unwind_on_malloc=0 \
LSAN_OPTIONS=suppressions=$root/tests/capi/lsan_mpi.supp:print_suppressions=0 \
OMPI_MCA_mca_base_component_disable_dlclose=1 \
  ctest --output-on-failure -j "$jobs" --timeout 900 -L capi -R 'np[12]$' "$@" || rc=$((rc ? rc : 1))
echo "launch/test --sanitize: ctest exited with $rc (build $((san_built - san_start)) s, tests $(($(date +%s) - san_built)) s)"
exit $rc
