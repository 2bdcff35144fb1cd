"""A resumed run is the run that was started: ``assay resume`` takes up the command line of ``assay evolve``.

Every ``started`` event records the overrides its session ran with (:class:`~assay.loop.events.Overrides`:
``-n``, ``--preset``, ``--executor``, ``--no-cache``, ``--proposer``). A resume runs with those of the run's latest session; an
override it is told (``assay resume -n 12``) replaces the recorded one, and a change says so in one line. A run
recorded before overrides were (its ``started`` events have none) resumes with what it is told, as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.loop.events import Event, Overrides, Started
from assay.words import plural


def last_session(events: Sequence[Event]) -> Started | None:
    """The latest ``started`` event that recorded its overrides (None: the run was recorded before they were)."""
    for event in reversed(events):
        if isinstance(event, Started) and event.overrides is not None:
            return event
    return None


def take_up(told: Overrides, session: Started | None, *, generations: int) -> tuple[Overrides, list[str]]:
    """The overrides a resume runs with, and one line for each one ``told`` changes: the ``session``'s, each
    replaced by the one ``told`` sets (``--no-cache`` stays on once set). ``generations`` is the session's
    generation limit when it had no ``-n`` (from assay.yaml or the preset)."""
    if session is None or session.overrides is None:
        return told, []
    before = session.overrides
    merged = Overrides(
        max_generations=told.max_generations if told.max_generations is not None else before.max_generations,
        preset=told.preset if told.preset is not None else before.preset,
        executor=told.executor if told.executor is not None else before.executor,
        no_cache=told.no_cache or before.no_cache,
        proposer=told.proposer if told.proposer is not None else before.proposer,
    )
    ran = "the run was last resumed" if session.resumed else "the run was started"
    lines = []
    if told.max_generations is not None and told.max_generations != (before.max_generations or generations):
        was = (
            f"-n {before.max_generations}"
            if before.max_generations
            else f"without -n: {plural(generations, 'generation')}"
        )
        lines.append(_line(f"-n {told.max_generations}", ran, was))
    for flag, now, then in (
        ("--preset", told.preset, before.preset),
        ("--executor", told.executor, before.executor),
        ("--proposer", told.proposer, before.proposer),
    ):
        if now is not None and now != then:
            lines.append(
                _line(f"{flag} {now}", ran, f"{flag} {then}" if then is not None else f"without {flag}")
            )
    if told.no_cache and not before.no_cache:
        lines.append(_line("--no-cache", ran, "the cache"))
    return merged, lines


def _line(now: str, ran: str, was: str) -> str:
    """``resuming with -n 12 (the run was started with -n 6)``."""
    joined = was if was.startswith("without") else f"with {was}"
    return f"resuming with {now} ({ran} {joined})"
