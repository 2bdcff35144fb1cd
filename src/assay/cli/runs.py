"""``assay status``, ``assay log``, ``assay diff`` and ``assay adopt``: look at runs and take their results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from assay.cli.console import LazyConsole
from assay.errors import AssayError

if TYPE_CHECKING:
    from assay.config import AssayConfig
    from assay.history.git import Git
    from assay.history.records import CandidateRecord, RunRecord
    from assay.history.store import RunStore
    from assay.stats.noise import NoiseEstimate


out = LazyConsole()
CONFIG = typer.Option(Path("assay.yaml"), "--config", "-c", help="Path to assay.yaml.", envvar="ASSAY_CONFIG")
RUN = typer.Option(None, "--run", "-r", help="The run id (default: the latest run).")
# The headline figures of each run; the lines under the table say what the best's are, one by one.
STATUS_COLUMNS = (
    "run",
    "status",
    "generations",
    "baseline dev score",
    "best dev score",
    "holdout of best",
    "stop reason",
)


def _store(config: AssayConfig) -> RunStore:
    from assay.history.store import RunStore

    path = config.data_path / "assay.db"
    if not path.exists():
        raise AssayError(f"no runs yet in {config.data_path} (start one with `assay evolve`)")
    return RunStore(f"sqlite:///{path}")


def _run(config: AssayConfig, run_id: str | None) -> tuple[RunRecord, list[CandidateRecord]]:
    """A run (default: the latest) and its candidates as they stand, from the run store as every command
    reads them."""
    store = _store(config)
    runs = store.list_runs()
    if not runs:
        raise AssayError("no runs yet (start one with `assay evolve`)")
    run = runs[-1] if run_id is None else store.get_run(run_id)
    if run is None:
        raise AssayError(f"no run {run_id!r}; known: {', '.join(r.run_id for r in runs[-5:])}")
    return run, store.candidates(run.run_id)


def _pick(run: RunRecord, records: list[CandidateRecord], which: str) -> CandidateRecord:
    from assay.history.records import best_candidate

    if not records:
        raise AssayError("the run has no candidates yet (not even its baseline)")
    if which == "best":
        return best_candidate(records, run)
    for record in records:
        if which in (record.candidate_id, str(record.generation)) or (
            record.commit and len(which) >= 7 and record.commit.startswith(which)
        ):
            return record
    raise AssayError(f"no candidate {which!r}; use best, a generation number, cand-NNNN or a commit prefix")


def _committed(
    config: AssayConfig, run_id: str | None, which: str
) -> tuple[RunRecord, list[CandidateRecord], CandidateRecord, str]:
    """The run, its candidates, the chosen one and its commit (an error for candidates that made none)."""
    run, records = _run(config, run_id)
    record = _pick(run, records, which)
    if not record.commit:
        raise AssayError(f"{record.candidate_id} has no commit ({record.description})")
    return run, records, record, record.commit


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _status(config: AssayConfig, run: RunRecord, runs: list[RunRecord]) -> str:
    """The run's status as it stands now; an interrupted run says how to continue it."""
    from assay.history.owner import live_status, resumable

    runs_dir = config.data_path / "runs"
    status = live_status(run, runs_dir / run.run_id)
    if status != "interrupted":
        return status
    latest = resumable(runs, runs_dir)[-1].run_id  # what a bare `assay resume` picks
    command = "assay resume" if run.run_id == latest else f"assay resume {run.run_id}"
    return f"interrupted (continue with `{command}`)"


def status_command(config: Path = CONFIG) -> None:
    """The runs of this project, their best candidates and last decisions; under the table, for the latest runs,
    the best's figures one by one, a higher holdout another candidate measured, and a caveat on the best."""
    from rich.table import Table

    from assay.config import load_config
    from assay.loop.summary import best_lines

    cfg = load_config(config)
    store = _store(cfg)
    table = Table(header_style="bold")
    for column in STATUS_COLUMNS:
        table.add_column(column)
    runs = store.list_runs()
    for run in runs:
        status = _status(cfg, run, runs)
        records = store.candidates(run.run_id)
        if not records:
            table.add_row(run.run_id, status, "0", "-", "-", "-", run.stop_reason or "")
            continue
        best = _pick(run, records, "best")
        table.add_row(
            run.run_id,
            status,
            str(records[-1].generation),
            _score(records[0].dev_score),
            _score(best.dev_score),
            _score(best.holdout_score),
            run.stop_reason or "",
        )
    out.print(table)
    for run in runs[-5:]:
        records = store.candidates(run.run_id)
        if records:
            for line in best_lines(records, _pick(run, records, "best")):
                out.print(f"{run.run_id} {line}", highlight=False, markup=False, soft_wrap=True)
        noise = _noise(cfg, run.run_id)
        if noise is not None:
            out.print(f"{run.run_id} noise at the baseline: {noise.summary()}", highlight=False)
        if run.unsandboxed:
            out.print(f"{run.run_id} ran unsandboxed: {', '.join(run.unsandboxed)}", highlight=False)


def _noise(config: AssayConfig, run_id: str) -> NoiseEstimate | None:
    """The baseline noise estimate a run saved (None for runs without one)."""
    from assay.stats.noise import estimate_noise

    path = config.data_path / "runs" / run_id / "noise.json"
    try:
        data = json.loads(path.read_text())
        return estimate_noise({k: [float(v) for v in vs] for k, vs in data["runs"].items()})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _test(record: CandidateRecord) -> str:
    """The paired test's verdict in a few words, when the noise-aware gate judged the candidate."""
    from assay.history.records import paired_test_summary

    return paired_test_summary(record.gate, compact=True)


def log_command(
    config: Path = CONFIG,
    run_id: str | None = RUN,
    as_json: bool = typer.Option(False, "--json", help="One JSON object per generation, as a JSON array."),
) -> None:
    """One row per generation of a run: layer, decision, scores, the reason for the decision, what changed."""
    from rich.table import Table

    from assay.config import load_config
    from assay.history.reasons import evaluated, reason_of
    from assay.layer_names import layer_name
    from assay.words import cut_at_word

    cfg = load_config(config)
    run, records = _run(cfg, run_id)
    if as_json:
        print(json.dumps([_log_entry(run.run_id, r) for r in records], indent=1, ensure_ascii=False))
        return
    status = _status(cfg, run, _store(cfg).list_runs())
    table = Table(title=f"run {run.run_id}: {status}", header_style="bold")
    for column in (
        "gen",
        "candidate",
        "layer",
        "decision",
        "dev score",
        "pass rate",
        "holdout",
        "delta",
        "reason",
        "change",
    ):
        table.add_column(column, overflow="fold")
    tested = any(_test(r) for r in records)
    if tested:
        table.add_column("paired test", overflow="fold")
    for r in records:
        measured = evaluated(r)
        delta = "-" if r.delta is None or not measured else f"{r.delta:+.4f}"
        row = [
            str(r.generation),
            r.candidate_id,
            layer_name(r.layer),
            r.decision,
            _score(r.dev_score if measured else None),
            _score(r.dev_pass_rate if measured else None),
            _score(r.holdout_score if measured else None),
            delta,
            reason_of(r),
            cut_at_word(r.description, 70),
        ]
        table.add_row(*row, *([_test(r)] if tested else []))
    out.print(table)
    noise = _noise(cfg, run.run_id)
    if noise is not None:
        out.print(f"noise at the baseline: {noise.summary()}", highlight=False)


# The fields of a generation in `assay log --json`, in this order ("reason" follows "decision").
LOG_FIELDS = (
    "generation",
    "candidate_id",
    "commit",
    "parent",
    "layer",
    "proposer",
    "operator",
    "sites",
    "places",
    "decision",
    "reason",
    "dev_score",
    "dev_pass_rate",
    "holdout_score",
    "regression_pass_rate",
    "delta",
    "description",
    "flags",
    "overfitting",
    "tokens",
    "cost_usd",
    "seconds",
)


def _log_entry(run_id: str, record: CandidateRecord) -> dict[str, object]:
    """A generation as ``assay log --json`` gives it: the run, the record's fields in :data:`LOG_FIELDS` (the
    layer by its name), and its reason (derived from its gate for a run recorded before reasons were kept)."""
    from assay.history.reasons import reason_of
    from assay.layer_names import layer_name

    fields = record.model_dump(mode="json") | {"reason": reason_of(record), "layer": layer_name(record.layer)}
    return {"run": run_id, **{name: fields[name] for name in LOG_FIELDS}}


def diff_command(
    candidate: str = typer.Argument("best", help="best, a generation number, cand-NNNN or a commit prefix."),
    config: Path = CONFIG,
    run_id: str | None = RUN,
) -> None:
    """The change a candidate made to its parent (for best: everything since the run's start)."""
    from assay.config import load_config

    cfg = load_config(config)
    run, _, record, commit = _committed(cfg, run_id, candidate)
    parent = run.base_commit if candidate == "best" else (record.parent or run.base_commit)
    print(_git(cfg).diff(parent, commit), end="")


def adopt_command(
    candidate: str = typer.Argument("best", help="best, a generation number, cand-NNNN or a commit prefix."),
    config: Path = CONFIG,
    run_id: str | None = RUN,
    force: bool = typer.Option(
        False,
        "--force",
        help="Adopt a candidate with a caveat (flagged overfitting, holdout score below the baseline's).",
    ),
    branch_name: str | None = typer.Option(
        None,
        "--branch",
        "-b",
        help="Adopt into a new branch NAME made at the candidate (yours is left as it is): to merge by hand.",
    ),
) -> None:
    """Bring a candidate into your branch: fast-forward when possible, else a merge commit built in a temporary
    work tree; the branch moves in one step at the end, and what a killed adopt left is cleaned up first. With
    ``--branch NAME``, a new branch at the candidate instead, your branch untouched. A candidate with a caveat
    is refused unless ``--force`` is given. "adopted" is printed once it is done; a refusal exits with 2."""
    from assay.config import load_config
    from assay.history.merge import MergeConflict, conflicting
    from assay.loop.summary import caveat

    cfg = load_config(config)
    run, records, record, commit = _committed(cfg, run_id, candidate)
    warning = caveat(records[0], record)
    if warning and not force:
        raise AssayError(f"not adopted: {warning}; pass --force to adopt anyway")
    git = _git(cfg)
    if warning:
        out.print(f"caveat: {warning} (adopting with --force)", highlight=False, markup=False, soft_wrap=True)
    what = f"{record.candidate_id} ({commit[:12]}): {record.description}"
    if branch_name is not None:
        _adopt_into_new_branch(git, branch_name, commit)
        mine = git.current_branch()
        out.print(
            f"adopted {record.candidate_id} into the new branch {branch_name} at {commit[:12]}: {record.description}",
            markup=False,
            soft_wrap=True,
        )
        if mine is not None:
            out.print(f"{mine} is unchanged: `git merge {branch_name}` brings it in", markup=False)
        return
    branch = git.current_branch() or run.user_branch
    if branch is None:
        raise AssayError("HEAD is detached; check out the branch to adopt into first")
    message = f"assay: adopt {record.candidate_id} of run {run.run_id}"
    try:
        kind = git.merge_into(
            branch,
            commit,
            message=message,
            notify=lambda line: out.print(line, highlight=False, soft_wrap=True),
        )
    except MergeConflict as exc:
        raise AssayError(
            f"not adopted: {record.candidate_id} conflicts with {branch} in {conflicting(exc.files)}; nothing"
            f" was changed. `assay adopt {candidate}{f' --run {run_id}' if run_id else ''} --branch NAME` puts it"
            " on a new branch to merge by hand"
        ) from None
    if kind == "up-to-date":
        out.print(f"{branch} already holds {what}; nothing changed", markup=False, soft_wrap=True)
        return
    how = "by fast-forward" if kind == "fast-forward" else "by a merge commit"
    out.print(f"adopted {what} into {branch} {how}", markup=False, soft_wrap=True)


def _adopt_into_new_branch(git: Git, name: str, commit: str) -> None:
    """A new branch ``name`` at ``commit``: refused when the name is taken or git takes no such branch name."""
    if git.run("check-ref-format", "--branch", name, ok_codes=(0, 1, 128)).returncode != 0:
        raise AssayError(f"not adopted: --branch {name!r} is not a name git takes for a branch")
    if git.branch_exists(name):
        raise AssayError(
            f"not adopted: a branch {name!r} exists already; name a new one (--branch), or check it out and"
            " run `assay adopt` without --branch"
        )
    git.run("branch", "--no-track", name, commit)


def _git(config: AssayConfig) -> Git:
    from assay.history.git import Git

    git = Git.discover(config.base_dir)
    if git is None:
        raise AssayError(f"{config.base_dir} is not inside a git repository")
    return git


def register(app: typer.Typer) -> None:
    app.command("status")(status_command)
    app.command("log")(log_command)
    app.command("diff")(diff_command)
    app.command("adopt")(adopt_command)
