#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds one preset (dev, release or ci): scripts/build.sh release
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
export PATH="/usr/local/cuda/bin:$PATH"
# ccache, where installed, caches compiled objects (set CCACHE_BASEDIR to share them between git
# worktrees; error messages then name source files by relative paths).
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache
fi
# The Python that runs the ctypes tests is the one on PATH (the one install-deps.sh gave numpy to).
cmake --preset "$preset" -DPython3_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build --preset "$preset"
