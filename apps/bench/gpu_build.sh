#!/usr/bin/env bash
# On the GPU node, from the repository root: a CUDA build in BUILD_DIR (default /tmp/b) of
# TARGETS, else of everything (. apps/bench/gpu_build.sh BUILD_DIR [TARGETS...]), with the carried
# dependencies (.deps, see README "Running on GPUs") and gfortran from .deps/gf when the node has
# none. Prints the build's last lines; the whole log goes to $OUT/build.log when OUT is set.
# Source it (". apps/bench/gpu_build.sh") to keep the environment it sets (LD_LIBRARY_PATH for
# the carried libraries).
build=${1:-/tmp/b}
targets=("${@:2}")
log=${OUT:-/tmp}/build.log
eval "$(bash .deps/use-deps.sh)"
fortran=()
# .deps/gf holds Debian's gfortran-12 as .debs, or as gf.tar.xz (those .debs unpacked without
# lto1 and the sanitizer libraries: a third of the size, for the 64 MiB carry limit).
if ! command -v gfortran >/dev/null && compgen -G '.deps/gf/*' >/dev/null; then
  mkdir -p /opt/gf && for f in .deps/gf/*.deb; do [[ -e $f ]] && dpkg -x "$f" /opt/gf; done
  [[ -e .deps/gf/gf.tar.xz ]] && tar -xJf .deps/gf/gf.tar.xz -C /opt/gf
  export LD_LIBRARY_PATH=/opt/gf/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
  # gcc-12's LTO plugin is not carried: link without it.
  fortran=(-DCMAKE_Fortran_COMPILER=/opt/gf/usr/bin/x86_64-linux-gnu-gfortran-12 -DCMAKE_Fortran_FLAGS=-fno-use-linker-plugin)
fi
configure() {
  # shellcheck disable=SC2086
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 $DEPS_CMAKE_FLAGS "$@" >> "$log" 2>&1
}
: > "$log"
configure "${fortran[@]}" || { echo "gpu_build: configure with the carried gfortran failed; without Fortran"
  rm -rf "$build"; configure -DTESSERA_FORTRAN=OFF; }
ninja -C "$build" -k 0 "${targets[@]}" >> "$log" 2>&1
echo "gpu_build: exit $? ($(grep -c 'FAILED:' "$log") failed targets)"
grep -A3 'FAILED:' "$log" | head -30
