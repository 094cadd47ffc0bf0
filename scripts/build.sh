#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds one preset (dev, release or ci): scripts/build.sh release
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
export PATH="/usr/local/cuda/bin:$PATH"
# The Python that runs the ctypes tests is the one on PATH (the one install-deps.sh gave numpy to).
cmake --preset "$preset" -DPython3_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build --preset "$preset"
