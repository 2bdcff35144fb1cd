"""What a run found, said so it cannot oversell: the kind of result and the caveats on a candidate.

- :func:`classify` names the kind of result of the best against the baseline: a **gain** (dev score up by more
  than a tie), a **simplification** (equal dev score, smaller artifact: it removed text), **cheaper** (equal dev
  score, fewer tokens per case) or **no gain** (nothing worth adopting).
- :func:`caveat` says why a candidate should not be adopted without a look: flagged overfitting, or a holdout
  score below the baseline's.

The evolve summary, ``assay status`` and ``assay adopt`` all read them from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from assay.history.records import CandidateRecord
from assay.loop.overfitting import overfitting_reason

EPSILON = 1e-9  # float sums of case scores are not exact: a difference this small is none
SMALLER = 0.05  # an artifact or a token count at least this fraction lower counts (the ratchet's tie benefit)

ResultKind = Literal["gain", "simplification", "cheaper", "no gain"]


@dataclass(frozen=True)
class RunResult:
    """The kind of result of a run and the figures that make it so (``detail``)."""

    kind: ResultKind
    detail: str

    @property
    def adoptable(self) -> bool:
        """Whether there is anything to adopt: a gain, or an equal score with a smaller or cheaper artifact."""
        return self.kind != "no gain"

    def line(self) -> str:
        """``gain: dev score +0.0170 (0.9570 -> 0.9740)``."""
        label = {"simplification": "simplification at equal score", "cheaper": "cheaper at equal score"}
        return f"{label.get(self.kind, self.kind)}: {self.detail}"


def _percent(before: float, after: float) -> str:
    return f"{(after - before) / before:+.0%}"


def classify(
    baseline: CandidateRecord,
    best: CandidateRecord,
    *,
    sizes: tuple[int, int, str] = (0, 0, "bytes"),
    tokens_per_case: tuple[float, float] = (0.0, 0.0),
    min_gain: float = 0.0,
) -> RunResult:
    """The kind of result of ``best`` against ``baseline``. ``sizes`` are their artifact sizes and its unit
    (:func:`~assay.loop.state.lineage.compared`) and
    ``tokens_per_case`` their dev tokens per case (0: unknown); ``min_gain`` is the smallest rise of the dev score
    the gate keeps on its own (backpressure's ``min_delta``; 0 for gates that take any rise): a smaller rise is
    a tie, unless the dev pass rate rose too (the ratchet keeps that with any rise)."""
    if best.candidate_id == baseline.candidate_id:
        return RunResult("no gain", "no candidate was kept; the best is the baseline")
    if best.dev_score is None or baseline.dev_score is None:
        return RunResult("no gain", f"{best.candidate_id} has no dev score to compare")
    before, after = baseline.dev_score, best.dev_score
    delta = after - before
    scores = f"dev score {delta:+.4f} ({before:.4f} -> {after:.4f})"
    rate_rose = (best.dev_pass_rate or 0.0) > (baseline.dev_pass_rate or 0.0)
    if delta > EPSILON and (delta >= min_gain - EPSILON or rate_rose):
        return RunResult("gain", scores)
    if delta < -EPSILON:
        return RunResult("no gain", f"{best.candidate_id} is below the baseline: {scores}")
    tie = "" if delta <= EPSILON else f" (a rise under the gate's min_delta {min_gain:g} is a tie)"
    old_size, new_size, unit = sizes
    if old_size and new_size <= old_size * (1 - SMALLER):
        return RunResult(
            "simplification",
            f"{scores}{tie}, artifact {old_size} -> {new_size} {unit} ({_percent(old_size, new_size)}): it removed"
            " text, read `assay diff best` before adopting",
        )
    old_tokens, new_tokens = tokens_per_case
    if old_tokens and new_tokens <= old_tokens * (1 - SMALLER):
        return RunResult(
            "cheaper",
            f"{scores}{tie}, tokens per case {old_tokens:.0f} -> {new_tokens:.0f}"
            f" ({_percent(old_tokens, new_tokens)})",
        )
    return RunResult(
        "no gain",
        f"{best.candidate_id} scores as the baseline, {scores}{tie}, and is neither smaller nor cheaper",
    )


def caveat(baseline: CandidateRecord, candidate: CandidateRecord) -> str:
    """Why ``candidate`` should not be adopted without a look ("" when nothing is known against it): it was
    flagged overfitting, or its holdout score is below the baseline's."""
    reasons = []
    overfitting = overfitting_reason(candidate)
    if overfitting:
        reasons.append(f"was flagged overfitting ({overfitting})")
    ours, theirs = candidate.holdout_score, baseline.holdout_score
    if ours is not None and theirs is not None and ours < theirs - EPSILON:
        reasons.append(f"has a holdout score {ours:.4f} below the baseline's {theirs:.4f}")
    return f"{candidate.candidate_id} {' and '.join(reasons)}" if reasons else ""


def _figure(value: float | None) -> str:
    return "- (not measured)" if value is None else f"{value:.4f}"


def best_lines(records: list[CandidateRecord], best: CandidateRecord) -> list[str]:
    """What ``assay status`` says of a run's best, each figure labelled: the best and its own scores, a higher
    holdout another candidate measured, and the caveat on the best."""
    baseline = " (the baseline: no candidate was kept)" if best.decision == "baseline" else ""
    lines = [
        f"best (chosen by the gate on dev cases): gen {best.generation} {best.candidate_id}{baseline},"
        f" dev score {_figure(best.dev_score)}, dev pass rate {_figure(best.dev_pass_rate)},"
        f" holdout score {_figure(best.holdout_score)} (of this candidate)"
    ]
    measured = [(r.holdout_score, r) for r in records if r.holdout_score is not None]
    top_score, top = max(measured, key=lambda pair: pair[0], default=(None, best))
    mine = best.holdout_score
    higher = top_score is not None and (mine is None or top_score > mine + EPSILON)
    if higher and top.candidate_id != best.candidate_id:
        lines.append(f"highest holdout measured: {top_score:.4f} (gen {top.generation} {top.candidate_id})")
    warning = caveat(records[0], best)
    if warning:
        lines.append(f"caveat: {warning}; `assay adopt` asks for --force")
    return lines
