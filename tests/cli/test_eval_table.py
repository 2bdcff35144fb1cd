"""The per-case table of ``assay eval``: past a screenful the cases that did not pass, every row with --all,
plain aligned text past a few hundred rows."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from assay.cli import eval as eval_cli
from assay.evaluation.evaluator import EvalResult
from assay.model import CaseResult, CheckResult, Output, Split

ROOT = Path(__file__).resolve().parents[2]


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


def test_without_a_terminal_the_summary_is_written_without_importing_rich() -> None:
    script = (
        "import sys\n"
        "from assay.cli import eval as eval_cli\n"
        "from assay.evaluation.evaluator import EvalResult\n"
        "from assay.model import CaseResult, Output, Split\n"
        "case = CaseResult(id='a', split=Split.DEV, passed=True, score=1.0, output=Output(text='x'))\n"
        "eval_cli.render(EvalResult(cases=[case] * 300))\n"
        "print('rich.console' in sys.modules, 'rich.table' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60, check=True
    )
    assert done.stderr.split() == ["False", "False"]
    assert done.stdout.splitlines() == [
        "300 passing cases not shown (--all shows every row)",
        "pass rate 300/300 (100.0%) · mean score 1.000 · 0.0s",
    ]


def test_the_tally_counts_what_the_properties_count() -> None:
    result = results(10, {2, 5})
    result.cases[7] = result.cases[7].model_copy(update={"unjudged": True, "passed": False, "score": 0.0})
    spent = Output(text="x", tokens_in=5, tokens_out=2, cost_usd=0.25)
    skipped = CheckResult(type="judge", passed=True, score=1.0, skipped=True, tokens_in=3, cost_usd=0.5)
    result.cases[0] = result.cases[0].model_copy(update={"output": spent})
    result.cases[1] = result.cases[1].model_copy(update={"checks": [*result.cases[1].checks, skipped]})
    tally = result.tally()
    assert tally == (9, 7, 1, 7 / 9, 10, 0.75, 1)
    assert (result.tokens, result.cost_usd, result.judged_not_run) == (10, 0.75, 1)
    assert (tally.failed, tally.pass_rate) == (2, 7 / 9)
    assert (result.total, result.passed, result.unjudged, result.failed) == (9, 7, 1, 2)
    assert (result.pass_rate, result.mean_score) == (7 / 9, 7 / 9)
    assert EvalResult().tally() == (0, 0, 0, 0.0, 0, 0.0, 0) and EvalResult().pass_rate == 0.0
