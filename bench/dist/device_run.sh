#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Multi-GPU measurements on a device machine (issue 9), from a bundle made by scripts/device-bundle.sh
# plus build/ci/bench/cbgpu-multi-bench copied into <bundle>/bench:
#   bench/dist/device_run.sh <bundle> <what>...
# what: collectives (reducer latency on 4 and 2 GPUs), tests4 / tests2 ([gpu][dist] with 4 / 2 GPUs
# visible), train1 ([gpu][train] on one GPU), scaling (cbgpu-multi-bench on 1, 2 and 4 GPUs with
# --profile), oldpass (scaling with --fused-pass 0), stages (--profile:
# per-call and leaf-pass stage device times), oldhandoff (4 GPUs, threads sleeping after 200 us as before), leaf1 (1 and 4
# GPUs with one leaf iteration), multihost (the 2-process example; the bundle's tests/ must hold
# cbgpu-multi-host-example), oldscore (scaling with --sliced-score 0: every rank all-reduces
# and scores the whole histogram), oldscorestages (stages with --sliced-score 0, 2 and 4
# GPUs; a profile holds the search's stages too), slicedstages (stages with --sliced-score 1, 4 GPUs), tests4sliced ([gpu][dist] on 4
# GPUs with the sliced search forced on), wide (2M x 512 on 1 and 4 GPUs, sliced search automatic
# and off, with --profile), point (one GPU: this build against the bundle's
# bench/cbgpu-multi-bench-old, ms per iteration and per-call / per-pass device times), fixed (the
# per-iteration cost that does not shrink with the rows: one GPU at 10.5M, 5.25M and 2.625M rows and 2
# GPUs at 10.5M, no profile; 2 GPUs cost one GPU at half the rows plus the collectives). Results go to $OUT
# (or /tmp/cbgpu-multi).
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
      say "collectives: latency on 4 and 2 GPUs"
      "$bench" --collectives 4 --json "$out/collectives.json" 2>&1 | tee -a "$log"
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
      say "scaling: 1, 2, 4 GPUs (t(100) and t(200) twice each), with the sharded backend's profile"
      rm -f "$out/profile.jsonl"
      "$bench" --repeat 2 --json "$out/scaling.json" 2>&1 | tee -a "$log"
      "$bench" --profile "$out/profile.jsonl" 2>&1 | tee -a "$log"
      ;;
    oldpass)
      say "scaling with the older sharded leaf pass (--fused-pass 0)"
      "$bench" --fused-pass 0 --repeat 2 2>&1 | tee -a "$log"
      ;;
    stages)
      say "per-call and leaf-pass stage device times (--profile), 1, 2 and 4 GPUs, 50 and 100 iterations"
      rm -f "$out/stages.jsonl"
      "$bench" --profile "$out/stages.jsonl" --devices "0;0:1;0-3" --iterations 50 2>&1 | tee -a "$log"
      ;;
    oldhandoff)
      say "4 GPUs with the hand-off of the earlier code (threads sleep after 200 us)"
      "$bench" --spin-us 200 --devices "0-3" 2>&1 | tee -a "$log"
      ;;
    leaf1)
      say "one leaf iteration: 1 and 4 GPUs, 200 and 400 iterations"
      "$bench" --devices "0;0-3" --iterations 200 --extra '"leaf_estimation_iterations": 1' 2>&1 | tee -a "$log"
      ;;
    multihost)
      say "2 processes through a caller's communicator (examples/multi_host/run.sh)"
      timeout 120 bash examples/multi_host/run.sh "$bundle/tests/cbgpu-multi-host-example" 2>&1 | tail -n 5 | tee -a "$log"
      ;;
    oldscore)
      say "scaling with the all-reduce search (--sliced-score 0)"
      "$bench" --sliced-score 0 --repeat 2 2>&1 | tee -a "$log"
      ;;
    oldscorestages)
      say "stage device times with the all-reduce search (--sliced-score 0), 2 and 4 GPUs"
      rm -f "$out/stages-oldscore.jsonl"
      "$bench" --sliced-score 0 --profile "$out/stages-oldscore.jsonl" --devices "0:1;0-3" \
        --iterations 50 2>&1 | tee -a "$log"
      ;;
    slicedstages)
      say "stage device times with the sliced search forced on (--sliced-score 1), 4 GPUs"
      rm -f "$out/stages-sliced.jsonl"
      "$bench" --sliced-score 1 --profile "$out/stages-sliced.jsonl" --devices "0-3" \
        --iterations 50 2>&1 | tee -a "$log"
      ;;
    tests4sliced)
      say "[gpu][dist], 4 GPUs visible, sliced search forced on (CBGPU_DIST_SLICED_SCORE=1)"
      CBGPU_DIST_SLICED_SCORE=1 timeout 200 "$tests" "[gpu][dist]" 2>&1 | tail -n 20 | tee -a "$log"
      say "rc ${PIPESTATUS[0]}"
      ;;
    wide)
      say "wide: 2M x 512 on 1 and 4 GPUs, sliced search automatic (on) and off, with --profile"
      rm -f "$out/stages-wide.jsonl" "$out/stages-wide-old.jsonl"
      "$bench" --profile "$out/stages-wide.jsonl" --rows 2000000 --features 512 --devices "0;0-3" \
        --iterations 50 2>&1 | tee -a "$log"
      "$bench" --sliced-score 0 --profile "$out/stages-wide-old.jsonl" --rows 2000000 \
        --features 512 --devices "0;0-3" --iterations 50 2>&1 | tee -a "$log"
      ;;
    point)
      # One GPU (${CBGPU_POINT_DEVICES:-0}): this build against <bundle>/bench/cbgpu-multi-bench-old (a
      # build of the code before, when present): ms per iteration (no profile), then the per-call and
      # per-pass device times (--profile, 50 and 100 iterations).
      devs="${CBGPU_POINT_DEVICES:-0}"
      for v in old new; do
        b="$bench"
        if [ "$v" = old ]; then b="$bundle/bench/cbgpu-multi-bench-old"; [ -x "$b" ] || continue; fi
        say "point: $v, devices $devs"
        "$b" --devices "$devs" --repeat 2 2>&1 | tee -a "$log"
        rm -f "$out/point-$v.jsonl"
        "$b" --profile "$out/point-$v.jsonl" --devices "$devs" --iterations 50 2>&1 | tee -a "$log"
        python3 bench/dist/profile_summary.py "$out/point-$v.jsonl" 2>&1 | tee -a "$log"
      done
      ;;
    fixed)
      say "fixed part: one GPU at n, n/2, n/4 rows and 2 GPUs at n (T(n) = fixed + per-row cost)"
      "$bench" --devices "0;0:1" --repeat 2 2>&1 | tee -a "$log"
      for r in 5250000 2625000; do "$bench" --devices 0 --rows "$r" --repeat 2 2>&1 | tee -a "$log"; done
      ;;
    *) say "unknown: $what" ;;
  esac
done
