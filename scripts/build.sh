#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds one preset (dev, release or ci): scripts/build.sh release
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
export PATH="/usr/local/cuda/bin:$PATH"
# ccache, where installed, shares compiled objects between presets and git worktrees.
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$PWD")}" CCACHE_NOHASHDIR=1
fi
# The Python that runs the ctypes tests is the one on PATH (the one install-deps.sh gave numpy to).
cmake --preset "$preset" -DPython3_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build --preset "$preset"
