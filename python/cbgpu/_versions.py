# SPDX-License-Identifier: Apache-2.0
"""The package's version and show_versions(): what a bug report needs in one printout."""
from __future__ import annotations

import importlib
import os
import platform
import sys
from typing import TextIO

from . import _capi
from ._info import build_info


def package_version() -> str:
    """The version of the Python package: the wheel's (pyproject.toml reads VERSION), else the
    VERSION file of the source checkout it runs from."""
    try:
        from ._version import __version__  # written into the wheel by its build
        return __version__
    except ImportError:
        pass
    version_file = _capi.REPO_ROOT / "VERSION"
    if version_file.is_file():
        return version_file.read_text().strip()
    return "unknown"


def _module_version(name: str) -> str | None:
    try:
        module = importlib.import_module(name)
    except Exception:  # noqa: BLE001 - any import failure means "not usable here"
        return None
    return str(getattr(module, "__version__", "installed"))


def _gpu_names() -> list[str]:
    """Names of the visible GPUs through CuPy where it is usable (the C ABI reports only the count)."""
    try:
        import cupy
        return [cupy.cuda.runtime.getDeviceProperties(i)["name"].decode()
                for i in range(cupy.cuda.runtime.getDeviceCount())]
    except Exception:  # noqa: BLE001
        return []


def versions() -> dict:
    """The facts show_versions() prints, as a dict."""
    info = build_info()
    return {
        "cbgpu": package_version(),
        "library": {"path": _capi.lib._name, **info},
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "gpus": _gpu_names(),
        "modules": {name: _module_version(name)
                    for name in ("numpy", "scipy", "sklearn", "pandas", "pyarrow", "cupy", "torch", "catboost")},
    }


def show_versions(file: TextIO | None = None) -> None:
    """Prints the package and library versions, the library's build facts and the visible devices
    (also `python -m cbgpu`)."""
    out = file or sys.stdout
    v = versions()
    lib = v["library"]
    print(f"cbgpu {v['cbgpu']}", file=out)
    print("\nlibrary:", file=out)
    for key, value in lib.items():
        print(f"  {key:22s} {value}", file=out)
    print("\ndevices:", file=out)
    print(f"  {'visible CUDA devices':22s} {lib.get('device_count', 0)}"
          + ("" if lib.get("device_count") else " (training and prediction use the host path)"), file=out)
    if v["cuda_visible_devices"] is not None:
        print(f"  {'CUDA_VISIBLE_DEVICES':22s} {v['cuda_visible_devices']}", file=out)
    for i, name in enumerate(v["gpus"]):
        print(f"  {'GPU ' + str(i):22s} {name}", file=out)
    print("\npython:", file=out)
    print(f"  {'python':22s} {v['python']}", file=out)
    print(f"  {'platform':22s} {v['platform']}", file=out)
    for name, version in v["modules"].items():
        print(f"  {name:22s} {version or '-'}", file=out)
