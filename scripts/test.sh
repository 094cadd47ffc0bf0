#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# README command (b): install, build and run every test. GPU tests report "Skipped" where no CUDA
# device is visible. Also runs the host tests once more under ASan+UBSan (the dev preset), and the
# concurrency tests under ThreadSanitizer (the tsan preset).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh ci
ctest --preset ci
if [ "${CBGPU_SKIP_SANITIZERS:-0}" != "1" ]; then
  scripts/build.sh dev
  ctest --preset dev -R '^(unit|capi)\.host$'
  # ThreadSanitizer over the concurrency tests: the tsan preset builds only cbgpu_concurrency_tests.
  scripts/build.sh tsan
  ctest --preset tsan
fi
