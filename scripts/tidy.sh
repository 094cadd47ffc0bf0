#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy) over the library's C++ sources, using build/<preset>/compile_commands.json
# (default preset ci). CUDA files are left out: clang-tidy cannot parse nvcc's flags.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/${1:-ci}
[[ -f $build/compile_commands.json ]] || { echo "configure $build first (scripts/build.sh ${1:-ci})"; exit 2; }
git ls-files 'src/*.cpp' 'capi/src/*.cpp' | xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet
