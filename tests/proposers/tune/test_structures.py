"""Which other program structures the tuner is offered: the best-scoring ones and the latest evaluated one."""

from __future__ import annotations

from assay.proposers.base import TunedPoint
from assay.proposers.tune.evidence import STRUCTURES_SHOWN, Trial, structures


def trial(
    study: str, score: float, value: float = 1.0, *, unchanged: bool = False, crashed: bool = False
) -> Trial:
    point = TunedPoint(study=study, values={"x": value})
    return Trial(point, score, commit=f"{study}-{value}", unchanged=unchanged, crashed=crashed)


def offered(trials: list[Trial], own: str = "own") -> list[tuple[str, float, int, bool]]:
    return [(s.study, s.score, s.trials, s.latest) for s in structures(trials, own, files_at)]


def files_at(commit: str) -> dict[str, str]:
    return {"f.py": commit}


def test_the_best_structures_are_offered_with_their_best_score_and_trial_count() -> None:
    trials = [trial("own", 0.9), trial("a", 0.8), trial("a", 0.85, 2.0), trial("b", 0.7)]
    assert offered(trials) == [("a", 0.85, 2, False), ("b", 0.7, 1, True)]


def test_the_latest_structure_is_offered_even_when_it_scored_below_the_best_ones() -> None:
    good = [trial(f"good{i}", 0.9 - i / 100) for i in range(STRUCTURES_SHOWN + 2)]
    low = trial("new", 0.1)
    shown = offered([*good, low])
    assert len(shown) == STRUCTURES_SHOWN + 1
    assert shown[-1] == ("new", 0.1, 1, True)
    assert [s[0] for s in shown[:-1]] == [f"good{i}" for i in range(STRUCTURES_SHOWN)]
    # When the latest is the parent's own structure, nothing more is offered.
    assert len(offered([*good, low, trial("own", 0.95)])) == STRUCTURES_SHOWN


def test_structures_whose_trials_all_measured_the_incumbents_score_come_after_the_others() -> None:
    # Guards that never fired: each measured 0.9 like the incumbent, and was told 0.899.
    inert = [trial(f"inert{i}", 0.899, unchanged=True) for i in range(STRUCTURES_SHOWN + 2)]
    live = [trial("live1", 0.7), trial("live2", 0.6)]
    shown = [s[0] for s in offered([*live, *inert, trial("own", 0.9)])]
    assert shown[:2] == ["live1", "live2"]
    assert shown[2:] == [f"inert{i}" for i in range(STRUCTURES_SHOWN - 2)]
    marked = {s.study: s.inert for s in structures([*live, *inert, trial("own", 0.9)], "own", files_at)}
    assert marked == {
        "live1": False,
        "live2": False,
        **{f"inert{i}": True for i in range(STRUCTURES_SHOWN - 2)},
    }
    # One trial that measured a difference makes a structure live, ranked by what it measured.
    moved = trial("inert0", 0.5, 2.0)
    shown = offered([*live, *inert, moved, trial("own", 0.9)])
    assert [s[:2] for s in shown[:3]] == [("live1", 0.7), ("live2", 0.6), ("inert0", 0.5)]


def test_a_structure_is_offered_at_a_candidate_that_measured_a_difference() -> None:
    # A guard that fired at its first numbers (0.8), then was tuned to where it never fires (told 0.899).
    trials = [
        trial("own", 0.9),
        trial("guard", 0.8),
        trial("guard", 0.899, 2.0, unchanged=True),
        trial("b", 0.85),
    ]
    shown = structures(trials, "own", files_at)
    assert [(s.study, s.score, s.files, s.inert) for s in shown] == [
        ("b", 0.85, {"f.py": "b-1.0"}, False),
        ("guard", 0.8, {"f.py": "guard-1.0"}, False),
    ]
    # Among candidates that measured a difference, the best score wins as before.
    trials.append(trial("guard", 0.88, 3.0))
    assert structures(trials, "own", files_at)[0].files == {"f.py": "guard-3.0"}


def test_a_structure_is_marked_crashed_only_when_every_one_of_its_trials_crashed() -> None:
    trials = [
        trial("own", 0.9),
        trial("broke", -0.001, crashed=True),
        trial("mixed", -0.001, crashed=True),
        trial("mixed", 0.5, 2.0),
        trial("broke", -0.001, 2.0, crashed=True),
    ]
    marked = {s.study: s.crashed for s in structures(trials, "own", files_at)}
    assert marked == {"broke": True, "mixed": False}
