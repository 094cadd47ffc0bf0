#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# README command (a): install, build, and run the main job (cbgpu-bench on a generated dataset).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
mkdir -p out
build/release/bench/cbgpu-bench bench --rows 1000000 --features 28 --json out/bench.json "$@"
