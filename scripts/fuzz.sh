#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and runs a libFuzzer target of a model reader under ASan+UBSan (Debian's clang):
#   scripts/fuzz.sh cbm [runs]     scripts/fuzz.sh json [runs]
# Seeds: the model files in $CBGPU_FUZZ_SEEDS (default build/fuzz/seeds-<target>), if any.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:?usage: scripts/fuzz.sh cbm|json [runs]}"
runs="${2:-1000000}"
out=build/fuzz
mkdir -p "$out" "$out/corpus-$target"
fbs_dir=src/model/fbs
if command -v flatc >/dev/null; then
  flatc --cpp --scoped-enums --no-warnings -o "$out/fbs" src/model/fbs/cbm.fbs
  fbs_dir="$out/fbs"
fi
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Iinclude -I"$fbs_dir" -DFMT_HEADER_ONLY \
  tests/fuzz/fuzz_"$target".cpp tests/fuzz/error_shim.cpp src/model/model.cpp src/model/cbm_io.cpp \
  src/model/json_io.cpp src/model/host_evaluator.cpp -o "$out/fuzz_$target"
seeds="${CBGPU_FUZZ_SEEDS:-$out/seeds-$target}"
mkdir -p "$seeds"
"$out/fuzz_$target" -runs="$runs" -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 \
  "$out/corpus-$target" "$seeds"
