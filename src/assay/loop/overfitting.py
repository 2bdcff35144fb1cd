"""The overfitting rule: whether a candidate's gain on the holdout cases falls short of its gain on the dev cases
by more than noise allows, given how many cases each split has.

:func:`judge_overfitting` is the one place it is decided: by L3 when a candidate is decided, and when the best
is verified later (:func:`assay.loop.generation.verify_best`). Its :class:`~assay.model.OverfitVerdict` is kept on
the candidate's record and on the ``verified`` event; the summary's caveat, ``assay status``, ``assay adopt``,
``assay log`` and the report read that verdict (:func:`overfitting_reason`), never a second copy of the rule.

The ``paired`` rule (``tiers.overfitting.rule``, the default) compares gains, not levels: each case's figure of
the candidate minus the baseline's on the same case, on the pass (0/1) and on the graded score. A holdout split
that is simply harder than dev gives no flag, and a holdout that gained about as much as dev is not
overfitting whatever its case count. The gains of the two splits are compared by a one-sided permutation test
(:func:`assay.stats.shortfall.shortfall_p_values`), each measure at ``alpha`` / 2 so that the pair flags a
candidate that truly generalizes at most ``alpha`` of the time. The ``gap`` rule is the seed's: a holdout pass
rate more than ``gap`` below the dev pass rate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from assay.loop.flags import Flag
from assay.model import OverfitVerdict
from assay.stats.shortfall import shortfall_p_values

if TYPE_CHECKING:  # the fold's events read verdicts; they need not load the evaluator behind a measurement
    from assay.config import OverfittingConfig
    from assay.evaluation.evaluator import EvalResult
    from assay.history.records import CandidateRecord
    from assay.loop.measure import Measurement

MEASURES = ("pass rate", "score")  # the columns of a case's gains
LEGACY_GAP = 0.15  # the rule of runs recorded before verdicts were: their flags were raised by this gap
LEGACY_REASON = f"its holdout pass rate was more than {LEGACY_GAP:g} below its dev pass rate"


def judge_overfitting(
    baseline: Measurement, candidate: Measurement, setting: OverfittingConfig
) -> OverfitVerdict | None:
    """The verdict on ``candidate``'s holdout under ``setting`` (None when its dev or holdout cases were not
    measured). Under the paired rule, a split with no case the baseline was measured on too is not judged: the
    verdict says so and does not flag."""
    dev, holdout = candidate.dev, candidate.holdout
    if dev is None or holdout is None or not dev.total or not holdout.total:
        return None
    if setting.rule == "gap":
        return gap_verdict(dev.pass_rate, holdout.pass_rate, setting.gap)
    dev_gains, holdout_gains = gains(baseline.dev, dev), gains(baseline.holdout, holdout)
    if not len(dev_gains) or not len(holdout_gains):
        return OverfitVerdict(
            rule="paired",
            flagged=False,
            reason="not judged: no dev or no holdout case was measured on both the baseline and the candidate",
            numbers={"dev_cases": len(dev_gains), "holdout_cases": len(holdout_gains)},
        )
    return paired_verdict(dev_gains, holdout_gains, setting.alpha)


def gains(before: EvalResult | None, after: EvalResult) -> NDArray[np.float64]:
    """One row per case judged on both sides, in case-id order: ``after``'s pass (0/1) and graded score minus
    ``before``'s (no rows when ``before`` was not measured)."""
    if before is None:
        return np.zeros((0, len(MEASURES)))
    base = {c.id: c for c in before.judged}
    rows = [
        (float(c.passed) - float(base[c.id].passed), c.score - base[c.id].score)
        for c in sorted(after.judged, key=lambda c: c.id)
        if c.id in base
    ]
    return np.array(rows, dtype=np.float64).reshape(-1, len(MEASURES))


def paired_verdict(
    dev_gains: NDArray[np.float64], holdout_gains: NDArray[np.float64], alpha: float
) -> OverfitVerdict:
    """The paired rule on per-case gains (rows: cases; columns: :data:`MEASURES`): flagged when either measure's
    holdout gain falls short of its dev gain at level ``alpha`` / 2."""
    p_values = shortfall_p_values(dev_gains, holdout_gains)
    level = alpha / len(MEASURES)
    dev_mean, holdout_mean = dev_gains.mean(axis=0), holdout_gains.mean(axis=0)
    figures = {
        name: {"dev_gain": float(d), "holdout_gain": float(h), "p": float(p)}
        for name, d, h, p in zip(MEASURES, dev_mean, holdout_mean, p_values, strict=True)
    }
    short = [name for name in MEASURES if figures[name]["p"] <= level]
    counts = f"on {len(holdout_gains)} holdout cases", f"on {len(dev_gains)} dev cases"
    if short:
        said = f"its gain over the baseline {counts[0]} fell short of its gain {counts[1]} by more than noise allows"
    else:
        said = f"its gain over the baseline {counts[0]} is within noise of its gain {counts[1]}"
    shown = "; ".join(_figure(name, figures[name]) for name in (short or MEASURES))
    return OverfitVerdict(
        rule="paired",
        flagged=bool(short),
        reason=f"{said}: {shown}",
        numbers={
            "dev_cases": len(dev_gains),
            "holdout_cases": len(holdout_gains),
            "level": level,
            **{name.replace(" ", "_"): numbers for name, numbers in figures.items()},
        },
    )


def _figure(name: str, numbers: dict[str, float]) -> str:
    digits = 3 if name == "pass rate" else 4
    return (
        f"{name} {numbers['holdout_gain']:+.{digits}f} against {numbers['dev_gain']:+.{digits}f}"
        f" (p={numbers['p']:.3f})"
    )


def gap_verdict(dev_pass_rate: float, holdout_pass_rate: float, gap: float) -> OverfitVerdict:
    """The seed's rule: flagged when the holdout pass rate is more than ``gap`` below the dev pass rate."""
    flagged = holdout_pass_rate < dev_pass_rate - gap
    relation = f"more than {gap:g} below" if flagged else f"not more than {gap:g} below"
    return OverfitVerdict(
        rule="gap",
        flagged=flagged,
        reason=f"its holdout pass rate {holdout_pass_rate:.3f} was {relation} its dev pass rate {dev_pass_rate:.3f}",
        numbers={"dev_pass_rate": dev_pass_rate, "holdout_pass_rate": holdout_pass_rate, "gap": gap},
    )


def legacy_verdict(dev_pass_rate: float | None, holdout: EvalResult | None) -> OverfitVerdict | None:
    """The verdict a verification recorded before verdicts were kept stands for: the gap rule at
    :data:`LEGACY_GAP`, the only rule the assay that wrote it had (None when a pass rate is not known)."""
    if dev_pass_rate is None or holdout is None or not holdout.total:
        return None
    return gap_verdict(dev_pass_rate, holdout.pass_rate, LEGACY_GAP)


def later_verdict(known: OverfitVerdict | None, new: OverfitVerdict | None) -> OverfitVerdict | None:
    """The verdict a candidate keeps when it is judged again: a flagging verdict stays (a flag, once raised,
    is not taken back), else the newer one."""
    return known if known is not None and (known.flagged or new is None) else new


def overfitting_reason(record: CandidateRecord) -> str:
    """Why ``record`` was flagged ``overfitting``, in the words of the verdict that flagged it ("" when it was
    not flagged); a record of a run from before verdicts were kept was flagged by :data:`LEGACY_GAP`."""
    if Flag.OVERFITTING not in record.flags:
        return ""
    verdict = record.overfitting
    return verdict.reason if verdict is not None and verdict.flagged else LEGACY_REASON
