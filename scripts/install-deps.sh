#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what cbgpu needs on Debian 12 / Ubuntu 24.04 (the CUDA toolkit at /usr/local/cuda is
# expected to be there already). Idempotent: installs only what is missing.
set -euo pipefail

packages=(libfmt-dev libspdlog-dev catch2 libdlpack-dev nlohmann-json3-dev libcli11-dev
          libflatbuffers-dev flatbuffers-compiler abigail-tools clang-format ccache)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# Tools: only where the machine has none of its own (a pyenv Python, a newer CMake, ... are kept).
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v g++ >/dev/null || missing+=(g++)
command -v git >/dev/null || missing+=(git)
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v python3 >/dev/null || missing+=(python3)
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
# Virtual environments (scripts/test-python-package.sh tests the wheel in a fresh one).
python3 -c "import ensurepip, venv" >/dev/null 2>&1 || missing+=(python3-venv)
if ((${#missing[@]})); then
  echo "install-deps: apt-get install ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: the CUDA toolkit is expected at /usr/local/cuda (nvcc not found)" >&2
  exit 1
fi

# Python packages for the ctypes tests (pip; no virtualenv needed on the build machines).
py_missing=()
for m in numpy pytest pandas catboost pyarrow; do
  python3 -c "import $m" >/dev/null 2>&1 || py_missing+=("$m")
done
# scikit-learn: the estimators' workflows (Pipeline, GridSearchCV, ...) and the real datasets it ships
# (breast cancer, diabetes, ...) for the training quality tests.
python3 -c "import sklearn" >/dev/null 2>&1 || py_missing+=("scikit-learn")
# scikit-build-core: the build backend of pyproject.toml (pip wheel --no-build-isolation in the tests).
python3 -c "import scikit_build_core" >/dev/null 2>&1 || py_missing+=("scikit-build-core")
# dask and distributed: cbgpu.dask's tests (a LocalCluster in-process; pure-Python wheels).
python3 -c "import dask.dataframe" >/dev/null 2>&1 || py_missing+=("dask[dataframe]")
python3 -c "import distributed" >/dev/null 2>&1 || py_missing+=("distributed")
if ((${#py_missing[@]})); then
  echo "install-deps: pip install ${py_missing[*]}"
  python3 -m pip install -q --disable-pip-version-check "${py_missing[@]}" 2>/dev/null ||
    python3 -m pip install -q --disable-pip-version-check --break-system-packages "${py_missing[@]}"
fi
