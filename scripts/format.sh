#!/usr/bin/env bash
# Formats the C, C++ and CUDA sources with clang-format (.clang-format); --check lists the files that
# are not formatted and fails instead. Generated files (src/model/fbs/) are excluded.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=(-i)
[[ "${1:-}" == "--check" ]] && mode=(--dry-run --Werror)
git ls-files '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh' | grep -v '^src/model/fbs/' | grep -v '^abi/' |
  xargs clang-format "${mode[@]}"
