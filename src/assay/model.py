"""The nouns of an evaluation: cases, check specifications, runner outputs and results.

These are plain pydantic models so that every record can be written to a trace file and read back.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Split(StrEnum):
    """Where a case belongs. Holdout cases are never shown to a proposer."""

    DEV = "dev"
    HOLDOUT = "holdout"
    REGRESSION = "regression"


class CheckSpec(BaseModel):
    """One configured check, as loaded from a case file (not yet bound to an implementation).

    ``value`` is the check's main argument: the expected string, a list of strings, a regex pattern, a JSON
    schema, a shell command, a ``module:function`` reference, a rubric, a list of facts, or a limit.
    ``negate`` inverts the verdict (promptfoo's ``not-`` prefix). ``text`` keeps the original wording of
    the expectation (skill-creator) for ``grading.json``.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)

    type: str
    value: Any = None
    negate: bool = False
    weight: float = Field(default=1.0, ge=0)
    threshold: float | None = Field(default=None, ge=0, le=1)
    options: dict[str, Any] = Field(default_factory=dict)
    text: str | None = None

    def label(self) -> str:
        """A short human label (``contains``, ``not-regex``) used in tables and grading files."""
        return f"not-{self.type}" if self.negate else self.type


class Case(BaseModel):
    """One input to the artifact, and the checks that define a good output for it."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    id: str
    input: str | None = None
    vars: dict[str, Any] = Field(default_factory=dict)
    expected: str | None = None
    checks: list[CheckSpec] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    weight: float = Field(default=1.0, ge=0)
    threshold: float | None = Field(default=None, ge=0, le=1)
    files: list[str] = Field(default_factory=list)
    source: str | None = None
    description: str | None = None

    @property
    def judged(self) -> bool:
        """Whether the case has checks. A case without any is *unjudged*: it can neither pass nor fail, so
        it is left out of pass rates and scores (and out of the evolve loop)."""
        return bool(self.checks)

    def prompt_text(self) -> str:
        """The text given to a runner: ``input`` if set, else the vars rendered as ``key: value`` lines."""
        if self.input is not None:
            return self.input
        return "\n".join(f"{k}: {v}" for k, v in self.vars.items())


class Output(BaseModel):
    """What a runner produced for one case. A runner never raises for a case: failures land in ``error``.

    ``duration_s`` is the wall time of the run; ``cpu_s`` the CPU time (user + system) of the case's process
    and the children it waited for, which load on the machine does not inflate. None: not measured (the
    ``llm`` and ``agent`` runners, whose time is mostly waiting for a model, and results recorded before it)."""

    text: str = ""
    stdout_tail: str = ""
    stderr_tail: str = ""
    exit_code: int | None = None
    error: str | None = None
    timed_out: bool = False
    truncated: bool = False
    binary: bool = False
    duration_s: float = 0.0
    cpu_s: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    workdir: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out


class CheckResult(BaseModel):
    """A check's verdict on one output: passed, a score in [0, 1] and the evidence behind it."""

    type: str
    passed: bool
    score: float = Field(ge=0, le=1)
    evidence: str = ""
    text: str | None = None
    weight: float = 1.0
    error: bool = False
    skipped: bool = False  # a judged check not run: the case was decided without it
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0


class CaseResult(BaseModel):
    """The outcome of one case: the output, each check's result, the weighted score and the verdict.

    An ``unjudged`` case (one without checks) has ``passed`` False and ``score`` 0 and is left out of every
    pass rate and mean score: it is shown as unjudged, never as a pass."""

    id: str
    split: Split
    passed: bool
    score: float
    unjudged: bool = False
    output: Output
    checks: list[CheckResult] = Field(default_factory=list)
    duration_s: float = 0.0
    trace_path: str | None = None

    @property
    def tokens(self) -> int:
        return (
            self.output.tokens_in
            + self.output.tokens_out
            + sum(c.tokens_in + c.tokens_out for c in self.checks)
        )

    @property
    def cost_usd(self) -> float:
        return self.output.cost_usd + sum(c.cost_usd for c in self.checks)


class Dimension(BaseModel):
    """One dimension of a gate's decision on a candidate: its verdict, a neutral one-line detail (it may reach
    the next proposal, so it never quotes a check) and the numbers behind it."""

    passed: bool
    detail: str = ""
    numbers: dict[str, Any] = Field(default_factory=dict)


class OverfitVerdict(BaseModel):
    """What the overfitting rule (:func:`assay.loop.overfitting.judge_overfitting`) said of a candidate's
    holdout: whether it is ``flagged``, under which ``rule`` (``paired``: its gain on holdout against its gain on
    dev, each over the baseline on the same cases; ``gap``: the seed's fixed gap between the pass rates), the
    reason in one line with its figures, and the numbers behind it. It names holdout figures: it never reaches
    a proposer."""

    rule: Literal["paired", "gap"]
    flagged: bool
    reason: str
    numbers: dict[str, Any] = Field(default_factory=dict)
