"""The exit statuses of every command, one meaning each (the table in docs/evolve.md, "Exit statuses").

- 0 completed: ``evolve`` and ``resume`` kept a gain or found none (``no gain`` is a result), ``adopt`` adopted,
  ``eval`` saw every selected case pass, ``init`` measured the baseline or wrote a starter.
- 1 ``eval``: some selected cases failed (or the L1 static tier found a critical problem in the artifact).
- 2 a usage or configuration error, a refusal included (an adopt refused for a caveat, a dirty tree).
- 3 could not run: a dead end (every case failed before the artifact ran, or the run's dead-end rule found
  candidates in a row that could not be proposed or evaluated), or an internal error of assay.
- 130 interrupted: Ctrl-C, or a STOP file that stopped a run (``assay resume`` continues it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assay.loop.engine import RunOutcome

OK = 0
FAILING = 1
CONFIG = 2
COULD_NOT_RUN = 3
INTERRUPTED = 130


def run_status(outcome: RunOutcome) -> int:
    """The exit status of ``evolve`` or ``resume`` for the way its run ended."""
    if outcome.status == "stopped":
        return INTERRUPTED
    if outcome.dead_end:
        return COULD_NOT_RUN
    return OK
