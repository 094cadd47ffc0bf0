# SPDX-License-Identifier: Apache-2.0
# Sourced by the device scripts: run NAME COMMAND... logs to $out/NAME.log, prints its tail and a
# verdict (exit 77 counts as skipped) and collects failed names in $failures.
failures=()
run() {
  local name="$1"
  shift
  echo "=== $name: $*"
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  tail -n "${tail_lines:-25}" "$out/$name.log"
  if [ $rc -eq 77 ]; then
    echo "--- $name: SKIPPED"
  elif [ $rc -ne 0 ]; then
    echo "--- $name: FAILED (exit $rc)"
    failures+=("$name")
  else
    echo "--- $name: passed"
  fi
}
