"""examples/sentiment-fewshot end to end, as a user runs it (``assay init``, ``assay evolve``), with the real
local model on 12 of its 48 cases and 2 generations: the few-shot operators must lift the dev score.

The commands run in this process (``assay.cli.main.main``), so the model is loaded once per test session
(shared with tests/llm/test_local.py) instead of once per command."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from assay.cli.main import main
from tests.extras import need

pytestmark = pytest.mark.e2e

EXAMPLE = Path(__file__).parents[2] / "examples" / "sentiment-fewshot"
SCORE = re.compile(r"(dev|holdout) score\s+([\d.]+) -> ([\d.]+)")


def assay(*args: str, cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> tuple[int, str, str]:
    """Run one command as ``assay <args>`` in ``cwd``: (exit code, stdout, stderr)."""
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("COLUMNS", "200")
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def project(tmp_path: Path) -> Path:
    need("local")
    root = tmp_path / "sentiment"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".assay", "__pycache__"))
    cases = yaml.safe_load((root / "cases.yaml").read_text())["cases"]
    (root / "cases.yaml").write_text(yaml.safe_dump({"cases": cases[:12]}, sort_keys=False))
    return root


def test_the_example_has_a_balanced_labelled_dataset() -> None:
    cases = yaml.safe_load((EXAMPLE / "cases.yaml").read_text())["cases"]
    labels = [c["expected"] for c in cases]
    assert 40 <= len(cases) <= 60 and labels.count("positive") == labels.count("negative")
    assert len({c["id"] for c in cases}) == len(cases)


@pytest.mark.local_model
def test_init_and_a_short_evolve_improve_the_prompt(project: Path, monkeypatch, capsys) -> None:
    code, out, err = assay("init", cwd=project, monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0, err
    assert "baseline dev" in out and "baseline holdout" in out

    code, out, err = assay("evolve", "-n", "2", cwd=project, monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0, err
    assert "stopped: reached 2 generations" in out
    scores = {split: (float(a), float(b)) for split, a, b in SCORE.findall(out)}
    assert set(scores) == {"dev", "holdout"}, out
    before, after = scores["dev"]
    assert after > before, out  # the all-positive examples got one with the other label from the pool
    assert "few-shot: replaced example" in out
