#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the four compute-sanitizer tools side by side on one GPU (each its own scripts/gpu-sanitize.sh,
# one process per unit test case) and prints their summaries:
#   scripts/gpu-sanitize-all.sh build/device [seconds]
# `seconds` (default 540) is the deadline for all of them. CBGPU_SANITIZE_JOBS (default 3) is the
# processes per tool, so 4 x that many share the GPU; CBGPU_SANITIZE_FILTER as in gpu-sanitize.sh
# (default "[gpu]~[dist]": the multi-GPU cases need several devices). Logs under $OUT/<tool>/,
# summaries in $OUT/<tool>.txt. CBGPU_SANITIZE_GPUS="1 2 3" spreads the tools over those devices
# (tool i on the i-th, round robin; default: all on the visible ones as they are). Exits non-zero
# when any tool found something or did not finish.
set -u
cd "$(dirname "$0")/.."
build="${1:-build/device}"
seconds="${2:-540}"
out="${OUT:-/tmp/cbgpu-sanitize}"
mkdir -p "$out"
export CBGPU_SANITIZE_JOBS="${CBGPU_SANITIZE_JOBS:-3}"
export CBGPU_SANITIZE_FILTER="${CBGPU_SANITIZE_FILTER:-[gpu]~[dist]}"
export CBGPU_SANITIZE_DEADLINE=$(($(date +%s) + seconds))
read -r -a gpus <<<"${CBGPU_SANITIZE_GPUS:-}"
pids=()
i=0
for tool in memcheck racecheck initcheck synccheck; do
  if ((${#gpus[@]})); then
    export CUDA_VISIBLE_DEVICES="${gpus[i % ${#gpus[@]}]}"
  fi
  OUT="$out/$tool" scripts/gpu-sanitize.sh "$build" "$tool" >"$out/$tool.txt" 2>&1 &
  pids+=($!)
  i=$((i + 1))
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
for tool in memcheck racecheck initcheck synccheck; do cat "$out/$tool.txt"; done
exit $status
