#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run_corpus.sh <cbgpu-bench> <data dir> <out dir> <CPU|GPU>: trains the corpus, writes <out>/hashes.txt
# (one line per configuration: name, exit code, sha256 of the .cbm or "-").
set -u
bin=$(realpath "$1"); data=$(realpath "$2"); out=$3; task=$4
mkdir -p "$out"
: > "$out/hashes.txt"
here=$(cd "$(dirname "$0")" && pwd)
while IFS='|' read -r name cd flags; do
  name=$(echo $name); cd=$(echo $cd)
  [[ -z "$name" || "$name" == \#* ]] && continue
  dir="$out/$name"; mkdir -p "$dir"
  # shellcheck disable=SC2086
  (cd "$dir" && "$bin" fit -f "$data/learn.tsv" -t "$data/test.tsv" --cd "$data/$cd.cd" -m model.cbm \
      --train-dir info --task-type "$task" --verbose 0 $flags > log.txt 2>&1)
  rc=$?
  if [[ -f "$dir/model.cbm" ]]; then h=$(sha256sum "$dir/model.cbm" | cut -c1-16); else h=-; fi
  printf '%s %s %s\n' "$name" "$rc" "$h" >> "$out/hashes.txt"
done < "$here/corpus.txt"
# cbgpu-bench bench's models (the Higgs-like synthetic set).
dev=cpu; [[ "$task" == GPU ]] && dev=0
for cfg in "bench_logloss|--rows 20000 -i 20" "bench_rmse|--rows 20000 -i 20 --loss-function RMSE --layout row -n 8"; do
  name=${cfg%%|*}; flags=${cfg#*|}; dir="$out/$name"; mkdir -p "$dir"
  # shellcheck disable=SC2086
  "$bin" bench --device $dev -m "$dir/model.cbm" $flags > "$dir/log.txt" 2>&1
  rc=$?
  if [[ -f "$dir/model.cbm" ]]; then h=$(sha256sum "$dir/model.cbm" | cut -c1-16); else h=-; fi
  printf '%s %s %s\n' "$name" "$rc" "$h" >> "$out/hashes.txt"
done
cat "$out/hashes.txt"
