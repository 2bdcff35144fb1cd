"""What the candidates' jail hides and shows, derived from the configuration and the cases."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from assay.config import load_config
from assay.errors import ConfigError
from assay.evaluation.confine import candidate_jail, runner_jail
from assay.evaluation.named_files import check_files
from assay.evaluation.session import select_cases
from assay.model import CheckSpec


def project(tmp_path: Path, runner: str = "{type: command, command: 'python harness.py {input}'}") -> Path:
    root = tmp_path / "proj"
    (root / "graders").mkdir(parents=True)
    (root / "lib").mkdir()
    for name in ("harness.py", "prompt.md", "graders/strict.py", "graders/rubric.txt", "lib/score.py",
                 "judge_data.json", "notes.md", "vars.txt", "helper.py"):  # fmt: skip
        (root / name).write_text("x\n")
    (root / "cases.yaml").write_text(
        "cases:\n"
        "  - id: a\n"
        "    input: hi\n"
        "    checks:\n"
        "      - {type: script, value: 'python3 graders/strict.py --data judge_data.json'}\n"
        "      - {type: python, value: 'lib.score:check'}\n"
        "      - {type: llm_judge, value: 'file://graders/rubric.txt'}\n"
        "      - {type: regex, value: '.{3,}', options: {helper: 'helper.py:fn'}}\n"
        "      - {type: contains, value: 'see notes.md and prompt.md'}\n"
        "  - {id: b, input: 'file://vars.txt', checks: [{type: contains, value: x}]}\n"
    )
    (root / "assay.yaml").write_text(
        "artifact: {kind: prompt, paths: [prompt.md], forbid: [harness.py, cases.yaml, assay.yaml]}\n"
        "cases: {files: [cases.yaml]}\n"
        f"runner: {runner}\n"
    )
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


@pytest.mark.e2e
def test_hidden_readonly_and_protected(tmp_path: Path) -> None:
    root = project(tmp_path)
    config = load_config(root / "assay.yaml")
    cases = [c for c, _ in select_cases(config).everything]
    jail = candidate_jail(config, cases)
    assert set(jail.hidden) == {
        ".assay",
        ".git",
        "assay.yaml",
        "cases.yaml",
        "graders",  # a check program's folder, with whatever else lies in it
        "graders/rubric.txt",
        "graders/strict.py",
        "judge_data.json",
        "lib",
        "lib/score.py",
        "notes.md",
        "vars.txt",
        "helper.py",
    }
    # Never hidden: the editable prompt.md, even named by a check; the harness the runner's command names.
    assert "prompt.md" not in jail.hidden and "harness.py" not in jail.hidden
    assert set(jail.read_only) == {"harness.py", "cases.yaml", "assay.yaml"}
    # Deny by default: nothing else of the work directory is shown.
    assert set(jail.shown or ()) == {"prompt.md", "harness.py", "cases.yaml", "assay.yaml"}
    assert set(jail.protected) == {root.resolve(), (root / ".assay").resolve()}
    assert jail.network is False


@pytest.mark.e2e
def test_helper_named_by_an_option_is_hidden_and_runner_files_are_not(tmp_path: Path) -> None:
    root = project(
        tmp_path, runner="{type: command, command: 'python helper.py {input}', read_only: [notes.md]}"
    )
    config = load_config(root / "assay.yaml")
    jail = candidate_jail(config, [c for c, _ in select_cases(config).everything])
    assert "helper.py" not in jail.hidden  # the runner's own command names it
    assert "notes.md" not in jail.hidden  # runner.read_only wins
    assert "notes.md" in jail.read_only


@pytest.mark.e2e
def test_a_python_runner_shows_its_module_and_the_packages_on_the_way(tmp_path: Path) -> None:
    root = project(tmp_path, runner="{type: python, function: 'solver.core.main:run'}")
    config = load_config(root / "assay.yaml")
    jail = candidate_jail(config, [c for c, _ in select_cases(config).everything])
    assert {
        "solver/core/main.py",
        "solver/core/main/__init__.py",
        "solver/__init__.py",
        "solver/core/__init__.py",
    } <= set(jail.shown or ())


@pytest.mark.e2e
def test_outputs_of_file_exists_checks_are_shown_and_never_hidden(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "report.json").write_text("{}")  # left by an earlier evaluation
    (root / "assay.yaml").write_text(
        (root / "assay.yaml").read_text() + "checks: [{type: file_exists, value: report.json}]\n"
    )
    config = load_config(root / "assay.yaml")
    jail = candidate_jail(config, [c for c, _ in select_cases(config).everything])
    assert "report.json" not in jail.hidden and "report.json" in (jail.shown or ())


@pytest.mark.e2e
def test_a_workdir_maps_the_hidden_paths(tmp_path: Path) -> None:
    root = project(tmp_path)
    config = load_config(root / "assay.yaml")
    plan = candidate_jail(config, [c for c, _ in select_cases(config).everything])
    worktree = tmp_path / "wt"
    worktree.mkdir()
    jail = plan.for_workdir(worktree)
    assert worktree.resolve() / "cases.yaml" in jail.hidden and worktree.resolve() / ".git" in jail.hidden
    assert jail.writable == (worktree.resolve(),)


def test_check_files_are_found_in_any_string_of_any_check(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "gold.csv").write_text("")
    specs = [
        CheckSpec(type="new_kind", value={"deep": [{"program": "file://a.py"}]}),
        CheckSpec(type="other", options={"grader": "pkg.mod:grade", "table": "see data/gold.csv please"}),
        CheckSpec(type="contains", value="plain words only"),
    ]
    found = check_files(specs, [tmp_path])
    assert found == {tmp_path / "a.py", tmp_path / "pkg" / "mod.py", tmp_path / "data" / "gold.csv"}


def test_a_division_names_no_file(tmp_path: Path) -> None:
    # promptfoo's own examples score with `output.length / 100`: the lone `/` is no path (it hid the root, and
    # every editable file with it, so the suite was refused as exposing the answer key).
    specs = [
        CheckSpec(type="javascript", value="output.length / 100"),
        CheckSpec(type="python", value="len(output) // 2 > 1 and '..' != './'"),
    ]
    assert check_files(specs, [tmp_path]) == set()


@pytest.mark.e2e
def test_sandbox_modes(tmp_path: Path, no_bwrap: None) -> None:
    root = project(tmp_path)
    config = load_config(root / "assay.yaml")
    jail, why = runner_jail(config, [])
    assert jail is None and why is not None and "ASSAY_BWRAP" in why
    (root / "assay.yaml").write_text(
        (root / "assay.yaml").read_text().replace("{input}'}", "{input}', sandbox: strict}")
    )
    with pytest.raises(ConfigError, match=r"runner.sandbox.*strict, but bubblewrap"):
        runner_jail(load_config(root / "assay.yaml"), [])
    (root / "assay.yaml").write_text((root / "assay.yaml").read_text().replace("strict", "none"))
    assert runner_jail(load_config(root / "assay.yaml"), []) == (None, "runner.sandbox is none")


@pytest.mark.e2e
def test_an_llm_runner_starts_no_process(tmp_path: Path) -> None:
    root = project(tmp_path, runner="{type: llm, model: 'openai:x'}")
    assert runner_jail(load_config(root / "assay.yaml"), []) == (None, None)
