"""Every registered check type passes the check suite (:func:`assay.testing.checks.check_check`), built as the
evaluator builds it (``resolve(CHECK, type, spec)``) from a minimal valid spec (``{"value": "x"}``, or the one
in ``SPECS``: a check type registered later adds its own there if that one does not fit). Judged checks ask a
fake model that passes everything; a check that cannot judge here (no node, nothing listening at the webhook)
returns a failed result, which is still one; ``similar`` needs the embed extra."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.checks import CHECKS, Check, CheckContext
from assay.extensions import CHECK, resolve
from assay.model import CheckResult, CheckSpec, Output
from assay.testing.checks import check_check

NAMES = CHECKS.names()
SPECS: dict[str, dict[str, Any]] = {
    "assert_set": {"value": [{"type": "contains", "value": "x"}]},
    "contains_json": {"value": None},
    "cost": {"value": 1},
    "json_schema": {"value": {"type": "object"}},
    "javascript": {"value": "output === 'x'"},
    "latency": {"value": 1},
    "max_length": {"value": 1},
    "min_length": {"value": 1},
    "python": {"value": "output == 'x'"},
    "script": {"value": "exit 0"},
    "tool_call_valid": {"value": [{"type": "function", "function": {"name": "f", "parameters": {}}}]},
    "webhook": {"value": "http://127.0.0.1:9/hook", "options": {"timeout": 2}},
    "word_count": {"value": 1},
}


def spec(name: str) -> CheckSpec:
    return CheckSpec(type=name, **SPECS.get(name, {"value": "x"}))


def by_type(given: CheckSpec) -> Any:
    return resolve(CHECK, given.type, given)


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.embed) if n == "similar" else n for n in NAMES]
)
async def test_registered_check_conforms(name: str, tmp_path: Path) -> None:
    await check_check(by_type, spec(name), tmp_path)


def test_every_spec_names_a_registered_check() -> None:
    assert set(SPECS) <= set(NAMES) and len(NAMES) >= 50


class ShorterThan(Check):
    """A dummy check: the output has fewer characters than the value; the score is how far below it is."""

    name = "shorter_than"

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        limit = int(self.spec.value)
        return self.result(len(output.text) < limit, max(0.0, 1 - len(output.text) / limit))


async def test_a_registered_dummy_joins_the_suite(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(CHECKS._items, "shorter_than", ShorterThan)
    monkeypatch.setitem(SPECS, "shorter_than", {"value": 4})
    assert "shorter_than" in CHECKS.names()
    await check_check(by_type, spec("shorter_than"), tmp_path)


class DeafToNegation:
    """A check of no class of assay's that ignores ``negate``."""

    def __init__(self, spec: CheckSpec) -> None:
        self.spec = spec

    async def run(self, output: Output, ctx: CheckContext) -> CheckResult:
        return CheckResult(type=self.spec.label(), passed=True, score=1.0)


async def test_the_suite_names_what_a_broken_check_breaks(tmp_path: Path) -> None:
    with pytest.raises(
        AssertionError, match=r"check DeafToNegation \(deaf\): negated, it still says passed=True"
    ):
        await check_check(DeafToNegation, CheckSpec(type="deaf", value="x"), tmp_path)
