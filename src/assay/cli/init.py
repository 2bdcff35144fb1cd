"""``assay init`` (Phase 0): a git repository, a starter assay.yaml, the split, and the baseline on every split."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from assay.aio import run_sync
from assay.cli.console import make_console
from assay.config import load_config
from assay.errors import AssayError, ConfigError
from assay.evaluation.session import evaluate_project, select_cases
from assay.history.git import Git
from assay.model import Split

out = make_console()

STARTER = """\
# Starter assay.yaml written by `assay init`: check the runner command and the case file, then run
# `assay eval` to measure and `assay evolve` to improve. Reference: docs/config.md.
artifact:
  kind: {kind}
  paths: [{paths}]        # what a proposer may edit
  forbid: [assay.yaml{forbid}]

cases:
  files: [{cases}]

runner:
  type: command
  command: {command}   # {{input}} and {{vars.x}} are shell-quoted
  timeout: 60
"""

KIND_BY_SUFFIX = {
    ".py": "code",
    ".json": "config",
    ".yaml": "config",
    ".yml": "config",
    ".toml": "config",
    ".md": "prompt",
    ".txt": "prompt",
}
CASE_FILES = (
    "evals/evals.json",
    "evals.json",
    "cases.yaml",
    "cases.yml",
    "cases.jsonl",
    "promptfooconfig.yaml",
    "promptfooconfig.yml",
)


def _guess(directory: Path) -> str:
    if (directory / "SKILL.md").exists():
        return STARTER.format(
            kind="skill",
            paths="SKILL.md",
            forbid=", evals/",
            cases="evals/evals.json",
            command="claude -p {input}",
        )
    cases = next((name for name in CASE_FILES if (directory / name).exists()), "cases.yaml")
    candidates = sorted(
        p
        for p in directory.iterdir()
        if p.is_file() and p.suffix in KIND_BY_SUFFIX and p.name not in ("assay.yaml", Path(cases).name)
    )
    artifact = candidates[0] if candidates else Path("artifact.txt")
    kind = KIND_BY_SUFFIX.get(artifact.suffix, "custom")
    command = f"python {artifact.name} {{input}}" if kind == "code" else "cat {input}"
    return STARTER.format(kind=kind, paths=artifact.name, forbid=f", {cases}", cases=cases, command=command)


def init_command(
    directory: Path = typer.Argument(Path("."), help="The project directory."),
    config: str = typer.Option("assay.yaml", "--config", "-c", help="Config file name inside the directory."),
) -> None:
    """Phase 0: make sure the project is a clean git repository, write a starter assay.yaml if there is none,
    split the cases once and measure the baseline on every split."""
    directory = directory.resolve()
    if not directory.is_dir():
        raise AssayError(f"{directory} is not a directory")
    git = Git.discover(directory)
    config_path = (directory / config).resolve()
    if not config_path.is_relative_to(directory):
        raise ConfigError(f"--config must name a file inside {directory}", file=config_path)
    wrote_config = False
    if not config_path.exists():
        try:
            config_path.write_text(_guess(directory), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"cannot write a starter config: {exc.strerror or exc}", file=config_path
            ) from None
        wrote_config = True
    if git is None:
        gitignore = directory / ".gitignore"
        if gitignore.exists() and not gitignore.is_file():
            raise ConfigError("not a regular file", file=gitignore)
        if ".assay" not in (gitignore.read_text() if gitignore.exists() else ""):
            with gitignore.open("a", encoding="utf-8") as handle:
                handle.write(".assay/\n__pycache__/\n")
        git = Git.init(directory, message="assay: initial commit")
        out.print(f"created a git repository in {directory} with everything committed", highlight=False)
    elif dirty := git.dirty_paths(ignore=[".assay", config_path.relative_to(git.root).as_posix()]):
        raise AssayError(
            f"the working tree has uncommitted changes ({', '.join(dirty[:3])}); commit or stash"
            " them before `assay init`"
        )
    if wrote_config:
        out.print(
            f"wrote a starter {config_path.name}: check its runner command and case file, then run"
            " `assay init` again",
            highlight=False,
        )
        raise typer.Exit(0)
    cfg = load_config(config_path)
    selection = select_cases(cfg, "all")
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
    result = run_sync(evaluate_project(cfg, selection))
    if result.blocked:
        raise AssayError("the L1 static tier found critical problems; run `assay eval` to see them")
    for split in Split:
        cases = [c for c in result.cases if c.split == split]
        if cases:
            passed = sum(c.passed for c in cases)
            score = sum(c.score for c in cases) / len(cases)
            out.print(
                f"baseline {split.value:10s} pass {passed}/{len(cases)}  mean score {score:.4f}",
                highlight=False,
            )
    out.print("next: `assay evolve` (runs on its own branch; your branch is untouched until `assay adopt`)")


def register(app: typer.Typer) -> None:
    app.command("init")(init_command)
