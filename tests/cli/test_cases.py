"""``assay cases FILE... [--json]`` as a user runs it: what assay understood, and the exit status."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cases._helpers import write
from tests.cli.conftest import assay

PROMPTFOO = """\
prompts: ['Reply to: {{question}}']
providers: [openai:gpt-4o-mini]
defaultTest:
  assert:
    - type: not-icontains
      value: as an ai
tests:
  - description: Refund window
    vars: {question: Can I return shoes?, days: 30}
    assert:
      - type: contains
        value: '{{days}} days'
      - type: llm-rubric
        value: Polite and names the return window
        metric: tone
  - vars: {question: Hello}
"""
EVALS = {
    "skill_name": "returns",
    "evals": [
        {"id": 1, "prompt": "Return my shoes", "expectations": ["[contains] label"]},
        {"id": 2, "prompt": "Hi"},
    ],
}


def test_json_lists_files_cases_checks_and_warnings(tmp_path: Path) -> None:
    config = write(tmp_path / "promptfooconfig.yaml", PROMPTFOO)
    evals = write(tmp_path / "evals" / "evals.json", json.dumps(EVALS))
    proc = assay("cases", str(config), str(evals), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    first, second = document["files"]
    assert (first["file"], first["ok"], first["error"], first["format"]) == (
        str(config),
        True,
        None,
        "promptfoo",
    )
    assert first["cases"] == [
        {
            "id": "refund-window",
            "checks": [
                {"type": "not-icontains", "value": "as an ai"},
                {"type": "contains", "value": "30 days"},
                {"type": "llm_judge", "value": "Polite and names the return window"},
            ],
            "unjudged": False,
        },
        # defaultTest's assertion is a check: the bare test is judged by it
        {
            "id": "promptfooconfig-2",
            "checks": [{"type": "not-icontains", "value": "as an ai"}],
            "unjudged": False,
        },
    ]
    assert any("metric names are not kept" in w for w in first["warnings"])
    assert second["format"] == "skill-creator"
    assert [(c["id"], c["unjudged"]) for c in second["cases"]] == [("1", False), ("2", True)]
    assert any("unjudged" in w and "2" in w for w in second["warnings"])


def test_text_output_marks_unjudged_cases(tmp_path: Path) -> None:
    evals = write(tmp_path / "evals.json", json.dumps(EVALS))
    proc = assay("cases", str(evals), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "2 cases, 1 unjudged (no checks)" in proc.stdout
    assert "2: UNJUDGED: no checks" in proc.stdout
    assert "1: contains label" in proc.stdout


def test_a_file_that_does_not_load_exits_2_and_says_why(tmp_path: Path) -> None:
    good = write(tmp_path / "evals.json", json.dumps(EVALS))
    bad = write(tmp_path / "broken" / "promptfooconfig.yaml", "prompts: [x]\ntests: file://cases.ts\n")
    write(tmp_path / "broken" / "cases.ts", "export default [];\n")
    proc = assay("cases", str(good), str(bad), "--json", cwd=tmp_path)
    assert proc.returncode == 2
    files = json.loads(proc.stdout)["files"]
    assert [f["ok"] for f in files] == [True, False]
    assert files[1]["cases"] == [] and "TypeScript" in files[1]["error"] and str(bad) in files[1]["error"]
    text = assay("cases", str(bad), cwd=tmp_path)
    assert text.returncode == 2 and "Traceback" not in text.stdout + text.stderr
    assert "error:" in text.stdout and "no TypeScript runner" in text.stdout


def test_help_says_a_generator_runs(tmp_path: Path) -> None:
    proc = assay("cases", "--help", cwd=tmp_path)
    assert proc.returncode == 0
    assert "does run" in " ".join(proc.stdout.split())
