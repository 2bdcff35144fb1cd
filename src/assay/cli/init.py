"""``assay init`` (Phase 0): a git repository, a starter assay.yaml, the split, and the baseline on every split."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from assay.cli.console import LazyConsole
from assay.cli.exits import COULD_NOT_RUN
from assay.errors import AssayError, ConfigError

if TYPE_CHECKING:
    from assay.config import AssayConfig
    from assay.history.git import Git
    from assay.model import Case


out = LazyConsole()


def init_command(
    directory: Path = typer.Argument(Path("."), help="The project directory."),
    config: str = typer.Option("assay.yaml", "--config", "-c", help="Config file name inside the directory."),
    model: str | None = typer.Option(
        None,
        "--model",
        "-m",
        help="For a prompt starter: the runner's model (provider:name). A local: model gets a completion-style"
        " starter (few-shot examples from your dev cases, a newline stop); see docs/local.md.",
    ),
) -> None:
    """Start a project. Without assay.yaml: write a starter (assay.yaml, example cases, and a placeholder program
    in an empty folder) and say what to do next; existing files are never overwritten. With assay.yaml
    (Phase 0): make the folder a git repository (or, in one already, commit assay.yaml and the case files when
    they are new or changed, and nothing else), split the cases once and measure the baseline on every split, on
    a copy of the last commit (the user's tree is left as it was)."""
    from rich.text import Text

    from assay.cli.collector import run_command
    from assay.config import load_config
    from assay.evaluation.deadend import dead_end
    from assay.evaluation.session import evaluate_project, select_cases
    from assay.evaluation.workcopy import project_copy
    from assay.history.git import Git
    from assay.history.scope import artifact_files
    from assay.model import Split

    directory = directory.resolve()
    if not directory.is_dir():
        raise AssayError(f"{directory} is not a directory")
    config_path = (directory / config).resolve()
    if not config_path.is_relative_to(directory):
        raise ConfigError(f"--config must name a file inside {directory}", file=config_path)
    if model is not None and config_path.exists():
        raise ConfigError(
            "--model writes a starter, and this folder has one already: set runner.model in it instead",
            file=config_path,
        )
    if not config_path.exists():
        _start(directory, config_path.relative_to(directory).as_posix(), model)
        raise typer.Exit(0)
    _upgrade_for_local(directory, config_path.relative_to(directory).as_posix())
    # Configuration and case errors come before anything is committed.
    cfg = load_config(config_path)
    selection = select_cases(cfg, "all", unjudged=True)
    git = Git.discover(directory)
    if git is None:
        git = _new_repository(directory)
    else:
        _existing_repository(cfg, git, [case for case, _ in selection.everything])
    for warning in selection.warnings:
        out.print(Text("warning:", style="yellow"), warning, highlight=False)
    counts = {s: sum(1 for _, cs in selection.cases if cs == s) for s in Split}
    out.print(
        "split (saved in "
        + str(cfg.data_path / "split.json")
        + "): "
        + ", ".join(f"{s.value} {n}" for s, n in counts.items()),
        highlight=False,
    )
    # Measured on a copy of the commit `assay evolve` starts from: nothing the runner, its checks or Python
    # write lands in the user's tree, and the baseline is the run's.
    with project_copy(cfg, git, commit=git.head()) as workdir:
        result = run_command(evaluate_project(cfg, selection, workdir=workdir))
    if result.blocked:
        assert result.static is not None
        raise AssayError(
            f"the baseline cannot be measured: the L1 static tier stops the artifact"
            f" ({result.static.blocked_line()}); fix it (`assay eval` lists every finding), then `assay init`"
        )
    for split in Split:
        cases = [c for c in result.cases if c.split == split and not c.unjudged]
        unjudged = sum(1 for c in result.cases if c.split == split and c.unjudged)
        note = f"  ({unjudged} unjudged: no checks)" if unjudged else ""
        if cases:
            passed = sum(c.passed for c in cases)
            score = sum(c.score for c in cases) / len(cases)
            out.print(
                f"baseline {split.value:10s} pass {passed}/{len(cases)}  mean score {score:.4f}{note}",
                highlight=False,
            )
        elif unjudged:
            out.print(f"baseline {split.value:10s} no judged case{note}", highlight=False)
    stuck = dead_end(result, artifact_files(cfg.artifact_dir, cfg.artifact.paths))
    if stuck is not None:
        for line in stuck.lines():
            out.print(line, highlight=False, markup=False)
        out.print(
            "  (the cases ran on a copy of the last commit: uncommitted and ignored files are not in it)",
            markup=False,
        )
        out.print(
            "next: fix the runner, then `assay eval` (`assay evolve` stops at a dead end)", markup=False
        )
        raise typer.Exit(COULD_NOT_RUN)
    out.print("next: `assay evolve` (runs on its own branch; your branch is untouched until `assay adopt`)")


def _new_repository(directory: Path) -> Git:
    """Make ``directory`` a repository with everything in it committed (the run data and bytecode ignored), and
    say which files the commit holds."""
    from assay.history.git import Git
    from assay.history.treestatus import name_paths

    gitignore = directory / ".gitignore"
    if gitignore.exists() and not gitignore.is_file():
        raise ConfigError("not a regular file", file=gitignore)
    if ".assay" not in (gitignore.read_text() if gitignore.exists() else ""):
        with gitignore.open("a", encoding="utf-8") as handle:
            handle.write(".assay/\n__pycache__/\n")
    git = Git.init(directory, message="assay: initial commit")
    head = git.head()
    files = git.commit_files(head)
    what = (
        f"{len(files)} file{'s' * (len(files) != 1)} ({name_paths(files, limit=10)})" if files else "no file"
    )
    out.print(f"created a git repository in {directory}; committed {what} as {head[:7]}", highlight=False)
    return git


def _existing_repository(cfg: AssayConfig, git: Git, cases: list[Case]) -> None:
    """Refuse changes a run would need or lose; commit assay's own inputs (the configuration and case files)
    when they are new or changed, and nothing else; keep the run data out of ``git status``; say what was done."""
    from assay.evaluation.treecheck import check_tree, outside_line, refuse

    status = check_tree(cfg, git, cases)
    refuse(status, "assay init")
    sha = git.commit_paths(status.inputs, f"assay: start ({', '.join(status.inputs)})")
    if sha is None:
        out.print(
            "committed nothing: assay.yaml and the case files have no change to commit", highlight=False
        )
    else:
        out.print(f"committed {', '.join(status.inputs)} as {sha[:7]} (nothing else)", highlight=False)
    if excluded := git.exclude_locally(cfg.data_path):
        out.print(
            f"{excluded} (run data) is listed in .git/info/exclude: git status leaves it out", highlight=False
        )
    if line := outside_line(status):
        out.print(line, highlight=False, markup=False)


def _upgrade_for_local(directory: Path, config: str) -> None:
    """The chat starter with a ``local:`` model set in it becomes the completion-style starter (a base model does
    not follow a chat prompt); say what was written."""
    from assay.starters import local_upgrade

    try:
        starter = local_upgrade(directory, config)
    except OSError as exc:
        raise ConfigError(f"cannot write a starter: {exc.strerror or exc}", file=directory / config) from None
    if starter is None:
        return
    out.print(
        f"{config} named a local base model in the chat starter: rewrote it as the completion-style starter"
        f" and wrote {', '.join(n for n in starter.written if n != config)}",
        markup=False,
    )
    for note in starter.notes:
        out.print(f"  note: {note}", markup=False)


def _start(directory: Path, config: str, model: str | None = None) -> None:
    """Write the starter files and say what was chosen and what to do next."""
    from assay.starters import write_starter

    try:
        starter = write_starter(directory, config, model)
    except OSError as exc:
        raise ConfigError(f"cannot write a starter: {exc.strerror or exc}", file=directory / config) from None
    what = {
        "code": "the program",
        "prompt": "the prompt",
        "skill": "the skill in",
        "promptfoo": "the promptfoo suite, with the prompt",
    }[starter.kind]
    out.print(
        f"wrote {', '.join(starter.written)}: a starter for {what} {starter.artifact}",
        markup=False,
    )
    if starter.others and starter.kind != "promptfoo":
        out.print(
            f"  also found {', '.join(starter.others)}: list the files to improve in artifact.paths",
            markup=False,
        )
    for note in starter.notes:
        out.print(f"  note: {note}", markup=False)
    if starter.needs:
        out.print("  before `assay eval` can run its cases, this project needs:", markup=False)
        for need in starter.needs:
            out.print(f"  - {need}", markup=False, soft_wrap=True)
    out.print(f"next: {starter.next_step}", markup=False)
    out.print(
        "then `assay init` again starts the project (a git repository, the split and the baseline),"
        " and `assay evolve` improves it",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.command("init")(init_command)
