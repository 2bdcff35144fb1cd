"""Tuning derives its trials and structures from the view's history alone (and the files of its commits), so a
fresh proposer given the same history — a resumed run — derives the same evidence."""

from __future__ import annotations

from dataclasses import replace

from assay.proposers.base import HistoryEntry, ProposerView
from assay.proposers.tune import search_space
from assay.proposers.tune.evidence import DISCARD_MARGIN, EvidenceReader

PARENT = {"f.py": "def f(x):\n    return x * 3.0\n"}
TUNED = {"f.py": "def f(x):\n    return x * 4.0\n"}
GUARDED = {"f.py": "def f(x):\n    if x > 2.0:\n        return x * 3.0 * 5.0\n    return x * 3.0\n"}
FILES = {"base": PARENT, "t1": TUNED, "g1": GUARDED, "g2": GUARDED}


def view(*history: HistoryEntry) -> ProposerView:
    return ProposerView(
        artifact=dict(PARENT),
        layer=1,
        parent="base",
        parent_score=0.9,
        history=list(history),
        artifact_at=lambda commit: FILES[commit],
    )


HISTORY = (
    HistoryEntry(1, "tune: f.py:f#1 3.0 -> 4.0", "discard", "tune", commit="t1", score=0.95, best_score=0.9),
    HistoryEntry(2, "proposal failed: no edit", "invalid", "llm"),  # not measured: no trial
    HistoryEntry(3, "python: guard", "discard", "mutate", commit="g1", score=0.9, best_score=0.9),
    HistoryEntry(
        4, "python: guard again", "discard", "mutate", commit="g2", score=0.0, best_score=0.9, crashed=True
    ),
)


def test_trials_come_from_the_measured_entries_the_parent_first() -> None:
    evidence = EvidenceReader().of(view(*HISTORY))
    studies = [t.point.study for t in evidence.trials]
    assert studies[0] == search_space(PARENT).study and evidence.parent_score == 0.9
    assert [t.commit for t in evidence.trials] == ["base", "t1", "g1", "g2"]
    tuned = evidence.trials[1]
    assert tuned.point.values == {"f.py:f#1": 4.0}
    # A discard is told no more than the best it failed to replace, a little less.
    assert tuned.score == 0.9 - DISCARD_MARGIN and not tuned.unchanged
    assert evidence.trials[2].unchanged and evidence.trials[3].crashed
    kept = EvidenceReader().of(view(replace(HISTORY[0], decision="keep")))
    assert kept.trials[1].score == 0.95


def test_other_structures_are_offered_with_the_files_of_their_best_candidate() -> None:
    evidence = EvidenceReader().of(view(*HISTORY))
    # The tuned candidate shares the parent's structure; the guard's two trials are one other structure.
    (guard,) = evidence.structures
    assert guard.study == search_space(GUARDED).study and guard.files == GUARDED
    assert guard.trials == 2 and guard.latest and not guard.inert and not guard.crashed


def test_a_fresh_reader_derives_the_same_evidence() -> None:
    reader = EvidenceReader()
    first = reader.of(view(*HISTORY))
    again = reader.of(view(*HISTORY))  # points remembered by commit
    fresh = EvidenceReader().of(view(*HISTORY))
    assert first == again == fresh
