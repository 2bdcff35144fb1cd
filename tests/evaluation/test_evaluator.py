"""The evaluator with the real command runner: verdicts, traces on disk, failures recorded, never raised."""

import json
from pathlib import Path

import pytest

from assay.config import CommandRunnerConfig
from assay.errors import ConfigError
from assay.evaluation.evaluator import Evaluator
from assay.evaluation.traces import read_trace
from assay.model import Case, CheckSpec, Split
from assay.runners import RunContext
from assay.runners.command import CommandRunner


def evaluator(tmp_path: Path, command: str, timeout: float = 10) -> Evaluator:
    config = CommandRunnerConfig(command=command, timeout=timeout)
    runner = CommandRunner(config, RunContext(artifact_dir=tmp_path, project_dir=tmp_path))
    return Evaluator(runner, concurrency=4, project_dir=tmp_path)


def case(case_id: str, text: str, *checks: CheckSpec, threshold: float | None = None) -> Case:
    return Case(id=case_id, input=text, checks=list(checks), threshold=threshold)


async def test_verdicts_scores_and_traces(tmp_path):
    cases = [
        (case("ok", "hello", CheckSpec(type="contains", value="hell")), Split.DEV),
        (
            case("bad", "bye", CheckSpec(type="contains", value="hell"), CheckSpec(type="regex", value="^b")),
            Split.HOLDOUT,
        ),
    ]
    result = await evaluator(tmp_path, "echo {input}").run(cases, tmp_path, trace_dir=tmp_path / "traces")
    assert [c.passed for c in result.cases] == [True, False]
    assert result.pass_rate == 0.5
    assert result.cases[1].score == 0.5
    trace = read_trace(Path(result.cases[1].trace_path))
    assert trace.case.id == "bad" and trace.result.split == Split.HOLDOUT
    assert trace.result.output.text == "bye"
    assert [c.passed for c in trace.result.checks] == [False, True]
    assert trace.case.checks[0].value == "hell"
    log, _, offset = result.cases[0].trace_path.rpartition("#")
    assert Path(log) == tmp_path / "traces" / "traces.jsonl" and offset.isdigit()
    raw = [json.loads(line) for line in Path(log).read_text().splitlines()]
    assert sorted(r["case"]["id"] for r in raw) == ["bad", "ok"]
    assert {r["version"] for r in raw} == {1}


async def test_threshold_lets_partial_cases_pass(tmp_path):
    item = case(
        "t",
        "abc",
        CheckSpec(type="contains", value="a", weight=3),
        CheckSpec(type="contains", value="z"),
        threshold=0.7,
    )
    result = await evaluator(tmp_path, "echo {input}").run([(item, Split.DEV)], tmp_path)
    assert result.cases[0].passed and result.cases[0].score == pytest.approx(0.75)


async def test_timeout_and_crash_are_failed_cases(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text('case "$1" in slow) sleep 5;; crash) kill -9 $$;; *) echo fine;; esac\n')
    cases = [
        (case(name, name, CheckSpec(type="contains", value="fine")), Split.DEV)
        for name in ("slow", "crash", "ok")
    ]
    result = await evaluator(tmp_path, "sh run.sh {input}", timeout=0.5).run(cases, tmp_path)
    by_id = {c.id: c for c in result.cases}
    assert by_id["ok"].passed
    assert not by_id["slow"].passed and by_id["slow"].output.timed_out
    assert not by_id["crash"].passed and "SIGKILL" in (by_id["crash"].output.error or "")
    assert by_id["crash"].checks[-1].type == "runner"


async def test_bad_check_resource_is_a_config_error_before_running(tmp_path):
    item = case("s", "x", CheckSpec(type="json_schema", value="missing.json"))
    item.source = "cases.yaml"
    with pytest.raises(ConfigError, match=r"cases.yaml: s.checks\[0\]"):
        evaluator(tmp_path, "echo {input}").bind([(item, Split.DEV)])


async def test_judges_are_asked_only_when_their_verdict_matters(tmp_path, llm_server):
    from assay.config import JudgeConfig
    from assay.llm import make_llm

    llm_server.default = "VERDICT: PASS\nREASON: fine"
    judge = make_llm(
        JudgeConfig(model="openai:judge", base_url=llm_server.openai_url, max_retries=0),
        cache_dir=None,
        use_cache=False,
    )
    ev = evaluator(tmp_path, "echo {input}")
    ev.judge, ev.judge_votes = judge, 3
    rubric = CheckSpec(type="llm_judge", value="The reply greets the reader.")
    try:
        result = await ev.run(
            [
                (case("decided", "bye", CheckSpec(type="contains", value="hello"), rubric), Split.DEV),
                (case("open", "hello", CheckSpec(type="contains", value="hello"), rubric), Split.DEV),
            ],
            tmp_path,
        )
    finally:
        await judge.aclose()
    decided, open_case = result.cases
    assert (
        not decided.passed and decided.score == 0.0
    )  # the failed contains decided it; the judge is not scored
    assert decided.checks[1].skipped and decided.checks[1].evidence.startswith("not run")
    assert open_case.passed and not open_case.checks[1].skipped
    asked = [r.user for r in llm_server.requests]
    assert asked and all("<input>\nhello\n</input>" in text for text in asked)  # only the open case's judge
    assert result.judged_not_run == 1


@pytest.mark.e2e
@pytest.mark.bwrap
async def test_jailed_cases_share_workers_that_stop_when_the_evaluation_ends(tmp_path):
    from assay.sandbox import interpreter_paths, path_dirs, scrubbed_env
    from assay.sandbox.jail import WorkdirJail
    from tests.sandbox.test_workers import worker_processes

    work = tmp_path / "work"
    work.mkdir()
    jail = WorkdirJail(readable=(*interpreter_paths(), *path_dirs(scrubbed_env())))
    config = CommandRunnerConfig(command="echo {input} $(readlink /proc/self/ns/pid)", timeout=10)
    runner = CommandRunner(config, RunContext(artifact_dir=work, project_dir=tmp_path, jail=jail))
    seen: list[int] = []
    items = [
        (case(f"c{i}", f"n{i}", CheckSpec(type="contains", value=f"n{i}")), Split.DEV) for i in range(12)
    ]
    result = await Evaluator(runner, concurrency=2, project_dir=tmp_path).run(
        items, work, on_result=lambda _: seen.append(len(worker_processes(work)))
    )
    assert all(c.passed for c in result.cases)
    assert len({c.output.text.split()[1] for c in result.cases}) <= 2  # two jails for twelve cases
    assert max(seen) <= 2
    assert worker_processes(work) == []
