# shellcheck shell=bash
# Sourced helper (launch/gpu-check sources it; so does apps/bench/gpu_build.sh): a CUDA build on a
# GPU node with the dependencies carried in .deps (see README "Running on GPUs"):
#   . launch/gpu-build.sh && tessera_gpu_build BUILD_DIR [TARGETS...]
# configures BUILD_DIR (Release, sm_90, $DEPS_CMAKE_FLAGS from .deps/use-deps.sh when it is there)
# and builds TARGETS, else everything (ninja -k 0). gfortran comes from .deps/gf when the node has
# none (and the build goes on without Fortran if that one cannot configure). The Pythons the tests
# and heat3d's plots use are the first python3 (PATH, then /usr/bin) that imports numpy and
# matplotlib respectively. Prints the build's last lines; the whole log goes to $OUT/build.log
# (/tmp/build.log without OUT). Returns ninja's status. Sourcing keeps the environment it sets
# (LD_LIBRARY_PATH for the carried libraries) for the commands that follow.

# The first python3 (on PATH, then Debian's) that imports MODULE; nothing when none does.
tessera_python_with() {
  local py
  for py in "$(command -v python3 2>/dev/null)" /usr/bin/python3; do
    [[ -n $py && -x $py ]] && "$py" -c "import $1" 2>/dev/null && { echo "$py"; return 0; }
  done
  return 1
}

# The environment of the carried dependencies: $DEPS_CMAKE_FLAGS and LD_LIBRARY_PATH from
# .deps/use-deps.sh; gfortran unpacked from .deps/gf into /opt/gf when the node has none
# (TESSERA_GF_FLAGS then holds the CMake flags that use it). Run by tessera_gpu_build; call it alone
# to run what an earlier build made.
tessera_gpu_env() {
  local root f
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  if [[ -f $root/.deps/use-deps.sh ]]; then
    eval "$(bash "$root/.deps/use-deps.sh")"
  else
    echo "gpu-build: no $root/.deps/use-deps.sh: the node's own dependencies"
  fi
  TESSERA_GF_FLAGS=()
  # .deps/gf holds Debian's gfortran-12 as .debs, or as gf.tar.xz (those .debs unpacked without
  # lto1 and the sanitizer libraries: a third of the size, for the 64 MiB carry limit).
  if ! command -v gfortran >/dev/null && compgen -G "$root/.deps/gf/*" >/dev/null; then
    if [[ ! -x /opt/gf/usr/bin/x86_64-linux-gnu-gfortran-12 ]]; then
      mkdir -p /opt/gf
      for f in "$root"/.deps/gf/*.deb; do [[ -e $f ]] && dpkg -x "$f" /opt/gf; done
      [[ -e $root/.deps/gf/gf.tar.xz ]] && tar -xJf "$root/.deps/gf/gf.tar.xz" -C /opt/gf
    fi
    [[ :${LD_LIBRARY_PATH:-}: == *:/opt/gf/usr/lib/x86_64-linux-gnu:* ]] ||
      export LD_LIBRARY_PATH=/opt/gf/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    # gcc-12's LTO plugin is not carried: link without it.
    TESSERA_GF_FLAGS=(-DCMAKE_Fortran_COMPILER=/opt/gf/usr/bin/x86_64-linux-gnu-gfortran-12
                      -DCMAKE_Fortran_FLAGS=-fno-use-linker-plugin)
  fi
}

tessera_gpu_build() {
  local root build log py extra=() rc
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  build=${1:-/tmp/b}
  shift || true
  log=${OUT:-/tmp}/build.log
  tessera_gpu_env
  py=$(tessera_python_with numpy) && extra+=(-DTESSERA_NPY_PYTHON="$py")
  py=$(tessera_python_with matplotlib) && extra+=(-DHEAT3D_PYTHON="$py")
  _tessera_gpu_configure() {
    # shellcheck disable=SC2086
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      ${DEPS_CMAKE_FLAGS:-} "${extra[@]}" "$@" >> "$log" 2>&1
  }
  : > "$log"
  _tessera_gpu_configure "${TESSERA_GF_FLAGS[@]}" || {
    echo "gpu-build: configure with the carried gfortran failed; without Fortran"
    rm -rf "$build"
    _tessera_gpu_configure -DTESSERA_FORTRAN=OFF
  }
  ninja -C "$build" -k 0 "$@" >> "$log" 2>&1
  rc=$?
  echo "gpu-build: exit $rc ($(grep -c 'FAILED:' "$log") failed targets; log $log)"
  grep -A3 'FAILED:' "$log" | head -30
  return "$rc"
}
