#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds one preset (dev, release, ci or tsan): scripts/build.sh release
# Further arguments go to the build step: scripts/build.sh dev --target cbgpu_unit_tests
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
shift || true
export PATH="/usr/local/cuda/bin:$PATH"
# ccache, where installed, caches compiled objects. The presets compile the CUDA code alike, so the
# dev and tsan builds reuse ci's nvcc objects: paths are hashed relative to the checkout and the
# build folder is left out of the hash (set CCACHE_BASEDIR higher to share between git worktrees;
# error messages then name source files by relative paths).
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
fi
# The Python that runs the ctypes tests is the one on PATH (the one install-deps.sh gave numpy to).
cmake --preset "$preset" -DPython3_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build --preset "$preset" "$@"
