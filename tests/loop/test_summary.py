"""The kind of result a run names (gain, simplification, cheaper, no gain), the caveat on a candidate, and the
labelled figures of ``assay status``."""

from __future__ import annotations

from typing import Any

from assay.history.records import CandidateRecord, candidate_id
from assay.loop.flags import Flag
from assay.loop.summary import best_lines, caveat, classify


def record(generation: int, **fields: Any) -> CandidateRecord:
    values: dict[str, Any] = {
        "run_id": "r",
        "generation": generation,
        "candidate_id": candidate_id(generation),
        "commit": f"{generation:040d}",
        "layer": 1,
        "proposer": "mutate",
        "description": "",
        "decision": "baseline" if generation == 0 else "keep",
        "dev_score": 0.8,
        "dev_pass_rate": 0.5,
    }
    return CandidateRecord(**{**values, **fields})


BASE = record(0)


def test_a_higher_dev_score_is_a_gain() -> None:
    result = classify(BASE, record(3, dev_score=0.8170))
    assert result.kind == "gain" and result.adoptable
    assert result.line() == "gain: dev score +0.0170 (0.8000 -> 0.8170)"


def test_a_tie_with_a_smaller_artifact_is_a_simplification_that_says_it_removed_text() -> None:
    result = classify(BASE, record(2), sizes=(812, 640, "bytes"))
    assert result.kind == "simplification" and result.adoptable
    assert result.line() == (
        "simplification at equal score: dev score +0.0000 (0.8000 -> 0.8000), artifact 812 -> 640 bytes (-21%):"
        " it removed text, read `assay diff best` before adopting"
    )


def test_a_tie_with_fewer_tokens_is_cheaper() -> None:
    result = classify(BASE, record(2), sizes=(800, 820, "bytes"), tokens_per_case=(420.0, 300.0))
    assert result.kind == "cheaper" and result.adoptable
    assert result.line().endswith("tokens per case 420 -> 300 (-29%)")


def test_no_gain_when_not_better_smaller_or_cheaper() -> None:
    same = classify(BASE, record(4), sizes=(800, 790, "bytes"), tokens_per_case=(100.0, 99.0))
    assert same.kind == "no gain" and not same.adoptable
    assert same.detail == (
        "cand-0004 scores as the baseline, dev score +0.0000 (0.8000 -> 0.8000), and is neither smaller nor cheaper"
    )
    assert classify(BASE, BASE).detail == "no candidate was kept; the best is the baseline"
    lower = classify(BASE, record(5, dev_score=0.79), sizes=(800, 400, "bytes"))
    assert lower.kind == "no gain" and "below the baseline" in lower.detail  # smaller, but worse


def test_a_rise_under_the_gates_min_delta_is_a_tie() -> None:
    small = record(2, dev_score=0.803)
    assert classify(BASE, small).kind == "gain"  # the ratchet keeps any rise
    tied = classify(BASE, small, min_gain=0.005, sizes=(1000, 900, "bytes"))
    assert tied.kind == "simplification"
    assert "(a rise under the gate's min_delta 0.005 is a tie)" in tied.detail
    assert classify(BASE, record(2, dev_score=0.805), min_gain=0.005).kind == "gain"  # exactly min_delta
    # The ratchet keeps a higher pass rate with any rise of the score: that is a gain at any min_gain.
    assert classify(BASE, record(2, dev_score=0.803, dev_pass_rate=0.6), min_gain=0.005).kind == "gain"


def test_the_caveat_names_overfitting_and_a_holdout_below_the_baseline() -> None:
    base = record(0, holdout_score=0.9677)
    both = record(7, holdout_score=0.9652, flags=[Flag.OVERFITTING])
    assert caveat(base, both) == (
        "cand-0007 was flagged overfitting (its holdout pass rate was more than 0.15 below its dev pass rate)"
        " and has a holdout score 0.9652 below the baseline's 0.9677"
    )
    assert caveat(base, record(7, holdout_score=0.97)) == ""
    assert caveat(base, record(7)) == ""  # holdout not measured: nothing known against it
    assert caveat(record(0), record(7, flags=[Flag.OVERFITTING])).endswith("below its dev pass rate)")
    assert caveat(base, base) == ""


def test_status_labels_each_figure_of_the_best_and_a_higher_holdout_elsewhere() -> None:
    records = [
        record(0, holdout_score=0.9600),
        record(4, holdout_score=0.9677),
        record(5, decision="discard"),
        record(7, dev_score=0.974, dev_pass_rate=0.7143, holdout_score=0.9652, flags=[Flag.OVERFITTING]),
    ]
    lines = best_lines(records, records[-1])
    assert lines[0] == (
        "best (chosen by the gate on dev cases): gen 7 cand-0007, dev score 0.9740, dev pass rate 0.7143,"
        " holdout score 0.9652 (of this candidate)"
    )
    assert lines[1] == "highest holdout measured: 0.9677 (gen 4 cand-0004)"
    assert lines[2].startswith("caveat: cand-0007 was flagged overfitting") and lines[2].endswith(
        "; `assay adopt` asks for --force"
    )
    assert len(lines) == 3


def test_status_of_a_run_whose_best_is_the_baseline_or_the_top_holdout() -> None:
    (only,) = best_lines([record(0)], record(0))
    assert only == (
        "best (chosen by the gate on dev cases): gen 0 cand-0000 (the baseline: no candidate was kept),"
        " dev score 0.8000, dev pass rate 0.5000, holdout score - (not measured) (of this candidate)"
    )
    top = [record(0, holdout_score=0.9), record(3, holdout_score=0.95)]
    assert len(best_lines(top, top[-1])) == 1  # its own holdout is the highest: nothing more to say
