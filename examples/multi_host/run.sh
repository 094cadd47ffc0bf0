#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Two processes on one machine, one GPU each (devices 0 and 1, or both on device 0 when only one is
# visible), trained together through the caller's NCCL communicator; checks that both ranks wrote
# the single-GPU model byte for byte.   examples/multi_host/run.sh <two_ranks binary> [rows]
set -u
bin="${1:?usage: run.sh <two_ranks binary> [rows]}"
rows="${2:-100000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$bin" 0 2 "$work/id" "$work/model" "$rows" & p0=$!
"$bin" 1 2 "$work/id" "$work/model" "$rows" & p1=$!
wait $p0; r0=$?
wait $p1; r1=$?
if [ $r0 -eq 77 ] || [ $r1 -eq 77 ]; then echo "run.sh: skipped"; exit 77; fi
[ $r0 -eq 0 ] && [ $r1 -eq 0 ] || { echo "run.sh: a rank failed ($r0, $r1)"; exit 1; }
cmp "$work/model.0.cbm" "$work/model.1.cbm" || { echo "run.sh: the ranks' models differ"; exit 1; }
cmp "$work/model.0.cbm" "$work/model.single.cbm" || { echo "run.sh: the 2-process model differs from one GPU's"; exit 1; }
echo "run.sh: 2 processes gave the single-GPU model byte for byte ($(stat -c %s "$work/model.0.cbm") bytes)"
