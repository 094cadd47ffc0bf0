#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Compares the ABI of a built libcbgpu.so with the dump checked in as abi/libcbgpu.abi (libabigail):
#   scripts/abi-check.sh [build_dir]            report; fail on an incompatible change (a removed
#                                               function or variable, a changed function type, ...)
#   scripts/abi-check.sh [build_dir] --update   rewrite abi/libcbgpu.abi from the build
# Only the exported interface described by the public headers (capi/include/cbgpu) is dumped. In
# 0.x a minor release may break the ABI; the dump makes every change visible in review. The
# dump needs debug info: use a RelWithDebInfo (ci) or Debug build.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/ci}"
mode="${2:-check}"
lib="$build/libcbgpu.so"
[ -f "$lib" ] || { echo "abi-check: $lib not found (build first)" >&2; exit 2; }
command -v abidw >/dev/null || { echo "abi-check: abidw not found (apt-get install abigail-tools)" >&2; exit 2; }
dump() {
  abidw --headers-dir capi/include/cbgpu --no-corpus-path --drop-private-types \
        --exported-interfaces-only --no-show-locs --no-comp-dir-path "$lib" --out-file "$1"
}
if [ "$mode" = "--update" ]; then
  dump abi/libcbgpu.abi
  echo "abi-check: abi/libcbgpu.abi rewritten from $lib"
  exit 0
fi
current="$(mktemp --suffix=.abi)"
trap 'rm -f "$current"' EXIT
dump "$current"
set +e
report="$(abidiff --no-show-locs abi/libcbgpu.abi "$current")"
rc=$?
set -e
# abidiff's exit status is a bit field: 1 error, 2 usage, 4 ABI change, 8 incompatible change.
if (( rc & 3 )); then
  echo "abi-check: abidiff failed (exit $rc)" >&2
  echo "$report" >&2
  exit 2
fi
if (( rc & 8 )); then
  echo "$report"
  echo "abi-check: INCOMPATIBLE change against abi/libcbgpu.abi (see above). If intended (0.x minor"
  echo "release), bump the version and run: scripts/abi-check.sh $build --update"
  exit 1
fi
if (( rc & 4 )); then
  echo "$report"
  echo "abi-check: compatible ABI change (additions); refresh the dump with --update when releasing"
  exit 0
fi
echo "abi-check: ABI identical to abi/libcbgpu.abi"
