"""The per-case table of ``assay eval``: past a screenful the cases that did not pass, every row with --all,
plain aligned text past a few hundred rows."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from assay.cli import eval as eval_cli
from assay.evaluation.evaluator import EvalResult
from assay.model import CaseResult, CheckResult, Output, Split


def results(total: int, failing: set[int]) -> EvalResult:
    cases = [
        CaseResult(
            id=f"case-{i:04d}",
            split=Split.DEV,
            passed=i not in failing,
            score=0.0 if i in failing else 1.0,
            output=Output(text="x", duration_s=0.01),
            checks=[CheckResult(type="contains", passed=i not in failing, score=0.0, evidence="no 'a'")],
        )
        for i in range(total)
    ]
    return EvalResult(cases=cases)


@pytest.fixture
def printed(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    buffer = io.StringIO()
    monkeypatch.setattr(eval_cli.out, "_console", Console(file=buffer, width=160, markup=False))
    return buffer


def ids(text: str) -> list[str]:
    return [
        word
        for line in text.splitlines()
        for word in line.replace("│", " ").split()
        if word.startswith("case-")
    ]


def test_a_small_run_shows_every_case(printed: io.StringIO) -> None:
    eval_cli.render(results(eval_cli.SHOWN_ROWS, {3}))
    text = printed.getvalue()
    assert len(ids(text)) == eval_cli.SHOWN_ROWS and "not shown" not in text
    assert "pass rate 49/50" in text


def test_past_a_screenful_only_the_cases_that_did_not_pass_unless_all(printed: io.StringIO) -> None:
    eval_cli.render(results(120, {7, 70}))
    text = printed.getvalue()
    assert ids(text) == ["case-0007", "case-0070"]
    assert "118 passing cases not shown (--all shows every row)" in text
    assert "contains: no 'a'" in text and "pass rate 118/120" in text
    printed.seek(0)
    printed.truncate()
    eval_cli.render(results(120, {7, 70}), show_all=True)
    assert len(ids(printed.getvalue())) == 120 and "not shown" not in printed.getvalue()


def test_every_case_passing_prints_no_empty_table(printed: io.StringIO) -> None:
    eval_cli.render(results(300, set()))
    text = printed.getvalue()
    assert ids(text) == []
    assert text.startswith("300 passing cases not shown")  # no table header above it


def test_hundreds_of_rows_are_aligned_plain_text(printed: io.StringIO) -> None:
    eval_cli.render(results(2000, {5, 1999}), show_all=True)
    lines = printed.getvalue().splitlines()
    assert lines[0].split() == list(eval_cli.COLUMNS)
    rows = lines[1:2001]
    assert [row.split()[0] for row in rows] == [f"case-{i:04d}" for i in range(2000)]
    assert rows[5].split()[2] == "FAIL" and rows[6].split()[2] == "PASS"
    assert len({row.index(row.split()[2]) for row in rows}) == 1  # the result column starts at one place
    assert "\x1b[" not in printed.getvalue()  # no colour codes when not on a terminal
    assert lines[2001].startswith("pass rate 1998/2000")
