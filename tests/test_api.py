"""The Python front door: the runnable example of docs/api.md runs as written, and evaluate/evolve take a
config object and parts as objects or names."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import assay
import assay.proposers
from assay.errors import ConfigError
from tests.loop.conftest import make_project

DOC = Path(__file__).parents[1] / "docs" / "api.md"


@pytest.mark.e2e
def test_the_documented_example_runs_as_written(tmp_path: Path) -> None:
    code = re.search(r"```python\n(.*?)\n```", DOC.read_text(), re.S)
    assert code is not None
    script = tmp_path / "example.py"
    script.write_text(code.group(1))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "dev pass rate 0.43 -> 1.00" in done.stdout
    assert "gen   1 surface      keep" in done.stdout and "THRESHOLD 5 -> 13" in done.stdout


def test_import_assay_is_cheap_and_exports_the_front_door() -> None:
    probe = "import sys, assay; print(sorted(m for m in sys.modules if m.startswith('assay.loop')))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]"  # the loop is loaded on first use only
    assert {"evaluate", "evolve", "Proposer", "RunOutcome", "StopRule"} <= set(assay.__all__)
    # What a proposer of one's own reads is typed, and importable from the front door.
    for name in ("ProposerView", "DevCase", "CaseFailure", "HistoryEntry"):
        assert name in assay.__all__ and getattr(assay, name) is getattr(assay.proposers, name)
    with pytest.raises(AttributeError):
        assay.no_such_thing  # noqa: B018


class StopAfterOne(assay.StopRule):
    def check(self, run):  # type: ignore[no-untyped-def]
        return "one is enough" if run.generation >= 1 else None


@pytest.mark.e2e
def test_evaluate_and_evolve_take_objects_and_names(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", cases=5, items=20)
    config = assay.load_config(root / "assay.yaml")
    result = assay.evaluate(config, split="dev")
    assert result.total == len([c for c in result.cases if c.split == "dev"]) > 0
    outcome = assay.evolve(config, gate="ratchet_strict", search="greedy", stop_rules=[StopAfterOne()])
    assert outcome.stop_reason == "one is enough" and outcome.generations == 1
    lines: list[str] = []

    def stop_after_the_first(line: str) -> None:
        lines.append(line)
        if line.startswith("gen "):
            next(p for p in (root / ".assay" / "runs").iterdir() if p.name != outcome.run_id).joinpath(
                "STOP"
            ).write_text("")

    stopped = assay.evolve(config, report=stop_after_the_first)
    assert stopped.stop_reason == "STOP file found" and stopped.run_id != outcome.run_id
    (root / ".assay" / "runs" / stopped.run_id / "STOP").unlink()
    again = assay.evolve(root / "assay.yaml", resume=True, max_generations=3)
    assert again.run_id == stopped.run_id and again.generations == 3
    with pytest.raises(ConfigError, match=r"evolve\.gate"):
        assay.evolve(config, gate="no_such_gate")
