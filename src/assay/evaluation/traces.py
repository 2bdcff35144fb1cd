"""Traces: one JSON document per case run, appended to its evaluation's trace log as soon as the case finishes.

A trace is ``{"version": 1, "case": <Case>, "result": <CaseResult>}``: the case as run (input, vars, tags and
its check specs, in order) and everything about the run (output, stdout/stderr tails, timing, tokens, cost,
each check's result; a runner failure adds a final ``runner`` check). Check results line up with the case's
check specs by position.

The traces of one evaluation folder go to one append-only file, ``traces.jsonl`` (one trace per line), or with
``traces.compress`` ``traces.jsonl.gz`` (one gzip member per trace, which ``zcat`` reads whole). A case result's
``trace_path`` is ``<log>#<offset>``: where its trace starts. A trace is one ``write`` on a file opened for
appending, so a process killed mid-write leaves at most a torn last record, which readers skip and the next
writer cuts off before it appends: every trace on disk is whole. One file per case (the earlier layout,
``<case>.json``) costs an open, a write and a rename per case, a millisecond each where file creation is slow;
those files are still read.

Which cases get one is the ``traces`` section of assay.yaml (:class:`TracePolicy`).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import threading
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from assay.model import Case, CaseResult

if TYPE_CHECKING:
    from assay.config import TracesConfig

TRACE_VERSION = 1


class Trace(BaseModel):
    """One case run, as stored on disk."""

    version: int = TRACE_VERSION
    case: Case
    result: CaseResult


def trace_bytes(case: Case, result: CaseResult) -> bytes:
    # Serialised piecewise by pydantic's Rust serializer: model_construct plus model_dump_json of a wrapper,
    # or model_dump plus json.dumps, cost several times more at thousands of traces per evaluation.
    return b"".join(
        (
            b'{"version":%d,"case":' % TRACE_VERSION,
            case.__pydantic_serializer__.to_json(case),
            b',"result":',
            result.__pydantic_serializer__.to_json(result),
            b"}",
        )
    )


TRACE_PATTERNS = ("*.json", "*.json.gz")  # one file per case: folders written before the trace log
LOG_NAMES = ("traces.jsonl", "traces.jsonl.gz")
CHUNK = 1 << 16  # bytes read at a time from a gzipped log
OPEN_LOGS = 16  # trace logs kept open at once (an evolve run writes one per generation and split)


@dataclass(frozen=True)
class TracePolicy:
    """Which case runs get a trace file, and whether it is gzipped (see :class:`assay.config.TracesConfig`)."""

    keep: str = "all"
    sample: float = 0.1
    compress: bool = False

    @classmethod
    def from_config(cls, config: TracesConfig) -> TracePolicy:
        return cls(config.keep, config.sample, config.compress)

    def keeps(self, result: CaseResult) -> bool:
        """Whether the run of ``result`` gets a trace file."""
        if self.keep == "all" or result.unjudged or not result.passed:
            return True
        return self.keep == "sampled" and sampled(result.id, self.sample)


def sampled(case_id: str, share: float) -> bool:
    """Whether ``case_id`` is in the sample of about ``share`` of all ids: the same ids in every run."""
    digest = hashlib.blake2b(case_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") < share * 2**64


class TraceLog:
    """The append-only trace log of one evaluation folder (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.compress = path.name.endswith(".gz")
        self.lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        self.fd = os.open(path, flags, 0o644)
        on_disk = os.fstat(self.fd).st_size
        self.size = _whole_size(path, on_disk)
        if self.size != on_disk:  # a torn last record: cut it off before appending
            os.truncate(path, self.size)

    def append(self, data: bytes) -> str:
        """Append one trace; its reference (``<path>#<offset>``)."""
        record = gzip.compress(data + b"\n", compresslevel=6, mtime=0) if self.compress else data + b"\n"
        with self.lock:
            offset = self.size
            with memoryview(record) as view:
                written = 0
                while written < len(view):
                    written += os.write(self.fd, view[written:])
            self.size += len(record)
        return f"{self.path}#{offset}"

    def close(self) -> None:
        os.close(self.fd)


# Keyed by (folder, compress), not by the log's path: joining a path for every case cost more than the write.
_LOGS: OrderedDict[tuple[Path, bool], TraceLog] = OrderedDict()
_LOGS_LOCK = threading.Lock()


def _log(trace_dir: Path, compress: bool) -> TraceLog:
    key = (trace_dir, compress)
    with _LOGS_LOCK:
        log = _LOGS.get(key)
        if log is None:
            log = _LOGS[key] = TraceLog(trace_dir / LOG_NAMES[compress])
            while len(_LOGS) > OPEN_LOGS:
                _LOGS.popitem(last=False)[1].close()
        _LOGS.move_to_end(key)
        return log


def write_trace(trace_dir: Path, case: Case, result: CaseResult, *, compress: bool = False) -> str:
    """Append the trace of one case to ``trace_dir``'s log (gzipped with ``compress``); its reference."""
    return _log(trace_dir, compress).append(trace_bytes(case, result))


def close_traces(trace_dir: Path) -> None:
    """Close ``trace_dir``'s logs (an evaluation that wrote them is over; a later write opens them again)."""
    with _LOGS_LOCK:
        for compress in (False, True):
            log = _LOGS.pop((trace_dir, compress), None)
            if log is not None:
                log.close()


def _records(data: bytes, compress: bool) -> Iterator[tuple[int, int, bytes]]:
    """The whole records of a log's bytes: (start, end, the trace's JSON); a torn last one is left out."""
    view = memoryview(data)
    position = 0
    while position < len(data):
        if compress:
            # Fed in chunks: a member's decompressor copies what follows the member (unused_data), and the
            # whole rest of a log per member would make reading a log quadratic in its size.
            member, parts, fed = zlib.decompressobj(wbits=31), [], position
            try:
                while not member.eof and fed < len(data):
                    chunk = view[fed : fed + CHUNK]
                    fed += len(chunk)
                    parts.append(member.decompress(chunk))
            except zlib.error:
                return
            if not member.eof:
                return
            text, end = b"".join(parts), fed - len(member.unused_data)
        else:
            newline = data.find(b"\n", position)
            if newline < 0:
                return
            text, end = data[position:newline], newline + 1
        yield position, end, text
        position = end


def _whole_size(path: Path, size: int) -> int:
    """How many bytes at the start of the log at ``path`` (``size`` bytes long) hold whole records. A plain log
    is read from its end back to its last newline, not whole: an evaluation that goes on (a resumed run)
    reopens a log that may already hold thousands of traces."""
    if size == 0:
        return 0
    if not path.name.endswith(".gz"):
        with path.open("rb") as handle:
            end = size
            while end > 0:
                start = max(0, end - CHUNK)
                handle.seek(start)
                newline = handle.read(end - start).rfind(b"\n")
                if newline >= 0:
                    return start + newline + 1
                end = start
        return 0
    ends = [end for _, end, _ in _records(path.read_bytes(), True)]
    return ends[-1] if ends else 0


def read_trace(path: Path | str) -> Trace:
    """Load one trace: a log reference (``<log>#<offset>``) or a file of one trace (``.json``, ``.json.gz``)."""
    text = os.fspath(path)
    log, _, offset = text.rpartition("#")
    if log and offset.isdigit() and log.endswith(LOG_NAMES):
        with open(log, "rb") as handle:
            handle.seek(int(offset))
            if log.endswith(".gz"):
                member = zlib.decompressobj(wbits=31)
                data = b""
                while not member.eof:
                    chunk = handle.read(CHUNK)
                    if not chunk:
                        raise ValueError(f"{text}: a torn trace record")
                    data += member.decompress(chunk)
            else:
                data = handle.readline()
                if not data.endswith(b"\n"):
                    raise ValueError(f"{text}: a torn trace record")
        return Trace.model_validate_json(data)
    data = Path(text).read_bytes()
    if text.endswith(".gz"):
        data = gzip.decompress(data)
    return Trace.model_validate_json(data)


def read_traces(folder: Path) -> list[Trace]:
    """Every whole trace in an evaluation's trace folder: its logs' records, then one-trace files (a folder
    written before the log), the last trace of a case winning (a resumed evaluation runs a case again)."""
    found: dict[str, Trace] = {}
    for name in LOG_NAMES:
        log = folder / name
        if log.is_file():
            for _, _, data in _records(log.read_bytes(), name.endswith(".gz")):
                trace = Trace.model_validate_json(data)
                found[trace.result.id] = trace
    for pattern in TRACE_PATTERNS:
        for path in sorted(folder.glob(pattern)):
            trace = read_trace(path)
            found.setdefault(trace.result.id, trace)
    return list(found.values())
