#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check.sh <build dir> [CPU|GPU]: trains the identity corpus (corpus.txt on the data make_data.py writes,
# plus two `cbgpu-bench bench` models) with <build dir>'s cbgpu-bench and compares the models' hashes
# with baseline-<task>.txt, recorded with the library before the trainer was reorganised. Exit 0 when
# every model is byte-identical. Refactorings of the trainer must keep it passing; a change meant to
# alter models records a new baseline (run_corpus.sh) in the same commit, saying why.
set -u
build=$(cd "$1" && pwd); task=${2:-CPU}
here=$(cd "$(dirname "$0")" && pwd)
bin=$(find "$build" -name cbgpu-bench -type f -perm -u+x | head -1)
[[ -n "$bin" ]] || { echo "no cbgpu-bench under $build"; exit 2; }
out=$(mktemp -d /tmp/identity.XXXXXX)
python3 "$here/make_data.py" "$out/data" || exit 2
"$here/run_corpus.sh" "$bin" "$out/data" "$out" "$task" > /dev/null
if diff "$here/baseline-$task.txt" "$out/hashes.txt"; then
  echo "identity: all $(wc -l < "$out/hashes.txt") models byte-identical to the baseline ($task)"
  rm -rf "$out"
else
  echo "identity: DIFFERENCES (left: baseline, right: $bin); models and logs in $out"
  exit 1
fi
