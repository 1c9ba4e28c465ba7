#!/usr/bin/env bash
# Kept for existing callers: . apps/bench/gpu_build.sh BUILD_DIR [TARGETS...] is launch/gpu-build.sh's build.
. "$(dirname "${BASH_SOURCE[0]}")/../../launch/gpu-build.sh" && tessera_gpu_build "$@"
