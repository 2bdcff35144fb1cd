"""Fault points for crash tests, read only from the environment variable ``ASSAY_FAULT``: the process kills
itself (SIGKILL: no cleanup, no ``finally``, as a power cut or the OOM killer would) at an exact place, instead
of a test racing a timer against it. Unset, a fault point costs one dictionary lookup.

Two kinds of places:

- a named point, ``ASSAY_FAULT=<point>`` (``adopt:before-ref-update``: the merge is built, the user's branch
  has not moved yet), checked by :func:`fault_point`;
- the ``n``-th line this process appends to a run file, ``ASSAY_FAULT=<file>:<n>:<how>`` with ``<file>`` one
  of ``events.ndjson``, ``experiments.jsonl``, ``results.tsv`` (its header line counts) and ``<how>`` ``torn``
  (only the first half of the line is written) or ``kill`` (right after the whole line), checked by
  :func:`line_fault`.
"""

from __future__ import annotations

import os
import signal

FAULT_VAR = "ASSAY_FAULT"

_appended: dict[str, int] = {}


def die() -> None:
    """End this process at once."""
    os.kill(os.getpid(), signal.SIGKILL)


def fault_point(name: str) -> None:
    """Die here when ``ASSAY_FAULT`` is ``name``."""
    if os.environ.get(FAULT_VAR) == name:
        die()


def line_fault(file_name: str) -> str | None:
    """Count one more line appended to ``file_name``; the fault planned for it (``torn``, ``kill``) or None."""
    spec = os.environ.get(FAULT_VAR)
    if not spec or not spec.startswith(f"{file_name}:"):
        return None
    _, number, how = spec.rsplit(":", 2)
    _appended[file_name] = _appended.get(file_name, 0) + 1
    return how if _appended[file_name] == int(number) else None
