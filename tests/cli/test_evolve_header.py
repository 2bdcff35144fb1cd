"""What `assay evolve` shows before it runs: the proposer and where the choice came from (--proposer, assay.yaml,
the default), the limits, each preset's budgets in --help, another live run of the project; `assay resume`
starts with the same kind of line."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay.cli.evolve import PROPOSER_NAMES
from assay.config import PROPOSER_TYPES
from assay.presets import PRESETS

from .conftest import EXAMPLE, assay


def test_help_shows_each_presets_budgets_and_every_proposer(tmp_path: Path) -> None:
    done = assay("evolve", "--help", cwd=tmp_path, env={"COLUMNS": "400"})
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "quick: 20 generations, 180 s wall clock, plateau 10" in text
    assert "standard: 100 generations, 1 h wall clock, plateau 25" in text
    assert "deep: 500 generations, 6 h wall clock, plateau 60" in text
    assert set(PRESETS) == {"quick", "standard", "deep"}
    assert PROPOSER_NAMES == PROPOSER_TYPES  # the names --proposer takes are those assay.yaml takes
    assert "--proposer NAME" in text and "mutate, tune, llm, agent" in text


def project(root: Path) -> Path:
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".assay", "__pycache__"))
    return root


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("llm", "evolve.proposer: --proposer llm: the llm proposer needs `llm: {model: provider:model}`"),
        ("agent", "evolve.proposer: --proposer agent: the agent proposer needs `command`"),
    ],
)
def test_a_proposer_that_misses_its_model_or_command_is_one_line(
    tmp_path: Path, name: str, message: str
) -> None:
    done = assay("evolve", "--proposer", name, cwd=project(tmp_path / "p"))
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: ") and f"assay.yaml: {message}" in line, line


def test_an_unknown_proposer_is_a_usage_error(tmp_path: Path) -> None:
    done = assay("evolve", "--proposer", "genetic", cwd=project(tmp_path / "p"))
    assert done.returncode == 2
    assert "Invalid value for --proposer: expected one of mutate, tune, llm, agent" in done.stderr


def test_the_options_of_the_proposer_come_from_assay_yaml(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    config = root / "assay.yaml"
    config.write_text(config.read_text() + "  proposer: {type: mutate, llm: {model: 'openai:gpt-4o-mini'}}\n")
    done = assay("evolve", "--proposer", "llm", "-n", "1", cwd=root)
    # past the proposer's check: the model came from assay.yaml; what stops it is the folder (no repository)
    assert done.returncode == 2 and "not inside a git repository" in done.stderr, done.stderr


@pytest.mark.e2e
def test_the_first_line_names_the_proposer_and_where_it_came_from(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    assert assay("init", cwd=root).returncode == 0
    default = assay("evolve", "-n", "1", cwd=root)
    assert default.returncode == 0, default.stderr
    assert default.stdout.splitlines()[0] == (
        "evolve: proposer mutate (offline: structural edits and numeric tuning) (the default: assay.yaml sets no"
        " evolve.proposer); 1 generation at most, 180s wall clock (preset quick)"
    )
    flag = assay("evolve", "-n", "1", "--proposer", "tune", cwd=root)
    assert flag.returncode == 0, flag.stderr
    assert flag.stdout.splitlines()[0].startswith(
        "evolve: proposer tune (offline numeric tuning) (from --proposer)"
    )
    assert all(" tune " in line for line in flag.stdout.splitlines() if line.startswith("gen "))
    config = root / "assay.yaml"
    config.write_text(config.read_text() + "  proposer: {type: mutate, tuning: false}\n")
    subprocess.run(
        ["git", "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qam", "c"], cwd=root, check=True
    )
    configured = assay("evolve", "-n", "1", cwd=root)
    assert configured.stdout.splitlines()[0].startswith(
        "evolve: proposer mutate (offline edits) (from assay.yaml)"
    )


@pytest.mark.e2e
def test_resume_starts_with_the_same_kind_of_line_and_a_second_run_is_noticed(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    assert assay("init", cwd=root).returncode == 0
    first = subprocess.Popen(
        [sys.executable, "-m", "assay", "evolve", "-n", "400", "--proposer", "tune"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert first.stdout is not None
    for line in first.stdout:  # the run is under way
        if line.startswith("gen "):
            break
    second = assay("evolve", "-n", "1", cwd=root)
    assert second.returncode == 0, second.stderr
    notice = [line for line in second.stdout.splitlines() if line.startswith("note: run ")]
    assert len(notice) == 1 and "is running in another process (pid " in notice[0], second.stdout
    assert second.stdout.splitlines().index(notice[0]) == 1  # right under the first line
    first.terminate()
    first.communicate(timeout=120)
    deadline = time.monotonic() + 30
    resumed = assay("resume", "-n", "1", cwd=root)
    while resumed.returncode != 0 and time.monotonic() < deadline:  # the killed run's lock is let go
        resumed = assay("resume", "-n", "1", cwd=root)
    assert resumed.returncode == 0, resumed.stderr
    head = resumed.stdout.splitlines()[0]
    assert head.startswith("resume run ") and ": proposer tune (offline numeric tuning)" in head
    assert "(from the --proposer the run was started with)" in head
