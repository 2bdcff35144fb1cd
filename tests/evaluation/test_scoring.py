from assay.evaluation.scoring import combine, runner_check
from assay.model import Case, CheckResult, Output


def result(passed: bool, score: float, weight: float = 1.0) -> CheckResult:
    return CheckResult(type="x", passed=passed, score=score, weight=weight)


def test_weighted_mean_and_all_pass():
    case = Case(id="c")
    assert combine(case, [result(True, 1.0, 3), result(True, 0.5, 1)], False) == (True, 0.875)


def test_one_failing_check_fails_the_case_without_threshold():
    passed, score = combine(Case(id="c"), [result(True, 1.0), result(False, 0.0)], False)
    assert not passed and score == 0.5


def test_threshold_lets_a_case_pass_on_score():
    case = Case(id="c", threshold=0.6)
    assert combine(case, [result(True, 1.0, 2), result(False, 0.0, 1)], False)[0] is True
    assert combine(case, [result(True, 1.0), result(False, 0.0)], False)[0] is False


def test_runner_failure_always_fails():
    case = Case(id="c", threshold=0.1)
    assert combine(case, [result(True, 1.0)], True)[0] is False


def test_no_checks_is_never_a_pass():
    assert combine(Case(id="c"), [], False) == (False, 0.0)  # nothing judged: never a pass
    assert combine(Case(id="c"), [], True) == (False, 0.0)


def test_runner_check_reports_error_and_stderr():
    assert runner_check(Output(text="fine")) is None
    check = runner_check(Output(error="exit code 2", stderr_tail="line1\nValueError: bad\n"))
    assert check is not None and not check.passed and check.score == 0
    assert "exit code 2" in check.evidence and "ValueError: bad" in check.evidence
    timeout = runner_check(Output(timed_out=True, error="timed out after 1s"))
    assert timeout is not None and "timed out" in timeout.evidence


def test_a_pending_judge_is_not_needed_once_the_case_is_decided():
    from assay.evaluation.scoring import decided_without

    strict = Case(id="c")
    # No threshold: one failed check fails the case whatever the judge says; all passing, the judge decides.
    assert decided_without(strict, [result(False, 0.0)], [1.0], runner_failed=False)
    assert not decided_without(strict, [result(True, 1.0)], [1.0], runner_failed=False)
    assert decided_without(strict, [result(True, 1.0)], [1.0], runner_failed=True)
    assert decided_without(strict, [result(True, 1.0)], [], runner_failed=False)
    lenient = Case(id="c", threshold=0.5)
    # Passes on score whatever the judge returns: 3 of 4 weight already scored 1.0.
    assert decided_without(lenient, [result(True, 1.0, 3)], [1.0], runner_failed=False)
    # A failed check and too little weight left for the judge to reach the threshold: fails whatever it says.
    assert decided_without(lenient, [result(False, 0.0, 3)], [1.0], runner_failed=False)
    # The judge's weight can tip it either way: it must run.
    assert not decided_without(lenient, [result(False, 0.0, 1)], [2.0], runner_failed=False)


def test_a_skipped_judge_counts_in_neither_verdict_nor_score():
    skipped = CheckResult(type="llm_judge", passed=False, score=0.0, skipped=True)
    assert combine(Case(id="c"), [result(False, 0.25), skipped], False) == (False, 0.25)
