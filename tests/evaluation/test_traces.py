"""Trace retention (traces.keep: all / failing / sampled) and gzipped trace files, with the real command runner."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from assay.config import CommandRunnerConfig, TracesConfig, load_config
from assay.errors import ConfigError
from assay.evaluation.evaluator import Evaluator
from assay.evaluation.traces import TracePolicy, read_trace, sampled
from assay.model import Case, CheckSpec, Split
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
    return {path.name for path in folder.iterdir()} if folder.exists() else set()


async def test_failing_keeps_the_failing_and_unjudged_cases_only(tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    result = await evaluator(tmp_path, TracePolicy(keep="failing")).run(cases(3), tmp_path, trace_dir=traces)
    assert written(traces) == {"fail.json", "unjudged.json"}
    assert [c.trace_path is not None for c in result.cases] == [False, False, False, True, True]
    assert read_trace(traces / "fail.json").result.passed is False


async def test_sampled_keeps_the_same_share_of_passing_cases_every_time(tmp_path: Path) -> None:
    runs = []
    for run in ("one", "two"):
        traces = tmp_path / run
        await evaluator(tmp_path, TracePolicy(keep="sampled", sample=0.3)).run(
            cases(60), tmp_path, trace_dir=traces
        )
        runs.append(written(traces))
    assert runs[0] == runs[1]
    kept = {name.removesuffix(".json") for name in runs[0]} - {"fail", "unjudged"}
    assert kept == {f"pass-{i}" for i in range(60) if sampled(f"pass-{i}", 0.3)}
    assert 6 <= len(kept) <= 30  # about 18 of 60
    assert {"fail.json", "unjudged.json"} <= runs[0]
    assert not any(sampled(f"pass-{i}", 0.0) for i in range(60))
    assert all(sampled(f"pass-{i}", 1.0) for i in range(60))


async def test_compressed_traces_are_gzip_and_read_back(tmp_path: Path) -> None:
    traces = tmp_path / "eval" / "traces"
    result = await evaluator(tmp_path, TracePolicy(compress=True)).run(cases(2), tmp_path, trace_dir=traces)
    assert written(traces) == {"pass-0.json.gz", "pass-1.json.gz", "fail.json.gz", "unjudged.json.gz"}
    raw = (traces / "fail.json.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b" and b'"id":"fail"' in gzip.decompress(raw)
    assert read_trace(traces / "fail.json.gz").result.output.text == "no"
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
