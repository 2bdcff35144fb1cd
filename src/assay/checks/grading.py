"""What a user's evaluator returns, read as a verdict: ``python`` and ``javascript`` checks share the rules.

assay's rule (the default): a bool; a score in [0, 1] (passes at 0.5); a dict with ``pass`` (or ``pass_``,
``passed``), ``score`` and ``reason``, any of which may be missing as long as ``pass`` or ``score`` is
there. Scores outside [0, 1] fail.

promptfoo's rule (option ``pass_rule: promptfoo``, set for checks loaded from promptfoo): a bool; the
string ``"true"``/``"false"`` or a JSON object in a string (Python); a number passes when it is above 0,
or at least the option ``threshold`` when one is set; a dict must hold ``pass`` (``pass_`` from Python),
``score`` and ``reason`` (promptfoo's GradingResult), and for Python a ``score`` under ``threshold`` fails.
Scores are kept for the verdict and clipped to [0, 1] for the case score.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from assay.checks.base import CheckSpecError
from assay.checks.text import clip
from assay.model import CheckSpec

PASS_RULES = ("assay", "promptfoo")


@dataclass(frozen=True)
class Verdict:
    passed: bool
    score: float
    evidence: str


@dataclass(frozen=True)
class PassRule:
    """How to read a returned value; from a spec's options ``pass_rule`` and ``threshold``."""

    promptfoo: bool = False
    threshold: float | None = None
    threshold_on_dict: bool = True  # promptfoo applies it to Python's dicts, not to JavaScript's

    @classmethod
    def of(cls, spec: CheckSpec, *, threshold_on_dict: bool = True) -> PassRule:
        rule = spec.options.get("pass_rule", "assay")
        if rule not in PASS_RULES:
            raise CheckSpecError(f"{spec.type}: option pass_rule must be one of {', '.join(PASS_RULES)}")
        threshold = spec.options.get("threshold")
        if threshold is not None and (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not math.isfinite(threshold)
        ):
            raise CheckSpecError(f"{spec.type}: option threshold must be a number")
        return cls(rule == "promptfoo", None if threshold is None else float(threshold), threshold_on_dict)


def _unit(score: float) -> float:
    return max(0.0, min(1.0, score))


def _promptfoo(value: Any, rule: PassRule, who: str) -> Verdict:
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "false"):
            value = lowered == "true"
        elif value.strip().startswith("{"):
            try:
                value = json.loads(value)
            except ValueError as exc:
                return Verdict(False, 0.0, clip(f"{who} returned invalid JSON: {exc}"))
    if isinstance(value, bool):
        return Verdict(value, 1.0 if value else 0.0, f"{who} returned {str(value).lower()}")
    if isinstance(value, int | float):
        score = float(value)
        passed = score >= rule.threshold if rule.threshold is not None else score > 0
        return Verdict(passed, _unit(score), f"{who} returned {score:g}")
    if isinstance(value, dict):
        flag = value.get("pass", value.get("pass_"))
        given, reason = value.get("score"), value.get("reason")
        if (
            not isinstance(flag, bool)
            or isinstance(given, bool)
            or not isinstance(given, int | float)
            or not isinstance(reason, str)
        ):
            keys = ", ".join(map(str, value)) or "nothing"
            return Verdict(False, 0.0, f"{who} returned a dict with {keys}; expected pass, score and reason")
        if rule.threshold_on_dict and rule.threshold is not None and given < rule.threshold:
            flag = False
            reason = f"score {given:g} is under the threshold {rule.threshold:g}" + (
                f": {reason}" if reason else ""
            )
        return Verdict(flag, _unit(float(given)), clip(reason or f"{who} returned pass={flag}"))
    return Verdict(False, 0.0, clip(f"{who} returned {type(value).__name__}; expected bool, number or dict"))


def _assay(value: Any, who: str) -> Verdict:
    if isinstance(value, bool):
        return Verdict(value, 1.0 if value else 0.0, f"{who} returned {value}")
    if isinstance(value, int | float):
        return _scored(float(value), None, "", who)
    if isinstance(value, dict):
        passed = value.get("pass", value.get("pass_", value.get("passed")))
        score = value.get("score")
        reason = str(value.get("reason", ""))
        if passed is not None and not isinstance(passed, bool):
            return Verdict(False, 0.0, f"{who} returned pass={passed!r}; expected true/false")
        if score is None:
            if passed is None:
                return Verdict(False, 0.0, f"{who} returned a dict without pass or score")
            return Verdict(passed, 1.0 if passed else 0.0, clip(reason or f"{who} returned pass={passed}"))
        if isinstance(score, bool) or not isinstance(score, int | float):
            return Verdict(False, 0.0, f"{who} returned score={score!r}; expected a number")
        return _scored(float(score), passed, reason, who)
    return Verdict(False, 0.0, clip(f"{who} returned {type(value).__name__}; expected bool, number or dict"))


def _scored(score: float, passed: bool | None, reason: str, who: str) -> Verdict:
    if math.isnan(score) or not 0.0 <= score <= 1.0:
        return Verdict(False, 0.0, f"{who} returned score {score:g}, outside [0, 1]")
    if passed is None:
        passed = score >= 0.5
    return Verdict(passed, score, clip(reason or f"{who} returned score {score:g}"))


def read_verdict(value: Any, rule: PassRule, who: str) -> Verdict:
    """The verdict an evaluator's return value stands for (see the module docstring)."""
    return _promptfoo(value, rule, who) if rule.promptfoo else _assay(value, who)
