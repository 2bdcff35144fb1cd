"""One short reason per decision: the outcome, the gate dimension that decided it and its numbers.

``keep: dev score +0.016 (0.957 → 0.973)``, ``keep: tie on dev, artifact 12% smaller``, ``discard: regression,
weibull-06 PASS→FAIL``, ``discard: cost, 2.3x the baseline's tokens per case``, ``discard: L1 static, 2 critical
findings``, ``retry: dev score +0.0020 (< 0.0050), retry 1/2``, ``not evaluated: proposal failed: ...``.

The reason is derived from what a candidate's record holds (decision, gate dimensions with their numbers,
flags, description), so a run recorded before records kept a reason reads the same reason as a new run
(:func:`reason_of`). When several dimensions failed, the first in :data:`ORDER` decides and what the others
found follows as a plain fact (``although the mean score rose (0.957 → 0.962)``, ``and cost, 2.3x ...``).
Figures on a subset of the dev cases (the gate left out the cases marked unfixable) name it and its size
(``on the 7 dev cases not yet marked unfixable``). Regression-split cases are counted, never named (they are
hidden cases).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from math import isclose
from typing import Any

from assay.history.records import CandidateRecord
from assay.model import Dimension
from assay.words import cut_at_word, plural

MAX_CHARS = 200  # a deciding dimension, what else failed and the subset its figures are on
# What decides a discard when several dimensions failed: what blocked the candidate outright, then a case that
# broke, then the score, then the cost, then L3 and the blind comparison; any other dimension after these.
ORDER = ("screen", "structure", "safety", "regression", "progress", "cost", "l3_regression", "l3_compare")
ACTIONS = {"gate-retry": "retry", "gate-rollback": "rollback"}
SHOWN_CASES = 3


def reason_of(record: CandidateRecord) -> str:
    """The record's reason as it was recorded, or derived from its gate (a run recorded without reasons)."""
    return record.reason or decision_reason(
        record.decision,
        record.gate,
        flags=record.flags,
        description=record.description,
        dev_score=record.dev_score,
        dev_pass_rate=record.dev_pass_rate,
    )


def evaluated(record: CandidateRecord) -> bool:
    """Whether the record's dev figures were measured: a proposal that failed, or a candidate whose first dev
    cases all crashed (screened out), has none to show beside its "not evaluated" reason."""
    return record.decision != "invalid" and "screened-out" not in record.flags


def decision_reason(
    decision: str,
    gate: Mapping[str, Dimension],
    *,
    flags: Collection[str] = (),
    description: str = "",
    dev_score: float | None = None,
    dev_pass_rate: float | None = None,
) -> str:
    """The reason for ``decision`` (baseline, keep, discard or invalid) from the gate's ``dimensions``; ``flags``
    name a gate's retry or rollback, ``description`` is what an invalid proposal said went wrong."""
    if decision == "baseline":
        return _cut(f"baseline: dev score {_num(dev_score)}, pass rate {_num(dev_pass_rate)}")
    if decision == "invalid":
        return _cut(f"not evaluated: {description}")
    structure = gate.get("structure")
    if structure is not None and "probe" in structure.numbers:
        crashed = len(structure.numbers["probe"])
        first = "dev case" if crashed == 1 else f"{crashed} dev cases"
        return f"not evaluated: the first {first} crashed, timed out or printed nothing"
    seen = _Seen(gate, "keep" if decision == "keep" else _action(flags), dev_score, dev_pass_rate)
    failed = [name for name in _ordered(gate) if not gate[name].passed]
    if decision == "keep" or not failed:
        progress = gate.get("progress")
        said = _progress(progress, seen) if progress is not None else "the gate passed it"
        return _cut(f"{seen.action}: {said}")
    first, others = failed[0], failed[1:]
    asides = [aside for name in others if (aside := _aside(name, gate[name], first, seen))]
    besides = "".join(f"{'' if aside.startswith('although') else ';'} {aside}" for aside in asides)
    return _cut(f"{seen.action}: {_explain(first, gate[first], seen)}{besides}")


@dataclass(frozen=True)
class _Scope:
    """Which dev cases a dimension's figures are on: ``label`` before a figure ("dev " or ""), ``where`` after
    "tie on" ("dev", "the 7 dev cases not yet marked unfixable") and ``on`` after the figures ("" or " on the
    7 dev cases not yet marked unfixable")."""

    label: str
    where: str
    on: str


WHOLE = _Scope("dev ", "dev", "")


@dataclass(frozen=True)
class _Seen:
    """What a reason is told besides the deciding dimension: the whole gate, the action, the record's dev
    figures (the gate's differ when it left the unfixable cases out of progress)."""

    gate: Mapping[str, Dimension]
    action: str
    dev_score: float | None
    dev_pass_rate: float | None

    def scope(self, numbers: Mapping[str, Any], score: float, pass_rate: float | None = None) -> _Scope:
        """The whole dev split, or the subset the gate judged on when it left the unfixable cases out: named
        with its size from the dimension's numbers (``cases``, ``left_out``), or, for a run recorded before
        they were, told apart by figures that are not the whole split's."""
        if numbers.get("left_out"):
            cases = int(numbers.get("cases", 0))
            subset = f"the {plural(cases, 'dev case')} not yet marked unfixable"
            return _Scope("", subset, f" on {subset}")
        whole = [(score, self.dev_score), (pass_rate, self.dev_pass_rate)]
        if any(
            ours is not None and theirs is not None and not isclose(ours, theirs) for ours, theirs in whole
        ):
            subset = "the dev cases not yet marked unfixable"
            return _Scope("", subset, f" on {subset}")
        return WHOLE


def _action(flags: Collection[str]) -> str:
    for flag in flags:
        if flag in ACTIONS:
            return ACTIONS[flag]
        if flag.startswith("gate-"):  # a gate of one's own answered with an action of its own
            return flag.removeprefix("gate-")
    return "discard"


def _ordered(gate: Mapping[str, Dimension]) -> list[str]:
    return [n for n in ORDER if n in gate] + [n for n in gate if n not in ORDER]


def _explain(name: str, dim: Dimension, seen: _Seen) -> str:
    numbers = dim.numbers
    if name == "structure":
        critical = numbers.get("critical")
        return (
            f"L1 static, {_count(critical, 'critical finding')}"
            if critical
            else "L1 static, critical findings"
        )
    if name == "safety":
        if numbers.get("critical"):
            return f"safety, {_count(numbers['critical'], 'critical finding')}"
        if "warnings" in numbers:
            return f"safety, warnings {numbers.get('parent_warnings', 0)} → {numbers['warnings']}"
    if name == "regression" and numbers.get("regressed"):
        return _regression(numbers, paired="p_better" in _numbers(seen.gate, "progress"))
    if name == "progress":
        return _progress(dim, seen)
    if name == "cost" and "tokens_per_case" in numbers:
        return _cost(numbers, dim.detail)
    if name == "l3_regression" and "lost" in numbers:
        return f"L3 regression split lost {_count(len(numbers['lost']), 'case')}"
    if name == "l3_compare":
        return "L3 blind comparison preferred the current best"
    if name == "screen":
        return "screening, the pairwise judge preferred its parent"
    return f"{name}, {dim.detail}"


def _regression(numbers: Mapping[str, Any], *, paired: bool) -> str:
    regressed = list(numbers["regressed"])
    how = "significantly worse" if paired else "PASS→FAIL"
    if len(regressed) == 1:
        text = f"regression, {regressed[0]} {how}"
    else:
        shown = ", ".join(regressed[:SHOWN_CASES]) + (", …" if len(regressed) > SHOWN_CASES else "")
        text = f"regression, {len(regressed)} cases {how}: {shown}"
    if "rerun_passes" in numbers:
        reruns = numbers.get("reruns")
        text += f" (passed {numbers['rerun_passes']}{f'/{reruns}' if reruns else ''} reruns)"
    return text


def _progress(dim: Dimension, seen: _Seen) -> str:
    numbers = dim.numbers
    if "p_better" in numbers:
        return _paired(numbers)
    if "min_delta" in numbers:
        return _backpressure(numbers, seen)
    if {"parent_score", "score", "parent_pass_rate", "pass_rate"} <= numbers.keys():
        scope = seen.scope(numbers, numbers["score"], numbers["pass_rate"])
        return _ratchet(numbers, dim.passed, scope, _relaxed(seen))
    return f"progress, {dim.detail}" if dim.detail else "progress"


def _ratchet(numbers: Mapping[str, Any], passed: bool, scope: _Scope, relaxed: str) -> str:
    rate0, rate1 = numbers["parent_pass_rate"], numbers["pass_rate"]
    score0, score1 = numbers["parent_score"], numbers["score"]
    dev, on = scope.label, scope.on
    if rate1 == rate0 and score1 > score0 and "benefit" in numbers:  # a rise under the threshold: a tie
        under = f"{dev}score {score1 - score0:+.4f} (< {numbers.get('threshold', 0.0):.4f}{relaxed}){on}"
        if passed:
            return f"tie, {under}, {_benefit(numbers)}"
        return f"no gain, {under}, nothing smaller or cheaper"
    if (rate1, score1) == (rate0, score0):
        if passed:
            return f"tie on {scope.where}, {_benefit(numbers)}"
        return (
            f"no gain, tie on {scope.where} (score {score1:.3f}, pass rate {rate1:.3f}),"
            " nothing smaller or cheaper"
        )
    if rate1 != rate0:
        change = f"{dev}pass rate {rate0:.3f} → {rate1:.3f}, score {score1 - score0:+.3f}{on}"
    else:
        change = f"{dev}score {score1 - score0:+.3f} ({score0:.3f} → {score1:.3f}){on}"
    if passed:
        return change
    if rate1 > rate0:
        return (
            f"trade-off, {dev}pass rate {rate0:.3f} → {rate1:.3f} but score {score0:.3f} → {score1:.3f}{on}"
        )
    if rate1 < rate0 and score1 > score0:
        return (
            f"no gain, {dev}pass rate {rate0:.3f} → {rate1:.3f}{on}"
            f" although the mean score rose ({score0:.3f} → {score1:.3f})"
        )
    return f"no gain, {change}"


def _aside(name: str, dim: Dimension, first: str, seen: _Seen) -> str:
    """What a failed dimension that did not decide found, as a plain fact after the deciding one: the mean
    score beside a regression (``although the mean score rose (0.957 → 0.962)``), or the dimension's own
    reason (``and cost, 2.3x the baseline's tokens per case``). "" when it repeats the deciding one (the
    critical findings that fail both structure and safety)."""
    numbers = dim.numbers
    if name == "progress" and {"parent_score", "score"} <= numbers.keys():
        before, after = numbers["parent_score"], numbers["score"]
        on = seen.scope(numbers, after, numbers.get("pass_rate")).on
        if after > before:
            return f"although the mean score rose ({before:.3f} → {after:.3f}){on}"
        if after < before:
            return f"and the mean score fell too ({before:.3f} → {after:.3f}){on}"
        return f"and the mean score did not rise ({after:.3f}){on}"
    if (
        name == "safety"
        and first == "structure"
        and not numbers.get("warnings", 0) > numbers.get("parent_warnings", 0)
    ):
        return ""
    return f"and {_explain(name, dim, seen)}"


def _benefit(numbers: Mapping[str, Any]) -> str:
    before, after = numbers.get("benefit_before"), numbers.get("benefit_after")
    if not before or after is None:
        return str(numbers.get("benefit") or "a benefit")
    saved = round(100 * (1 - after / before))
    if numbers.get("benefit_of") == "tokens":
        return f"{saved}% fewer tokens per case ({before:.0f} → {after:.0f})"
    if numbers.get("benefit_of") == "content":
        return f"artifact {saved}% smaller in content ({before} → {after} characters, comments aside)"
    return f"artifact {saved}% smaller ({before} → {after} bytes)"


def _backpressure(numbers: Mapping[str, Any], seen: _Seen) -> str:
    delta, threshold = numbers["delta"], numbers["min_delta"]
    best, score = numbers.get("best_score"), numbers.get("score")
    measure, on = numbers.get("measure", "dev score"), ""
    if measure == "dev score" and score is not None:
        scope = seen.scope(numbers, score)
        measure, on = f"{scope.label}score", scope.on
    needed = f"{threshold:.4f}{_relaxed(seen)}"
    if delta < 0:
        return f"{measure} {delta:+.4f} ({_num(best, 4)} → {_num(score, 4)}){on}"
    if delta >= threshold - 1e-9:
        return f"{measure} {delta:+.4f} (≥ {needed}){on}"
    text = f"{measure} {delta:+.4f} (< {needed}){on}"
    retries, most = numbers.get("retries", 0), numbers.get("max_retries", 0)
    if seen.action == "retry":
        return f"{text}, retry {retries}/{most}"
    return f"{text} after {plural(retries, 'retry', 'retries')}" if retries else text


def _relaxed(seen: _Seen) -> str:
    """``", relaxed"`` when the trend-aware relaxation lowered the gate's threshold, else ""."""
    trend = _numbers(seen.gate, "trend")
    relaxed = trend.get("effective_min_delta", 0.0) < trend.get("min_delta", 0.0)
    return ", relaxed" if relaxed else ""


def _paired(numbers: Mapping[str, Any]) -> str:
    low, high = numbers.get("ci", [0.0, 0.0])
    cases = int(numbers.get("cases", 0))
    on = f" on the {plural(cases, 'dev case')} not yet marked unfixable" if numbers.get("left_out") else ""
    effect = f"effect {numbers.get('effect', 0.0):+.3f} [{low:+.3f}, {high:+.3f}]{on}"
    decision = numbers.get("decision")
    if decision == "better":
        return f"significantly better, {effect}, p={numbers['p_better']:.3g}"
    if decision == "worse":
        return f"significantly worse, {effect}, p={numbers.get('p_worse', 0.0):.3g}"
    return f"no significant gain, {effect}, p={numbers['p_better']:.3g}"


def _cost(numbers: Mapping[str, Any], detail: str) -> str:
    over = numbers.get("over") or ("time" if detail.startswith(("time", "CPU time")) else "tokens")
    if over == "time":
        now, base = numbers.get("seconds_per_case"), numbers.get("baseline_seconds_per_case")
        if not base or now is None:
            return f"cost, {detail}"
        measure = "CPU time" if numbers.get("clock") == "cpu" else "time"
        return f"cost, {now / base:.1f}x the baseline's {measure} per case ({now:.2f}s vs {base:.2f}s)"
    now, base = numbers["tokens_per_case"], numbers.get("baseline_tokens_per_case")
    if not base:
        return f"cost, {detail}"
    return f"cost, {now / base:.1f}x the baseline's tokens per case ({now:.0f} vs {base:.0f})"


def _numbers(gate: Mapping[str, Dimension], name: str) -> Mapping[str, Any]:
    dim = gate.get(name)
    return dim.numbers if dim is not None else {}


def _count(n: int, thing: str) -> str:
    return plural(n, thing)


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _cut(text: str) -> str:
    return cut_at_word(text, MAX_CHARS)
