"""``assay cases FILE... [--json]`` as a user runs it: what assay understood, and the exit status."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cases._helpers import write
from tests.cli.conftest import assay
from tests.cli.test_runs import OLD_RUN, OLD_RUNS

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


def test_one_spelling_for_the_config_and_the_run_everywhere_and_the_old_ones_still_work(
    tmp_path: Path,
) -> None:
    # `eval -c FILE` but `cases FILE`, `adopt -r RUN` but `report RUN`: each command now takes both spellings.
    write(tmp_path / "echo.py", "import sys\nprint(sys.argv[1])\n")
    write(tmp_path / "cases.yaml", "cases:\n  - {id: a, input: hi}\n")
    write(
        tmp_path / "assay.yaml",
        "artifact: {paths: [echo.py]}\ncases: {files: [cases.yaml]}\n"
        "runner: {type: command, command: 'python3 echo.py {input}', sandbox: none}\n"
        "checks: [{type: equals, value: hi}]\n",
    )
    by_file = assay("cases", "cases.yaml", cwd=tmp_path)
    assert by_file.returncode == 0 and "1 case, 1 unjudged" in by_file.stdout
    for args in (["cases", "-c", "assay.yaml"], ["cases"]):  # the config's case files, with its checks
        listed = assay(*args, cwd=tmp_path)
        assert listed.returncode == 0, listed.stderr
        assert "cases.yaml (native): 1 case" in listed.stdout and "a: equals hi" in listed.stdout
    both = assay("cases", "cases.yaml", "-c", "assay.yaml", cwd=tmp_path)
    assert both.returncode == 2 and "give case files or a config (-c), not both" in both.stderr
    promptfoo = write(tmp_path / "pf" / "promptfooconfig.yaml", PROMPTFOO)
    assert "2 cases" in assay("cases", "-c", str(promptfoo), cwd=tmp_path).stdout

    for args in (
        ["eval", "assay.yaml"],
        ["eval", "-c", "assay.yaml"],
        ["eval", "assay.yaml", "-c", "assay.yaml"],
    ):
        done = assay(*args, "-q", cwd=tmp_path)
        assert done.returncode == 0 and "pass rate 1/1" in done.stdout, (args, done.stderr)
    write(tmp_path / "other.yaml", (tmp_path / "assay.yaml").read_text())
    clash = assay("eval", "other.yaml", "-c", "assay.yaml", cwd=tmp_path)
    assert clash.returncode == 2 and "names assay.yaml, and CONFIG names other.yaml: give one" in clash.stderr

    shutil.copytree(OLD_RUNS, tmp_path / ".assay", dirs_exist_ok=True)  # a run store: one run, an older assay
    for args in (["report", "-r", "nope"], ["report", "--run", "nope"], ["report", "nope"]):
        done = assay(*args, cwd=tmp_path)
        assert done.returncode == 2 and done.stderr.startswith("error: no run 'nope'; recent runs: "), args
    for args in (["report", "-r", OLD_RUN], ["report", OLD_RUN]):  # the run is found, by either spelling
        done = assay(*args, cwd=tmp_path)
        assert done.returncode == 2 and f"run {OLD_RUN} cannot be reported" in done.stderr, args
    clash = assay("report", "one", "-r", "two", cwd=tmp_path)
    assert clash.returncode == 2 and "names two, and RUN names one: give one" in clash.stderr
