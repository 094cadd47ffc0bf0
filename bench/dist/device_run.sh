#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Multi-GPU measurements on a device machine (issue 9), from a bundle made by scripts/device-bundle.sh
# plus build/ci/bench/cbgpu-multi-bench copied into <bundle>/bench:
#   bench/dist/device_run.sh <bundle> <what>...
# what: collectives (reducer latency, P2P against NCCL), tests4 / tests2 ([gpu][dist] with 4 / 2 GPUs
# visible), train1 ([gpu][train] on one GPU), scaling (cbgpu-multi-bench on 1, 2 and 4 GPUs),
# profile (4 GPUs with CBGPU_DIST_PROFILE and CBGPU_BOOSTING_PROFILE), ablation (4 GPUs: the old
# hand-off and NCCL only, spinning hand-off with NCCL only), leaf1 (4 and 1 GPUs with one leaf
# iteration). Results go to $OUT (or /tmp/cbgpu-multi).
set -u
cd "$(dirname "$0")/../.."
bundle="$1"
shift
out="${OUT:-/tmp/cbgpu-multi}"
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH="$PWD/$bundle${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bench="$bundle/bench/cbgpu-multi-bench"
tests="$bundle/tests/cbgpu_unit_tests"
log="$out/multi.log"
say() { echo "=== $*" | tee -a "$log"; }
for what in "$@"; do
  case "$what" in
    collectives)
      say "collectives: P2P (default) then NCCL only"
      "$bench" --collectives 4 --json "$out/collectives_p2p.json" 2>&1 | tee -a "$log"
      CBGPU_DIST_P2P=0 "$bench" --collectives 4 --json "$out/collectives_nccl.json" 2>&1 | tee -a "$log"
      CBGPU_DIST_P2P_BYTES=1048576 "$bench" --collectives 4 2>&1 | tee -a "$log"
      "$bench" --collectives 2 2>&1 | tee -a "$log"
      ;;
    tests4)
      say "[gpu][dist], 4 GPUs visible"
      timeout 200 "$tests" "[gpu][dist]" --durations yes 2>&1 | tail -n 40 | tee -a "$log"
      say "rc ${PIPESTATUS[0]}"
      ;;
    tests2)
      say "[gpu][dist], 2 GPUs visible"
      CUDA_VISIBLE_DEVICES=0,1 timeout 200 "$tests" "[gpu][dist]" 2>&1 | tail -n 20 | tee -a "$log"
      say "rc ${PIPESTATUS[0]}"
      ;;
    train1)
      say "[gpu][train], 1 GPU visible"
      CUDA_VISIBLE_DEVICES=0 timeout 200 "$tests" "[gpu][train]" 2>&1 | tail -n 20 | tee -a "$log"
      say "rc ${PIPESTATUS[0]}"
      ;;
    scaling)
      say "scaling: 1, 2, 4 GPUs"
      "$bench" --json "$out/scaling.json" 2>&1 | tee -a "$log"
      ;;
    profile)
      say "profile: 4 GPUs"
      rm -f "$out/profile.jsonl"
      CBGPU_DIST_PROFILE="$out/profile.jsonl" CBGPU_BOOSTING_PROFILE="$out/profile.jsonl" \
        "$bench" --devices "0-3" 2>&1 | tee -a "$log"
      ;;
    ablation)
      say "ablation: 4 GPUs, 200 us spin + NCCL only (the old code's hand-off)"
      CBGPU_DIST_SPIN_US=200 CBGPU_DIST_P2P=0 "$bench" --devices "0;0-3" 2>&1 | tee -a "$log"
      say "ablation: 4 GPUs, spinning hand-off, NCCL only"
      CBGPU_DIST_P2P=0 "$bench" --devices "0-3" 2>&1 | tee -a "$log"
      say "ablation: 4 GPUs, spinning hand-off, P2P up to 1 MiB (every histogram level)"
      CBGPU_DIST_P2P_BYTES=1048576 "$bench" --devices "0:1;0-3" 2>&1 | tee -a "$log"
      say "ablation: 4 GPUs, old hand-off, profile"
      rm -f "$out/profile_old.jsonl"
      CBGPU_DIST_SPIN_US=200 CBGPU_DIST_P2P=0 CBGPU_DIST_PROFILE="$out/profile_old.jsonl" \
        "$bench" --devices "0-3" 2>&1 | tee -a "$log"
      ;;
    leaf1)
      say "one leaf iteration: 1 and 4 GPUs, 200 and 400 iterations"
      "$bench" --devices "0;0-3" --iterations 200 --extra '"leaf_estimation_iterations": 1' 2>&1 | tee -a "$log"
      ;;
    *) say "unknown: $what" ;;
  esac
done
