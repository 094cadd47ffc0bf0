#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the GPU tests under compute-sanitizer's tools and prints one summary line per tool and binary:
#   scripts/gpu-sanitize.sh build/device [memcheck racecheck initcheck synccheck]
# Environment:
#   CBGPU_SANITIZE_FILTER   Catch2 filter of the unit tests (default "[gpu]", e.g. "[gpu][quantize]")
#   CBGPU_SANITIZE_TARGETS  which binaries: "unit capi" (default), "unit" or "capi"
#   CBGPU_SANITIZE_JOBS     run the unit test cases one process each, this many at a time (default 1:
#                           all cases in one process); a summary line per tool then adds up the cases
#                           and names those that failed. Several processes share the GPU.
#   CBGPU_SANITIZE_PARTS    with JOBS > 1: cases tagged [parts] (loops over independent variants) run as
#                           this many processes, each a share of the variants (CBGPU_TEST_PART=k/n,
#                           tests/support/shrink.hpp); default 1. racecheck's cost is per kernel launch,
#                           so this is how its slowest cases finish.
#   CBGPU_SANITIZE_CASE_TIMEOUT  seconds per unit test case (or per process), 0 (default): no limit
#   CBGPU_SANITIZE_DEADLINE  a time (seconds since the epoch) by which everything must end: each process
#                           gets at most what is left, and a case not started by then is reported
#                           as not run (exit 125) rather than cut off with the rest
# The unit tests see CBGPU_TEST_SHRINK=1: cases whose sizes are only there for speed coverage run
# smaller (see the tests reading it), since the tools slow kernels down 10-100x.
# Logs go to $OUT (or /tmp/cbgpu-sanitize). Suppressions, if any, live in scripts/sanitize.supp (one
# reason per entry). Exits non-zero when any tool reports an error.
set -u
cd "$(dirname "$0")/.."
build="${1:-build/device}"
shift || true
tools=("$@")
((${#tools[@]})) || tools=(memcheck racecheck initcheck synccheck)
out="${OUT:-/tmp/cbgpu-sanitize}"
filter="${CBGPU_SANITIZE_FILTER:-[gpu]}"
targets="${CBGPU_SANITIZE_TARGETS:-unit capi}"
jobs="${CBGPU_SANITIZE_JOBS:-1}"
parts="${CBGPU_SANITIZE_PARTS:-1}"
case_timeout="${CBGPU_SANITIZE_CASE_TIMEOUT:-0}"
deadline="${CBGPU_SANITIZE_DEADLINE:-0}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CBGPU_TEST_SHRINK=1
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
unit="$build/tests/cbgpu_unit_tests"
status=0

# sanitize TOOL LOG COMMAND...: runs one process under the tool; prints "exit seconds summary".
sanitize() {
  local tool="$1" log="$2"
  shift 2
  local extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  local start rc secs summary limit="$case_timeout"
  start=$(date +%s)
  if [ "$deadline" -gt 0 ]; then
    local left=$((deadline - start))
    if [ "$left" -le 5 ]; then
      echo "not run: the deadline had passed" >"$log"
      echo "125 0s not run (deadline)"
      return
    fi
    if [ "$limit" -eq 0 ] || [ "$limit" -gt "$left" ]; then limit="$left"; fi
  fi
  timeout "$limit" "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 86 --print-limit 20 \
    "$@" >"$log" 2>&1
  rc=$?
  grep -q 'No test cases matched' "$log" && rc=3  # a name the test spec did not find
  secs=$(($(date +%s) - start))
  summary="$(grep -E 'ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 2 | tr '\n' ' ')"
  echo "$rc ${secs}s ${summary:-no summary line}"
}
export -f sanitize
export sanitizer case_timeout deadline

# The names of the unit test cases that the filter selects, escaped for a Catch2 test spec.
# Catch2 2 has --list-test-names-only (its exit code is the count); Catch2 3 lists names quietly.
unit_cases() {
  local names spec="${1:-$filter}"
  names="$("$unit" "$spec" --list-test-names-only 2>&1)"
  if grep -qi 'unrecogni[sz]ed' <<<"$names"; then
    names="$("$unit" "$spec" --list-tests --verbosity quiet 2>&1)"
  fi
  sed -e '/^$/d' -e 's/\\/\\\\/g' -e 's/[],[*~"]/\\&/g' <<<"$names"
}

for tool in "${tools[@]}"; do
  for target in $targets; do
    if [ "$target" = capi ]; then
      read -r rc secs summary <<<"$(sanitize "$tool" "$out/sanitize-$tool-capi.log" "$build/tests/cbgpu_capi_tests" --gpu)"
      echo "$tool capi: exit $rc, $secs, $summary"
      [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && status=1
      continue
    fi
    if [ "$jobs" -le 1 ]; then
      read -r rc secs summary <<<"$(sanitize "$tool" "$out/sanitize-$tool-unit.log" "$unit" "$filter")"
      echo "$tool unit $filter: exit $rc, $secs, $summary"
      [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && status=1
      continue
    fi
    dir="$out/sanitize-$tool-unit"
    mkdir -p "$dir"
    start=$(date +%s)
    # cases.tsv: "n<TAB>name<TAB>part", part "k/n" for a share of a [parts] case's variants, "-" for all.
    split_names="$([ "$parts" -gt 1 ] && unit_cases "[parts]")"
    unit_cases | split_names="$split_names" awk -v parts="$parts" '
      BEGIN { m = split(ENVIRON["split_names"], a, "\n"); for (i = 1; i <= m; ++i) split_set[a[i]] = 1 }
      { if ($0 in split_set) { for (k = 0; k < parts; ++k) print ++n "\t" $0 "\t" k "/" parts }
        else print ++n "\t" $0 "\t-" }' >"$dir/cases.tsv"
    # One process per line, $jobs at a time; each appends "n<TAB>exit<TAB>seconds<TAB>summary".
    tr '\n' '\0' <"$dir/cases.tsv" |
      xargs -0 -P "$jobs" -I{} bash -c 'n="${1%%	*}"; rest="${1#*	}"; name="${rest%	*}"; part="${rest##*	}";
        [ "$part" != - ] && export CBGPU_TEST_PART="$part";
        r="$(sanitize "$2" "$3/case-$n.log" "$4" "$name")";
        printf "%s\t%s\n" "$n" "$r" >>"$3/results.tsv"' _ {} "$tool" "$dir" "$unit"
    secs=$(($(date +%s) - start))
    n_cases=$(wc -l <"$dir/cases.tsv")
    bad=$(awk -F'\t' '{split($2, a, " "); if (a[1] != 0 && a[1] != 125) print $1}' "$dir/results.tsv" | tr '\n' ' ')
    not_run=$(awk -F'\t' '{split($2, a, " "); if (a[1] == 125) print $1}' "$dir/results.tsv" | tr '\n' ' ')
    # Cases by time, slowest first, with their names (durations.tsv).
    awk -F'\t' 'NR == FNR {name[$1] = $2 ($3 == "-" ? "" : " (part " $3 ")"); next} {split($2, a, " "); printf "%d\t%s\t%s\n", a[2], a[1], name[$1]}' \
      "$dir/cases.tsv" "$dir/results.tsv" | sort -rn >"$dir/durations.tsv"
    slowest=$(head -n 1 "$dir/durations.tsv" | cut -f1,3)
    errors=$(cat "$dir"/case-*.log | grep -hoE '(ERROR SUMMARY|RACECHECK SUMMARY): [0-9]+ (errors?|hazards?)' |
             awk '{s += $(NF-1)} END {print s + 0}')
    leaked=$(cat "$dir"/case-*.log | grep -hoE 'LEAK SUMMARY: [0-9]+ bytes' | awk '{s += $3} END {print s + 0}')
    echo "$tool unit $filter: $n_cases cases in ${secs}s (up to $jobs at a time), $errors errors/hazards," \
         "${leaked} bytes leaked; cases not passing: ${bad:-none}; not run (deadline): ${not_run:-none};" \
         "slowest: ${slowest/$'\t'/ s, }"
    [ -n "$bad" ] && status=1
    [ -n "$not_run" ] && status=1
    # What the tool reported, by kind and place (headline and the frame after it), most frequent
    # first, with the cases it came from: findings.txt, and its top lines here.
    for f in "$dir"/case-*.log; do
      awk -v c="$(basename "$f" .log)" '
        /^========= [A-Z]/ && !/SUMMARY|COMPUTE-SANITIZER/ {h = substr($0, 11); getline; sub(/^=+ +/, ""); print h " | " substr($0, 1, 160) " | " c}' "$f"
    done | sort | uniq -c | sort -rn >"$dir/findings.txt"
    if [ -s "$dir/findings.txt" ]; then
      echo "  findings (count | kind | where | case), $(wc -l <"$dir/findings.txt") distinct; the first:"
      head -n 12 "$dir/findings.txt" | sed 's/^/    /'
    fi
    [ "$errors" -ne 0 ] && status=1
  done
done
exit $status
