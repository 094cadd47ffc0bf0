#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Downloads the wheels that cbgpu.dask needs on the GPU machines (Python 3.12 with NumPy, pandas,
# CuPy and PyTorch, but no dask) into .whl/ of the repository it runs in, for the device tool's
# `carry`: dask, distributed and their pure-Python needs, pinned to the versions CI tests with (no
# pyarrow: dask.dataframe is not needed there; the dataframe tests skip). Run it once in the
# checkout that travels, then carry ".whl" (about 5 MB):   scripts/fetch-device-wheels.sh
# The device side (scripts/device-dask.sh) installs them with
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
set -euo pipefail
cd "$(dirname "$0")/.."
exclude="$(git rev-parse --git-path info/exclude)"
mkdir -p "$(dirname "$exclude")"
grep -qxF '/.whl/' "$exclude" 2>/dev/null || echo '/.whl/' >> "$exclude"
wheels=(dask==2026.8.0 distributed==2026.8.0 click==8.4.0 cloudpickle==3.1.3 fsspec==2026.9.0 partd==1.4.2
        locket==1.0.0 toolz==1.2.0 pyyaml==6.0.3 jinja2==3.1.6 markupsafe==3.0.3 msgpack==1.2.4 psutil==7.2.2
        sortedcontainers==2.4.0 tblib==3.2.2 tornado==6.6.1 zict==3.0.0 packaging==26.4)
mkdir -p .whl
platforms=()
for n in 17 24 27 28 31 34 35 39; do platforms+=(--platform "manylinux_2_${n}_x86_64"); done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  "${platforms[@]}" --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl "${wheels[@]}"
ls .whl
du -sh .whl
