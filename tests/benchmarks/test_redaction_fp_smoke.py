"""benchmarks/redaction_fp.py: on every example's traces (and on ordinary prose) the redactor changes at most
0.5% of the characters that hold no secret (the benchmark's ceiling; above it, it exits with status 1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# The fast layer runs these without the jail (as on a machine without bubblewrap): the jail is not what they
# test; tests/sandbox and the e2e attack tests prove it.
pytestmark = pytest.mark.usefixtures("no_bwrap")

ROOT = Path(__file__).resolve().parents[2]


def test_false_positive_rate_is_under_the_ceiling() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "redaction_fp.py"), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    summary = json.loads(done.stdout)
    names = {row["example"] for row in summary["examples"]}
    assert names == {"binpack", "sentiment-fewshot", "slugify", "support-prompt", "ticket-router"}
    # The ticket router's answer key is a check script's JSON data file: its twelve routes are secrets too.
    (router,) = [row for row in summary["examples"] if row["example"] == "ticket-router"]
    assert router["secrets"] >= 12
    assert all(row["cases"] >= 12 for row in summary["examples"])
    assert sum(row["without_secret"] for row in summary["examples"]) > 3000
    assert summary["ceiling"] == 0.005
    assert summary["false_positive_rate"] <= 0.005
    assert summary["prose_false_positive_rate"] <= 0.005
