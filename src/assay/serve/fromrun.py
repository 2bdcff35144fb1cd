"""``--from-run``: the kept candidates of an ``assay evolve`` run as variants to serve."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from assay.errors import AssayError
from assay.history.records import CandidateRecord
from assay.history.runfiles import RESULTS_COLUMNS, unescape_field


@dataclass(frozen=True)
class RunVariant:
    """A kept candidate as a variant: ``name`` is ``<candidate-id>@<short commit>`` (no commit: the id)."""

    name: str
    description: str
    cost_per_1m: float


def find_run(run: str, data_path: Path = Path(".assay")) -> Path:
    """The folder of ``run``: a path to a run folder, a run id under ``<data_path>/runs/``, or ``latest``
    (run ids start with their start time, so the last in name order is the newest)."""
    if run == "latest":
        runs = sorted(p.name for p in (data_path / "runs").glob("*") if (p / "experiments.jsonl").is_file())
        if runs:
            run = runs[-1]
    given = Path(run)
    for folder in (given, data_path / "runs" / run):
        if (folder / "experiments.jsonl").is_file() or (folder / "results.tsv").is_file():
            return folder
    known = sorted(p.name for p in (data_path / "runs").glob("*") if p.is_dir())
    raise AssayError(
        f"--from-run {run}: no run folder with experiments.jsonl or results.tsv "
        f"(looked at {given} and {data_path / 'runs' / run}); known runs: {', '.join(known[-5:]) or '(none)'}"
    )


def _records(folder: Path) -> list[CandidateRecord]:
    path = folder / "experiments.jsonl"
    if not path.is_file():
        return _from_tsv(folder / "results.tsv")
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(CandidateRecord.load(json.loads(line)))
        except (ValueError, TypeError, AttributeError) as exc:
            reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise AssayError(f"{path}:{number}: not a valid candidate record: {reason}") from None
    return records


def _from_tsv(path: Path) -> list[CandidateRecord]:
    lines = path.read_text(encoding="utf-8").splitlines()
    records = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != len(RESULTS_COLUMNS):
            raise AssayError(f"{path}:{number}: expected {len(RESULTS_COLUMNS)} tab-separated fields")
        row = dict(zip(RESULTS_COLUMNS, map(unescape_field, fields), strict=True))
        try:
            records.append(
                CandidateRecord(
                    run_id=path.parent.name,
                    generation=int(row["generation"]),
                    candidate_id=row["candidate"],
                    commit=row["commit"] or None,
                    layer=int(row["layer"]),
                    proposer=row["proposer"],
                    description=row["description"],
                    decision=row["decision"],  # type: ignore[arg-type]
                    tokens=int(row["tokens"] or 0),
                    cost_usd=float(row["cost_usd"] or 0),
                )
            )
        except (ValueError, ValidationError) as exc:
            raise AssayError(f"{path}:{number}: not a valid results row: {exc}".splitlines()[0]) from None
    return records


def kept_variants(folder: Path) -> list[RunVariant]:
    """The candidates with decision ``keep`` in a run folder, in file order (a candidate once)."""
    seen: dict[str, RunVariant] = {}
    for rec in _records(folder):
        if rec.decision != "keep":
            continue
        name = f"{rec.candidate_id}@{rec.commit[:7]}" if rec.commit else rec.candidate_id
        cost = rec.cost_usd / rec.tokens * 1e6 if rec.tokens > 0 else 0.0
        seen[name] = RunVariant(name=name, description=rec.description, cost_per_1m=cost)
    return list(seen.values())
