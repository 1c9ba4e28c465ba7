# Shared by launch/test and launch/demo: configure and build into $TESSERA_BUILD_DIR.
# TESSERA_CMAKE_ARGS adds configure flags (for example the GPU node's $DEPS_CMAKE_FLAGS).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TESSERA_BUILD_DIR:-$root/build}
jobs=${TESSERA_JOBS:-$(nproc)}

tessera_build() {
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
  # shellcheck disable=SC2086
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${TESSERA_BUILD_TYPE:-Release} \
        "${launcher[@]}" ${TESSERA_CMAKE_ARGS:-} "$@"
  cmake --build "$build" -j "$jobs"
}
