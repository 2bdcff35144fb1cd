from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from assay.checks import CheckContext, CheckSpecError, build_check
from assay.checks.programs import import_file_function
from assay.model import Case, CheckResult, CheckSpec, Output
from assay.sandbox import SandboxLimits

CASE = Case(id="case-7", input="What is 2+2?", vars={"lang": "en"}, expected="4", tags=["math"])


async def judge(
    text: str,
    type_: str,
    value: Any,
    *,
    workdir: Path | None = None,
    project_dir: Path | None = None,
    limits: SandboxLimits | None = None,
    **kw: Any,
) -> CheckResult:
    check = build_check(CheckSpec(type=type_, value=value, **kw))
    ctx = CheckContext(case=CASE, workdir=workdir, project_dir=project_dir, limits=limits)
    return await check.run(Output(text=text, cost_usd=0.25), ctx)


# --- script -------------------------------------------------------------------------------------------------


async def test_script_passes_on_exit_zero_reading_stdin(tmp_path: Path) -> None:
    result = await judge("the answer is 4", "script", "grep -q 'answer is 4'", workdir=tmp_path)
    assert result.passed and result.score == 1 and result.evidence.startswith("exit 0")


async def test_script_fails_with_exit_code_and_stderr_tail(tmp_path: Path) -> None:
    result = await judge("nope", "script", "echo 'missing the answer' >&2; exit 3", workdir=tmp_path)
    assert not result.passed and result.score == 0
    assert result.evidence == "exit 3; stderr: missing the answer"


async def test_script_reads_output_file_env_and_runs_in_workdir(tmp_path: Path) -> None:
    (tmp_path / "marker").write_text("here")
    command = (
        'test -f marker && test "$(cat "$ASSAY_OUTPUT_FILE")" = "hello" '
        '&& test "$ASSAY_CASE_ID" = case-7 && test "$ASSAY_EXPECTED" = 4 && echo "$ASSAY_VARS" | grep -q lang'
    )
    assert (await judge("hello", "script", command, workdir=tmp_path)).passed
    assert not (await judge("other", "script", command, workdir=tmp_path)).passed


async def test_script_runs_in_project_dir_without_workdir(tmp_path: Path) -> None:
    (tmp_path / "grader.sh").write_text("#!/bin/sh\ngrep -q yes\n")
    assert (await judge("yes", "script", "sh grader.sh", project_dir=tmp_path)).passed
    assert not (await judge("no", "script", "sh grader.sh", project_dir=tmp_path)).passed


async def test_script_last_stdout_line_is_the_score(tmp_path: Path) -> None:
    scored = await judge("x", "script", "echo checking; echo 0.75", workdir=tmp_path)
    assert scored.passed and scored.score == 0.75 and "score 0.75" in scored.evidence
    failing = await judge("x", "script", "echo 0.2; exit 1", workdir=tmp_path)
    assert not failing.passed and failing.score == 0.2
    out_of_range = await judge("x", "script", "echo 7", workdir=tmp_path)
    assert out_of_range.passed and out_of_range.score == 1
    gated = await judge("x", "script", "echo 0.4", workdir=tmp_path, threshold=0.5)
    assert not gated.passed


async def test_script_timeout_is_a_failed_result(tmp_path: Path) -> None:
    start = time.perf_counter()
    result = await judge("x", "script", "sleep 10", workdir=tmp_path, options={"timeout_s": 0.5})
    assert time.perf_counter() - start < 5
    assert not result.passed and result.score == 0 and "timed out after 0.5s" in result.evidence
    limited = await judge("x", "script", "sleep 10", workdir=tmp_path, limits=SandboxLimits(timeout_s=0.3))
    assert "timed out after 0.3s" in limited.evidence


async def test_script_timeout_holds_when_a_large_output_is_never_read(tmp_path: Path) -> None:
    start = time.perf_counter()
    result = await judge("x" * 1_000_000, "script", "sleep 10", workdir=tmp_path, options={"timeout_s": 0.5})
    assert time.perf_counter() - start < 5 and "timed out" in result.evidence
    counted = await judge("y" * 1_000_000, "script", "test $(wc -c) -eq 1000000", workdir=tmp_path)
    assert counted.passed


async def test_script_negated_and_output_file_removed(tmp_path: Path) -> None:
    record = tmp_path / "path.txt"
    assert (await judge("x", "script", f'echo "$ASSAY_OUTPUT_FILE" > {record}; exit 1', negate=True)).passed
    assert not Path(record.read_text().strip()).exists()


@pytest.mark.parametrize(
    ("value", "options", "message"),
    [
        (None, {}, "script: value is required"),
        ("   ", {}, "script: value is required"),
        ("true", {"timeout_s": 0}, "script: option timeout_s must be a positive number"),
        ("true", {"timeout_s": "5"}, "script: option timeout_s must be a positive number"),
    ],
)
def test_script_bad_specs(value: Any, options: dict[str, Any], message: str) -> None:
    with pytest.raises(CheckSpecError, match=message):
        build_check(CheckSpec(type="script", value=value, options=options))


# --- python -------------------------------------------------------------------------------------------------


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


async def test_python_inline_expression() -> None:
    assert (await judge("The answer is 4", "python", "context['expected'] in output")).passed
    assert not (await judge("The answer is 5", "python", "context['expected'] in output")).passed
    scored = await judge("abcd", "python", "len(output) / 8")
    assert scored.passed and scored.score == 0.5


async def test_python_inline_body_with_return() -> None:
    body = """
    words = output.split()
    if context["vars"]["lang"] != "en":
        return False
    return {"pass": len(words) <= 3, "score": min(1.0, 3 / len(words)), "reason": f"{len(words)} words"}
    """
    short = await judge("four", "python", body)
    assert short.passed and short.score == 1 and short.evidence == "1 words"
    long = await judge("one two three four five six", "python", body)
    assert not long.passed and long.score == 0.5 and long.evidence == "6 words"


async def test_python_inline_single_line_return_statement() -> None:
    assert (await judge("yes", "python", "return output == 'yes'")).passed


async def test_python_file_with_function_relative_to_project(tmp_path: Path) -> None:
    write(
        tmp_path / "evals" / "grade_rel.py",
        """
        from helper_rel import WORD

        def grade(output, context):
            return {"pass": WORD in output, "reason": f"case {context['case_id']} in {context['project_dir']}"}
        """,
    )
    write(tmp_path / "evals" / "helper_rel.py", "WORD = 'four'\n")
    result = await judge("four", "python", "evals/grade_rel.py:grade", project_dir=tmp_path)
    assert result.passed and result.evidence == f"case case-7 in {tmp_path}"
    assert not (await judge("five", "python", "evals/grade_rel.py:grade", project_dir=tmp_path)).passed


async def test_python_file_url_uses_get_assert(tmp_path: Path) -> None:
    write(
        tmp_path / "assert_url.py",
        """
        def get_assert(output, context):
            return 1.0 if context["output"]["cost_usd"] < 1 and output.isdigit() else 0.0
        """,
    )
    assert (await judge("4", "python", "file://assert_url.py", project_dir=tmp_path)).passed
    assert not (await judge("four", "python", "file://assert_url.py", project_dir=tmp_path)).passed


async def test_python_absolute_file_is_imported_once(tmp_path: Path) -> None:
    counter = tmp_path / "imports.txt"
    write(
        tmp_path / "counted.py",
        f"""
        from pathlib import Path
        _p = Path({str(counter)!r})
        _p.write_text(_p.read_text() + "x" if _p.exists() else "x")

        async def check(output, context):
            return output == context["expected"]
        """,
    )
    value = f"{tmp_path / 'counted.py'}:check"
    first, second = (
        build_check(CheckSpec(type="python", value=value)),
        build_check(CheckSpec(type="python", value=value)),
    )
    ctx = CheckContext(case=CASE)
    assert (await first.run(Output(text="4"), ctx)).passed
    assert not (await second.run(Output(text="5"), ctx)).passed
    assert counter.read_text() == "x"


async def test_python_module_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "graders_mod" / "__init__.py", "")
    write(
        tmp_path / "graders_mod" / "rules.py",
        """
        def polite(output, context):
            return "please" in output.lower()
        """,
    )
    deferred = await judge("Please do", "python", "graders_mod.rules:polite", project_dir=tmp_path)
    assert deferred.passed  # not importable at load: imported at evaluation from the project dir
    monkeypatch.syspath_prepend(str(tmp_path))
    assert not (await judge("Do it", "python", "graders_mod.rules:polite")).passed


async def test_python_return_values_and_exceptions() -> None:
    raised = await judge("x", "python", "1 / 0")
    assert (
        not raised.passed and raised.evidence == "python evaluator raised ZeroDivisionError: division by zero"
    )
    none = await judge("x", "python", "None")
    assert not none.passed and "returned NoneType" in none.evidence
    too_big = await judge("x", "python", "1.5")
    assert not too_big.passed and "outside [0, 1]" in too_big.evidence
    text = await judge("x", "python", "'yes'")
    assert not text.passed and "returned str" in text.evidence
    bad_pass = await judge("x", "python", "{'pass': 'yes'}")
    assert not bad_pass.passed and "pass='yes'" in bad_pass.evidence
    empty = await judge("x", "python", "{'reason': 'hm'}")
    assert not empty.passed and "without pass or score" in empty.evidence
    only_score = await judge("x", "python", "{'score': 0.9}")
    assert only_score.passed and only_score.score == 0.9
    explicit = await judge("x", "python", "{'passed': False, 'score': 0.9}")
    assert not explicit.passed and explicit.score == 0.9


async def test_python_timeout(tmp_path: Path) -> None:
    write(
        tmp_path / "slow_eval.py",
        "import asyncio\n\nasync def grade(output, context):\n    await asyncio.sleep(5)\n",
    )
    start = time.perf_counter()
    result = await judge(
        "x", "python", "slow_eval.py:grade", project_dir=tmp_path, options={"timeout_s": 0.2}
    )
    assert time.perf_counter() - start < 3
    assert not result.passed and result.evidence == "python evaluator timed out after 0.2s"
    with pytest.raises(CheckSpecError, match="python: option timeout_s must be a positive number"):
        build_check(CheckSpec(type="python", value="True", options={"timeout_s": -1}))


async def test_python_negated_and_threshold() -> None:
    assert (await judge("bad", "python", "output == 'good'", negate=True)).passed
    assert not (await judge("x", "python", "0.6", threshold=0.7)).passed


async def test_python_missing_function_or_file_fails_the_case(tmp_path: Path) -> None:
    write(tmp_path / "nofn.py", "X = 1\n")
    result = await judge("x", "python", "nofn.py:grade", project_dir=tmp_path)
    assert not result.passed and "has no function 'grade'" in result.evidence
    missing = await judge("x", "python", "nowhere.py", project_dir=tmp_path)
    assert not missing.passed and "does not exist" in missing.evidence
    unimportable = await judge("x", "python", "no_such_module_zz:grade", project_dir=tmp_path)
    assert not unimportable.passed and "cannot import module 'no_such_module_zz'" in unimportable.evidence


def test_python_errors_known_at_load(tmp_path: Path) -> None:
    with pytest.raises(
        CheckSpecError, match=r"python: syntax error in inline code \(line 1\): invalid syntax"
    ):
        build_check(CheckSpec(type="python", value="output ==="))
    with pytest.raises(CheckSpecError, match=r"python: syntax error in inline code \(line 2\)"):
        build_check(CheckSpec(type="python", value="x = 1\nreturn (x ==\n"))
    with pytest.raises(CheckSpecError, match=r"python: cannot import module 'json.nonexistent'"):
        build_check(CheckSpec(type="python", value="json.nonexistent:grade"))
    with pytest.raises(CheckSpecError, match=r"python: module 'json' has no function 'nope'"):
        build_check(CheckSpec(type="python", value="json:nope"))
    broken = write(tmp_path / "broken.py", "def grade(:\n")
    with pytest.raises(CheckSpecError, match=r"python: importing .*broken.py' failed: SyntaxError"):
        build_check(CheckSpec(type="python", value=f"{broken}:grade"))
    with pytest.raises(CheckSpecError, match="python: value is required"):
        build_check(CheckSpec(type="python"))


def test_python_stdlib_module_function_resolves_at_load() -> None:
    check = build_check(CheckSpec(type="python", value="os.path:isabs"))
    assert check.resolve(None) is sys.modules["os.path"].isabs  # type: ignore[attr-defined]


def test_importing_a_python_check_writes_no_bytecode_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A compiled check appearing in the work directory mid-evaluation would be a file the jail never masked.
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as for a user (the suite may run without)
    (tmp_path / "grading").mkdir()
    (tmp_path / "grading" / "bytecode_probe_limit.py").write_text("LIMIT = 3\n")
    (tmp_path / "grading" / "score.py").write_text(
        "from bytecode_probe_limit import LIMIT\ndef check(output, context):\n    return len(output) <= LIMIT\n"
    )
    # Whatever the import leaves in sys.modules goes at teardown (set, then deleted: the undo removes it).
    monkeypatch.setitem(sys.modules, "bytecode_probe_limit", None)
    monkeypatch.delitem(sys.modules, "bytecode_probe_limit")
    check = import_file_function(tmp_path / "grading" / "score.py", "check")
    assert check("abc", {}) is True and check("abcd", {}) is False
    assert not list(tmp_path.rglob("__pycache__")) and sys.dont_write_bytecode is False
    assert "bytecode_probe_limit" in sys.modules
