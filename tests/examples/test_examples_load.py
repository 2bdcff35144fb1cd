"""Every example under examples/ is a project a user copies: its config loads, its cases load with checks, and
its artifact passes the L1 static tier (no critical finding). Fast: nothing runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.cases import load_cases
from assay.config import load_config
from assay.static.scan import scan_artifact

EXAMPLES = sorted(p.parent for p in (Path(__file__).parents[2] / "examples").glob("*/assay.yaml"))


def test_there_are_examples() -> None:
    assert {p.name for p in EXAMPLES} >= {"binpack", "slugify", "sentiment-fewshot"}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_an_example_loads_and_passes_the_static_tier(example: Path) -> None:
    config = load_config(example / "assay.yaml")
    cases = load_cases([config.base_dir / f for f in config.cases.files], default_checks=config.checks)
    assert len(cases) >= 10
    assert len({c.id for c in cases}) == len(cases)
    assert all(c.checks for c in cases), "every case of an example is judged"
    report = scan_artifact(config.artifact_dir, list(config.artifact.paths), config.artifact.kind)
    assert report.passed, report.critical
    assert report.files, "the artifact has files"
