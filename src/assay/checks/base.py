"""The check contract: judge one output, return passed / score / evidence, never raise for a bad output."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

from assay.model import Case, CheckResult, CheckSpec, Output
from assay.registry import Family, Registry, built_from, resolve

if TYPE_CHECKING:
    from assay.llm.base import LLM
    from assay.sandbox import SandboxLimits


class CheckSpecError(ValueError):
    """A check's specification is invalid (bad regex, missing value, ...). Raised at load, never at run."""


class CheckUnavailable(RuntimeError):
    """The check cannot judge on this machine (an optional extra is missing). Raised by ``evaluate``; the
    result is a failed check whose evidence is the message, whatever the check's negation."""


@dataclass
class CheckContext:
    """What a check may use while judging one output.

    ``workdir`` is where the runner ran (files the artifact wrote are there); ``judge`` is the LLM used by
    judged checks (None when no judge model is configured); ``limits`` bound script checks like runners.
    """

    case: Case
    workdir: Path | None = None
    judge: LLM | None = None
    judge_votes: int = 3
    limits: SandboxLimits | None = None
    project_dir: Path | None = None
    extra: dict[str, object] = field(default_factory=dict)


@runtime_checkable
class CheckProtocol(Protocol):
    """Judges one output, never raising for a bad one (a failure is a result with evidence).

    Optional: ``prepare(project_dir)`` (default: nothing to resolve), ``judged``, ``prose``, ``text_value``
    (default False). The base class :class:`~assay.checks.Check` implements ``run`` from ``evaluate``."""

    async def run(self, output: Output, ctx: CheckContext) -> CheckResult:
        """The verdict on ``output``: passed, a score in [0, 1] and the evidence."""
        ...


class Check(ABC):
    """Base of every check. Subclasses validate their spec in ``__init__`` (raise CheckSpecError) and
    implement ``evaluate``. ``run`` applies negation and the per-check threshold and turns any unexpected
    exception into a failed result with evidence."""

    name: ClassVar[str]
    judged: ClassVar[bool] = False
    # Whether the value is prose or code (a rubric, a script): the redactor then also hides its quoted
    # phrases and distinctive tokens (see prose_check_types).
    prose: ClassVar[bool] = False
    # Whether the spec reads its value only as text: a spec valid with one non-empty string value (and no
    # other field set) is then valid with any, and loading builds one such check per file instead of one per
    # case (tens of thousands of ``contains`` checks, each with its own string). A subclass that checks the
    # value further must set it back to False.
    text_value: ClassVar[bool] = False

    def __init__(self, spec: CheckSpec) -> None:
        self.spec = spec
        self.transforms = transform_list(spec)

    @abstractmethod
    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult: ...

    def prepare(self, project_dir: Path | None) -> None:
        """Resolve what depends on the project directory (schema files, evaluator modules) before any case
        runs, so a missing file is a configuration error rather than a failed case. Raise CheckSpecError."""
        return None

    async def run(self, output: Output, ctx: CheckContext) -> CheckResult:
        try:
            if self.transforms:
                from assay.checks.transforms import transform_output

                output = await transform_output(output, self.transforms, ctx)
            result = await self.evaluate(output, ctx)
        except Exception as exc:  # a failing example is a score, never an exception
            evidence = (
                str(exc) if isinstance(exc, CheckUnavailable) else f"check error: {type(exc).__name__}: {exc}"
            )
            # An error is never negated into a pass: a check that could not judge has not judged.
            return CheckResult(
                type=self.spec.label(),
                passed=False,
                score=0.0,
                evidence=evidence,
                text=self.spec.text,
                weight=self.spec.weight,
                error=True,
            )
        if self.spec.threshold is not None and not self.spec.negate:
            result.passed = result.score >= self.spec.threshold
        if self.spec.negate:
            result.passed = not result.passed
            result.score = 1.0 - result.score
            if self.spec.threshold is not None:
                result.passed = result.score >= self.spec.threshold
        result.type = self.spec.label()
        result.weight = self.spec.weight
        result.text = self.spec.text
        return result

    def result(self, passed: bool, score: float | None = None, evidence: str = "") -> CheckResult:
        """Convenience for subclasses: a result with score 1/0 unless given."""
        if score is None:
            score = 1.0 if passed else 0.0
        return CheckResult(
            type=self.spec.type, passed=passed, score=max(0.0, min(1.0, score)), evidence=evidence
        )


CHECKS: Registry[type[Check]] = Registry("check type")

TRANSFORM_OPTION = "transform"


def transform_list(spec: CheckSpec) -> list[str]:
    """The spec's output transforms (option ``transform``: JavaScript or ``file://`` code, or a list of them,
    applied in order to the output before the check judges it); CheckSpecError when malformed."""
    value = spec.options.get(TRANSFORM_OPTION)
    if value is None:
        return []
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(i, str) and i.strip() for i in items):
        raise CheckSpecError(f"{spec.type}: option transform must be code or a list of code strings")
    return list(items)


def prose_check_types() -> frozenset[str]:
    """The check types whose value is prose or code (rubrics, criteria, scripts): for the redactor, which
    hides the quoted phrases and distinctive tokens of such values as well as the values themselves. Every
    other string a proposer must not see is in a spec's ``value``, ``options`` (transforms, config, rubric
    prompts) or ``text``."""
    return frozenset(name for name in CHECKS if CHECKS.get(name).prose)


async def _judged_in_run(self: Check, output: Output, ctx: CheckContext) -> CheckResult:
    """``evaluate`` of a check of another class, wrapped by conform: it judges in its own ``run``."""
    return await self.run(output, ctx)


CHECK: Family[Check] = Family(
    "check",
    CheckProtocol,
    Check,
    ("name", "judged", "prose", "text_value", "prepare", "spec"),
    # The base's evaluate is abstract: a check of another class has its run, which the wrapper forwards to.
    defaults={"evaluate": _judged_in_run},
    registry=CHECKS,
    build=built_from(CHECKS),
)


def build_check(spec: CheckSpec) -> Check:
    """Bind a spec to its implementation, validating it. Raises UnknownName or CheckSpecError."""
    return resolve(CHECK, spec.type, spec)
