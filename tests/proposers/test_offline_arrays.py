"""End to end: `assay evolve` with the offline default on FunSearch's own spelling of bin packing, a
``priority(item, bins: np.ndarray)`` that scores every bin at once. Before the operators knew arrays, every guard
asked an array for one truth value, each such candidate failed on every case, and the run stopped at a dead end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.history.runfiles import RunFiles
from tests.repos import committed

pytestmark = pytest.mark.e2e

PRIORITY = '''import numpy as np


def priority(item: float, bins: np.ndarray) -> np.ndarray:
    """Returns priority with which we want to add item to each bin."""
    return -(bins - item)
'''
HARNESS = """import math
import random

import numpy as np


def run(case, artifact_dir):
    from priority import priority

    rng = random.Random(case.vars["seed"])
    items = [rng.randint(20, 100) for _ in range(150)]
    bins = np.full(len(items), 150.0)
    for item in items:
        valid = np.nonzero(bins >= item)[0]
        bins[valid[int(np.argmax(priority(float(item), bins[valid])))]] -= item
    bound = math.ceil(sum(items) / 150)
    return repr(100 * (int((bins != 150).sum()) - bound) / bound)
"""
SCORE = """def check(output, context):
    gap = float(output)
    return {"pass": gap <= 2.0, "score": 1 / (1 + gap / 100), "reason": f"gap {gap:.2f}%"}
"""
CONFIG = """artifact: {kind: code, paths: [priority.py], forbid: [harness.py, score.py, cases.json, assay.yaml]}
cases: {files: [cases.json]}
runner: {type: python, function: 'harness:run', timeout: 20, sandbox: none}
checks:
  - {type: python, value: 'score.py:check'}
evolve:
  preset: standard
  seed: 0
  max_generations: 14
  wall_clock_s: 86400
"""


def test_a_numpy_priority_evolves_with_guards_that_run_on_arrays(tmp_path: Path) -> None:
    cases = {"cases": [{"id": f"inst-{i}", "vars": {"seed": 3000 + i}} for i in range(8)]}
    root = committed(
        tmp_path / "proj",
        {
            "priority.py": PRIORITY,
            "harness.py": HARNESS,
            "score.py": SCORE,
            "cases.json": json.dumps(cases),
            "assay.yaml": CONFIG,
            ".gitignore": ".assay/\n__pycache__/\n",
        },
    )
    result = subprocess.run(
        [sys.executable, "-m", "assay", "evolve"], cwd=root, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    assert "dead end" not in result.stdout + result.stderr
    records = RunFiles(next((root / ".assay" / "runs").iterdir())).read_candidates()
    assert len(records) == 15  # the baseline and 14 generations
    guards = [r for r in records if "added a guarded return `np.where(" in r.description]
    assert guards, [r.description for r in records]
    assert all(r.dev_score is not None for r in guards), [(r.description, r.reason) for r in guards]
    assert not [r for r in records if "truth value" in r.reason]
