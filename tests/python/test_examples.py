# SPDX-License-Identifier: Apache-2.0
"""examples/python and examples/dask: each script runs to its end (exit 0), or skips (exit 77) without CuPy or a GPU."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cbgpu

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples" / "python").glob("*.py")) + sorted((ROOT / "examples" / "dask").glob("*.py"))


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_python_example(script, tmp_path):
    env = dict(os.environ)
    # The package the tests import (the source tree's, or the installed one).
    env["PYTHONPATH"] = os.pathsep.join([str(Path(cbgpu.__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    if r.returncode == 77:
        pytest.skip(r.stdout.strip() or "the example skipped itself")
    assert r.returncode == 0, f"{script.name} failed:\n{r.stdout}\n{r.stderr}"
    assert r.stdout.rstrip().endswith("OK")
