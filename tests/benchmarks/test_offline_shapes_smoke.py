"""The offline search benchmark's families of other shapes than a scoring function (a constructor, a record from
rules, a config file, a class), each built as a user's project and its start run by ``assay eval`` in a
subprocess: the python runner calls the harness, the check scores each case from the gap it printed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.benchmarks.offline_modules import tasks

SHAPED = [f for f in tasks.families() if f.shape != "score"]


@pytest.mark.parametrize("family", SHAPED, ids=lambda f: f"{f.half}-{f.name}-{f.shape}")
def test_the_start_runs_through_the_harness_and_the_check_as_assay_eval_runs_it(
    family: tasks.Family, tmp_path: Path
) -> None:
    root = family.write(tmp_path / family.name, "seed: 0\n")
    done = subprocess.run(
        [sys.executable, "-m", "assay", "eval", "--json", "-q"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: a case failed (the start leaves room)
    result = json.loads(done.stdout)
    assert result["total"] == len(tasks.CASE_SEEDS) and result["passed"] < result["total"]
    artifact = family.load(family.start)
    for case in result["cases"]:
        assert case["error"] is None, (case["id"], case["error"])
        gap = family.task.gap(artifact, family.task.instance(int(case["id"].rsplit("-", 1)[1])))
        assert case["score"] == pytest.approx(1 / (1 + gap / 100))
        assert case["passed"] is (gap <= family.task.TARGET)
        assert case["checks"][0]["evidence"] == f"gap {gap:.2f}%"
