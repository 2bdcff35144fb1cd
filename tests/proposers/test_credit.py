"""The record of a run's moves, folded from the proposer's history: by operator and by site."""

from __future__ import annotations

from assay.proposers.base import HistoryEntry
from assay.proposers.credit import GIVE_UP, Credit


def entry(generation: int, operator: str, decision: str, **fields: object) -> HistoryEntry:
    return HistoryEntry(
        generation, "a change", decision, operator=operator, commit=f"c{generation}", **fields
    )  # type: ignore[arg-type]


def test_each_operator_and_site_counts_what_its_changes_came_to() -> None:
    credit = Credit.of(
        [
            entry(1, "tune", "keep", delta=0.02, sites=("f.py:f#1", "f.py:f#2")),
            entry(2, "tune", "discard", delta=-0.01, sites=("f.py:f#2",), crashed=True),
            entry(3, "py.guard", "discard", sites=("f.py:f",), crashed=True, screened=True),
            entry(4, "tune", "keep", delta=0.005, sites=("f.py:f#1",)),
            HistoryEntry(5, "no mutation", "discard", operator="py.wrap"),  # nothing committed: nothing ran
        ]
    )
    tune, guard = credit.operators["tune"], credit.operators["py.guard"]
    assert (tune.proposed, tune.crashed, tune.screened, tune.kept) == (3, 1, 0, 2)
    assert abs(tune.gain - 0.025) < 1e-12  # a discard's loss is no gain
    assert (guard.proposed, guard.crashed, guard.screened, guard.failed) == (1, 0, 1, 1)
    assert "py.wrap" not in credit.operators
    assert credit.sites["f.py:f#1"].kept == 2 and credit.sites["f.py:f#2"].failed == 1
    assert [name for name, _ in credit.rows()] == ["tune", "py.guard"]


def test_a_move_whose_every_change_failed_to_run_gives_up_after_a_few() -> None:
    history = [
        entry(g, "py.combine", "discard", crashed=True, sites=("f.py:f",)) for g in range(1, GIVE_UP + 1)
    ]
    assert Credit.of(history[:-1]).operators["py.combine"].only_fails is False
    assert Credit.of(history).operators["py.combine"].only_fails
    assert Credit.of(history).sites["f.py:f"].only_fails
    assert Credit.of(history).failing_operators() == {"py.combine"}
    assert Credit.of(history).failing_sites() == {"f.py:f"}
    assert Credit.of(history[:-1]).failing_operators() == set() == Credit.of(history[:-1]).failing_sites()
    assert (
        not Credit.of([*history, entry(9, "py.combine", "keep", sites=("f.py:f",))])
        .operators["py.combine"]
        .only_fails
    )
