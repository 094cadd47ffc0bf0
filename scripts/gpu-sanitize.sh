#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the GPU tests under compute-sanitizer's four tools and prints one summary line per tool:
#   scripts/gpu-sanitize.sh build/device [memcheck racecheck initcheck synccheck]
# Logs go to $OUT (or /tmp/cbgpu-sanitize). Suppressions, if any, live in scripts/sanitize.supp (one
# reason per entry). Exits non-zero when any tool reports an error.
set -u
cd "$(dirname "$0")/.."
build="${1:-build/device}"
shift || true
tools=("$@")
((${#tools[@]})) || tools=(memcheck racecheck initcheck synccheck)
out="${OUT:-/tmp/cbgpu-sanitize}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
status=0
for tool in "${tools[@]}"; do
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  for target in unit capi; do
    log="$out/sanitize-$tool-$target.log"
    if [ "$target" = unit ]; then
      cmd=("$build/tests/cbgpu_unit_tests" "[gpu]")
    else
      cmd=("$build/tests/cbgpu_capi_tests" --gpu)
    fi
    start=$(date +%s)
    "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 86 --print-limit 20 "${cmd[@]}" >"$log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    summary="$(grep -E 'ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 2 | tr '\n' ' ')"
    echo "$tool $target: exit $rc, ${secs}s, ${summary:-no summary line}"
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && status=1
  done
done
exit $status
