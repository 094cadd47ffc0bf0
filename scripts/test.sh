#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs, builds and runs every test (the Python tests against the installed wheel). GPU tests
# report "Skipped" where no CUDA device is visible. Also runs the host tests once more under
# ASan+UBSan (the dev preset), and the concurrency tests under ThreadSanitizer (the tsan preset).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh ci
# Every test but the Python ones, which run against the installed wheel instead (built around
# build/ci's library, installed into a fresh virtual environment): what `pip install` users get.
ctest --preset ci -E '^python$'
scripts/test-python-package.sh build/ci
if [ "${CBGPU_SKIP_SANITIZERS:-0}" != "1" ]; then
  scripts/build.sh dev --target cbgpu_unit_tests cbgpu_capi_tests
  ctest --preset dev -R '^(unit|capi)\.host$'
  # ThreadSanitizer over the concurrency tests: the tsan preset builds only cbgpu_concurrency_tests.
  scripts/build.sh tsan
  ctest --preset tsan
fi
