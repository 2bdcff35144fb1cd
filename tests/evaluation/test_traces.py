"""Trace retention (traces.keep: all / failing / sampled), the append-only trace log (plain and gzipped) and
what a process killed mid-write leaves, with the real command runner."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from assay.config import CommandRunnerConfig, TracesConfig, load_config
from assay.errors import ConfigError
from assay.evaluation.evaluator import Evaluator
from assay.evaluation.traces import (
    TracePolicy,
    close_traces,
    read_trace,
    read_traces,
    sampled,
    trace_bytes,
    write_trace,
)
from assay.model import Case, CaseResult, CheckSpec, Output, Split
from assay.report.sources import eval_result
from assay.runners import RunContext
from assay.runners.command import CommandRunner

CONFIG = """
artifact: {kind: code, paths: [a.py]}
cases: {files: cases.yaml}
runner: {type: command, command: "echo {input}", timeout: 5}
"""


def evaluator(tmp_path: Path, traces: TracePolicy) -> Evaluator:
    runner = CommandRunner(
        CommandRunnerConfig(command="echo {input}", timeout=10),
        RunContext(artifact_dir=tmp_path, project_dir=tmp_path),
    )
    return Evaluator(runner, concurrency=4, project_dir=tmp_path, traces=traces)


def cases(passing: int) -> list[tuple[Case, Split]]:
    wants = CheckSpec(type="contains", value="yes")
    out = [(Case(id=f"pass-{i}", input=f"yes {i}", checks=[wants]), Split.DEV) for i in range(passing)]
    out.append((Case(id="fail", input="no", checks=[wants]), Split.DEV))
    out.append((Case(id="unjudged", input="maybe"), Split.DEV))
    return out


def written(folder: Path) -> set[str]:
    """The ids of the cases whose traces ``folder`` holds."""
    return {trace.result.id for trace in read_traces(folder)} if folder.exists() else set()


async def test_failing_keeps_the_failing_and_unjudged_cases_only(tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    result = await evaluator(tmp_path, TracePolicy(keep="failing")).run(cases(3), tmp_path, trace_dir=traces)
    assert written(traces) == {"fail", "unjudged"}
    assert [p.name for p in traces.iterdir()] == ["traces.jsonl"]  # one file, not one per case
    assert [c.trace_path is not None for c in result.cases] == [False, False, False, True, True]
    failed = next(c for c in result.cases if c.id == "fail")
    assert read_trace(failed.trace_path or "").result.passed is False


async def test_sampled_keeps_the_same_share_of_passing_cases_every_time(tmp_path: Path) -> None:
    runs = []
    for run in ("one", "two"):
        traces = tmp_path / run
        await evaluator(tmp_path, TracePolicy(keep="sampled", sample=0.3)).run(
            cases(60), tmp_path, trace_dir=traces
        )
        runs.append(written(traces))
    assert runs[0] == runs[1]
    kept = runs[0] - {"fail", "unjudged"}
    assert kept == {f"pass-{i}" for i in range(60) if sampled(f"pass-{i}", 0.3)}
    assert 6 <= len(kept) <= 30  # about 18 of 60
    assert {"fail", "unjudged"} <= runs[0]
    assert not any(sampled(f"pass-{i}", 0.0) for i in range(60))
    assert all(sampled(f"pass-{i}", 1.0) for i in range(60))


async def test_compressed_traces_are_gzip_and_read_back(tmp_path: Path) -> None:
    traces = tmp_path / "eval" / "traces"
    result = await evaluator(tmp_path, TracePolicy(compress=True)).run(cases(2), tmp_path, trace_dir=traces)
    assert written(traces) == {"pass-0", "pass-1", "fail", "unjudged"}
    assert [p.name for p in traces.iterdir()] == ["traces.jsonl.gz"]
    raw = (traces / "traces.jsonl.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b" and gzip.decompress(raw).count(b'{"version":1,') == 4  # zcat reads it whole
    failed = next(c for c in result.cases if c.id == "fail")
    assert read_trace(failed.trace_path or "").result.output.text == "no"
    # A report reads an eval folder of gzipped traces as it reads plain ones.
    again = eval_result(tmp_path / "eval")
    assert sorted(c.id for c in again.cases) == sorted(c.id for c in result.cases)


def test_the_traces_section_of_assay_yaml(tmp_path: Path) -> None:
    path = tmp_path / "assay.yaml"
    path.write_text(CONFIG)
    assert load_config(path).traces == TracesConfig(keep="all", sample=0.1, compress=False)
    path.write_text(CONFIG + "traces: {keep: sampled, sample: 0.25, compress: true}\n")
    config = load_config(path)
    assert TracePolicy.from_config(config.traces) == TracePolicy("sampled", 0.25, True)
    for bad, field, message in (
        ("{keep: some}", "traces.keep", "'all', 'failing' or 'sampled'"),
        ("{keep: sampled, sample: 2}", "traces.sample", "less than or equal to 1"),
        ("{compres: true}", "traces.compres", "unknown field"),
    ):
        path.write_text(CONFIG + f"traces: {bad}\n")
        with pytest.raises(ConfigError) as info:
            load_config(path)
        rendered = str(info.value)
        assert rendered.startswith(f"{path}: {field}: ") and message in rendered and "\n" not in rendered, (
            rendered
        )


def trace(case_id: str, text: str = "x") -> tuple[Case, CaseResult]:
    return Case(id=case_id, input=text), CaseResult(
        id=case_id, split=Split.DEV, passed=True, score=1.0, output=Output(text=text)
    )


@pytest.mark.parametrize("compress", [False, True])
def test_a_torn_last_record_is_skipped_and_cut_off_before_the_next_append(
    tmp_path: Path, compress: bool
) -> None:
    first = write_trace(tmp_path, *trace("a", "one"), compress=compress)
    second = write_trace(tmp_path, *trace("b", "two"), compress=compress)
    close_traces(tmp_path)
    log = Path(first.rpartition("#")[0])
    whole = log.stat().st_size
    with log.open("ab") as handle:  # what a process killed in the middle of a write leaves
        handle.write(
            gzip.compress(b'{"version":1,"case":{"id":"c"}}\n')[:9] if compress else b'{"version":1,"ca'
        )
    assert written(tmp_path) == {"a", "b"}
    assert read_trace(second).result.output.text == "two"
    third = write_trace(tmp_path, *trace("c", "three"), compress=compress)  # a resumed evaluation goes on
    close_traces(tmp_path)
    assert int(third.rpartition("#")[2]) == whole  # the torn bytes are gone, not buried mid-file
    assert written(tmp_path) == {"a", "b", "c"}
    assert [read_trace(ref).result.output.text for ref in (first, second, third)] == ["one", "two", "three"]


def test_the_last_trace_of_a_case_wins_and_old_one_file_traces_are_still_read(tmp_path: Path) -> None:
    write_trace(tmp_path, *trace("a", "first run"))
    write_trace(tmp_path, *trace("a", "run again"))
    close_traces(tmp_path)
    case, result = trace("old", "before the log")
    (tmp_path / "old.json").write_bytes(trace_bytes(case, result))
    found = {t.result.id: t.result.output.text for t in read_traces(tmp_path)}
    assert found == {"a": "run again", "old": "before the log"}
    assert read_trace(tmp_path / "old.json").result.output.text == "before the log"


def test_a_reference_to_a_torn_record_is_an_error_not_a_wrong_trace(tmp_path: Path) -> None:
    ref = write_trace(tmp_path, *trace("a"))
    close_traces(tmp_path)
    log = Path(ref.rpartition("#")[0])
    log.write_bytes(log.read_bytes()[:-5])
    with pytest.raises(ValueError, match="torn"):
        read_trace(ref)


WRITER = """
import sys
from pathlib import Path
from assay.evaluation.traces import write_trace
from assay.model import Case, CaseResult, Output, Split
folder, compress = Path(sys.argv[1]), sys.argv[2] == "gz"
for i in range(100000):
    text = f"output {i} " + "x" * 20000
    result = CaseResult(id=f"c{i}", split=Split.DEV, passed=True, score=1.0, output=Output(text=text))
    write_trace(folder, Case(id=f"c{i}", input="x"), result, compress=compress)
    if i == 20:
        print("writing", flush=True)
"""


@pytest.mark.e2e
@pytest.mark.parametrize("compress", [False, True])
def test_a_writer_killed_mid_write_leaves_only_whole_traces_and_a_log_that_takes_more(
    tmp_path: Path, compress: bool
) -> None:
    import subprocess
    import sys
    import time

    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path), "gz" if compress else "plain"], stdout=subprocess.PIPE
    )
    assert writer.stdout is not None and writer.stdout.readline() == b"writing\n"
    time.sleep(0.2)
    writer.kill()
    writer.wait()
    found = read_traces(tmp_path)
    count = len(found)
    assert count > 20
    assert {t.result.id for t in found} == {f"c{i}" for i in range(count)}  # every one whole, none missing
    assert all(t.result.output.text == f"output {t.result.id[1:]} " + "x" * 20000 for t in found)
    ref = write_trace(tmp_path, *trace("after", "resumed"), compress=compress)
    close_traces(tmp_path)
    assert read_trace(ref).result.output.text == "resumed"
    assert len(read_traces(tmp_path)) == count + 1
