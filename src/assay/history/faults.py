"""Fault injection for crash tests, read only from the environment: ``ASSAY_FAULT=<file>:<n>:<how>`` makes the
process kill itself (SIGKILL) at the ``n``-th line it appends to the run file named ``<file>``
(``events.ndjson``, ``experiments.jsonl`` or ``results.tsv``): ``torn`` after writing half of that line,
``kill`` right after writing all of it. Unset, it costs one dictionary lookup per appended line.
"""

from __future__ import annotations

import os
import signal

_counts: dict[str, int] = {}


def _planned() -> tuple[str, int, str] | None:
    spec = os.environ.get("ASSAY_FAULT")
    if not spec:
        return None
    name, number, how = spec.rsplit(":", 2)
    return name, int(number), how


def fault_at(file_name: str) -> str | None:
    """Count one more line appended to ``file_name``; the fault to inject there (``torn``, ``kill``) or None."""
    planned = _planned()
    if planned is None or planned[0] != file_name:
        return None
    _counts[file_name] = _counts.get(file_name, 0) + 1
    return planned[2] if _counts[file_name] == planned[1] else None


def die() -> None:
    """End this process at once, as a power cut or the OOM killer would."""
    os.kill(os.getpid(), signal.SIGKILL)
