# SPDX-License-Identifier: Apache-2.0
"""The package around the binding: where it loads libcbgpu.so from (its bundled copy, then
$CBGPU_LIBRARY, then a build tree), the error when there is none, its version and show_versions."""
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import cbgpu
from conftest import INSTALLED

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(cbgpu.__file__).resolve().parent


def _copy_package(dest: Path, with_library: bool) -> Path:
    """A copy of the imported package under dest/, with or without a bundled library; returns dest."""
    shutil.copytree(PACKAGE, dest / "cbgpu", ignore=shutil.ignore_patterns("__pycache__", "lib"))
    if with_library:
        (dest / "cbgpu" / "lib").mkdir()
        os.symlink(cbgpu._capi.lib._name, dest / "cbgpu" / "lib" / "libcbgpu.so")
    return dest


def _run(code: str, pythonpath: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(pythonpath), **env),
                          capture_output=True, text=True, cwd=pythonpath)


def test_the_bundled_library_comes_first(tmp_path):
    where = _copy_package(tmp_path, with_library=True)
    done = _run("import cbgpu; print(cbgpu._capi.lib._name)", where, CBGPU_LIBRARY="/nonexistent/libcbgpu.so")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(where / "cbgpu" / "lib" / "libcbgpu.so")


def test_without_a_bundled_library_cbgpu_library_is_used(tmp_path):
    where = _copy_package(tmp_path, with_library=False)
    done = _run("import cbgpu; print(cbgpu._capi.lib._name)", where, CBGPU_LIBRARY=cbgpu._capi.lib._name)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == cbgpu._capi.lib._name


def test_no_library_is_an_error_that_says_what_was_tried_and_what_to_do(tmp_path):
    where = _copy_package(tmp_path, with_library=False)
    done = _run("import cbgpu", where, CBGPU_LIBRARY="/nonexistent/libcbgpu.so")
    assert done.returncode != 0
    err = done.stderr
    assert "libcbgpu.so not found" in err
    assert str(where / "cbgpu" / "lib" / "libcbgpu.so") + ": absent" in err
    assert "/nonexistent/libcbgpu.so ($CBGPU_LIBRARY)" in err
    assert "pip install" in err and "CBGPU_LIBRARY" in err and "scripts/build.sh" in err


def test_installed_package_uses_its_bundled_library():
    if INSTALLED:
        assert Path(cbgpu._capi.lib._name) == PACKAGE / "lib" / "libcbgpu.so"
        assert PACKAGE != ROOT / "python" / "cbgpu" and "site-packages" in PACKAGE.parts
    else:
        assert PACKAGE == ROOT / "python" / "cbgpu"


def test_version_is_the_checkout_version():
    version = (ROOT / "VERSION").read_text().strip()
    assert cbgpu.__version__ == version == cbgpu.version()


def test_show_versions_and_python_m_cbgpu():
    out = io.StringIO()
    cbgpu.show_versions(file=out)
    text = out.getvalue()
    info = cbgpu.build_info()
    assert text.startswith(f"cbgpu {cbgpu.__version__}\n")
    for key in ("version", "git_sha", "build_type", "cuda_runtime_version", "device_count"):
        assert f"  {key:22s} {info[key]}" in text
    assert f"visible CUDA devices   {cbgpu.device_count()}" in text
    assert cbgpu._capi.lib._name in text
    done = subprocess.run([sys.executable, "-m", "cbgpu"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(PACKAGE.parent)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"cbgpu {cbgpu.__version__}"
    assert "visible CUDA devices" in done.stdout and "git_sha" in done.stdout
