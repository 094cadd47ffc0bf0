#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Packs what scripts/device-test.sh needs from a build into a small folder (debug info stripped) that
# can travel to a GPU machine: scripts/device-bundle.sh build/ci build/device
set -euo pipefail
cd "$(dirname "$0")/.."
from="${1:-build/ci}"
to="${2:-build/device}"
rm -rf "$to"
mkdir -p "$to/tests" "$to/bench"
cp -P "$from"/libcbgpu.so* "$to/"
cp "$from/tests/cbgpu_unit_tests" "$from/tests/cbgpu_capi_tests" "$to/tests/"
[ -x "$from/tests/cbgpu-multi-host-example" ] && cp "$from/tests/cbgpu-multi-host-example" "$to/tests/"
[ -x "$from/bench/cbgpu-bench" ] && cp "$from/bench/cbgpu-bench" "$to/bench/"
[ -x "$from/bench/cbgpu-quantize-bench" ] && cp "$from/bench/cbgpu-quantize-bench" "$to/bench/"
[ -x "$from/bench/cbgpu-tree-bench" ] && cp "$from/bench/cbgpu-tree-bench" "$to/bench/"
[ -x "$from/bench/cbgpu-apply-bench" ] && cp "$from/bench/cbgpu-apply-bench" "$to/bench/"
[ -x "$from/bench/cbgpu-categorical-bench" ] && cp "$from/bench/cbgpu-categorical-bench" "$to/bench/"
[ -x "$from/bench/cbgpu-ctr-bench" ] && cp "$from/bench/cbgpu-ctr-bench" "$to/bench/"
find "$to" -type f -exec strip --strip-debug {} +
du -sh "$to"
