"""The check suite: :func:`check_check`, which every registered check type passes and a check of one's own can
run. Judged checks ask a fake model that says every output passes (:func:`passing_judge`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from assay.checks.base import CHECK, CheckContext
from assay.llm.base import LLM, Completion
from assay.model import Case, CheckResult, CheckSpec, Output
from assay.protocols import CheckProtocol
from assay.testing._expect import close, conformed, expect

CASE = Case(id="c1", input="Say x.", expected="x")
OUTPUT = Output(text="x", duration_s=0.1)


class _Grader:
    """A fake judge model: every answer says the output passes, in the forms the judged checks parse."""

    model = "fake:grader"

    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        system: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        sample: int = 0,
    ) -> Completion:
        return Completion(text='{"pass": true, "score": 1.0, "reason": "fine"}\nVERDICT: PASS\nSCORE: 1')

    async def aclose(self) -> None:
        return None


def passing_judge() -> LLM:
    """A fake judge model whose every answer says the output passes (JSON, ``VERDICT: PASS``, ``SCORE: 1``)."""
    return _Grader()


async def judged(check: CheckProtocol, spec: CheckSpec, workdir: Path, judge: LLM, who: str) -> CheckResult:
    """The check's verdict on :data:`OUTPUT` for :data:`CASE`, checked: a CheckResult labelled by ``spec``,
    passed a bool and the score in [0, 1]."""
    ctx = CheckContext(case=CASE, workdir=workdir, judge=judge, judge_votes=1, project_dir=workdir)
    try:
        result = await check.run(OUTPUT, ctx)
    except Exception as exc:
        raise AssertionError(
            f"{who}: run raised {type(exc).__name__}: {exc} (a failure is a result)"
        ) from exc
    expect(isinstance(result, CheckResult), f"{who}: run returned {type(result).__name__}, not a CheckResult")
    expect(
        0.0 <= result.score <= 1.0 and isinstance(result.passed, bool),
        f"{who}: passed must be a bool and the score in [0, 1]: {result.passed!r}, {result.score!r}",
    )
    expect(
        result.type == spec.label(), f"{who}: the result is labelled {result.type!r}, not {spec.label()!r}"
    )
    return result


async def check_check(
    make: Callable[[CheckSpec], object], spec: CheckSpec, workdir: Path, *, judge: LLM | None = None
) -> None:
    """The check contract, on checks ``make(spec)`` builds: it conforms, prepares in ``workdir``, and judges an
    output (:func:`judged`) without raising; built from ``spec`` negated, its judgement is turned round (passed
    the other way, score ``1 - score``), except that an error stays a failure (score 0). ``judge`` (default
    :func:`passing_judge`) is the model judged checks ask.

    A coroutine: ``await check_check(MyCheck, spec, tmp_path)``, or ``asyncio.run(...)`` outside an event
    loop. Raises AssertionError naming the part of the contract that failed."""
    judge = judge or passing_judge()
    raw = make(spec)
    who = f"check {type(raw).__name__} ({spec.type})"
    expect(isinstance(raw, CheckProtocol), f"{who}: lacks async run(output, ctx)")
    check = conformed(CHECK, raw, who)
    check.prepare(workdir)
    result = await judged(check, spec, workdir, judge, who)
    negated_spec = spec.model_copy(update={"negate": True})
    negated = conformed(CHECK, make(negated_spec), who)
    negated.prepare(workdir)
    turned = await judged(negated, negated_spec, workdir, judge, who)
    if result.error:
        expect(
            (turned.passed, turned.score) == (False, 0.0),
            f"{who}: negated, a check that could not judge ({result.evidence}) must still fail with score 0,"
            f" not {turned.passed}, {turned.score}",
        )
    elif not turned.error:
        expect(turned.passed is not result.passed, f"{who}: negated, it still says passed={result.passed}")
        expect(
            close(turned.score, 1.0 - result.score),
            f"{who}: negated, the score is {turned.score}, not 1 - {result.score}",
        )
