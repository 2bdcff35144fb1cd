"""An editable file that is, lies in or resolves to the answer key is refused before anything runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.cases import load_cases
from assay.config import load_config
from assay.errors import ConfigError
from assay.evaluation.answer_key import answer_key, exposed
from assay.evaluation.key_reach import refuse_exposed_key
from assay.evaluation.session import select_cases

EVALS = {
    "skill_name": "demo",
    "evals": [{"id": i, "prompt": f"q{i}", "expectations": [f"[contains] a{i}"]} for i in range(12)],
}


def skill_project(tmp_path: Path, paths: str, forbid: str = "[]", checks: str = "") -> Path:
    """params.json (the artifact), evals.json (the cases) and a runner that prints the params."""
    root = tmp_path / "skill"
    root.mkdir()
    (root / "params.json").write_text('{"style": "terse"}\n')
    (root / "evals.json").write_text(json.dumps(EVALS))
    (root / "run.py").write_text("import sys; print(open('params.json').read(), sys.argv[1])\n")
    (root / "assay.yaml").write_text(
        f"artifact: {{kind: config, paths: {paths}, forbid: {forbid}}}\n"
        "cases: {files: [evals.json]}\n"
        "runner: {type: command, command: 'python3 run.py {input}', sandbox: none}\n" + checks
    )
    return root


def refusal(root: Path) -> str:
    config = load_config(root / "assay.yaml")
    with pytest.raises(ConfigError) as raised:
        select_cases(config)
    message = str(raised.value)
    assert "\n" not in message and message.startswith(f"{root / 'assay.yaml'}: artifact.paths: ")
    return message


def test_a_case_file_listed_as_editable(tmp_path: Path) -> None:
    root = skill_project(tmp_path, "[params.json, evals.json]")
    message = refusal(root)
    assert "the editable file evals.json is a case file, evals.json" in message
    assert "add evals.json to artifact.forbid" in message
    assert not (root / ".assay" / "split.json").exists()  # refused before the split is written


def test_a_symlink_to_the_case_file(tmp_path: Path) -> None:
    root = skill_project(tmp_path, "[params.json, notes.txt]")
    (root / "notes.txt").symlink_to("evals.json")
    assert "the editable file notes.txt resolves to a case file, evals.json" in refusal(root)


def test_a_hard_link_to_the_case_file(tmp_path: Path) -> None:
    root = skill_project(tmp_path, "[params.json, notes.txt]")
    os.link(root / "evals.json", root / "notes.txt")
    assert "the editable file notes.txt is a hard link to a case file, evals.json" in refusal(root)


@pytest.mark.parametrize(
    ("paths", "editable", "key"),
    [
        ("['.']", "assay.yaml", "the configuration, assay.yaml"),
        ("['*.json']", "evals.json", "a case file, evals.json"),
        ("['**/*']", ".assay/split.json", "the run data directory, .assay"),
    ],
)
def test_a_pattern_that_covers_the_key(tmp_path: Path, paths: str, editable: str, key: str) -> None:
    root = skill_project(tmp_path, paths, forbid="[evals.json, assay.yaml]" if "*" in paths else "[]")
    if editable == ".assay/split.json":
        (root / ".assay").mkdir()
        (root / ".assay" / "split.json").write_text("{}")
    elif editable == "evals.json":
        (root / "assay.yaml").write_text(
            (root / "assay.yaml").read_text().replace("forbid: [evals.json, ", "forbid: [")
        )
    message = refusal(root)
    assert f"the editable file {editable} " in message and key in message


def test_a_file_a_check_reads_and_a_directory_linked_in(tmp_path: Path) -> None:
    checks = "checks:\n  - {type: script, value: 'python3 grader/check.py'}\n"
    root = skill_project(tmp_path, "[params.json, rules/]", checks=checks)
    (root / "grader").mkdir()
    (root / "grader" / "check.py").write_text("print('ok')\n")
    (root / "rules").mkdir()
    (root / "rules" / "extra.py").symlink_to(root / "grader" / "check.py")
    assert "the editable file rules/extra.py resolves to a file a check runs or reads, grader/check.py" in (
        refusal(root)
    )
    (root / "rules" / "extra.py").unlink()
    (root / "rules" / "grader").symlink_to(root / "grader")
    config = load_config(root / "assay.yaml")
    cases = load_cases([root / "evals.json"])
    # artifact_files does not walk a symlinked directory, but a path through it names its files.
    assert exposed(config, cases) == []
    config.artifact.paths.append("rules/grader/check.py")
    (found,) = exposed(config, cases)
    assert (found.editable, found.how) == ("rules/grader/check.py", "resolves to")


def test_what_is_not_the_key(tmp_path: Path) -> None:
    # A text check's words are text, not files; forbid takes a file out of the editable set; a program
    # check's interpreter on PATH is outside the project.
    checks = (
        "checks:\n  - {type: contains, value: 'params.json'}\n  - {type: script, value: 'python3 -c 1'}\n"
    )
    root = skill_project(tmp_path, "['*.json', run.py]", forbid="[evals.json]", checks=checks)
    config = load_config(root / "assay.yaml")
    cases = load_cases([root / "evals.json"])
    assert exposed(config, cases) == []
    refuse_exposed_key(config, cases)
    assert {key.what for key in answer_key(config, cases)} == {"the configuration", "a case file"}


def test_eval_refuses_with_exit_2_before_running(tmp_path: Path) -> None:
    root = skill_project(tmp_path, "[params.json, evals.json]")
    (root / "run.py").write_text("open('ran', 'w').write('yes')\n")
    done = subprocess.run(
        [sys.executable, "-m", "assay", "eval"], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and "the editable file evals.json is a case file" in lines[0], lines
    assert not (root / "ran").exists()


def _assay(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], cwd=root, capture_output=True, text=True, timeout=300
    )


def _commit(root: Path, message: str) -> None:
    for args in (["add", "-A"], ["commit", "-qm", message]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True)


@pytest.mark.e2e
def test_evolve_and_resume_refuse_before_running(tmp_path: Path) -> None:
    root = skill_project(tmp_path, "[params.json]")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    _commit(root, "start")
    started = _assay(root, "evolve", "-n", "1")
    assert started.returncode == 0, started.stdout + started.stderr
    (run,) = os.listdir(root / ".assay" / "runs")
    (root / "notes.txt").symlink_to("evals.json")
    config = root / "assay.yaml"
    config.write_text(config.read_text().replace("paths: [params.json]", "paths: [params.json, notes.txt]"))
    _commit(root, "a note")
    for args in (["evolve", "-n", "1"], ["resume", run, "-n", "2"]):
        done = _assay(root, *args)
        assert done.returncode == 2, (args, done.stdout + done.stderr)
        lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
        assert (
            len(lines) == 1 and "the editable file notes.txt resolves to a case file, evals.json" in lines[0]
        )
    assert os.listdir(root / ".assay" / "runs") == [run]


def test_what_the_agent_may_read(tmp_path: Path) -> None:
    root = skill_project(tmp_path, "[params.json]")
    tools = tmp_path / "tools"
    tools.mkdir()
    config = load_config(root / "assay.yaml")
    cases = load_cases([root / "evals.json"])
    config.evolve.proposer.type = "agent"
    config.evolve.proposer.command = "true"
    for home_ro, how in [
        ([str(root / "evals.json")], "is a case file, evals.json"),
        ([str(tools), str(root)], "holds the configuration, assay.yaml"),
    ]:
        config.evolve.proposer.home_ro = home_ro
        with pytest.raises(ConfigError) as raised:
            refuse_exposed_key(config, cases)
        index = len(home_ro) - 1
        assert f"evolve.proposer.home_ro[{index}]: {home_ro[-1]} {how}: " in str(raised.value)
        assert "the agent proposer would read the answer key" in str(raised.value)
    # Above the project, the agent's jail hides the project: its tools and login may be read.
    config.evolve.proposer.home_ro = [str(tools), str(tmp_path)]
    refuse_exposed_key(config, cases)


def test_files_named_after_a_change_of_directory(tmp_path: Path) -> None:
    checks = "checks:\n  - {type: script, value: 'cd grader && python3 check.py ../key/answers.json'}\n"
    root = skill_project(tmp_path, "[params.json]", checks=checks)
    (root / "grader").mkdir()
    (root / "grader" / "check.py").write_text("print('ok')\n")
    (root / "key").mkdir()
    (root / "key" / "answers.json").write_text('{"a": "amber kestrel"}\n')
    config = load_config(root / "assay.yaml")
    cases = load_cases([root / "evals.json"])
    found = {os.path.relpath(key.path, root) for key in answer_key(config, cases) if key.kind == "check"}
    assert found == {"grader/check.py", "key/answers.json"}
