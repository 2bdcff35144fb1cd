"""The proposer view: failure descriptions without check values, redacted trace copies, the whole view."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from assay.evaluation.evaluator import EvalResult
from assay.loop.proposing import retry_note
from assay.loop.state import Retry
from assay.model import Case, CaseResult, CheckResult, CheckSpec, Output, Split
from assay.proposers.base import DevCase, HistoryEntry
from assay.proposers.context import build_view, describe_failure, render_prompt
from assay.proposers.redaction import REDACTED, Redactor, secrets_for
from tests.proposers import _fragments, _planted


def redactor() -> Redactor:
    return _planted.redactor()


def result_with(*checks: CheckResult, error: str | None = None) -> CaseResult:
    return CaseResult(
        id="c", split=Split.DEV, passed=False, score=0.0, output=Output(error=error), checks=list(checks)
    )


def failed(kind: str, evidence: str = "") -> CheckResult:
    return CheckResult(type=kind, passed=False, score=0.0, evidence=evidence)


def test_describe_failure_per_check_type() -> None:
    expected = {
        "equals": "output differs from the expected output",
        "contains": "output missing an expected element",
        "not_contains": "output contains a forbidden element",
        "regex": "output does not match the expected pattern",
        "not-regex": "output matches a forbidden pattern",
        "json_valid": "output is not valid JSON",
        "script": "a check script rejected the output",
        "not-custom_thing": "output passes a custom_thing check it must fail",
        "custom_thing": "custom_thing check failed",
    }
    for kind, how in expected.items():
        assert describe_failure(result_with(failed(kind, "evidence 'SECRET-VALUE'"))) == how


def test_describe_failure_judge_facts_runner_and_threshold() -> None:
    r = redactor()
    judge = failed("llm_judge", f"judge FAIL (0/3 votes pass): not polite, no {_planted.RUBRIC_WORD}")
    facts = failed("fact_coverage", f"missing 1/3 facts: {_planted.FACT!r}")
    runner = failed("runner", "ignored when the output has an error")
    result = result_with(judge, facts, runner, error=f"crashed on {_planted.CONTAINS}")
    # By default a failed rubric is a neutral line: which check, not what the judge said.
    assert describe_failure(result, r) == (
        f"rubric check 1 failed; output does not state some required facts (1/3); "
        f"runner failed: crashed on {REDACTED}"
    )
    assert describe_failure(result, r, show_judge_reasons=True) == (
        f"rubric check 1 failed: judge said: not polite, no {REDACTED}; "
        f"output does not state some required facts (1/3); runner failed: crashed on {REDACTED}"
    )
    judge_error = result_with(failed("contains"), failed("llm_judge", "judge error: HTTP 500"))
    assert describe_failure(judge_error, show_judge_reasons=True) == (
        "output missing an expected element; rubric check 2 failed"
    )
    passing = CheckResult(type="contains", passed=True, score=1.0)
    assert describe_failure(result_with(passing)) == "score below the case's threshold"
    ok = CaseResult(id="c", split=Split.DEV, passed=True, score=1.0, output=Output())
    assert describe_failure(ok) == "passed"


def test_build_view_shows_dev_inputs_and_failures_but_no_answer_key(tmp_path: Path) -> None:
    results = _planted.dev_results()
    holdout_case = _planted.holdout_cases()[0]
    holdout_result = CaseResult(
        id="h1", split=Split.HOLDOUT, passed=False, score=0, output=Output(text=_planted.HOLDOUT_EXPECTED)
    )
    view = build_view(
        artifact={"prompt.md": "Be helpful.\n"},
        layer=2,
        dev_results=[*results, (holdout_case, holdout_result)],
        history=_planted.HISTORY,
        last_gate=_planted.LAST_GATE,
        redactor=redactor(),
        trace_dir=tmp_path / "traces",
    )
    assert view.layer == 2 and view.artifact == {"prompt.md": "Be helpful.\n"}
    assert view.dev_cases == [
        DevCase("refund", input="A customer asks for a refund."),
        DevCase("polite", vars={"topic": "late delivery"}),
        DevCase("fine", input="Say hello."),  # its own input, as it is: its contains check looks for "hello"
    ]
    assert [f.id for f in view.failures] == ["refund", "polite"]
    assert "output missing an expected element" in view.failures[0].how
    assert view.failures[1].how.startswith("rubric check 1 failed; ")
    assert "never names" not in json.dumps(dataclasses.asdict(view), default=str)
    assert view.history[0] == HistoryEntry(1, f"made it say {REDACTED}", "discard")
    assert view.last_gate[0] == f"regression: case refund lost '{REDACTED}'"
    assert [Path(p).name for p in view.trace_paths] == ["01-refund.json", "02-polite.json"]
    dumped = json.dumps(dataclasses.asdict(view), ensure_ascii=False, default=str)
    assert _planted.leaks(dumped) == [] and "h1" not in dumped


def test_trace_copies_keep_tails_and_verdicts_but_no_check_values(tmp_path: Path) -> None:
    view = build_view(
        artifact={},
        layer=1,
        dev_results=_planted.dev_results(),
        history=[],
        last_gate=[],
        redactor=redactor(),
        trace_dir=tmp_path / "traces",
    )
    for path in view.trace_paths:
        raw = Path(path).read_text()
        assert _planted.leaks(raw) == [], path
        trace = json.loads(raw)
        assert set(trace) == {"case", "output", "verdict", "checks"}
        assert trace["verdict"]["passed"] is False
        assert all(set(check) == {"type", "passed", "how"} for check in trace["checks"])
        assert REDACTED in trace["output"]["text_tail"] + trace["output"]["stderr_tail"]
    refund = json.loads(Path(view.trace_paths[0]).read_text())
    assert refund["checks"][0] == {
        "type": "contains",
        "passed": False,
        "how": "output missing an expected element",
    }
    assert refund["output"]["seconds"] == 0.4 and refund["case"]["input"] == "A customer asks for a refund."
    polite = json.loads(Path(view.trace_paths[1]).read_text())
    assert polite["output"]["exit_code"] == 2 and polite["output"]["error"].startswith("command '[redacted]'")
    assert sorted(p.name for p in (tmp_path / "traces").iterdir()) == ["01-refund.json", "02-polite.json"]


def test_long_output_is_redacted_before_it_is_cut(tmp_path: Path) -> None:
    case, result = _planted.dev_results()[0]
    result.output.text = _planted.CONTAINS + "x" * 1990 + " end"
    r = redactor()
    view = build_view(
        artifact={},
        layer=1,
        dev_results=[(case, result)],
        history=[],
        last_gate=[],
        redactor=r,
        trace_dir=tmp_path,
    )
    tail = json.loads(Path(view.trace_paths[0]).read_text())["output"]["text_tail"]
    assert tail.startswith("…") and tail.endswith(" end") and len(tail) == 2001
    assert "lantern" not in tail.lower() and "7731" not in tail


@pytest.mark.parametrize("draw", range(5))
def test_no_fragment_of_a_drawn_key_reaches_any_channel(tmp_path: Path, draw: int) -> None:
    """Outputs, stdout and stderr tails, errors, judge reasons (shown), trace copies, the llm proposer's
    prompt, the agent's view file and the retry context: none shows a fragment of a random key."""
    key = _fragments.draw()
    case = Case(
        id="c1",
        input="A customer writes in.",
        checks=[CheckSpec(type="contains", value=key.value), CheckSpec(type="llm_judge", value=key.rubric)],
    )
    echoes = "\n".join(_fragments.echoes(key))
    result = CaseResult(
        id="c1",
        split=Split.DEV,
        passed=False,
        score=0.0,
        output=Output(text=echoes, stdout_tail=echoes, stderr_tail=echoes, error=echoes, exit_code=1),
        checks=[
            failed("contains", f"{key.value!r} not found"),
            failed("llm_judge", f"judge FAIL (0/1 votes pass): {echoes}"),
            failed("runner", echoes),
        ],
    )
    redactor = Redactor(secrets_for([case], []))
    view = build_view(
        artifact={},
        layer=1,
        dev_results=[(case, result)],
        history=[HistoryEntry(1, echoes, echoes)],
        last_gate=[echoes],
        redactor=redactor,
        trace_dir=tmp_path,
        show_judge_reasons=True,
    )
    retry = Retry(candidate_id="x", dev=EvalResult(cases=[result]), score=0.1, best_score=0.5, needed=0.1)
    note = retry_note(retry, [case], redactor)
    assert note is not None and note.failures
    view = dataclasses.replace(view, retry=note)
    channels = {
        "prompt": render_prompt(view),
        "agent view file": render_prompt(view, format="direct"),
        "failures": json.dumps([dataclasses.asdict(f) for f in view.failures + note.failures]),
        **{path: Path(path).read_text() for path in view.trace_paths},
    }
    assert _fragments.leaks(echoes, key) == [key.rare, "".join(key.pair), key.number]
    assert "judge said:" in channels["prompt"] and "Try again" in channels["prompt"]
    for name, text in channels.items():
        assert _fragments.leaks(text, key) == [], (name, key)
