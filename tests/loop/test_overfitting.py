"""The overfitting rule on measured cases: paired by case against the baseline, gains not levels, the seed's gap
as a setting, and verdicts that the record, a later verification, the caveat and an older run's flag agree on."""

from __future__ import annotations

import numpy as np
import pytest

from assay.config import OverfittingConfig
from assay.evaluation.evaluator import EvalResult
from assay.history.records import CandidateRecord
from assay.loop.events import Verified
from assay.loop.flags import Flag
from assay.loop.measure import Measurement
from assay.loop.overfitting import (
    LEGACY_REASON,
    gains,
    judge_overfitting,
    later_verdict,
    overfitting_reason,
)
from assay.loop.summary import caveat
from assay.model import CaseResult, Output, OverfitVerdict, Split

PAIRED, GAP = OverfittingConfig(), OverfittingConfig(rule="gap")
PASS_MARK = 1 / 1.03  # examples/binpack/score.py: at most 3% more bins than the lower bound

# The README's main job as it ran (examples/binpack, seed 0): the baseline and its best, cand-0003, on the same
# 14 dev and 4 holdout cases (graded scores, rounded to 4 digits as the summary shows them).
MAIN_JOB = {
    "dev": {
        "weibull-01": (0.9570, 0.9674),
        "weibull-02": (0.9574, 0.9783),
        "weibull-03": (0.9570, 0.9674),
        "weibull-04": (0.9485, 0.9684),
        "weibull-05": (0.9583, 0.9892),
        "weibull-06": (0.9479, 0.9681),
        "weibull-07": (0.9560, 0.9667),
        "weibull-09": (0.9670, 0.9778),
        "weibull-11": (0.9560, 0.9775),
        "weibull-12": (0.9574, 0.9677),
        "weibull-14": (0.9674, 0.9780),
        "weibull-16": (0.9462, 0.9670),
        "weibull-17": (0.9691, 0.9792),
        "weibull-18": (0.9570, 0.9674),
    },
    "holdout": {
        "weibull-00": (0.9485, 0.9684),
        "weibull-08": (0.9565, 0.9778),
        "weibull-13": (0.9574, 0.9677),
        "weibull-15": (0.9574, 0.9677),
    },
}


def result(split: Split, scores: dict[str, float], *, unjudged: tuple[str, ...] = ()) -> EvalResult:
    return EvalResult(
        cases=[
            CaseResult(
                id=cid,
                split=split,
                passed=score >= PASS_MARK and cid not in unjudged,
                score=0.0 if cid in unjudged else score,
                unjudged=cid in unjudged,
                output=Output(),
            )
            for cid, score in scores.items()
        ]
    )


def measured(dev: dict[str, float], holdout: dict[str, float] | None) -> Measurement:
    return Measurement(
        dev=result(Split.DEV, dev), holdout=None if holdout is None else result(Split.HOLDOUT, holdout)
    )


def side(table: dict[str, dict[str, tuple[float, float]]], which: int) -> Measurement:
    return measured(
        {cid: pair[which] for cid, pair in table["dev"].items()},
        {cid: pair[which] for cid, pair in table["holdout"].items()},
    )


def task(
    dev_cases: int,
    holdout_cases: int,
    *,
    dev_gain: float,
    holdout_gain: float,
    level: float = 0.90,
    holdout_offset: float = 0.0,
) -> tuple[Measurement, Measurement]:
    """A baseline and a candidate on graded cases (spread 0.01 around ``level``, the holdout's shifted by
    ``holdout_offset``), the candidate gaining ``dev_gain`` and ``holdout_gain`` on average (spread 0.003)."""
    rng = np.random.default_rng(11)
    before = {"dev": level + 0.01 * rng.standard_normal(dev_cases)}
    before["holdout"] = level + holdout_offset + 0.01 * rng.standard_normal(holdout_cases)
    after = {
        "dev": before["dev"] + dev_gain + 0.003 * rng.standard_normal(dev_cases),
        "holdout": before["holdout"] + holdout_gain + 0.003 * rng.standard_normal(holdout_cases),
    }

    def measurement(scores: dict[str, np.ndarray]) -> Measurement:
        return measured(
            {f"d{i:03d}": float(s) for i, s in enumerate(scores["dev"])},
            {f"h{i:03d}": float(s) for i, s in enumerate(scores["holdout"])},
        )

    return measurement(before), measurement(after)


def test_the_main_jobs_best_gained_on_holdout_as_on_dev_and_is_not_flagged() -> None:
    baseline, best = side(MAIN_JOB, 0), side(MAIN_JOB, 1)
    assert (best.dev.pass_rate, best.holdout.pass_rate) == (6 / 14, 1 / 4)  # type: ignore[union-attr]
    verdict = judge_overfitting(baseline, best, PAIRED)
    assert verdict is not None and verdict.rule == "paired" and not verdict.flagged
    assert verdict.reason == (
        "its gain over the baseline on 4 holdout cases is within noise of its gain on 14 dev cases:"
        " pass rate +0.250 against +0.429 (p=0.485); score +0.0154 against +0.0156 (p=0.461)"
    )
    numbers = verdict.numbers
    assert (numbers["dev_cases"], numbers["holdout_cases"], numbers["level"]) == (14, 4, 0.025)
    # 7 of the 18 cases gained a pass; 3 or 4 of them out of the holdout's 4 places is as likely as not.
    assert numbers["pass_rate"]["p"] == pytest.approx(1485 / 3060)
    # The seed's fixed gap flags it: 0.25 is more than 0.15 below 0.43 (the caveat the issue reports).
    gap = judge_overfitting(baseline, best, GAP)
    assert (
        gap is not None
        and gap.flagged
        and gap.reason == ("its holdout pass rate 0.250 was more than 0.15 below its dev pass rate 0.429")
    )


def test_a_holdout_that_fell_while_dev_rose_is_flagged() -> None:
    baseline, candidate = task(35, 10, dev_gain=0.02, holdout_gain=-0.01)
    verdict = judge_overfitting(baseline, candidate, PAIRED)
    assert verdict is not None and verdict.flagged
    assert verdict.reason.startswith(
        "its gain over the baseline on 10 holdout cases fell short of its gain on 35 dev cases by more than"
        " noise allows: score -0.01"
    )
    assert verdict.numbers["score"]["p"] <= 0.025 < verdict.numbers["pass_rate"]["p"]  # no case crosses 0.97
    assert "pass rate" not in verdict.reason  # only what fell short is named


def test_a_holdout_that_gained_as_much_is_not_flagged_however_few_its_cases() -> None:
    for holdout_cases in (1, 2, 4, 10):
        baseline, candidate = task(35, holdout_cases, dev_gain=0.02, holdout_gain=0.02)
        verdict = judge_overfitting(baseline, candidate, PAIRED)
        assert verdict is not None and not verdict.flagged, verdict


def test_a_harder_holdout_split_is_not_overfitting_before_any_change() -> None:
    """The gap rule compares levels: when the split put harder cases in the holdout, it flags a change that
    alters nothing. The paired rule compares each split's gains over the baseline on the same cases."""
    baseline, _ = task(35, 10, dev_gain=0.0, holdout_gain=0.0, level=0.975, holdout_offset=-0.05)
    assert baseline.dev.pass_rate > 0.4 and baseline.holdout.pass_rate == 0.0  # type: ignore[union-attr]
    unchanged = judge_overfitting(baseline, baseline, PAIRED)
    assert unchanged is not None and not unchanged.flagged
    assert unchanged.numbers["score"]["p"] == unchanged.numbers["pass_rate"]["p"] == 1.0
    gap = judge_overfitting(baseline, baseline, GAP)
    assert gap is not None and gap.flagged


def test_cases_are_paired_by_id_and_unjudged_or_unmatched_ones_left_out() -> None:
    before = result(Split.DEV, {"a": 0.9, "b": 0.95, "c": 0.5, "gone": 0.9})
    after = result(Split.DEV, {"c": 0.99, "b": 0.90, "a": 0.99, "new": 1.0}, unjudged=("b",))
    assert gains(before, after).ravel().tolist() == pytest.approx([1.0, 0.09, 1.0, 0.49])  # a, c in id order
    assert gains(None, after).shape == (0, 2)


def test_nothing_is_judged_without_both_splits_measured_on_both_sides() -> None:
    baseline, candidate = side(MAIN_JOB, 0), side(MAIN_JOB, 1)
    no_holdout = Measurement(dev=candidate.dev)
    assert judge_overfitting(baseline, no_holdout, PAIRED) is None
    assert judge_overfitting(baseline, no_holdout, GAP) is None
    baseline_without_holdout = Measurement(dev=baseline.dev)  # the paired rule needs the baseline's too
    unpaired = judge_overfitting(baseline_without_holdout, candidate, PAIRED)
    assert unpaired is not None and not unpaired.flagged and unpaired.reason.startswith("not judged: ")
    assert unpaired.numbers == {"dev_cases": 14, "holdout_cases": 0}
    # Recorded on a verification, it is this assay's verdict, not an older assay's missing one (the 0.15 gap
    # would flag 1 of 4 holdout cases against 6 of 14 dev cases).
    verified = Verified(candidate_id="c", commit="c", holdout=candidate.holdout, overfitting=unpaired)
    assert verified.verdict(6 / 14) == unpaired
    gap = judge_overfitting(baseline_without_holdout, candidate, GAP)  # the gap rule does not
    assert gap is not None and gap.flagged
    empty = Measurement(dev=candidate.dev, holdout=EvalResult())
    assert judge_overfitting(baseline, empty, PAIRED) is None


def test_the_alpha_setting_moves_the_level() -> None:
    baseline, candidate = task(35, 10, dev_gain=0.02, holdout_gain=0.017)
    strict, loose = OverfittingConfig(alpha=0.01), OverfittingConfig(alpha=0.4)
    verdicts = [judge_overfitting(baseline, candidate, s) for s in (strict, loose)]
    assert [v.numbers["level"] for v in verdicts if v] == [0.005, 0.2]
    p = verdicts[0].numbers["score"]["p"]  # type: ignore[union-attr]
    assert [v.flagged for v in verdicts if v] == [p <= 0.005, p <= 0.2]


def verdict(flagged: bool, reason: str = "") -> OverfitVerdict:
    return OverfitVerdict(rule="paired", flagged=flagged, reason=reason or f"flagged {flagged}")


def test_a_flagging_verdict_stays_when_the_candidate_is_judged_again() -> None:
    up, down = verdict(True), verdict(False)
    assert later_verdict(None, down) == down and later_verdict(down, up) == up
    assert later_verdict(up, down) == up and later_verdict(down, None) == down


def record(**fields: object) -> CandidateRecord:
    return CandidateRecord(
        run_id="r",
        generation=3,
        candidate_id="cand-0003",
        layer=1,
        proposer="test",
        description="x",
        decision="keep",
        dev_pass_rate=0.4286,
        **fields,  # type: ignore[arg-type]
    )


def test_the_caveat_gives_the_verdicts_reason_or_the_older_runs_gap() -> None:
    said = "its gain over the baseline on 10 holdout cases fell short of its gain on 35 dev cases (...)"
    flagged = record(flags=[Flag.OVERFITTING], overfitting=verdict(True, said))
    assert overfitting_reason(flagged) == said
    assert caveat(record(), flagged) == f"cand-0003 was flagged overfitting ({said})"
    older = record(flags=[Flag.OVERFITTING])  # a run recorded before verdicts were kept
    assert (
        overfitting_reason(older)
        == LEGACY_REASON
        == ("its holdout pass rate was more than 0.15 below its dev pass rate")
    )
    assert overfitting_reason(record(overfitting=verdict(False))) == ""
    assert caveat(record(), record(overfitting=verdict(False))) == ""


def test_a_verification_applies_its_verdict_and_an_older_one_the_gap() -> None:
    holdout = result(Split.HOLDOUT, {"h1": 1.0, "h2": 0.5, "h3": 0.5, "h4": 0.5})  # pass rate 0.25
    clear = Verified(candidate_id="cand-0003", commit="c3", holdout=holdout, overfitting=verdict(False))
    updated = clear.update(record())
    assert updated.flags == [] and updated.overfitting == verdict(False)
    assert updated.holdout_score == pytest.approx(0.625)
    short = Verified(candidate_id="cand-0003", commit="c3", holdout=holdout, overfitting=verdict(True))
    flagged = short.update(updated)
    assert flagged.flags == [Flag.OVERFITTING] and flagged.overfitting == verdict(True)
    assert clear.update(flagged).flags == [Flag.OVERFITTING]  # a flag is not taken back
    assert clear.update(flagged).overfitting == verdict(True)
    # An event an older assay wrote carries no verdict: its rule was the 0.15 gap, 0.25 against 0.4286.
    older = Verified(candidate_id="cand-0003", commit="c3", holdout=holdout)
    assert older.verdict(0.4286) is not None and older.verdict(None) is None
    again = older.update(record())
    assert again.flags == [Flag.OVERFITTING] and again.overfitting is None
    assert caveat(record(), again).endswith(f"({LEGACY_REASON})")
