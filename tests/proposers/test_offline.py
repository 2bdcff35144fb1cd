"""The offline default proposer: after a structural edit that changed nothing measured, its new comparison is
tried the other way round before any tuning."""

from __future__ import annotations

import ast
import asyncio
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import pytest

from assay.fsutil import artifact_text
from assay.proposers.base import DevCase, HistoryEntry, Proposal, ProposerView
from assay.proposers.mutate.python_combine_ops import FORMS
from assay.proposers.mutate.python_prune import PRUNE_NOTE
from assay.proposers.offline import (
    FLIP_NOTE,
    PAIRING_NOTE,
    POPULATION_NOTE,
    TURN_NOTE,
    OfflineProposer,
    array_evidence,
)
from assay.proposers.tune import search_space
from assay.proposers.tune.evidence import Evidence, Structure, Trial


class Given(NamedTuple):
    """A view and the tuning evidence a test gives with it (a view alone derives its own from its history)."""

    view: ProposerView
    evidence: Evidence


def at(made: Given | ProposerView, **changes: object) -> Given | ProposerView:
    """``made`` with its view's fields changed (a view is frozen)."""
    if isinstance(made, Given):
        return Given(replace(made.view, **changes), made.evidence)  # type: ignore[arg-type]
    return replace(made, **changes)  # type: ignore[arg-type]


def view_of(made: Given | ProposerView) -> ProposerView:
    return made.view if isinstance(made, Given) else made


PARENT = {"priority.py": "def priority(item, remaining):\n    return -(remaining - item)\n"}
GUARDED = {
    "priority.py": "def priority(item, remaining):\n    if remaining - item > 10:\n"
    "        return -(remaining - item) * 2\n    return -(remaining - item)\n"
}
EDIT = "python: added a guarded return `if remaining - item > 10` in priority() line 2"


def view(
    *, inert: bool = True, trials: int = 1, last: str = EDIT, proposer: str = "mutate", attempt: int = 0
) -> Given:
    point = search_space(PARENT).point()
    grown = search_space(GUARDED).point()
    return Given(
        ProposerView(
            artifact=dict(PARENT),
            layer=2,
            history=[HistoryEntry(1, last, "discard", proposer)],
            attempt=attempt,
        ),
        Evidence(
            [Trial(point, 0.95), Trial(grown, 0.949, "c1", unchanged=inert)],
            [Structure(grown.study, GUARDED, 0.949, trials, latest=True, inert=inert)],
        ),
    )


def propose(
    proposer: OfflineProposer, made: Given | ProposerView, tmp: Path, start: dict[str, str] = PARENT
) -> tuple[Proposal, str]:
    (tmp / "priority.py").write_text(start["priority.py"])
    if isinstance(made, Given):
        done = asyncio.run(proposer.propose_with(made.view, made.evidence, tmp, editable=["*.py"]))
    else:
        done = asyncio.run(proposer.propose(made, tmp, editable=["*.py"]))
    return done, (tmp / "priority.py").read_text()


def test_an_inert_guard_is_tried_next_with_its_comparison_turned_round(tmp_path: Path) -> None:
    made, text = propose(OfflineProposer(seed=0), view(), tmp_path)
    assert made.ok and made.via == "mutate"
    assert text == GUARDED["priority.py"].replace("> 10", "< 10")
    assert made.description.startswith(
        "python: turned `remaining - item > 10` round to `remaining - item < 10`"
    )
    assert made.description.endswith(TURN_NOTE)


def test_a_guard_whose_structure_never_measured_anything_is_turned_round_again(tmp_path: Path) -> None:
    # The same guard drawn again at other numbers, every trial of its structure inert: the way round, not the
    # numbers, is the likely reason (`item - remaining` where `remaining - item` is what is positive).
    made, text = propose(OfflineProposer(seed=0), view(trials=3), tmp_path)
    assert made.ok and made.description.endswith(TURN_NOTE)
    assert text == GUARDED["priority.py"].replace("> 10", "< 10")


@pytest.mark.parametrize(
    "case",
    [
        {"inert": False},  # the guard moved the score: tune it
        {"inert": False, "trials": 2},  # tuned already and it moved the score: its values matter
        {"last": EDIT + TURN_NOTE},  # a turn itself: turning it again gives back the edit
        {"proposer": "tune"},  # the last candidate was a tuning trial
        {"attempt": 1},  # the turn repeated an earlier candidate: draw as usual
    ],
)
def test_no_turn_unless_the_last_structural_edit_changed_nothing(
    tmp_path: Path, case: dict[str, object]
) -> None:
    made, text = propose(OfflineProposer(seed=0), view(**case), tmp_path)  # type: ignore[arg-type]
    assert made.ok
    assert "turned" not in made.description and text != GUARDED["priority.py"].replace("> 10", "< 10")


SHIFTED = {
    "priority.py": "def priority(item, remaining):\n    if 0 < remaining - item - 5 < 20:\n"
    "        return -(remaining - item) + 100\n    return -(remaining - item)\n"
}


def shift_view(score: float, *, last: str = EDIT, trials: int = 1) -> Given:
    point = search_space(PARENT).point()
    grown = search_space(SHIFTED).point()
    return Given(
        ProposerView(artifact=dict(PARENT), layer=2, history=[HistoryEntry(1, last, "discard", "mutate")]),
        Evidence(
            [Trial(point, 0.95), Trial(grown, score, "c1")],
            [Structure(grown.study, SHIFTED, score, trials, latest=True)],
        ),
    )


def test_a_guard_that_made_things_worse_is_tried_next_with_its_shift_flipped(tmp_path: Path) -> None:
    made, text = propose(OfflineProposer(seed=0), shift_view(0.90), tmp_path)
    assert made.ok and made.via == "mutate"
    assert text == SHIFTED["priority.py"].replace("+ 100", "- 100")
    assert made.description.startswith(
        "python: flipped `-(remaining - item) + 100` to `-(remaining - item) - 100`"
    )
    assert made.description.endswith(FLIP_NOTE) and TURN_NOTE not in made.description


@pytest.mark.parametrize(
    "case",
    [
        {"score": 0.96},  # it helped: tune it
        {"score": 0.95},  # a tie that changed something: not worse
        {"score": 0.90, "trials": 2},  # tuned already
        {"score": 0.90, "last": EDIT + FLIP_NOTE},  # a flip itself: flipping it again gives back the edit
    ],
)
def test_no_flip_unless_the_last_structural_edit_made_things_worse(
    tmp_path: Path, case: dict[str, object]
) -> None:
    made, text = propose(OfflineProposer(seed=0), shift_view(**case), tmp_path)  # type: ignore[arg-type]
    assert made.ok and "flipped" not in made.description
    assert "- 100" not in text


# Reads both inputs (nothing to pair) and holds no number, comparison or arithmetic (no surface edit).
RATIO_START = {"priority.py": "def priority(value, weight):\n    return max(value, weight)\n"}
GROWN = {"priority.py": "def priority(value, weight):\n    return max(value, weight) + 2.0 * value\n"}


def surface_view(layer: int = 1) -> Given:
    """The parent has no number (no surface edit applies), a discarded structure has one (tuning always could)."""
    grown = search_space(GROWN).point()
    return Given(
        ProposerView(
            artifact=dict(RATIO_START),
            layer=layer,
            history=[HistoryEntry(1, "tune on a structure", "discard", "tune")],
        ),
        Evidence(
            [Trial(search_space(RATIO_START).point(), 0.9), Trial(grown, 0.9, "c1", unchanged=True)],
            [Structure(grown.study, GROWN, 0.9, 3, latest=True, inert=False)],
        ),
    )


def test_structural_edits_with_nothing_at_this_layer_give_way_to_a_layer_that_has_some(
    tmp_path: Path,
) -> None:
    proposer = OfflineProposer(seed=0)
    chosen = choosing(proposer, "mutate", surface_view())
    made, text = propose(proposer, chosen, tmp_path, RATIO_START)
    assert not made.ok and made.exhausted  # the loop moves to the core layer, instead of tuning once more
    assert text == RATIO_START["priority.py"]
    made, text = propose(proposer, at(chosen, layer=2), tmp_path, RATIO_START)
    assert made.ok and made.via == "mutate" and text != RATIO_START["priority.py"]


def test_with_structural_edits_at_no_layer_of_the_run_tuning_is_tried_instead(tmp_path: Path) -> None:
    proposer = OfflineProposer(seed=0, layers=[1])
    chosen = choosing(proposer, "mutate", surface_view())
    made, _ = propose(proposer, chosen, tmp_path, RATIO_START)
    assert made.ok and made.via == "tune"


def test_a_case_split_adds_a_guard_before_a_return(tmp_path: Path) -> None:
    proposer = OfflineProposer(seed=0)
    chosen = choosing(proposer, "mutate", surface_view(layer=3), split=True)
    made, text = propose(proposer, chosen, tmp_path, RATIO_START)
    assert made.ok and made.via == "mutate"
    assert made.description.startswith("python: added a guarded return `if ")
    assert text.startswith("def priority(value, weight):\n    if ") and text.endswith(
        "return max(value, weight)\n"
    )


def scaled_view(*items: float, ids: str = "c") -> ProposerView:
    """The best-fit parent at the core layer, its three dev cases carrying ``items`` in bins of 1.0."""
    cases = [
        DevCase(f"{ids}{i}", vars={"instance": {"capacity": 1.0, "items": list(items)}}) for i in range(3)
    ]
    return ProposerView(artifact=dict(PARENT), layer=2, dev_cases=cases)


def test_a_case_split_draws_its_numbers_at_the_scale_of_the_dev_cases(tmp_path: Path) -> None:
    bounds = []
    for seed in range(30):
        proposer = OfflineProposer(seed=seed)
        chosen = choosing(proposer, "mutate", scaled_view(0.2, 0.35, 0.5), split=True)
        made, text = propose(proposer, chosen, tmp_path)
        assert made.ok and made.description.startswith("python: added a guarded return `if ")
        test = ast.parse(text).body[0].body[0].test  # type: ignore[attr-defined]
        bounds += [n.value for n in ast.walk(test) if isinstance(n, ast.Constant) and n.value]
    assert bounds and all(type(b) is float and 0 < b < 1 for b in bounds), bounds  # the fractions' scale


def test_a_runs_dev_cases_are_read_for_their_scale_once() -> None:
    operators = OfflineProposer(seed=0).operators
    fractions = scaled_view(0.2, 0.35, 0.5)
    assert operators.scale(fractions) == pytest.approx(0.425)  # the median of the items and the capacities
    fractions.dev_cases[0].vars["instance"]["items"] = [5000.0] * 9
    assert operators.scale(fractions) == pytest.approx(0.425)  # the same cases: not read again
    assert operators.scale(scaled_view(2000, 3500, 5000, ids="d")) == pytest.approx(2750)  # other cases


@pytest.mark.parametrize(("layers", "layer"), [((1, 2, 3), 1), ((1, 3), 3), ((1,), 1)])
def test_no_case_split_at_the_surface_layer_or_in_a_run_without_the_core_one(
    layers: tuple[int, ...], layer: int
) -> None:
    proposer = OfflineProposer(seed=0, layers=layers)
    draws = []
    for generation in range(40):
        draws.append(proposer.case_split(replace(surface_view(layer).view, generation=generation)))
    assert draws == [None] * 40


def split_history(guards_open: bool) -> list[HistoryEntry]:
    """Twelve guards and twelve other structural edits of the incumbent: one side's each moved the dev score by
    an amount not seen before, the other side's changed nothing."""
    guard, other = "python: added a guarded return `if value > 3` in priority() line 2", "python: swapped"
    moved, still = (guard, other) if guards_open else (other, guard)
    return [
        HistoryEntry(2 * i + k, text, "discard", "mutate", delta)
        for i in range(12)
        for k, (text, delta) in enumerate([(moved, -0.01 * (i + 1)), (still, 0.0)])
    ]


@pytest.mark.parametrize("guards_open", [True, False])
def test_the_case_split_share_follows_which_edits_opened_new_scores(guards_open: bool) -> None:
    made_view = replace(surface_view(layer=2).view, history=split_history(guards_open))
    proposer = OfflineProposer(seed=0)
    splits = 0
    for generation in range(100):
        splits += proposer.case_split(replace(made_view, generation=generation)) is not None
    assert (splits > 90) if guards_open else (splits < 10)


@pytest.mark.parametrize("note", [TURN_NOTE, FLIP_NOTE, POPULATION_NOTE, PAIRING_NOTE, PRUNE_NOTE])
def test_follow_ups_and_edits_from_the_population_earn_no_credit(note: str) -> None:
    def draws(history: list[HistoryEntry]) -> list[str | None]:
        made_view = replace(surface_view(layer=2).view, history=history)
        proposer = OfflineProposer(seed=0)
        out = []
        for generation in range(60):
            made = proposer.case_split(replace(made_view, generation=generation))
            out.append(None if made is None else made.new_text)
        return out

    noted = [
        replace(entry, description=entry.description + note) for entry in split_history(guards_open=True)
    ]
    assert draws(noted) == draws([])
    assert draws(split_history(guards_open=True)) != draws([])


def choosing(
    proposer: OfflineProposer, family: str, made: Given | ProposerView, *, split: bool = False
) -> Given | ProposerView:
    """``made`` at the first generation whose draw picks ``family`` first, and whose case split draws a guard or
    not as ``split`` says."""
    for generation in range(50):
        chosen = at(made, generation=generation)
        shown = view_of(chosen)
        if proposer.choose(shown) == family and (proposer.case_split(shown) is not None) == split:
            return chosen
    raise AssertionError(f"no generation of 50 draws {family}")


NUMPY_START = {
    "priority.py": "import numpy as np\n\n\ndef priority(item, bins):\n    return -(bins - item)\n"
}
SCALAR_GUARD = NUMPY_START["priority.py"].replace(
    "    return -(bins",
    "    if 0 < bins - item - 5 < 45:\n        return -(bins - item) - 1000\n    return -(bins",
)
WHERE_GUARD = NUMPY_START["priority.py"].replace(
    "return -(bins - item)",
    "return np.where(abs(bins - item - 27) < 22, -(bins - item) - 1000, -(bins - item))",
)


def crashed(text: str, *, ok: bool = False) -> Structure:
    return Structure(
        search_space({"priority.py": text}).point().study, {"priority.py": text}, 0.0, 1, crashed=not ok
    )


def test_what_a_crash_says_of_whether_a_function_takes_arrays() -> None:
    assert array_evidence(crashed(SCALAR_GUARD), NUMPY_START) == 1  # asks an array for one truth value
    assert array_evidence(crashed(WHERE_GUARD), NUMPY_START) == -1  # written elementwise and still crashed
    assert array_evidence(crashed(SCALAR_GUARD, ok=True), NUMPY_START) == 0  # it ran
    plain = {"priority.py": NUMPY_START["priority.py"].replace("import numpy as np\n", "")}
    assert array_evidence(crashed(SCALAR_GUARD.replace("import numpy as np\n", "")), plain) == 0  # no numpy


def numpy_view(*crashed_texts: str, ran: int = 1) -> ProposerView:
    """The unannotated numpy parent (commit ``c0``) at the core layer: its history holds a structural edit of it
    per text of ``crashed_texts`` that crashed on every case (commits ``c1``, ...), then ``ran`` tuning trials
    of the parent that ran; each commit's files are read through ``artifact_at``, as the loop gives them."""
    files = {"c0": dict(NUMPY_START)}
    history = []
    for i, text in enumerate(crashed_texts, 1):
        files[f"c{i}"] = {"priority.py": text}
        entry = HistoryEntry(i, "python: x", "discard", "mutate", commit=f"c{i}", parent="c0", score=0.0)
        history.append(replace(entry, best_score=0.9, crashed=True))
    for j in range(ran):
        commit = f"t{j}"
        files[commit] = {"priority.py": NUMPY_START["priority.py"].replace("-(bins", f"-{j + 2} * (bins")}
        entry = HistoryEntry(len(history) + 1, "tune: x", "discard", "tune", commit=commit, parent="c0")
        history.append(replace(entry, score=0.8, best_score=0.9))
    return ProposerView(
        artifact=dict(NUMPY_START),
        layer=2,
        parent="c0",
        parent_score=0.9,
        history=history,
        artifact_at=lambda commit: files[commit],
    )


def test_after_a_guard_for_plain_numbers_crashed_guards_are_written_elementwise(tmp_path: Path) -> None:
    forms = []
    for texts in ([], [SCALAR_GUARD], [SCALAR_GUARD, WHERE_GUARD]):
        proposer = OfflineProposer(seed=0)
        chosen = choosing(proposer, "mutate", numpy_view(*texts), split=True)
        made, text = propose(proposer, chosen, tmp_path, NUMPY_START)
        assert made.ok and made.description.startswith("python: added a guarded return")
        forms.append("np.where(" in text)
    # no evidence: as the scalar operators write it; a scalar guard crashed: elementwise; an elementwise one
    # crashed as well: the crashes had another cause
    assert forms == [False, True, False]


def test_the_evidence_is_the_whole_history(tmp_path: Path) -> None:
    # Fifteen tuning trials later, the crashed structure is far out of the few structures tuning offers, and a
    # fresh proposer (a resumed run) derives the same evidence from the same history.
    proposer = OfflineProposer(seed=0)
    chosen = choosing(proposer, "mutate", numpy_view(SCALAR_GUARD, ran=15), split=True)
    made, text = propose(OfflineProposer(seed=0), chosen, tmp_path, NUMPY_START)
    assert made.ok and "np.where(" in text


PRUNABLE = {
    "priority.py": "def priority(item, remaining):\n    if remaining - item > 10:\n        return 5\n"
    "    if item < 3:\n        return 1\n    return -(remaining - item)\n"
}
PRUNE_DIFF = "+++ b/priority.py\n+    if remaining - item > 10:\n+        return 5\n+    if item < 3:\n+        return 1\n"


def prune_view(*history: tuple[str, str]) -> ProposerView:
    return ProposerView(
        artifact=dict(PRUNABLE),
        layer=2,
        history=[HistoryEntry(i + 1, text, decision, "mutate") for i, (text, decision) in enumerate(history)],
        best_diff=PRUNE_DIFF,
    )


def test_after_a_keep_each_added_branch_is_proposed_removed_in_turn() -> None:
    proposer = OfflineProposer(seed=0)
    first = proposer.prune(prune_view(("python: added a guarded return", "keep")))
    assert first is not None and "`if remaining - item > 10`" in first.description
    assert "if remaining - item > 10" not in first.new_text and "if item < 3" in first.new_text
    second = proposer.prune(
        prune_view(("python: added a guarded return", "keep"), (first.description, "discard"))
    )
    assert second is not None and "`if item < 3`" in second.description
    assert "if remaining - item > 10" in second.new_text and "if item < 3" not in second.new_text
    done = prune_view(("edit", "keep"), (first.description, "discard"), (second.description, "discard"))
    assert proposer.prune(done) is None  # every added branch tried


def test_a_removal_that_repeats_an_earlier_candidate_is_redrawn_as_the_next_one() -> None:
    # Removing an outer branch can give back the baseline: the redraw offers the branch after it.
    proposer = OfflineProposer(seed=0)
    redraw = prune_view(("edit", "keep"))
    made = proposer.prune(replace(redraw, attempt=1))
    assert made is not None and "`if item < 3`" in made.description
    assert proposer.prune(replace(redraw, attempt=2)) is None  # both branches offered
    later = prune_view(("edit", "keep"), (made.description, "discard"))
    assert proposer.prune(replace(later, attempt=1)) is None


def test_no_removal_is_proposed_without_a_keep_just_before(tmp_path: Path) -> None:
    proposer = OfflineProposer(seed=0)
    assert proposer.prune(prune_view(("edit", "keep"), ("tune on a structure", "discard"))) is None
    assert proposer.prune(prune_view(("edit", "discard"))) is None
    made, text = propose(proposer, prune_view(("edit", "keep")), tmp_path, PRUNABLE)
    assert made.ok and made.via == "mutate" and "removed the branch" in made.description
    assert "if remaining - item > 10" not in text


def tidy(proposer: OfflineProposer, made_view: ProposerView, tmp: Path) -> tuple[Proposal, str]:
    (tmp / "priority.py").write_text(PRUNABLE["priority.py"])
    made = asyncio.run(proposer.tidy(made_view, tmp, editable=["*.py"]))
    return made, (tmp / "priority.py").read_text()


def test_while_tidying_only_a_removal_is_proposed(tmp_path: Path) -> None:
    proposer = OfflineProposer(seed=0)
    due = prune_view(("python: added a guarded return", "keep"))
    assert proposer.tidies(due)
    made, text = tidy(proposer, due, tmp_path)
    assert made.ok and "removed the branch" in made.description and "if remaining - item > 10" not in text
    first = proposer.prune(due)
    assert first is not None
    second = proposer.prune(prune_view(("edit", "keep"), (first.description, "discard")))
    assert second is not None
    done = prune_view(("edit", "keep"), (first.description, "discard"), (second.description, "discard"))
    assert not proposer.tidies(done)
    made, text = tidy(proposer, done, tmp_path)
    assert not made.ok and made.exhausted and made.error == "nothing left to tidy"
    assert text == PRUNABLE["priority.py"]  # searching on would spend generations the stop rule ended


BRANCHED = {
    "priority.py": "def priority(item, remaining):\n    if item > 40:\n        return 7.5\n"
    "    return -(remaining - item) * 2\n"
}


def population_view(*, inert: bool = False, keep_at: int | None = None) -> Given:
    """Ten decisions in a row without a keep (or with one at ``keep_at``), another structure scoring 0.93."""
    other = search_space(BRANCHED).point()
    return Given(
        ProposerView(
            artifact=dict(PARENT),
            layer=2,
            history=[
                HistoryEntry(g, "tune", "keep" if g == keep_at else "discard", "tune") for g in range(1, 11)
            ],
        ),
        Evidence(
            [Trial(search_space(PARENT).point(), 0.95), Trial(other, 0.93, "c1", unchanged=inert)],
            [Structure(other.study, BRANCHED, 0.93, 2, inert=inert)],
        ),
    )


def structural(made_view: Given, tmp: Path) -> dict[str, tuple[Proposal, str]]:
    """The structural proposals of 60 generations, by the kind of parent they came from."""
    proposer = OfflineProposer(seed=3)
    found: dict[str, tuple[Proposal, str]] = {}
    for generation in range(60):
        drawn = at(made_view, generation=generation)
        if proposer.choose(view_of(drawn)) != "mutate":
            continue
        made, text = propose(proposer, drawn, tmp)
        assert made.ok
        kinds = ("crossed with", "crossed into", "(on ")
        kind = next((k for k in kinds if k in made.description), "incumbent")
        found.setdefault(kind, (made, text))
    return found


def test_structural_edits_start_from_the_population_now_and_then(tmp_path: Path) -> None:
    found = structural(population_view(), tmp_path)
    assert set(found) == {"crossed with", "crossed into", "(on ", "incumbent"}
    made, text = found["crossed with"]  # the incumbent given one of the other structure's statements
    assert made.description.endswith("in priority() line 1 (crossed with a structure scoring 0.9300)")
    assert text in (
        "def priority(item, remaining):\n    if item > 40:\n        return 7.5\n    return -(remaining - item)\n",
        "def priority(item, remaining):\n    return -(remaining - item) * 2\n",
    )
    made, text = found["crossed into"]  # the other structure given the incumbent's return
    assert made.description == (
        "python: grafted `return -(remaining - item)` in priority() line 1 (crossed into a structure scoring 0.9300)"
    )
    assert text == BRANCHED["priority.py"].replace(" * 2", "")
    made, text = found["(on "]  # an operator's edit of the other structure, written whole
    assert made.description.endswith("(on a structure scoring 0.9300)")
    assert text not in (PARENT["priority.py"], BRANCHED["priority.py"]) and "item" in text


def test_structures_that_changed_nothing_measured_are_no_parents(tmp_path: Path) -> None:
    assert set(structural(population_view(inert=True), tmp_path)) == {"incumbent"}


def test_while_the_incumbents_lineage_moves_edits_build_on_it_alone(tmp_path: Path) -> None:
    assert set(structural(population_view(keep_at=2), tmp_path)) == {"incumbent"}


UNREAD = {"priority.py": "def priority(value, weight):\n    return value\n"}


def pairing_view(artifact: dict[str, str], *history: tuple[str, str], attempt: int = 0) -> ProposerView:
    return ProposerView(
        artifact=dict(artifact),
        layer=1,
        history=[HistoryEntry(i + 1, text, decision, "mutate") for i, (text, decision) in enumerate(history)],
        attempt=attempt,
    )


def test_an_unread_input_is_paired_in_every_form_one_generation_each(tmp_path: Path) -> None:
    proposer = OfflineProposer(seed=3)
    history: list[tuple[str, str]] = []
    seen = []
    for _ in range(len(FORMS)):
        made, text = propose(proposer, pairing_view(UNREAD, *history), tmp_path, UNREAD)
        assert made.ok and made.description.endswith(PAIRING_NOTE), made.description
        assert "weight" in text
        seen.append(text)
        history.append((made.description, "discard"))
    assert len(set(seen)) == len(FORMS)
    # A redraw (the pairing repeated an earlier candidate) takes the next form.
    first, _ = propose(proposer, pairing_view(UNREAD), tmp_path, UNREAD)
    again, text = propose(proposer, pairing_view(UNREAD, attempt=1), tmp_path, UNREAD)
    assert text == seen[1] and again.description != first.description
    # Every form tried: the usual draw (here none at the surface layer, which has no number to edit).
    made, _ = propose(proposer, pairing_view(UNREAD, *history), tmp_path, UNREAD)
    assert PAIRING_NOTE not in made.description


def test_after_a_pairing_is_kept_the_other_forms_of_its_pair_come_next(tmp_path: Path) -> None:
    kept = {"priority.py": "def priority(value, weight):\n    return value - weight\n"}
    proposer = OfflineProposer(seed=0)
    made, text = propose(
        proposer, pairing_view(kept, ("python: paired ..." + PAIRING_NOTE, "keep")), tmp_path, kept
    )
    assert made.ok and made.description.endswith(PAIRING_NOTE)
    assert "value - weight" not in text and "weight" in text
    # Kept by another edit, a pair is left to the usual operators.
    made, _ = propose(proposer, pairing_view(kept, ("python: replaced constant", "keep")), tmp_path, kept)
    assert PAIRING_NOTE not in made.description


def test_unread_inputs_are_paired_only_while_the_best_is_the_start(tmp_path: Path) -> None:
    # Something else was kept: the best differs from the baseline, and its unread input may rightly be so.
    moved = pairing_view(UNREAD, ("tune: priority.py:priority#1 2 -> 3", "keep"))
    made, _ = propose(
        OfflineProposer(seed=3),
        replace(moved, best_diff="+++ b/priority.py\n+    return value\n"),
        tmp_path,
        UNREAD,
    )
    assert PAIRING_NOTE not in made.description
    made, _ = propose(OfflineProposer(seed=3), moved, tmp_path, UNREAD)
    assert made.description.endswith(PAIRING_NOTE)


def test_an_operator_every_change_of_which_crashed_here_is_not_drawn_again(tmp_path: Path) -> None:
    from assay.proposers.offline import MutateProposer

    def drawn(history: list[HistoryEntry]) -> set[str]:
        made = set()
        for generation in range(5, 45):
            shown = ProposerView(artifact=dict(GUARDED), layer=1, generation=generation, history=history)
            (tmp_path / "priority.py").write_text(GUARDED["priority.py"])
            proposal = asyncio.run(MutateProposer(seed=1).propose(shown, tmp_path, editable=["*.py"]))
            made.add(proposal.operator)
        return made

    before = drawn([])
    assert "py.constant" in before
    crashes = [
        HistoryEntry(
            g, "a constant", "discard", "mutate", operator="py.constant", commit=f"c{g}", crashed=True
        )
        for g in range(1, 4)
    ]
    assert drawn(crashes) == before - {"py.constant"}
    assert "py.constant" in drawn(crashes[:2])  # two crashes are not yet a rule


def test_pairings_that_every_time_crashed_give_way_to_other_moves(tmp_path: Path) -> None:
    """Pairing dict-valued names crashes on every case (``dict + dict``): after three such crashes the next
    generation is another move, not a fourth pairing (and a run does not end at a dead end of pairings)."""
    crashed = [
        HistoryEntry(g, f"python: paired ...{PAIRING_NOTE}", "discard", "mutate", operator="py.pair",
                     commit=f"c{g}", crashed=True, sites=("priority.py:priority",))
        for g in range(1, 4)
    ]  # fmt: skip
    shown = ProposerView(artifact=dict(UNREAD), layer=2, generation=4, history=crashed[:2])
    made, _ = propose(OfflineProposer(seed=3), shown, tmp_path, UNREAD)
    assert made.ok and made.description.endswith(PAIRING_NOTE)  # two crashes: still pairing
    made, _ = propose(OfflineProposer(seed=3), replace(shown, history=crashed), tmp_path, UNREAD)
    assert made.ok and PAIRING_NOTE not in made.description and made.operator != "py.pair"


def test_moves_the_configuration_leaves_out_are_never_made(tmp_path: Path) -> None:
    """``evolve.proposer.without`` (an ablation's switch): an operator, a move of the schedule and tuning are left
    out as a crashing operator is, and an unknown name is a one-line configuration error."""
    from assay.config import AssayConfig
    from assay.errors import ConfigError
    from assay.proposers.offline import MutateProposer

    def drawn(proposer: MutateProposer) -> set[str]:
        made = set()
        for generation in range(5, 45):
            shown = ProposerView(artifact=dict(GUARDED), layer=1, generation=generation)
            (tmp_path / "priority.py").write_text(GUARDED["priority.py"])
            made.add(asyncio.run(proposer.propose(shown, tmp_path, editable=["*.py"])).operator)
        return made

    assert "py.constant" in drawn(MutateProposer(seed=1))
    assert "py.constant" not in drawn(MutateProposer(seed=1, without=["py.constant"]))
    # The schedule's own moves: a turn round, a pairing, a removal after a keep.
    made, _ = propose(OfflineProposer(seed=0, without=["python.turn"]), view(), tmp_path)
    assert not made.description.endswith(TURN_NOTE)
    made, _ = propose(OfflineProposer(seed=3, without=["py.pair"]), pairing_view(UNREAD), tmp_path, UNREAD)
    assert PAIRING_NOTE not in made.description
    kept = prune_view(("python: added a guarded return", "keep"))
    assert OfflineProposer(seed=0).prune(kept) is not None
    assert OfflineProposer(seed=0, without=["python.prune"]).prune(kept) is None
    # Without tuning, every generation is a structural edit.
    for generation in range(1, 9):
        shown = ProposerView(artifact=dict(GUARDED), layer=1, generation=generation)
        made, _ = propose(OfflineProposer(seed=0, without=["tune"]), shown, tmp_path, GUARDED)
        assert made.via == "mutate", made.description
    config = AssayConfig.model_validate(
        {
            "artifact": {"kind": "code", "paths": ["priority.py"]},
            "cases": {"files": ["cases.yaml"]},
            "runner": {"type": "command", "command": "python run.py"},
            "evolve": {"proposer": {"type": "mutate", "without": ["py.gaurd"]}},
        }
    )
    with pytest.raises(
        ConfigError, match=r"evolve.proposer.without: unknown move 'py.gaurd'; known: .*py.guard"
    ):
        OfflineProposer.from_config(config)


def test_a_python_file_that_starts_with_a_byte_order_mark_is_edited_as_any_other(tmp_path: Path) -> None:
    marked = "\ufeffGAIN = 0.5\n\n\ndef priority(item, remaining):\n    return GAIN * (item - remaining)\n"
    (tmp_path / "priority.py").write_text(marked, encoding="utf-8")
    # The loop gives proposers each file as artifact_text reads it: the mark set aside (restore_marks puts it back).
    first = ProposerView(artifact={"priority.py": artifact_text(marked.encode())}, layer=0)
    done = asyncio.run(OfflineProposer(seed=3).propose(first, tmp_path, editable=["*.py"]))
    assert done.ok, done.error
    edited = (tmp_path / "priority.py").read_text(encoding="utf-8")
    assert edited != marked and "\ufeff" not in edited
