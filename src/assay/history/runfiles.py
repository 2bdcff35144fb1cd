"""The text files a run writes in its folder: results.tsv, experiments.jsonl, events.ndjson and plan.md.

Lines are appended, flushed and fsynced one by one, and each record is written once: the keys already on
disk are loaded when the folder is opened. A run killed in the middle of a write leaves at most one torn
last line per file, which opening the folder cuts away, so a resumed run appends after the last whole line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from assay.errors import AssayError
from assay.faults import die, line_fault
from assay.fsutil import atomic_write_text
from assay.history.records import CandidateRecord, EventRecord

RESULTS_COLUMNS = (
    "generation",
    "candidate",
    "commit",
    "layer",
    "proposer",
    "description",
    "dev_score",
    "holdout_score",
    "delta",
    "decision",
    "tokens",
    "cost_usd",
    "seconds",
    "time",
)

_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESCAPES = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}

R = TypeVar("R", CandidateRecord, EventRecord)


class RunFilesError(AssayError):
    """A run file has a damaged line that is not its last one (a torn last line is repaired, not an error)."""


def escape_field(value: str) -> str:
    """A TSV field: backslash, tab, newline and carriage return written as ``\\\\``, ``\\t``, ``\\n``, ``\\r``."""
    return "".join(_ESCAPES.get(char, char) for char in value)


def unescape_field(value: str) -> str:
    """The inverse of :func:`escape_field`."""
    out: list[str] = []
    chars = iter(value)
    for char in chars:
        if char == "\\":
            nxt = next(chars, "")
            out.append(_UNESCAPES.get(nxt, "\\" + nxt))
        else:
            out.append(char)
    return "".join(out)


def _number(value: float | None, fmt: str = ".6g") -> str:
    return "" if value is None else format(value, fmt)


def results_row(rec: CandidateRecord) -> list[str]:
    """The results.tsv fields of a candidate, in :data:`RESULTS_COLUMNS` order, unescaped."""
    return [
        str(rec.generation),
        rec.candidate_id,
        rec.commit or "",
        str(rec.layer),
        rec.proposer,
        rec.description,
        _number(rec.dev_score),
        _number(rec.holdout_score),
        _number(rec.delta, "+.6g"),
        rec.decision,
        str(rec.tokens),
        _number(rec.cost_usd),
        _number(rec.seconds, ".2f"),
        rec.time,
    ]


def _is_tsv_row(line: str) -> bool:
    return line.count("\t") == len(RESULTS_COLUMNS) - 1


def _parses_as(model: type[R]) -> Callable[[str], bool]:
    def check(line: str) -> bool:
        try:
            model.load(json.loads(line))
        except (ValueError, TypeError, AttributeError):
            return False
        return True

    return check


def _cut_torn_tail(path: Path, valid: Callable[[str], bool]) -> bool:
    """Cut the last line of ``path`` when it has no newline or is not ``valid``; True when something was cut."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return False
    if not data:
        return False
    if data.endswith(b"\n"):
        start = data.rfind(b"\n", 0, len(data) - 1) + 1
        try:
            if valid(data[start:-1].decode("utf-8")):
                return False
        except UnicodeDecodeError:
            pass
    else:
        start = data.rfind(b"\n") + 1
    with path.open("r+b") as handle:
        handle.truncate(start)
        handle.flush()
        os.fsync(handle.fileno())
    return True


def _append(path: Path, line: str) -> None:
    data = line.encode("utf-8") + b"\n"
    fault = line_fault(path.name)
    with path.open("ab") as handle:
        handle.write(data[: len(data) // 2] if fault == "torn" else data)
        handle.flush()
        os.fsync(handle.fileno())
    if fault is not None:
        die()


class RunFiles:
    """The files of one run folder (``.assay/runs/<run-id>/``); opening it repairs torn last lines."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.results_path = self.run_dir / "results.tsv"
        self.experiments_path = self.run_dir / "experiments.jsonl"
        self.events_path = self.run_dir / "events.ndjson"
        self.plan_path = self.run_dir / "plan.md"
        self.repaired = self.repair()
        if not self.results_path.exists() or self.results_path.stat().st_size == 0:
            _append(self.results_path, "\t".join(RESULTS_COLUMNS))
        self._candidate_keys = {rec.key for rec in self.read_candidates()}
        self._result_keys = {row["candidate"] for row in self.read_results_tsv()}
        self._event_keys = {rec.key for rec in self.read_events()}

    def repair(self) -> list[Path]:
        """Cut a torn last line (no trailing newline, or not parseable) from each file; return the files cut."""
        checks: list[tuple[Path, Callable[[str], bool]]] = [
            (self.experiments_path, _parses_as(CandidateRecord)),
            (self.events_path, _parses_as(EventRecord)),
            (self.results_path, _is_tsv_row),
        ]
        return [path for path, valid in checks if _cut_torn_tail(path, valid)]

    def append_candidate(self, rec: CandidateRecord) -> bool:
        """Append a candidate to experiments.jsonl and results.tsv unless it is there; True if anything was written."""
        wrote = False
        if rec.key not in self._candidate_keys:
            _append(self.experiments_path, rec.model_dump_json())
            self._candidate_keys.add(rec.key)
            wrote = True
        if rec.candidate_id not in self._result_keys:
            _append(self.results_path, "\t".join(escape_field(field) for field in results_row(rec)))
            self._result_keys.add(rec.candidate_id)
            wrote = True
        return wrote

    def append_event(self, rec: EventRecord) -> bool:
        """Append an event to events.ndjson unless one with its (run, seq) is there; True if it was written."""
        if rec.key in self._event_keys:
            return False
        _append(self.events_path, rec.model_dump_json())
        self._event_keys.add(rec.key)
        return True

    def read_candidates(self) -> list[CandidateRecord]:
        """The candidates in experiments.jsonl, in file order."""
        return self._read_jsonl(self.experiments_path, CandidateRecord)

    def read_events(self) -> list[EventRecord]:
        """The events in events.ndjson, in file order."""
        return self._read_jsonl(self.events_path, EventRecord)

    def read_results_tsv(self) -> list[dict[str, str]]:
        """The rows of results.tsv as dicts keyed by column name (values unescaped, numbers as written)."""
        rows: list[dict[str, str]] = []
        for number, line in self._lines(self.results_path):
            if number == 1:
                continue
            if not _is_tsv_row(line):
                raise RunFilesError(f"{self.results_path}:{number}: expected {len(RESULTS_COLUMNS)} fields")
            rows.append(dict(zip(RESULTS_COLUMNS, map(unescape_field, line.split("\t")), strict=True)))
        return rows

    def write_plan(self, text: str) -> None:
        """Write plan.md atomically."""
        atomic_write_text(self.plan_path, text)

    def traces_dir(self, generation: int) -> Path:
        """The folder of the trace files of one generation: ``traces/gen-NNN``."""
        return self.run_dir / "traces" / f"gen-{generation:03d}"

    def _read_jsonl(self, path: Path, model: type[R]) -> list[R]:
        records: list[R] = []
        for number, line in self._lines(path):
            try:
                data: Any = json.loads(line)
                records.append(model.load(data))
            except (ValueError, TypeError, AttributeError) as exc:
                reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
                raise RunFilesError(f"{path}:{number}: not a valid {model.__name__}: {reason}") from None
        return records

    @staticmethod
    def _lines(path: Path) -> list[tuple[int, str]]:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except UnicodeDecodeError as exc:
            raise RunFilesError(f"{path}: not UTF-8 text (byte {exc.start})") from None
        return [(number, line) for number, line in enumerate(text.split("\n")[:-1], start=1)]


def read_events(run_dir: Path) -> list[EventRecord]:
    """The events of a run folder, read without changing anything (a run may still be writing them): a torn
    last line is left out, a damaged line before it is a RunFilesError."""
    path = Path(run_dir) / "events.ndjson"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    lines = text.split("\n")
    records: list[EventRecord] = []
    for number, line in enumerate(lines[:-1], start=1):
        try:
            records.append(EventRecord.load(json.loads(line)))
        except (ValueError, TypeError, AttributeError):
            raise RunFilesError(f"{path}:{number}: not a valid EventRecord") from None
    return records
