#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python package as users get it: builds the wheel (pyproject.toml) around an already built
# libcbgpu.so (default build/ci's: nothing is compiled again), installs it into a fresh virtual
# environment and runs tests/python against the installed package, not the source tree.
#   scripts/test-python-package.sh [build dir] [pytest arguments...]
# The venv sees the system's site-packages for the test tools (numpy, pytest, catboost, ...), so
# nothing is downloaded; cbgpu itself comes only from the wheel (the tests check where it was imported).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/ci}"
shift || true
lib="$(realpath "$build/libcbgpu.so")"
work="$build/python-package"
rm -rf "$work"
mkdir -p "$work"
started=$SECONDS
python3 -m pip wheel --no-build-isolation --no-deps --no-cache-dir --quiet --disable-pip-version-check -w "$work/dist" . \
  -Cbuild-dir="$work/skbuild" -Ccmake.define.CBGPU_PREBUILT_LIBRARY="$lib"
python3 -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --no-index --no-cache-dir --quiet --disable-pip-version-check "$work"/dist/cbgpu-*.whl
echo "test-python-package: wheel built and installed in $((SECONDS - started)) s: $(ls "$work"/dist)"
bench="$build/bench/cbgpu-bench"
[ -x "$bench" ] && export CBGPU_BENCH="$PWD/$bench"
# From outside the checkout, so that nothing but the installed package can be imported as cbgpu.
cd "$work"
CBGPU_TEST_INSTALLED=1 "$PWD/venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$OLDPWD/tests/python" "$@"
