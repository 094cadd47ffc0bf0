#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a built libFuzzer target (scripts/fuzz.sh with CBGPU_FUZZ_BUILD_ONLY=1) on several cores until
# the executions summed over its workers reach a total, or a time limit, and prints the sum:
#   tests/fuzz/run_parallel.sh BINARY WORKERS TOTAL_RUNS MAX_SECONDS LOG_DIR CORPUS [SEEDS...]
# Each worker is one libFuzzer job (-jobs=N -workers=N) of TOTAL_RUNS/WORKERS executions that shares
# CORPUS; logs (fuzz-<n>.log) and any crash files go to LOG_DIR. Where the binary does not start
# (clang 14's sanitizers and a kernel with 32 bits of mmap randomness), it runs without ASLR.
# Exits 0 when no worker found anything (whether or not the total was reached), 1 otherwise.
set -u
bin="$(realpath "$1")" workers="$2" total="$3" secs="$4" logs="$5" corpus="$6"
shift 6
mkdir -p "$logs" "$corpus"
logs="$(realpath "$logs")" corpus="$(realpath "$corpus")"
seeds=()
for s in "$@"; do seeds+=("$(realpath "$s")"); done
cd "$logs"
prefix=()
mkdir -p start-corpus  # the trial's new units go here, not into the seeds
if ! "$bin" -runs=10 start-corpus "${seeds[@]}" >start.log 2>&1; then
  if setarch "$(uname -m)" -R "$bin" -runs=10 start-corpus "${seeds[@]}" >start-noaslr.log 2>&1; then
    prefix=(setarch "$(uname -m)" -R)
  else
    echo "$(basename "$bin"): does not start here (start.log)"
    exit 1
  fi
fi
rm -rf start-corpus
per=$(((total + workers - 1) / workers))
start=$(date +%s)
"${prefix[@]}" "$bin" -jobs="$workers" -workers="$workers" -runs="$per" -max_total_time="$secs" \
  -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$logs/" \
  "$corpus" "${seeds[@]}" >jobs.log 2>&1
elapsed=$(($(date +%s) - start))
runs=$(grep -h 'stat::number_of_executed_units' fuzz-*.log | awk '{s += $2} END {print s + 0}')
found=$(grep -l -E 'ERROR: (AddressSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error:|SUMMARY: ' fuzz-*.log 2>/dev/null | wc -l)
echo "$(basename "$bin"): $runs executions in ${elapsed}s over $workers workers" \
     "($((runs / (elapsed > 0 ? elapsed : 1))) exec/s), ${found} worker(s) with findings," \
     "corpus $(find "$corpus" -type f | wc -l) files"
[ "$found" -eq 0 ]
