"""How much does assay add on top of the work an evaluation has to do anyway?

(a) 2,000 cases, a `command` runner that echoes its input, three deterministic checks per case (contains, regex,
    not_contains). assay (load config, load + split cases, L1 static tier, run, judge, write a trace per case and
    a summary) against a bare baseline that runs the same subprocesses at the same concurrency and applies the
    same contains/regex logic in a plain loop. Target: ratio <= 1.25, with `runner.sandbox: none` (the same plain
    subprocesses); the same run with each case in a bubblewrap jail is shown beside it.
(b) An I/O-bound `llm` runner against a loopback OpenAI-compatible server that answers after 100 ms, at
    concurrency 32. Target: throughput >= 0.8 x 32 = 25.6 cases/s.

Run: python benchmarks/eval_overhead.py [--cases 2000] [--concurrency 8] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shlex
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.fakes.llm_server

from assay.config import load_config  # noqa: E402
from assay.evaluation.session import evaluate_project, select_cases  # noqa: E402
from assay.sandbox import bwrap_status  # noqa: E402


def make_project(directory: Path, n_cases: int, runner_yaml: str, concurrency: int) -> Path:
    (directory / "artifact.txt").write_text("You are a helpful assistant. Answer briefly.\n")
    with (directory / "cases.jsonl").open("w") as handle:
        for i in range(n_cases):
            case = {
                "id": f"case-{i:05d}",
                "input": f"case-{i} payload {i * 7 % 13}",
                "checks": [
                    {"type": "contains", "value": f"case-{i}"},
                    {"type": "regex", "value": r"^case-\d+ payload \d+$"},
                    {"type": "not_contains", "value": "error"},
                ],
            }
            handle.write(json.dumps(case) + "\n")
    config = directory / "assay.yaml"
    config.write_text(
        "artifact: {kind: prompt, paths: [artifact.txt]}\n"
        "cases: {files: [cases.jsonl]}\n"
        f"runner: {runner_yaml}\n"
        f"concurrency: {concurrency}\n"
    )
    return config


async def run_assay(config_path: Path) -> tuple[float, float]:
    start = time.perf_counter()
    config = load_config(config_path)
    selection = select_cases(config, "all")
    result = await evaluate_project(config, selection, use_cache=False)
    return time.perf_counter() - start, result.pass_rate


async def run_baseline(n_cases: int, concurrency: int, pidfd: bool = False) -> tuple[float, float]:
    """The bare loop: asyncio subprocesses and the same checks, nothing else. ``pidfd`` (Python 3.11 only)
    swaps asyncio's default thread-per-child watcher for the pidfd watcher that 3.12+ uses by default."""
    if pidfd:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            watcher = asyncio.PidfdChildWatcher()
            asyncio.set_child_watcher(watcher)
            watcher.attach_loop(asyncio.get_running_loop())
    start = time.perf_counter()
    pattern = re.compile(r"^case-\d+ payload \d+$")
    semaphore = asyncio.Semaphore(concurrency)

    async def one(i: int) -> bool:
        text = f"case-{i} payload {i * 7 % 13}"
        async with semaphore:
            proc = await asyncio.create_subprocess_shell(
                f"echo {shlex.quote(text)}", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
            stdout, _ = await proc.communicate()
        output = stdout.decode().rstrip("\n")
        return f"case-{i}" in output and bool(pattern.search(output)) and "error" not in output

    try:
        verdicts = await asyncio.gather(*(one(i) for i in range(n_cases)))
    finally:
        if pidfd:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                asyncio.set_child_watcher(None)
    return time.perf_counter() - start, sum(verdicts) / n_cases


def bench_command(n_cases: int, concurrency: int, repeats: int) -> float:
    variants = {"baseline (asyncio defaults)": lambda: run_baseline(n_cases, concurrency)}
    if sys.version_info < (3, 12) and hasattr(os, "pidfd_open"):
        variants["baseline (pidfd watcher)"] = lambda: run_baseline(n_cases, concurrency, pidfd=True)
    jailed = "assay, jailed (bubblewrap)"
    times: dict[str, list[float]] = {name: [] for name in [*variants, "assay", jailed]}
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as tmp_jailed:
        # The target is assay's own overhead on the same plain subprocesses (sandbox: none); the jail's cost —
        # a bubblewrap sandbox per case — is shown beside it.
        command = "{type: command, command: 'echo {input}', timeout: 30"
        config = make_project(Path(tmp), n_cases, command + ", sandbox: none}", concurrency)
        config_jailed = make_project(Path(tmp_jailed), n_cases, command + ", sandbox: strict}", concurrency)
        if not bwrap_status().available:
            del times[jailed]
        for _ in range(repeats):  # interleaved, so drifts in machine load hit every variant alike
            for name, variant in variants.items():
                seconds, rate = asyncio.run(variant())
                assert rate == 1.0, rate
                times[name].append(seconds)
            seconds, rate = asyncio.run(run_assay(config))
            assert rate == 1.0, rate
            times["assay"].append(seconds)
            if jailed in times:
                seconds, rate = asyncio.run(run_assay(config_jailed))
                assert rate == 1.0, rate
                times[jailed].append(seconds)
    print(
        f"(a) command runner, {n_cases} cases x 3 checks, concurrency {concurrency}, {repeats} interleaved runs"
    )
    ours = statistics.median(times["assay"])
    for name, values in times.items():
        median = statistics.median(values)
        line = (
            f"    {name:28s} median {median:5.2f}s  min {min(values):5.2f}s  {n_cases / median:5.0f} cases/s"
        )
        if name not in ("assay", jailed):
            line += f"   assay/this = {ours / median:.3f} (min/min {min(times['assay']) / min(values):.3f})"
        print(line)
    ratio = ours / statistics.median(times["baseline (asyncio defaults)"])
    print(f"    target: assay <= 1.25 x baseline -> {ratio:.3f} {'OK' if ratio <= 1.25 else 'MISSED'}")
    return ratio


def bench_llm(n_cases: int, concurrency: int, delay: float) -> float:
    from tests.fakes.llm_server import ScriptedLLMServer

    with tempfile.TemporaryDirectory() as tmp, ScriptedLLMServer(default="fine", delay=delay) as server:
        runner = f"{{type: llm, model: 'openai:bench-model', base_url: '{server.openai_url}', prompt: artifact.txt}}"
        config = make_project(Path(tmp), n_cases, runner, concurrency)
        # The scripted answer does not satisfy the benchmark's checks; only throughput matters here.
        import os

        os.environ.setdefault("OPENAI_API_KEY", "bench-key")
        seconds, _ = asyncio.run(run_assay(config))
    throughput = n_cases / seconds
    target = 0.8 * concurrency
    print(f"(b) llm runner, {n_cases} cases, server delay {delay * 1000:.0f} ms, concurrency {concurrency}:")
    print(
        f"    {seconds:.2f}s, throughput {throughput:.1f} cases/s = {throughput / concurrency:.2f} x concurrency"
        f"   (target >= {target:.1f}/s) {'OK' if throughput >= target else 'MISSED'}"
    )
    return throughput


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--llm-cases", type=int, default=640)
    parser.add_argument("--skip-llm", action="store_true")
    args = parser.parse_args()
    bench_command(args.cases, args.concurrency, args.repeats)
    if not args.skip_llm:
        bench_llm(args.llm_cases, 32, 0.1)


if __name__ == "__main__":
    main()
