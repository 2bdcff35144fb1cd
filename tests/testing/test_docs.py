"""The example of docs/api.md's "Conformance suites" section runs as written and prints what it says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).parents[2] / "docs" / "api.md"
SECTION = "## Conformance suites: testing your own part"


def test_the_conformance_example_runs_as_written(tmp_path: Path) -> None:
    text = DOC.read_text()
    code = re.search(r"```python\n(.*?)\n```", text[text.index(SECTION) :], re.S)
    assert code is not None
    script = tmp_path / "suites.py"
    script.write_text(code.group(1))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "both keep the contract",
        "gate KeepsEverything: kept a candidate worse on every case it changed",
    ]


def test_the_table_names_every_suite() -> None:
    import assay.testing

    text = DOC.read_text()
    section = text[text.index(SECTION) :]
    listed = set(re.findall(r"`assay\.testing\.\w+\.(check_\w+)\(", section))
    assert listed == set(assay.testing.__all__)
    for name in assay.testing.__all__:
        assert callable(getattr(assay.testing, name))
