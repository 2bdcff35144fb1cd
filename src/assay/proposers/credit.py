"""What each move has earned in a run: per operator and per site, how many changes it proposed, how many crashed
(no dev case ran), were screened out, were kept, and the dev score its keeps gained.

The record is folded from what every proposer may read (the view's history, or a run's candidate records), so
a resumed run reads the same record as the uninterrupted one, and the report shows the same figures the search
chose by.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from assay.proposers.base import HistoryEntry


@dataclass
class Tally:
    """One operator's or one site's record."""

    proposed: int = 0
    crashed: int = 0
    screened: int = 0
    kept: int = 0
    gain: float = 0.0  # the dev score its keeps gained over their parents, summed

    @property
    def failed(self) -> int:
        """Changes that did not run: crashed, or screened out on their first dev cases."""
        return self.crashed + self.screened

    @property
    def only_fails(self) -> bool:
        """Whether every change it made so far, at least :data:`GIVE_UP` of them, failed to run."""
        return self.proposed >= GIVE_UP and self.failed == self.proposed


GIVE_UP = 3  # changes in a row at an operator or a site that all failed to run: it leaves the search


@dataclass
class Credit:
    """The record of a run's moves: by operator (``tune``, ``py.guard``, ``llm.edit``) and by site
    (``priority.py:priority#2``: a number; ``priority.py:priority``: a function an edit touched)."""

    operators: dict[str, Tally] = field(default_factory=dict)
    sites: dict[str, Tally] = field(default_factory=dict)

    def add(
        self,
        operator: str,
        sites: Iterable[str],
        *,
        crashed: bool,
        screened: bool,
        kept: bool,
        gain: float | None,
    ) -> None:
        for tally in (self.operators.setdefault(operator or "?", Tally()), *self._sites(sites)):
            tally.proposed += 1
            tally.screened += screened
            tally.crashed += crashed and not screened
            if kept:
                tally.kept += 1
                tally.gain += max(0.0, gain or 0.0)

    def _sites(self, names: Iterable[str]) -> list[Tally]:
        return [self.sites.setdefault(name, Tally()) for name in dict.fromkeys(names)]

    @classmethod
    def of(cls, history: Iterable[HistoryEntry]) -> Credit:
        """The record of a proposer's history (entries with no commit proposed nothing that ran: left out)."""
        credit = cls()
        for entry in history:
            if entry.commit:
                credit.add(
                    entry.operator,
                    entry.sites,
                    crashed=entry.crashed,
                    screened=entry.screened,
                    kept=entry.decision == "keep",
                    gain=entry.delta,
                )
        return credit

    def failing_operators(self) -> set[str]:
        """The operators every change of which, :data:`GIVE_UP` or more, failed to run: not drawn again."""
        return {name for name, tally in self.operators.items() if tally.only_fails}

    def failing_sites(self) -> set[str]:
        """The sites every change of which, :data:`GIVE_UP` or more, failed to run: not changed again."""
        return {name for name, tally in self.sites.items() if tally.only_fails}

    def rows(self) -> list[tuple[str, Tally]]:
        """The operators, most proposed first."""
        return sorted(self.operators.items(), key=lambda item: (-item[1].proposed, item[0]))
