"""Where reports come from: a run of the project (by id, or the latest), or an earlier evaluation's folder.

Runs are read from the run store and their folders as ``assay status`` reads them; an evaluation from the
traces ``assay eval`` wrote (``<data dir>/evals/<id>/traces``), typed by :func:`read_traces`.
"""

from __future__ import annotations

from pathlib import Path

from assay.config import AssayConfig
from assay.errors import AssayError
from assay.evaluation.evaluator import EvalResult
from assay.evaluation.traces import read_traces
from assay.history.records import RunRecord
from assay.history.runfiles import read_events
from assay.history.store import RunStore
from assay.loop.events import UntypedRun, typed_events
from assay.loop.state import final_view
from assay.report.run import RunReport, load_run_report


def find_run(config: AssayConfig, which: str | None) -> RunRecord:
    """The run ``which`` names (None or ``latest``: the latest run); an AssayError listing runs otherwise."""
    path = config.data_path / "assay.db"
    if not path.exists():
        raise AssayError(f"no runs yet in {config.data_path} (start one with `assay evolve`)")
    store = RunStore(f"sqlite:///{path}")
    try:
        runs = store.list_runs()
        if not runs:
            raise AssayError("no runs yet (start one with `assay evolve`)")
        run = runs[-1] if which in (None, "latest") else store.get_run(which)
    finally:
        store.close()
    if run is None:
        raise AssayError(f"no run {which!r}; recent runs: {', '.join(r.run_id for r in runs[-5:])}")
    return run


def run_report(config: AssayConfig, which: str | None) -> RunReport:
    """The report of a run of this project."""
    run = find_run(config, which)
    run_dir = config.data_path / "runs" / run.run_id
    try:
        return load_run_report(run, run_dir, config)
    except UntypedRun as exc:
        raise AssayError(f"run {run.run_id} cannot be reported: {exc}") from None


def best_result(config: AssayConfig, which: str | None) -> tuple[str, EvalResult]:
    """A run's best candidate's results on every split it was measured on, and a label for it."""
    run = find_run(config, which)
    try:
        events = typed_events(read_events(config.data_path / "runs" / run.run_id))
    except UntypedRun as exc:
        raise AssayError(f"run {run.run_id} cannot be compared: {exc}") from None
    view = final_view(events)
    if view.best is None or view.best_measurement is None:
        raise AssayError(f"run {run.run_id} has no baseline yet")
    measured = view.best_measurement
    cases = [c for r in (measured.dev, measured.holdout, measured.regression) if r for c in r.cases]
    return f"run {run.run_id} best ({view.best.candidate_id})", EvalResult(cases=cases)


def eval_result(folder: Path) -> EvalResult:
    """The results an earlier ``assay eval`` wrote under ``folder`` (its trace files)."""
    traces = folder / "traces" if (folder / "traces").is_dir() else folder
    try:
        found = read_traces(traces)
    except (OSError, ValueError) as exc:
        raise AssayError(f"{folder}: not an assay trace file: {str(exc).splitlines()[0]}") from None
    if not found:
        raise AssayError(f"{folder}: no traces (expected an `assay eval` folder with traces/traces.jsonl)")
    return EvalResult(cases=sorted((t.result for t in found), key=lambda c: c.id), trace_dir=str(traces))


def compare_source(config: AssayConfig, name: str) -> tuple[str, EvalResult]:
    """What ``--compare NAME`` names: an eval folder (a path, or an id under the data dir's evals/), else a
    run id or ``latest``."""
    for folder in (Path(name), config.data_path / "evals" / name):
        if folder.is_dir():
            return f"eval {folder.name}", eval_result(folder)
    return best_result(config, name)
