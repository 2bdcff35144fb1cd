"""End to end: `assay evolve` with the offline default on a priority that scores every bin at once: FunSearch's
own spelling, ``priority(item, bins: np.ndarray)`` (and without its annotations), a returned list comprehension, a
list built in a loop and one filled by index.
Before the operators knew each, every guard asked an array for one truth value (or compared a list with a
number), each such candidate failed on every case, and the run stopped at a dead end (or, for the loop, most
guards and many terms failed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.history.records import CandidateRecord
from assay.history.runfiles import RunFiles
from tests.repos import committed

pytestmark = pytest.mark.e2e

PRIORITY = '''import numpy as np


def priority(item: float, bins: np.ndarray) -> np.ndarray:
    """Returns priority with which we want to add item to each bin."""
    return -(bins - item)
'''
UNANNOTATED = """import numpy as np


def priority(item, bins):
    return -(bins - item)
"""
LISTED = '''def priority(item: float, bins: list[float]) -> list[float]:
    """One score per bin: best fit."""
    return [-(remaining - item) for remaining in bins]
'''
LOOPED = '''def priority(item: float, bins: list[float]) -> list[float]:
    """One score per bin, built in a loop: best fit."""
    scores = []
    for remaining in bins:
        scores.append(-(remaining - item))
    return scores
'''
FILLED = '''def priority(item: float, bins: list[float]) -> list[float]:
    """One score per bin, put in place by index: best fit."""
    scores = [0.0] * len(bins)
    for i, remaining in enumerate(bins):
        scores[i] = -(remaining - item)
    return scores
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
        scores = priority(float(item), bins[valid] if ARRAYS else [float(b) for b in bins[valid]])
        bins[valid[int(np.argmax(np.asarray(scores)))]] -= item
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


def evolved(tmp: Path, priority: str, arrays: bool, generations: int) -> list[CandidateRecord]:
    """The candidates of one ``assay evolve`` of ``generations`` on a project scoring ``priority``, whose harness
    passes it the bins as a numpy array (``arrays``) or a list; the run must end without a dead end."""
    cases = {"cases": [{"id": f"inst-{i}", "vars": {"seed": 1 + i}} for i in range(8)]}
    root = committed(
        tmp / "proj",
        {
            "priority.py": priority,
            "harness.py": f"ARRAYS = {arrays}\n" + HARNESS,
            "score.py": SCORE,
            "cases.json": json.dumps(cases),
            "assay.yaml": CONFIG.replace("max_generations: 14", f"max_generations: {generations}"),
            ".gitignore": ".assay/\n__pycache__/\n",
        },
    )
    result = subprocess.run(
        [sys.executable, "-m", "assay", "evolve"], cwd=root, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    assert "dead end" not in result.stdout + result.stderr
    records = RunFiles(next((root / ".assay" / "runs").iterdir())).read_candidates()
    assert len(records) == 1 + generations  # the baseline and each generation
    return records


@pytest.mark.parametrize(
    ("priority", "arrays", "case"),
    [
        (PRIORITY, True, "added a guarded return `np.where("),
        (LISTED, False, "added a guarded return `-(remaining"),
        (LOOPED, False, "added a guarded return `-(remaining"),
        (FILLED, False, "added a guarded return `-(remaining"),
    ],
    ids=["numpy", "list", "loop", "by-index"],
)
def test_a_priority_of_many_bins_evolves_with_guards_that_run(
    tmp_path: Path, priority: str, arrays: bool, case: str
) -> None:
    records = evolved(tmp_path, priority, arrays, 14)
    guards = [r for r in records if "added a guarded return" in r.description]
    # a test of ``item`` alone stays an ``if``; one of a bin's room is a case (np.where, or ``... if ... else``)
    assert any(case in r.description for r in guards), [r.description for r in records]
    assert all(r.dev_score is not None for r in guards), [(r.description, r.reason) for r in guards]
    assert not [r for r in records if "truth value" in r.reason or "TypeError" in r.reason]


def test_an_unannotated_priority_of_numpy_bins_is_edited_elementwise_once_a_plain_guard_crashed(
    tmp_path: Path,
) -> None:
    """Nothing in ``priority(item, bins)`` says what ``bins`` holds. Before, every guard asked the array for one
    truth value and the run stopped at a dead end; now the first such crash is evidence, and the guards after it
    are cases of ``np.where`` that run."""
    records = evolved(tmp_path, UNANNOTATED, True, 20)
    guards = [r for r in records if "added a guarded return" in r.description]
    plain = [i for i, r in enumerate(guards) if "np.where(" not in r.description]
    assert plain and not guards[plain[0]].dev_score, [(r.description, r.reason) for r in guards]  # it crashed
    after = guards[plain[0] + 1 :]
    assert after and all("np.where(" in r.description for r in after), [r.description for r in guards]
    assert all(r.dev_score for r in after), [(r.description, r.reason) for r in after]
