# SPDX-License-Identifier: Apache-2.0
"""The README's Python example on NumPy runs as written (the CuPy one needs a GPU: examples/python
covers that path)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import cbgpu

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_numpy_example_runs(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    numpy_example = next(b for b in blocks if "import numpy as np" in b)
    env = dict(os.environ, PYTHONPATH=str(Path(cbgpu.__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-c", numpy_example], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^199:\tlearn: ", done.stdout, re.M)  # verbose=50 printed CatBoost's lines
    accuracy, best = done.stdout.strip().splitlines()[-1].split()
    assert float(accuracy) > 0.95 and 0 <= int(best) < 200
    assert (tmp_path / "model.cbm").stat().st_size > 0
