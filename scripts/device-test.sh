#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the tests of a build made on another machine (carried to a GPU machine) directly, without
# CTest (whose files hold the build machine's absolute paths): scripts/device-test.sh build/ci
# Logs go to $OUT when it is set. Exits non-zero if any part failed.
set -u
cd "$(dirname "$0")/.."
build="${1:-build/ci}"
out="${OUT:-/tmp/cbgpu-device-test}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
. scripts/device-steps.sh

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
run unit-gpu "$build/tests/cbgpu_unit_tests" "[gpu]" --durations yes
run unit-host "$build/tests/cbgpu_unit_tests" "~[gpu]"
run capi-host "$build/tests/cbgpu_capi_tests"
run capi-gpu "$build/tests/cbgpu_capi_tests" --gpu
run python env CBGPU_LIBRARY="$PWD/$build/libcbgpu.so" python3 -m pytest -q -rs tests/python
if [ -x "$build/bench/cbgpu-bench" ]; then
  run bench "$build/bench/cbgpu-bench" bench --rows 1000000 --features 28 --json "$out/bench.json"
fi

if ((${#failures[@]})); then
  echo "device-test: FAILED: ${failures[*]}"
  exit 1
fi
echo "device-test: all parts passed or were skipped"
