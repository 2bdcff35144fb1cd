"""End-to-end: the real `assay eval` command in a subprocess, on real files in a temp dir."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# The fast layer runs these without the jail (as on a machine without bubblewrap): the jail is not what they
# test; tests/sandbox and the e2e attack tests prove it.
pytestmark = pytest.mark.usefixtures("no_bwrap")

EXAMPLE = Path(__file__).parents[2] / "examples" / "slugify"


def assay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def slugify(tmp_path: Path) -> Path:
    target = tmp_path / "slugify"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns(".assay"))
    return target


def test_example_prints_table_and_pass_rate(slugify):
    result = assay("eval", "-c", "assay.yaml", cwd=slugify)
    assert result.returncode == 1, result.stderr
    assert "pass rate 7/12 (58.3%)" in result.stdout
    for case_id in ("simple", "punctuation", "accents"):
        assert case_id in result.stdout
    assert "Traceback" not in result.stderr


def test_json_output_and_traces(slugify):
    result = assay("eval", "-c", "assay.yaml", "--json", cwd=slugify)
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["pass_rate"] == pytest.approx(7 / 12)
    assert data["total"] == 12
    by_id = {c["id"]: c for c in data["cases"]}
    assert by_id["simple"]["passed"] is True
    assert by_id["accents"]["passed"] is False
    failing = [c for c in by_id["accents"]["checks"] if not c["passed"]]
    assert failing and failing[0]["type"] == "equals"
    assert "creme-brulee-recipe" in failing[0]["evidence"]
    assert {c["split"] for c in data["cases"]} <= {"dev", "holdout", "regression"}
    log, offset = by_id["accents"]["trace"].rsplit("#", 1)  # the trace log, and where the case's line starts
    with open(log, "rb") as handle:
        handle.seek(int(offset))
        trace = json.loads(handle.readline())
    assert trace["case"]["input"] == "Crème Brûlée Recipe"
    assert trace["case"]["checks"][0] == {
        **trace["case"]["checks"][0],
        "type": "equals",
        "value": "creme-brulee-recipe",
    }
    assert trace["result"]["output"]["text"] == "crème-brûlée-recipe"
    assert trace["result"]["passed"] is False
    assert trace["result"]["checks"][0]["passed"] is False
    assert (Path(data["trace_dir"]).parent / "summary.json").exists()


def test_split_is_written_once_and_selects_cases(slugify):
    first = json.loads(assay("eval", "-c", "assay.yaml", "--json", "--split", "dev", cwd=slugify).stdout)
    split_file = slugify / ".assay" / "split.json"
    saved = split_file.read_text()
    splits = json.loads(saved)["splits"]
    assert {c["id"] for c in first["cases"]} == {k for k, v in splits.items() if v == "dev"}
    holdout = json.loads(
        assay("eval", "-c", "assay.yaml", "--json", "--split", "holdout", cwd=slugify).stdout
    )
    assert {c["id"] for c in holdout["cases"]} == {k for k, v in splits.items() if v == "holdout"}
    assert split_file.read_text() == saved


def test_grading_json(slugify, tmp_path):
    out = tmp_path / "grading"
    assay("eval", "-c", "assay.yaml", "--grading-json", str(out), cwd=slugify)
    grading = json.loads((out / "eval-accents" / "grading.json").read_text())
    assert grading["summary"]["total"] == 3
    assert grading["summary"]["failed"] >= 1
    assert {"text", "passed", "evidence"} <= set(grading["expectations"][0])


def test_all_pass_exits_zero(slugify):
    (slugify / "cases.yaml").write_text(
        "- {id: one, input: Hello World, checks: [{type: equals, value: hello-world}]}\n"
    )
    result = assay("eval", "-c", "assay.yaml", cwd=slugify)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pass rate 1/1" in result.stdout


def test_config_error_is_one_line_exit_two(slugify):
    config = slugify / "assay.yaml"
    config.write_text(config.read_text().replace("timeout: 10", "timeout: soon"))
    result = assay("eval", "-c", "assay.yaml", cwd=slugify)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "assay.yaml" in lines[0] and "runner.timeout" in lines[0]


def test_unknown_check_type_in_cases(slugify):
    (slugify / "cases.yaml").write_text("- {id: one, input: x, checks: [{type: containz, value: y}]}\n")
    result = assay("eval", "-c", "assay.yaml", cwd=slugify)
    assert result.returncode == 2
    assert "containz" in result.stderr and "contains" in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_config_file(tmp_path):
    result = assay("eval", "-c", "nope.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert "nope.yaml" in result.stderr and "not found" in result.stderr


def test_critical_static_finding_stops_evaluation(slugify):
    artifact = slugify / "slugify.py"
    artifact.write_text(artifact.read_text() + "\nimport os\nos.system('rm -rf ' + '/')\n# rm -rf /\n")
    result = assay("eval", "-c", "assay.yaml", cwd=slugify)
    assert result.returncode == 1
    assert "critical" in result.stdout
    assert "no case was run" in result.stdout


def test_crashing_runner_is_a_failed_case_not_an_abort(slugify):
    (slugify / "slugify.py").write_text(
        "import sys\nif 'World' in ' '.join(sys.argv):\n    raise SystemExit('boom')\nprint('ok')\n"
    )
    (slugify / "cases.yaml").write_text(
        "- {id: crash, input: Hello World, checks: [{type: equals, value: ok}]}\n"
        "- {id: fine, input: other, checks: [{type: equals, value: ok}]}\n"
    )
    result = assay("eval", "-c", "assay.yaml", "--json", cwd=slugify)
    assert result.returncode == 1
    data = {c["id"]: c for c in json.loads(result.stdout)["cases"]}
    assert data["fine"]["passed"] is True
    assert data["crash"]["passed"] is False
    assert "exit code 1" in (data["crash"]["error"] or "")
    runner = [c for c in data["crash"]["checks"] if c["type"] == "runner"]
    assert runner and "boom" in runner[0]["evidence"]


def test_missing_schema_file_is_a_config_error(slugify):
    (slugify / "cases.yaml").write_text(
        "- {id: one, input: x, checks: [{type: json_schema, value: schemas/none.json}]}\n"
    )
    result = assay("eval", "-c", "assay.yaml", cwd=slugify)
    assert result.returncode == 2, result.stdout
    assert "cases.yaml" in result.stderr and "one.checks[0]" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_command_template_is_a_config_error(slugify):
    config = slugify / "assay.yaml"
    config.write_text(config.read_text().replace("python slugify.py {input}", "python slugify.py '{input}'"))
    result = assay("eval", "-c", "assay.yaml", cwd=slugify)
    assert result.returncode == 2, result.stdout
    assert "assay.yaml: runner.command:" in result.stderr
    assert "Traceback" not in result.stderr
