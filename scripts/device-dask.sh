#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cbgpu.dask and the library's communicators from a unique id on a GPU machine, from a build made on
# another machine and dask wheels carried with it (scripts/fetch-device-wheels.sh makes .whl/).
#
#   scripts/device-dask.sh <bundle or build dir> [--ranks N] [--rows N] [--baseline <old bundle>]
#
# One GPU: the [dist] unit tests (host ones, and on the GPU: one rank from a unique id gives the
# single-GPU model through the border sample; a rank whose peers never join times out), the Python
# dask tests with CuPy chunks on a one-worker LocalCluster, and the dask example.
# --ranks N (N GPUs visible): also the [gpu][dist] two-rank cases, N Dask workers (one GPU each)
# trained together against one GPU byte for byte (float columns, and categorical columns with
# max_ctr_complexity 1 and 4), a failing rank's error on the client with the
# others stopped, and the peak device memory per rank of examples/multi_host over --rows rows
# (default 16M) - with --baseline, the same binary over an older libcbgpu.so (the whole feature set
# gathered on every rank) for the before/after figures.
# Logs go to $OUT (or /tmp/cbgpu-device-dask). Preparing the carry on the build machine (about 35 MB
# with the wheels; the baseline adds one stripped libcbgpu.so of the older build, about 13 MB):
#   scripts/fetch-device-wheels.sh
#   mkdir -p .carry/dask/build/tests && cp -P build/ci/libcbgpu.so* .carry/dask/build/ &&
#   cp build/ci/tests/cbgpu_unit_tests build/ci/tests/cbgpu-multi-host-example .carry/dask/build/tests/ &&
#   strip --strip-debug .carry/dask/build/libcbgpu.so.*.* .carry/dask/build/tests/*
# then the device tool's run with carry [".carry/dask", ".whl"]:
#   scripts/device-dask.sh .carry/dask/build                       (one GPU)
#   scripts/device-dask.sh .carry/dask/build --ranks 2 --baseline .carry/dask/baseline   (two GPUs)
set -u
cd "$(dirname "$0")/.."
build="${1:?usage: device-dask.sh <build dir> [--ranks N] [--rows N] [--baseline <dir>]}"
shift
ranks=1
rows=16000000
baseline=""
while (($#)); do
  case "$1" in
    --ranks) ranks="$2"; shift 2 ;;
    --rows) rows="$2"; shift 2 ;;
    --baseline) baseline="$2"; shift 2 ;;
    *) echo "device-dask: unknown argument $1" >&2; exit 2 ;;
  esac
done
out="${OUT:-/tmp/cbgpu-device-dask}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
# NVLink multicast stays off on these machines (KINDS.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH="$PWD/$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CBGPU_LIBRARY="$PWD/$build/libcbgpu.so"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl ||
    { echo "device-dask: installing the carried wheels failed"; exit 1; }
  export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
# The package from this checkout (its library: CBGPU_LIBRARY above).
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
# NCCL: the system's, else the one PyTorch's wheels bring (nvidia-nccl).
if ! ldconfig -p | grep -q 'libnccl.so.2'; then
  nccl="$(python3 -c 'import glob, site; print(next(iter(sorted(f for p in site.getsitepackages() for f in glob.glob(p + "/nvidia/nccl/lib/libnccl.so*"))), ""))')"
  [ -n "$nccl" ] && export CBGPU_NCCL_LIBRARY="$nccl"
fi
echo "device-dask: NCCL ${CBGPU_NCCL_LIBRARY:-from the loader path}; $(nvidia-smi -L 2>/dev/null | wc -l) GPUs"
tail_lines=30
. scripts/device-steps.sh

nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
python3 -c "import dask, distributed, cupy; print('dask', dask.__version__, 'distributed', distributed.__version__, 'cupy', cupy.__version__)"
run unit-dist "$build/tests/cbgpu_unit_tests" "[dist]" --durations yes
run unit-quantize-gpu "$build/tests/cbgpu_unit_tests" "[quantize][gpu]"
run python-dask python3 -m pytest -q -rs tests/python/test_dask.py tests/python/test_examples.py -k "dask or train_predict"
if ((ranks > 1)); then
  run dask-ranks python3 scripts/dask-ranks-check.py --ranks "$ranks"
  if [ -x "$build/tests/cbgpu-multi-host-example" ]; then
    run memory-after examples/multi_host/run.sh "$build/tests/cbgpu-multi-host-example" "$rows"
    if [ -n "$baseline" ]; then
      run memory-before env LD_LIBRARY_PATH="$PWD/$baseline" CBGPU_LIBRARY="$PWD/$baseline/libcbgpu.so" \
        examples/multi_host/run.sh "$build/tests/cbgpu-multi-host-example" "$rows"
    fi
    grep -h "peak device memory" "$out"/memory-*.log || true
  fi
fi
if ((${#failures[@]})); then
  echo "device-dask: FAILED: ${failures[*]}"
  exit 1
fi
echo "device-dask: all parts passed or were skipped"
