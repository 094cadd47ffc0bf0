#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The 10M-execution runs of the cbm, json and cd_dsv targets on a many-core machine, from what
# `CBGPU_FUZZ_BUILD_ONLY=1 scripts/fuzz.sh TARGET` left in build/fuzz (copied to DIR):
#   tests/fuzz/run_all.sh DIR OUT SECONDS [RUNS]
# DIR holds fuzz_<target>, seeds-<target>/ and optionally corpus-<target>.tar.xz (an earlier
# corpus). cd_dsv runs first on every core (it is ~10x faster), then cbm and json share the cores
# (cbm, the slower, gets more) until RUNS (default 10 200 000) executions each or SECONDS in all.
# Logs, crash files and the grown corpora (corpus-<target>.tar.xz) go to OUT.
set -u
dir="$(realpath "$1")" out="$(realpath -m "$2")" secs="$3" runs="${4:-10200000}"
here="$(cd "$(dirname "$0")" && pwd)"
cores=$(nproc)
mkdir -p "$out"
start=$(date +%s)
for t in cd_dsv cbm json; do
  mkdir -p "$out/corpus-$t"
  [ -f "$dir/corpus-$t.tar.xz" ] && tar -xJf "$dir/corpus-$t.tar.xz" -C "$out/corpus-$t" --strip-components=1
done
status=0
"$here/run_parallel.sh" "$dir/fuzz_cd_dsv" "$cores" "$runs" 90 "$out/cd_dsv" "$out/corpus-cd_dsv" \
  "$dir/seeds-cd_dsv" | tee "$out/summary-cd_dsv.txt" || status=1
left=$((secs - ($(date +%s) - start) - 30))
cbm_workers=$(((cores * 9 + 8) / 16))
json_workers=$((cores - cbm_workers))
"$here/run_parallel.sh" "$dir/fuzz_cbm" "$cbm_workers" "$runs" "$left" "$out/cbm" "$out/corpus-cbm" \
  "$dir/seeds-cbm" >"$out/summary-cbm.txt" 2>&1 &
cbm=$!
"$here/run_parallel.sh" "$dir/fuzz_json" "$json_workers" "$runs" "$left" "$out/json" "$out/corpus-json" \
  "$dir/seeds-json" >"$out/summary-json.txt" 2>&1 &
json=$!
wait $cbm || status=1
wait $json || status=1
cat "$out/summary-cbm.txt" "$out/summary-json.txt"
for t in cd_dsv cbm json; do
  tar -cJf "$out/corpus-$t.tar.xz" -C "$out" "corpus-$t" && rm -rf "$out/corpus-$t"
done
echo "fuzzing: $(($(date +%s) - start)) s in all on $cores cores"
exit $status
